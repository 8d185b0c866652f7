//! `verify`: findings with line numbers on damaged fixtures, exit codes, directories, `--json`.

mod common;
use common::*;

/// (fixture, expected (code, line) findings that are errors or warnings).
const DAMAGED: &[(&str, &[(&str, usize)])] = &[
    ("torn-last-line.jsonl", &[("torn-last-line", 4)]),
    (
        "blank-and-malformed-lines.jsonl",
        &[
            ("blank-line", 2),
            ("blank-line", 4),
            ("malformed-line", 5),
            ("blank-line", 6),
            ("malformed-line", 7),
            ("malformed-line", 8),
            ("blank-line", 10),
            ("blank-line", 11),
        ],
    ),
    (
        "nul-line.jsonl",
        &[("malformed-line", 3), ("malformed-line", 4)],
    ),
    ("no-trailing-newline.jsonl", &[("no-trailing-newline", 4)]),
    ("crlf.jsonl", &[("crlf", 1)]),
    ("bom-header.jsonl", &[("bom", 1)]),
    ("not-a-session.jsonl", &[("header-not-first", 1)]),
    ("header-numeric-id.jsonl", &[("header-id", 1)]),
    ("duplicate-ids.jsonl", &[("duplicate-id", 5)]),
    ("dangling-parent.jsonl", &[("dangling-parent", 4)]),
    (
        "extra-header-lines.jsonl",
        &[("extra-header", 4), ("extra-header", 6)],
    ),
    ("invalid-utf8.jsonl", &[("invalid-utf8", 2)]),
    ("cycles/self-parent.jsonl", &[("cycle", 3)]),
    ("cycles/two-node-cycle.jsonl", &[("cycle", 3)]),
    ("cycles/cycle-below-leaf.jsonl", &[("cycle", 2)]),
    (
        "cycles/duplicate-id-cycle.jsonl",
        &[("cycle", 4), ("duplicate-id", 5)],
    ),
];

const CLEAN: &[&str] = &[
    "v3-conversation.jsonl",
    "v3-compaction-context-edit.jsonl",
    "v3-retained-tail.jsonl",
    "v3-retained-tail-and-first-kept.jsonl",
    "header-only.jsonl",
    "unknown-types-and-fields.jsonl",
    "v1-linear.jsonl",
    "v2-hookmessage.jsonl",
    "v4-future-version.jsonl",
];

#[test]
fn damaged_fixtures_report_each_problem_at_its_line_and_exit_1() {
    let w = World::new("verify-damaged");
    for (name, want) in DAMAGED {
        let p = fixture(name);
        let o = w.run(&["verify", p.to_str().unwrap(), "--json"]);
        assert_eq!(o.code, 1, "{name}: {}", o.out);
        let doc = json(&o.out);
        let file = &arr(doc.get("files").unwrap())[0];
        assert_eq!(file.get("ok").and_then(|v| v.as_bool()), Some(false));
        let got: Vec<(String, usize)> = arr(file.get("findings").unwrap())
            .iter()
            .filter(|f| s(f.get("severity")).as_deref() != Some("note"))
            .map(|f| {
                (
                    s(f.get("code")).unwrap(),
                    n(f.get("line")).unwrap_or(0.0) as usize,
                )
            })
            .collect();
        let want: Vec<(String, usize)> = want.iter().map(|(c, l)| (c.to_string(), *l)).collect();
        assert_eq!(got, want, "{name}");
        // The text form names file and line.
        let t = w.run(&["verify", p.to_str().unwrap()]);
        let (code, line) = &want[0];
        assert!(
            t.out.contains(&format!("{}:{line}: ", p.display()))
                && t.out.contains(&format!("[{code}]")),
            "{name}: {}",
            t.out
        );
    }
}

