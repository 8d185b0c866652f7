//! `prune`: a dry run by default with the bytes it would save; `--yes` rewrites the file; the
//! branch you are on is refused.

mod common;
use common::*;

use std::fs;

const SESSION: &str = concat!(
    r#"{"type":"session","version":3,"id":"prune-cli","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/pi-fixture-project"}"#,
    "\n",
    r#"{"type":"message","id":"u1000001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"root"}}"#,
    "\n",
    r#"{"type":"message","id":"b1000001","parentId":"u1000001","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"side"}}"#,
    "\n",
    r#"{"type":"message","id":"b2000002","parentId":"b1000001","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"side 2"}}"#,
    "\n",
    r#"{"type":"message","id":"a1000001","parentId":"u1000001","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"main"}}"#,
    "\n",
);

#[test]
fn without_yes_prune_only_reports_what_would_go() {
    let w = World::new("prune-dry");
    let p = w.write(FIXTURE_CWD, "s.jsonl", SESSION);
    let o = w.run(&["prune", p.to_str().unwrap(), "b1"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(
        o.out.starts_with("Would remove 2 entries under b1000001"),
        "{}",
        o.out
    );
    assert!(o.out.contains("saves"), "{}", o.out);
    assert!(o.out.contains("pass --yes"), "{}", o.out);
    assert_eq!(fs::read_to_string(&p).unwrap(), SESSION, "nothing written");
}

#[test]
fn with_yes_prune_rewrites_the_file_without_the_branch() {
    let w = World::new("prune-yes");
    let p = w.write(FIXTURE_CWD, "s.jsonl", SESSION);
    let o = w.run(&["prune", p.to_str().unwrap(), "b1000001", "--yes"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.starts_with("Removed 2 entries"), "{}", o.out);
    let after = fs::read_to_string(&p).unwrap();
    assert!(!after.contains("b1000001") && !after.contains("b2000002"));
    assert_eq!(after.lines().count(), 3);
    let saved = SESSION.len() - after.len();
    assert!(saved > 0);
}

#[test]
fn prune_refuses_the_branch_you_are_on_and_unknown_entries() {
    let w = World::new("prune-refuse");
    let p = w.write(FIXTURE_CWD, "s.jsonl", SESSION);
    let o = w.run(&["prune", p.to_str().unwrap(), "a1000001", "--yes"]);
    assert_eq!(o.code, 1, "{}", o.out);
    assert!(
        o.err
            .contains("Cannot delete the branch you are currently on"),
        "{}",
        o.err
    );
    let o = w.run(&["prune", p.to_str().unwrap(), "zz"]);
    assert_ne!(o.code, 0);
    assert!(o.err.contains("no entry with id zz"), "{}", o.err);
    assert_eq!(fs::read_to_string(&p).unwrap(), SESSION);
}
