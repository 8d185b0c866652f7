//! `list`: the table, `--json` equal to the reference's `SessionInfo`, scopes and empty states.

mod common;
use common::*;

use pi_session_core::json::Value;

/// Fixtures whose summary the reference produces (listInfo not null).
fn listable() -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(fixture("")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".jsonl") && !expect(&name).get("listInfo").unwrap().is_null() {
            out.push(name);
        }
    }
    out.sort();
    out
}

#[test]
fn list_json_matches_the_reference_session_info_of_every_fixture() {
    let w = World::new("list-json");
    let names = listable();
    assert!(names.len() > 15, "fixtures found: {names:?}");
    for n in &names {
        w.add(FIXTURE_CWD, n, n);
    }
    let o = w.run(&["list", "--json"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let doc = json(&o.out);
    let infos = arr(&doc);
    assert_eq!(infos.len(), names.len());
    for name in &names {
        let n_ = name;
        let exp = expect(n_);
        let li = exp.get("listInfo").unwrap();
        let got = infos
            .iter()
            .find(|i| s(i.get("path")).unwrap().ends_with(&format!("/{n_}")))
            .unwrap_or_else(|| panic!("{n_} not listed"));
        assert_eq!(got.get("id"), li.get("id"), "{n_} id");
        assert_eq!(s(got.get("cwd")), s(li.get("cwd")), "{n_} cwd");
        assert_eq!(s(got.get("name")), s(li.get("name")), "{n_} name");
        assert_eq!(
            num(got, "messageCount"),
            num(li, "messageCount"),
            "{n_} count"
        );
        let first = s(li.get("firstMessage")).unwrap();
        let first = if first.is_empty() {
            "(no messages)".to_owned()
        } else {
            first
        };
        assert_eq!(
            s(got.get("firstMessage")).unwrap(),
            first,
            "{n_} firstMessage"
        );
        assert_eq!(s(got.get("created")), s(li.get("created")), "{n_} created");
        if let Some(ms) = n(li.get("modifiedMs")) {
            let iso = chrono::DateTime::from_timestamp_millis(ms as i64)
                .unwrap()
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string();
            assert_eq!(s(got.get("modified")).unwrap(), iso, "{n_} modified");
        }
        let size = std::fs::metadata(fixture(n_)).unwrap().len() as f64;
        assert_eq!(n(got.get("size")), Some(size), "{n_} size");
    }
    // Newest activity first.
    let mods: Vec<String> = infos
        .iter()
        .map(|i| s(i.get("modified")).unwrap())
        .collect();
    let mut sorted = mods.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(mods, sorted);
}

fn num(v: &Value, k: &str) -> Option<f64> {
    n(v.get(k))
}

#[test]
fn list_prints_a_table_with_names_counts_sizes_and_short_ids() {
    let w = World::new("list-table");
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    w.add(FIXTURE_CWD, "torn-last-line.jsonl", "b.jsonl");
    let o = w.run(&["list"]);
    assert_eq!(o.code, 0);
    let lines: Vec<&str> = o.out.lines().collect();
    assert!(lines[0].starts_with("SESSION"), "{}", o.out);
    assert!(
        lines[0].contains("MSGS") && lines[0].contains("LAST ACTIVITY") && lines[0].contains("ID")
    );
    // v3-conversation is named and its last activity is newer.
    assert!(lines[1].starts_with("Listing files"), "{}", o.out);
    assert!(
        lines[1].contains(" 7 ") && lines[1].contains("0193f0a0"),
        "{}",
        lines[1]
    );
    assert!(lines[2].starts_with("first"), "{}", o.out);
    assert!(lines[2].contains("sess-tor"), "{}", lines[2]);
    assert!(o.out.contains("2 sessions in"));
    assert!(!o.out.contains('\x1b'), "no colour without a terminal");
}

#[test]
fn list_all_covers_every_project_and_shows_the_project_column() {
    let w = World::new("list-all");
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    w.add("/home/someone/other", "torn-last-line.jsonl", "b.jsonl");
    let here = w.run(&["list", "--json"]);
    assert_eq!(arr(&json(&here.out)).len(), 1);
    let all = w.run(&["list", "--all", "--json"]);
    assert_eq!(arr(&json(&all.out)).len(), 2);
    let other = w.run(&["list", "--cwd", "/home/someone/other", "--json"]);
    let o = json(&other.out);
    assert_eq!(arr(&o).len(), 1);
    assert_eq!(s(arr(&o)[0].get("id")).unwrap(), "sess-torn");
    let table = w.run(&["list", "--all"]);
    assert!(table.out.lines().next().unwrap().contains("PROJECT"));
    assert!(table.out.contains("/tmp/pi-fixture-project"));
}

#[test]
fn an_empty_project_says_so_and_points_to_the_demo() {
    let w = World::new("list-empty");
    let o = w.run(&["list"]);
    assert_eq!(o.code, 0);
    assert!(o.out.starts_with("No sessions in"), "{}", o.out);
    assert!(o.out.contains("pi-sessions demo"));
    let j = w.run(&["list", "--json"]);
    assert_eq!(j.out, "[]\n");
}

#[test]
fn no_command_means_list() {
    let w = World::new("list-default");
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    let o = w.run(&[]);
    assert_eq!(o.code, 0);
    assert!(o.out.contains("Listing files"));
    let all = w.run(&["--all", "--json"]);
    assert_eq!(all.code, 0);
    assert_eq!(arr(&json(&all.out)).len(), 1);
}

#[test]
fn files_that_are_not_sessions_are_left_out_like_the_reference_does() {
    let w = World::new("list-skip");
    w.add(FIXTURE_CWD, "not-a-session.jsonl", "x.jsonl");
    w.add(FIXTURE_CWD, "bom-header.jsonl", "y.jsonl");
    w.write(FIXTURE_CWD, "notes.txt", "not jsonl");
    let o = w.run(&["list", "--json"]);
    assert_eq!(o.out, "[]\n");
}

/// `list` keeps the addon's listing cache (`<agent>/.pi-session-native/list-cache`, replacing the
/// old `session-list-cache.jsonl` of the agent root): a second run reads unchanged files from it, a
/// changed file is read again, and `list_cache: false` (PI_SESSION_LIST_CACHE=0) neither reads nor
/// writes it.
#[test]
fn list_shares_the_listing_cache_and_never_shows_a_stale_summary() {
    let w = World::new("list-cache");
    let header = r#"{"type":"session","version":3,"id":"c1","timestamp":"2025-01-15T10:00:00.000Z","cwd":"CWD"}"#
        .replace("CWD", FIXTURE_CWD);
    let msg = |id: &str, parent: &str, text: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-15T10:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    };
    let file = w.write(
        FIXTURE_CWD,
        "2025-01-15T10-00-00-000Z_c1.jsonl",
        &format!("{header}\n{}\n", msg("a1", "null", "first question")),
    );
    let cache = w.agent.join(".pi-session-native").join("list-cache");
    let listed = |env: &pi_sessions_cli::CliEnv| {
        let o = w.run_with(env, &["list", "--json"]);
        assert_eq!(o.code, 0, "{}", o.err);
        let doc = json(&o.out);
        let info = &arr(&doc)[0];
        (
            num(info, "messageCount").unwrap(),
            s(info.get("firstMessage")).unwrap(),
        )
    };

    // The cache of older versions, in the agent root (which the agent reads on every start).
    let legacy = w.agent.join("session-list-cache.jsonl");
    std::fs::write(&legacy, "{\"format\":\"pi-session-list-cache/4\"}\n").unwrap();
    let mut off = w.env();
    off.list_cache = false;
    assert_eq!(listed(&off), (1.0, "first question".to_owned()));
    assert!(!cache.exists(), "no cache without the cache");
    assert!(legacy.exists(), "nor any change to the old one");

    assert_eq!(listed(&w.env()), (1.0, "first question".to_owned()));
    assert!(cache.exists(), "the first run writes the cache");
    assert!(!legacy.exists(), "and deletes the old one");
    let root_jsonl = std::fs::read_dir(&w.agent)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "jsonl")
        })
        .count();
    assert_eq!(root_jsonl, 0, "no *.jsonl in the agent root");
    assert_eq!(listed(&w.env()), (1.0, "first question".to_owned()));

    // A changed file (new size and mtime) is summarized again.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        format!("{}\n", msg("a2", "\"a1\"", "second")).as_bytes(),
    )
    .unwrap();
    drop(f);
    assert_eq!(listed(&w.env()), (2.0, "first question".to_owned()));
    assert_eq!(listed(&off), (2.0, "first question".to_owned()));
}