#[test]
fn torn_lines_and_cycles_say_what_happened() {
    let w = World::new("verify-messages");
    let t = w.run(&["verify", fixture("torn-last-line.jsonl").to_str().unwrap()]);
    assert!(
        t.out
            .contains("error: torn last line (an interrupted write"),
        "{}",
        t.out
    );
    let c = w.run(&[
        "verify",
        fixture("cycles/two-node-cycle.jsonl").to_str().unwrap(),
    ]);
    assert!(
        c.out
            .contains("parentId cycle \"c9000002\" -> \"c9000003\" -> \"c9000002\""),
        "{}",
        c.out
    );
    let d = w.run(&["verify", fixture("dangling-parent.jsonl").to_str().unwrap()]);
    assert!(
        d.out
            .contains("parentId \"missing0\" is not an entry of this file"),
        "{}",
        d.out
    );
    assert!(d
        .out
        .contains("1 file checked: 1 with problems (1 error, 0 warnings)"));
}

#[test]
fn clean_files_exit_0_and_old_versions_are_only_notes() {
    let w = World::new("verify-clean");
    for name in CLEAN {
        let p = fixture(name);
        let o = w.run(&["verify", p.to_str().unwrap()]);
        assert_eq!(o.code, 0, "{name}: {}", o.out);
        assert!(o.out.contains("✓"), "{name}: {}", o.out);
        assert!(o.out.contains("1 file checked, no problems"));
    }
    let v1 = w.run(&["verify", fixture("v1-linear.jsonl").to_str().unwrap()]);
    assert!(v1.out.contains("note: format version 1"), "{}", v1.out);
}

#[test]
fn dangling_references_other_than_parents_are_warnings() {
    let w = World::new("verify-refs");
    let p = w.write(
        FIXTURE_CWD,
        "r.jsonl",
        concat!(
            r#"{"type":"session","version":3,"id":"r","timestamp":"2025-01-15T10:00:00.000Z","cwd":"/x"}"#, "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-15T10:00:01.000Z","message":{"role":"user","content":"x"}}"#, "\n",
            r#"{"type":"compaction","id":"b","parentId":"a","timestamp":"2025-01-15T10:00:02.000Z","summary":"s","firstKeptEntryId":"gone","tokensBefore":1}"#, "\n",
            r#"{"type":"label","id":"c","parentId":"b","timestamp":"2025-01-15T10:00:03.000Z","targetId":"nowhere","label":"x"}"#, "\n",
            r#"{"type":"branch_summary","id":"d","parentId":"c","timestamp":"2025-01-15T10:00:04.000Z","fromId":"lost","summary":"s"}"#, "\n",
            r#"{"type":"message","id":"e","parentId":"d","timestamp":"2025-01-15T10:00:05.000Z","message":{"role":"user","content":null}}"#, "\n",
        ),
    );
    let o = w.run(&["verify", p.to_str().unwrap(), "--json"]);
    assert_eq!(o.code, 1);
    let doc = json(&o.out);
    let got: Vec<(String, String, usize)> =
        arr(arr(doc.get("files").unwrap())[0].get("findings").unwrap())
            .iter()
            .map(|f| {
                (
                    s(f.get("severity")).unwrap(),
                    s(f.get("code")).unwrap(),
                    n(f.get("line")).unwrap() as usize,
                )
            })
            .collect();
    assert_eq!(
        got,
        [
            ("warning".to_owned(), "dangling-first-kept".to_owned(), 3),
            ("warning".to_owned(), "dangling-target".to_owned(), 4),
            ("warning".to_owned(), "dangling-from".to_owned(), 5),
            ("error".to_owned(), "bad-content".to_owned(), 6),
        ]
    );
}

#[test]
fn a_directory_is_checked_file_by_file_and_no_argument_means_the_sessions_root() {
    let w = World::new("verify-dir");
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    w.add(FIXTURE_CWD, "torn-last-line.jsonl", "b.jsonl");
    w.add("/other", "crlf.jsonl", "c.jsonl");
    let o = w.run(&["verify"]);
    assert_eq!(o.code, 1);
    assert!(
        o.out.contains("b.jsonl:4: error: torn last line"),
        "{}",
        o.out
    );
    assert!(o.out.contains("c.jsonl:1: warning:"), "{}", o.out);
    assert!(
        !o.out.contains("a.jsonl"),
        "clean files only with --verbose"
    );
    assert!(
        o.out
            .contains("3 files checked: 2 with problems (1 error, 1 warning)"),
        "{}",
        o.out
    );
    let v = w.run(&[
        "verify",
        "--verbose",
        w.project_dir(FIXTURE_CWD).to_str().unwrap(),
    ]);
    assert!(
        v.out.contains("✓ ") && v.out.contains("a.jsonl"),
        "{}",
        v.out
    );
    assert!(v.out.contains("2 files checked"));
    let json_doc = json(&w.run(&["verify", "--json"]).out);
    assert_eq!(n(json_doc.get("checked")), Some(3.0));
    assert_eq!(n(json_doc.get("problems")), Some(2.0));
    let missing = w.run(&["verify", "/no/such/path"]);
    assert_eq!(missing.code, 3);
}

