//! `merge`: `--out`, `--in-place`, stdout, `--json`, conflicts, kept lines, and refusals (different
//! sessions, an existing --out, both destinations).

mod common;
use common::*;

const HEADER: &str = r#"{"type":"session","version":3,"id":"m-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/pi-fixture-project"}"#;
const ROOT: &str = r#"{"type":"message","id":"r","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#;
const X_A: &str = r#"{"type":"message","id":"x","parentId":"r","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":"from a"}}"#;
const X_B: &str = r#"{"type":"message","id":"x","parentId":"r","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":"from b"}}"#;
const Y_B: &str = r#"{"type":"message","id":"y","parentId":"x","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"more"}}"#;
const Z_A: &str = r#"{"type":"message","id":"z","parentId":"r","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"later"}}"#;

fn pair(w: &World) -> (String, String) {
    let a = w.write(
        FIXTURE_CWD,
        "a.jsonl",
        &format!("{HEADER}\n{ROOT}\n{X_A}\n{{broken\n"),
    );
    let b = w.write(
        FIXTURE_CWD,
        "b.jsonl",
        &format!("{HEADER}\n{ROOT}\n{X_B}\n{Y_B}\n"),
    );
    (
        a.to_string_lossy().into_owned(),
        b.to_string_lossy().into_owned(),
    )
}

fn last_id(text: &str) -> Option<String> {
    let last = text
        .lines()
        .rfind(|l| l.starts_with("{\"type\":\"message\""))?;
    s(json(last).get("id"))
}

#[test]
fn merge_out_writes_a_new_file_and_reports_entries_conflicts_and_kept_lines() {
    let w = World::new("merge-out");
    let (a, b) = pair(&w);
    let out = w.root.join("merged.jsonl");
    let o = w.run(&["merge", &a, &b, "--out", out.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(
        o.out.contains("4 entries, 1 conflict, 1 kept line"),
        "{}",
        o.out
    );
    assert!(o.out.contains("conflict:"), "{}", o.out);
    assert!(o.out.contains("Wrote "), "{}", o.out);
    let merged = std::fs::read_to_string(&out).unwrap();
    assert!(merged.starts_with(&format!("{HEADER}\n{ROOT}\n{X_A}\n{{broken\n")));
    assert!(merged.contains("\"mergedFrom\":\"x\""));
    assert_eq!(last_id(&merged).as_deref(), Some("y"));
    // The inputs are left alone.
    assert!(std::fs::read_to_string(&a).unwrap().ends_with("{broken\n"));

    // --out never replaces a file.
    let again = w.run(&["merge", &a, &b, "--out", out.to_str().unwrap()]);
    assert_eq!(again.code, 2);
    assert!(again.err.contains("exists"), "{}", again.err);
}

#[test]
fn merge_json_reports_the_conflicts_and_the_leaf() {
    let w = World::new("merge-json");
    let (a, b) = pair(&w);
    let out = w.root.join("m.jsonl");
    let o = w.run(&["merge", &a, &b, "-o", out.to_str().unwrap(), "--json"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(o.out.lines().count(), 1);
    let v = json(&o.out);
    assert_eq!(s(v.get("session")).as_deref(), Some("m-1"));
    assert_eq!(s(v.get("out")).as_deref(), out.to_str());
    assert_eq!(n(v.get("entries")), Some(4.0));
    assert_eq!(n(v.get("keptLines")), Some(1.0));
    assert_eq!(s(v.get("leafId")).as_deref(), Some("y"));
    let conflicts = arr(v.get("conflicts").unwrap());
    assert_eq!(conflicts.len(), 1);
    assert_eq!(s(conflicts[0].get("id")).as_deref(), Some("x"));
    let new_id = s(conflicts[0].get("newId")).unwrap();
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains(&format!("\"id\":\"{new_id}\"")));

    let no_dest = w.run(&["merge", &a, &b, "--json"]);
    assert_eq!(no_dest.code, 2);
}

#[test]
fn merge_in_place_writes_into_a_and_a_second_run_changes_nothing() {
    let w = World::new("merge-in-place");
    let a = w.write(
        FIXTURE_CWD,
        "a.jsonl",
        &format!("{HEADER}\n{ROOT}\n{Z_A}\n"),
    );
    let b = w.write(
        FIXTURE_CWD,
        "b.jsonl",
        &format!("{HEADER}\n{ROOT}\n{X_B}\n{Y_B}\n"),
    );
    let (pa, pb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = w.run(&["merge", pa, pb, "--in-place"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(
        o.out.contains("4 entries, 0 conflicts, 0 kept lines"),
        "{}",
        o.out
    );
    let merged = std::fs::read_to_string(&a).unwrap();
    assert_eq!(
        merged,
        format!("{HEADER}\n{ROOT}\n{X_B}\n{Y_B}\n{Z_A}\n"),
        "parents first, the latest tip (z) last"
    );
    let again = w.run(&["merge", pa, pb, "--in-place"]);
    assert_eq!(again.code, 0, "{}", again.err);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), merged);
}

#[test]
fn merge_without_a_destination_writes_the_session_to_stdout_and_the_report_to_stderr() {
    let w = World::new("merge-stdout");
    let (a, b) = pair(&w);
    let o = w.run(&["merge", &a, &b]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.starts_with(HEADER));
    assert_eq!(last_id(&o.out).as_deref(), Some("y"));
    assert!(
        o.err.contains("4 entries, 1 conflict, 1 kept line"),
        "{}",
        o.err
    );
}

#[test]
fn merge_refuses_different_sessions_and_writes_nothing() {
    let w = World::new("merge-mismatch");
    let (a, _) = pair(&w);
    let other = w.write(
        FIXTURE_CWD,
        "c.jsonl",
        &format!("{}\n{ROOT}\n", HEADER.replace("m-1", "m-2")),
    );
    let before = std::fs::read_to_string(&a).unwrap();
    let o = w.run(&["merge", &a, other.to_str().unwrap(), "--in-place"]);
    assert_eq!(o.code, 1);
    assert!(o.err.contains("SESSION_MISMATCH"), "{}", o.err);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), before);

    let both = w.run(&["merge", &a, &a, "--in-place", "--out", "x.jsonl"]);
    assert_eq!(both.code, 2);
    assert!(both.err.contains("not both"), "{}", both.err);
}
