//! `show`: the transcript of the active branch, `--json`, `--branch`, and files it cannot show.

mod common;
use common::*;

#[test]
fn show_prints_the_active_branch_as_a_transcript() {
    let w = World::new("show-text");
    let o = w.run(&["show", fixture("v3-conversation.jsonl").to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.err);
    let t = &o.out;
    assert!(t.starts_with("Listing files\n"), "{t}");
    assert!(t.contains("● user  10:00:04  e0000004"), "{t}");
    assert!(t.contains("  List the files in src/"));
    assert!(t.contains("● assistant  anthropic/claude-sonnet-4-5  10:00:05  e0000005"));
    assert!(t.contains("▸ thinking, 1 line folded"), "thinking folded");
    assert!(!t.contains("Use ls."), "folded thinking text is hidden");
    assert!(
        t.contains("⚙ bash command: \"ls src\""),
        "tool call summarized"
    );
    assert!(t.contains("↳ tool result  bash"));
    assert!(t.contains("  │ a.ts"));
    assert!(t.contains("e0000007  [answer]"), "labels in brackets");
    assert!(t.contains("◆ branch summary"), "summaries marked");
    assert!(t.contains("· model → anthropic/claude-sonnet-4-5  e0000001"));
    assert!(t.contains("· session named “Listing files”"));
    assert!(t.contains("reminder (extension message)"));
    // The abandoned branch is not on the active one.
    assert!(!t.contains("abandoned alternative reply"));
    assert!(t.contains("17 of 19 entries on this branch, leaf e0000019"));
}

#[test]
fn full_unfolds_thinking_and_arguments() {
    let w = World::new("show-full");
    let o = w.run(&[
        "show",
        fixture("v3-conversation.jsonl").to_str().unwrap(),
        "--full",
    ]);
    assert!(o.out.contains("┆ Use ls."), "{}", o.out);
    assert!(o.out.contains("\"command\": \"ls src\""));
}

#[test]
fn show_json_holds_the_branch_entries_as_stored() {
    let w = World::new("show-json");
    let f = fixture("v3-conversation.jsonl");
    let o = w.run(&["show", f.to_str().unwrap(), "--json"]);
    assert_eq!(o.code, 0);
    let doc = json(&o.out);
    let ids: Vec<String> = arr(doc.get("entries").unwrap())
        .iter()
        .map(|e| s(e.get("id")).unwrap())
        .collect();
    let exp: Vec<String> = arr(expect("v3-conversation.jsonl").get("branch").unwrap())
        .iter()
        .map(|v| s(Some(v)).unwrap())
        .collect();
    assert_eq!(ids, exp);
    assert_eq!(s(doc.get("leafId")).unwrap(), "e0000019");
    assert_eq!(s(doc.get("name")).unwrap(), "Listing files");
    assert_eq!(
        s(doc.get("id")).unwrap(),
        "0193f0a0-1111-7000-8000-000000000001"
    );
    assert_eq!(s(doc.get("cwd")).unwrap(), FIXTURE_CWD);
    let labels = doc.get("labels").unwrap();
    assert_eq!(s(labels.get("e0000007")).unwrap(), "answer");
    assert!(labels.get("e0000004").is_none(), "a cleared label is gone");
    // Entries are the stored objects: the file's line for e0000005 is in the output verbatim.
    let line = std::fs::read_to_string(&f)
        .unwrap()
        .lines()
        .find(|l| l.contains("\"id\":\"e0000005\""))
        .unwrap()
        .to_owned();
    assert!(o.out.contains(&line));
}

#[test]
fn branch_shows_the_path_to_another_entry_by_id_or_prefix() {
    let w = World::new("show-branch");
    let f = fixture("v3-conversation.jsonl");
    let o = w.run(&[
        "show",
        f.to_str().unwrap(),
        "--branch",
        "e0000011",
        "--json",
    ]);
    let doc = json(&o.out);
    let ids: Vec<String> = arr(doc.get("entries").unwrap())
        .iter()
        .map(|e| s(e.get("id")).unwrap())
        .collect();
    assert_eq!(ids, ["e0000001", "e0000002", "e0000004", "e0000011"]);
    let t = w.run(&["show", f.to_str().unwrap(), "-b", "e0000011"]);
    assert!(t.out.contains("(abandoned alternative reply)"));
    let amb = w.run(&["show", f.to_str().unwrap(), "--branch", "e00000"]);
    assert_eq!(amb.code, 2);
    assert!(amb.err.contains("ambiguous"), "{}", amb.err);
    let none = w.run(&["show", f.to_str().unwrap(), "--branch", "zzz"]);
    assert_eq!(
        none.code, 3,
        "no such entry is 'not found', not a usage error"
    );
    assert!(none.err.contains("no entry with id zzz"));
}

#[test]
fn old_versions_are_shown_without_touching_the_file() {
    let w = World::new("show-v1");
    let p = w.add(FIXTURE_CWD, "v1-linear.jsonl", "v1.jsonl");
    let before = std::fs::read(&p).unwrap();
    let o = w.run(&["show", p.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.contains("hello v1"));
    assert!(o.out.contains("◆ compaction"));
    assert_eq!(std::fs::read(&p).unwrap(), before, "no migration rewrite");
    let dir: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
    assert_eq!(dir.len(), 1, "no backup either");
    // No newline repair of an unterminated file either.
    let q = w.add(FIXTURE_CWD, "no-trailing-newline.jsonl", "nt.jsonl");
    let before = std::fs::read(&q).unwrap();
    assert_eq!(w.run(&["show", q.to_str().unwrap()]).code, 0);
    assert_eq!(std::fs::read(&q).unwrap(), before);
}

#[test]
fn a_file_readers_reject_is_an_error_that_names_file_and_line() {
    let w = World::new("show-bad");
    let f = fixture("not-a-session.jsonl");
    let o = w.run(&["show", f.to_str().unwrap()]);
    assert_eq!(o.code, 1);
    assert!(o.err.contains("not-a-session.jsonl:1:"), "{}", o.err);
    assert!(o.err.contains("not a valid pi session"));
    let missing = w.run(&["show", "./nope.jsonl"]);
    assert_eq!(missing.code, 3);
    assert!(missing.err.contains("nope.jsonl: no such file"));
}

#[test]
fn cycles_do_not_hang_show_or_tree() {
    let w = World::new("show-cycles");
    for f in [
        "two-node-cycle",
        "self-parent",
        "cycle-below-leaf",
        "duplicate-id-cycle",
    ] {
        let p = fixture(&format!("cycles/{f}.jsonl"));
        let o = w.run(&["show", p.to_str().unwrap()]);
        assert_eq!(o.code, 0, "{f}: {}", o.err);
        let t = w.run(&["tree", p.to_str().unwrap()]);
        assert_eq!(t.code, 0, "{f}: {}", t.err);
    }
}

#[test]
fn session_text_cannot_smuggle_terminal_escapes() {
    let w = World::new("show-escape");
    let p = w.write(
        FIXTURE_CWD,
        "esc.jsonl",
        concat!(
            r#"{"type":"session","version":3,"id":"esc","timestamp":"2025-01-15T10:00:00.000Z","cwd":"/tmp/pi-fixture-project"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-15T10:00:01.000Z","message":{"role":"user","content":"red \u001b[31m text \u0007"}}"#,
            "\n"
        ),
    );
    let o = w.run(&["show", p.to_str().unwrap()]);
    assert!(
        !o.out.contains('\x1b') && !o.out.contains('\x07'),
        "{:?}",
        o.out
    );
    assert!(o.out.contains("red \u{FFFD}[31m text"));
}

#[test]
fn show_includes_an_entry_glued_after_a_torn_record_on_the_branch() {
    let w = World::new("show-glued");
    let p = w.root.join("g.jsonl");
    std::fs::write(&p, glued_session().0).unwrap();
    let o = w.run(&["show", p.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.contains("  glued reply"), "{}", o.out);
    assert!(
        o.out.contains("3 of 3 entries on this branch, leaf c"),
        "{}",
        o.out
    );
}