#[test]
fn an_empty_file_and_a_whitespace_file_are_problems() {
    let w = World::new("verify-empty");
    let e = w.run(&["verify", fixture("empty.jsonl").to_str().unwrap()]);
    assert_eq!(e.code, 1);
    assert!(e.out.contains("warning: empty file"), "{}", e.out);
    let ws = w.run(&["verify", fixture("whitespace-only.jsonl").to_str().unwrap()]);
    assert_eq!(ws.code, 1);
    assert!(ws.out.contains("error: no session header"), "{}", ws.out);
}

#[test]
fn verify_suggests_repair_only_for_problems_repair_fixes_so_the_two_agree_after_a_repair() {
    let w = World::new("verify-advice");
    let copy = "writes a repaired copy";
    let left = "`pi-sessions repair` leaves these as they are";
    // A torn last line: repair fixes all of it.
    let torn = fixture("damaged/garbage-last-line.jsonl");
    let o = w.run(&["verify", torn.to_str().unwrap()]);
    assert_eq!(o.code, 1);
    assert!(o.out.ends_with(&format!("{copy}.\n")), "{}", o.out);
    // Dangling parents (fixed) and dangling label targets (kept: dropping a label loses it).
    let mixed = fixture("damaged/dropped-lines.jsonl");
    let o = w.run(&["verify", mixed.to_str().unwrap()]);
    assert!(
        o.out.contains("it fixes 1 of these 2 problems"),
        "{}",
        o.out
    );
    let fixed = w.root.join("fixed.jsonl");
    let r = w.run(&[
        "repair",
        mixed.to_str().unwrap(),
        "--out",
        fixed.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "repair says a problem is left: {}", r.out);
    assert!(r.out.contains("[dangling-target]"), "{}", r.out);
    let after = w.run(&["verify", fixed.to_str().unwrap()]);
    assert_eq!(after.code, 1, "the warning is still there: {}", after.out);
    assert!(after.out.contains("[dangling-target]"), "{}", after.out);
    assert!(!after.out.contains(copy), "{}", after.out);
    assert!(after.out.contains(left), "{}", after.out);
    let doc = json(&w.run(&["verify", fixed.to_str().unwrap(), "--json"]).out);
    let files = arr(doc.get("files").unwrap());
    assert_eq!(n(files[0].get("repairable")), Some(0.0));
    let doc = json(&w.run(&["verify", mixed.to_str().unwrap(), "--json"]).out);
    assert_eq!(
        n(arr(doc.get("files").unwrap())[0].get("repairable")),
        Some(1.0)
    );
}

#[test]
fn a_torn_record_is_reported_and_the_entry_glued_after_it_leaves_no_dangling_parent() {
    let w = World::new("verify-glued");
    let p = w.root.join("g.jsonl");
    std::fs::write(&p, glued_session().0).unwrap();
    let o = w.run(&["verify", p.to_str().unwrap(), "--json"]);
    assert_eq!(o.code, 1, "{}", o.out);
    let doc = json(&o.out);
    let file = &arr(doc.get("files").unwrap())[0];
    let got: Vec<(String, f64)> = arr(file.get("findings").unwrap())
        .iter()
        .map(|f| (s(f.get("code")).unwrap(), n(f.get("line")).unwrap()))
        .collect();
    assert_eq!(got, [("torn-record".to_owned(), 3.0)], "{}", o.out);
    assert_eq!(n(file.get("entries")), Some(3.0));
}
