//! `move`: the dry run changes nothing, `--yes` moves (and a second run has nothing to do),
//! `--json`, and the refusals (no sessions, the same directory).

mod common;
use common::*;

const NEW_CWD: &str = "/tmp/pi-fixture-project-renamed";
const ENTRY: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#;

fn header(id: &str, cwd: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{cwd}"}}"#
    )
}

fn world(name: &str) -> World {
    let w = World::new(name);
    w.write(
        FIXTURE_CWD,
        "one.jsonl",
        &format!("{}\n{ENTRY}\n", header("s-1", FIXTURE_CWD)),
    );
    w.write(
        FIXTURE_CWD,
        "two.jsonl",
        &format!("{}\n{ENTRY}\n{{broken\n", header("s-2", FIXTURE_CWD)),
    );
    w
}

#[test]
fn a_dry_run_shows_the_plan_and_changes_nothing() {
    let w = world("move-dry");
    let o = w.run(&["move", FIXTURE_CWD, NEW_CWD]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.contains("dry run"), "{}", o.out);
    assert!(o.out.contains("one.jsonl"), "{}", o.out);
    assert!(
        o.out.contains(&format!("cwd: {FIXTURE_CWD} -> {NEW_CWD}")),
        "{}",
        o.out
    );
    assert!(o.out.contains("2 files to move"), "{}", o.out);
    assert!(w.project_dir(FIXTURE_CWD).join("one.jsonl").exists());
    assert!(!w.project_dir(NEW_CWD).exists());
}

#[test]
fn yes_moves_the_files_and_a_second_run_has_nothing_to_do() {
    let w = world("move-yes");
    let o = w.run(&["move", FIXTURE_CWD, NEW_CWD, "--yes"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(
        o.out.contains("Moved 2 files, skipped 0 files."),
        "{}",
        o.out
    );
    let new = w.project_dir(NEW_CWD);
    assert_eq!(
        std::fs::read_to_string(new.join("two.jsonl")).unwrap(),
        format!("{}\n{ENTRY}\n{{broken\n", header("s-2", NEW_CWD))
    );
    assert!(!w.project_dir(FIXTURE_CWD).join("one.jsonl").exists());

    let again = w.run(&["move", FIXTURE_CWD, NEW_CWD, "--yes"]);
    assert_eq!(again.code, 0, "{}", again.err);
    assert!(again.out.contains("Nothing to move"), "{}", again.out);
}

#[test]
fn json_reports_each_file_with_its_rewrites() {
    let w = world("move-json");
    // A destination that is another session is refused; the other file moves.
    w.write(
        NEW_CWD,
        "two.jsonl",
        &format!("{}\n{ENTRY}\n", header("other", NEW_CWD)),
    );
    let o = w.run(&["move", FIXTURE_CWD, NEW_CWD, "--yes", "--json"]);
    assert_eq!(o.code, 1, "{}", o.err);
    assert_eq!(o.out.lines().count(), 1);
    let v = json(&o.out);
    assert_eq!(s(v.get("from")).as_deref(), Some(FIXTURE_CWD));
    assert_eq!(s(v.get("to")).as_deref(), Some(NEW_CWD));
    assert!(v.get("applied").and_then(|a| a.as_bool()).unwrap());
    assert_eq!(n(v.get("moved")), Some(1.0));
    assert_eq!(n(v.get("skipped")), Some(1.0));
    let files = arr(v.get("files").unwrap());
    assert_eq!(files.len(), 2);
    assert_eq!(s(files[0].get("id")).as_deref(), Some("s-1"));
    assert_eq!(s(files[0].get("action")).as_deref(), Some("move"));
    assert_eq!(s(files[0].get("status")).as_deref(), Some("moved"));
    let rw = arr(files[0].get("rewrites").unwrap());
    assert_eq!(s(rw[0].get("field")).as_deref(), Some("cwd"));
    assert_eq!(s(rw[0].get("to")).as_deref(), Some(NEW_CWD));
    assert_eq!(s(files[1].get("status")).as_deref(), Some("skipped"));
    assert_eq!(s(files[1].get("reason")).as_deref(), Some("other-session"));
    assert!(w.project_dir(FIXTURE_CWD).join("two.jsonl").exists());
}

#[test]
fn no_sessions_and_the_same_directory_are_refused() {
    let w = world("move-refuse");
    let o = w.run(&["move", "/tmp/pi-no-such-project", NEW_CWD]);
    assert_eq!(o.code, 3, "nothing to move is 'not found'");
    assert!(
        o.err.contains("no sessions for /tmp/pi-no-such-project"),
        "{}",
        o.err
    );
    assert!(!w.project_dir(NEW_CWD).exists());
    let same = w.run(&["move", FIXTURE_CWD, &format!("{FIXTURE_CWD}/")]);
    assert_eq!(same.code, 2);
    assert!(same.err.contains("same session directory"), "{}", same.err);
}

#[test]
fn a_file_under_a_live_lease_is_reported_and_the_rest_moves() {
    let w = world("move-lease");
    let held = w.project_dir(FIXTURE_CWD).join("two.jsonl");
    let lease = pi_session_core::lock::acquire(&held).unwrap();
    let dry = w.run(&["move", FIXTURE_CWD, NEW_CWD]);
    assert_eq!(dry.code, 1, "{}", dry.err);
    assert!(dry.out.contains("skip "), "{}", dry.out);
    assert!(dry.out.contains("held by a session writer"), "{}", dry.out);
    let o = w.run(&["move", FIXTURE_CWD, NEW_CWD, "--yes"]);
    assert_eq!(o.code, 1, "{}", o.err);
    assert!(o.out.contains("Moved 1 file, skipped 1 file."), "{}", o.out);
    assert!(held.exists());
    drop(lease);
    let rest = w.run(&["move", FIXTURE_CWD, NEW_CWD, "--yes"]);
    assert_eq!(rest.code, 0, "{}", rest.err);
    assert!(!held.exists());
}
