//! `demo`: real files written through the core, then list, tree, show and stats on them.

mod common;
use common::*;

#[test]
fn demo_builds_sample_sessions_and_runs_the_main_commands() {
    let w = World::new("demo");
    let dir = w.root.join("demo");
    let o = w.run(&["demo", "--dir", dir.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}\n{}", o.out, o.err);
    for step in [
        "$ pi-sessions list",
        "$ pi-sessions tree ",
        "$ pi-sessions show ",
        "$ pi-sessions stats",
    ] {
        assert!(o.out.contains(step), "{step}: {}", o.out);
    }
    assert!(o.out.contains("Weather forecast cache"));
    assert!(o.out.contains("◀ leaf"));
    assert!(o.out.contains("◆ compaction"));
    assert!(o.out.contains("◆ branch summary"));
    assert!(o.out.contains("[cache-works]"));
    assert!(o.out.contains("openai/gpt-5"));
    assert!(o.out.contains("export PI_CODING_AGENT_DIR="));
    // The files are sessions pi can read, and nothing in them is wrong.
    let agent = dir.join("agent");
    let mut env = w.env();
    env.agent_dir = Some(agent.to_string_lossy().into_owned());
    let v = w.run_with(&env, &["verify"]);
    assert_eq!(v.code, 0, "{}", v.out);
    assert!(v.out.contains("3 files checked, no problems"), "{}", v.out);
    let all = json(&w.run_with(&env, &["list", "--all", "--json"]).out);
    let infos = arr(&all);
    assert_eq!(infos.len(), 3);
    let main = infos
        .iter()
        .find(|i| s(i.get("name")).as_deref() == Some("Weather forecast cache"))
        .expect("the named session");
    let path = s(main.get("path")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    for ty in [
        "\"type\":\"compaction\"",
        "\"type\":\"branch_summary\"",
        "\"type\":\"label\"",
        "\"type\":\"custom\"",
        "\"type\":\"custom_message\"",
        "\"type\":\"session_info\"",
        "\"type\":\"usage\"",
        "\"type\":\"model_change\"",
    ] {
        assert!(text.contains(ty), "{ty}");
    }
    // Two branch tips: the abandoned detour and the active branch.
    let t = w.run_with(&env, &["tree", &path]);
    assert!(t.out.contains("2 branch tips"), "{}", t.out);
    assert_eq!(
        w.run(&["demo", "--dir", dir.to_str().unwrap()]).code,
        2,
        "an existing dir is refused"
    );
}

#[test]
fn every_demo_time_lies_in_the_past_the_last_minutes_ago() {
    let w = World::new("demo-times");
    let dir = w.root.join("demo");
    let env = w.env();
    let now = env.now_ms.unwrap() as f64;
    assert_eq!(w.run(&["demo", "--dir", dir.to_str().unwrap()]).code, 0);
    let mut latest = f64::MIN;
    let mut seen = 0;
    for file in session_files(&dir.join("agent")) {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let v = json(line);
            let mut times = vec![];
            if let Some(t) = s(v.get("timestamp")) {
                times.push(pi_session_core::timefmt::parse_iso_strict(&t).unwrap());
            }
            if let Some(t) = v.get("message").and_then(|m| n(m.get("timestamp"))) {
                times.push(t);
            }
            for t in times {
                assert!(t < now, "{} is not in the past: {line}", t - now);
                latest = latest.max(t);
                seen += 1;
            }
        }
    }
    assert!(seen > 40, "{seen} times checked");
    assert!(
        now - latest >= 60_000.0,
        "the last entry is {} ms ago",
        now - latest
    );
}

#[test]
fn the_demo_suggests_the_command_it_was_started_with() {
    let w = World::new("demo-command");
    let plain = w.run(&["demo", "--dir", w.root.join("a").to_str().unwrap()]);
    assert!(
        plain.out.contains("\n  pi-sessions list --all\n"),
        "{}",
        plain.out
    );
    let mut env = w.env();
    env.command = Some("node bin/pi-sessions.js".into());
    let o = w.run_with(&env, &["demo", "--dir", w.root.join("b").to_str().unwrap()]);
    assert!(
        o.out.contains("\n  node bin/pi-sessions.js list --all\n"),
        "{}",
        o.out
    );
    assert!(!o.out.contains("npx "), "{}", o.out);
}

fn session_files(agent: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    let mut stack = vec![agent.join("sessions")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out
}
