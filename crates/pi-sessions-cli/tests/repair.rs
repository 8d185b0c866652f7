//! `repair`: round trips on every fixture (the repaired file verifies, every record readers keep is
//! still there), `--out`, `--in-place` with a backup, stdout, and refusals.

mod common;
use common::*;

use pi_session_core::inspect::{self, split_lines, Severity};
use pi_session_core::json::{self, Value};
use pi_sessions_cli::repair_bytes;

fn all_fixtures() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["", "cycles/"] {
        for e in std::fs::read_dir(fixture(dir)).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.ends_with(".jsonl") {
                out.push(format!("{dir}{n}"));
            }
        }
    }
    out.sort();
    out
}

/// What readers keep of a file: every line that parses to a truthy value (BOM, CR and invalid
/// UTF-8 read the way readers read them).
fn records(bytes: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, (s, e)) in split_lines(bytes).into_iter().enumerate() {
        let mut line = &bytes[s..e];
        if i == 0 {
            line = line.strip_prefix(inspect::BOM).unwrap_or(line);
        }
        let text = String::from_utf8_lossy(line);
        if let Ok(v) = json::parse(text.as_bytes()) {
            if v.is_truthy() {
                out.push(v);
            }
        }
    }
    out
}

/// A record with the keys repair may rewrite removed.
fn without_links(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        for k in ["id", "parentId", "firstKeptEntryId"] {
            o.remove(k);
        }
    }
    v
}

/// Findings repair leaves on purpose: records it must keep as they are.
const LEFT_ALONE: &[&str] = &["non-object", "extra-header"];

#[test]
fn every_fixture_round_trips_to_a_file_without_problems_keeping_every_record() {
    for name in all_fixtures() {
        let original = std::fs::read(fixture(&name)).unwrap();
        let r = repair_bytes(&original, Some("2025-01-15T10-00-00-000Z_sess-fixed.jsonl"));
        let after = inspect::inspect(&r.bytes);
        let left: Vec<&str> = after
            .findings
            .iter()
            .filter(|f| f.severity != Severity::Note)
            .map(|f| f.code)
            .collect();
        assert!(
            left.iter().all(|c| LEFT_ALONE.contains(c)),
            "{name}: still {:?}",
            after.findings
        );
        assert_eq!(after.errors(), 0, "{name}");
        // Every record readers keep is still there (ids and links may have been fixed).
        let before = records(&original);
        let now = records(&r.bytes);
        let added_header = usize::from(
            before
                .iter()
                .all(|v| !matches!(v.get("type"), Some(Value::String(t)) if t.eq_str("session"))),
        );
        assert_eq!(
            now.len(),
            before.len() + added_header,
            "{name}: record count"
        );
        let mut pool: Vec<Value> = now.iter().map(without_links).collect();
        for rec in &before {
            let key = without_links(rec);
            let header = matches!(rec.get("type"), Some(Value::String(t)) if t.eq_str("session"));
            let found = pool.iter().position(|v| {
                *v == key
                    || header && {
                        // A header may get a string id.
                        matches!(v.get("type"), Some(Value::String(t)) if t.eq_str("session"))
                    }
            });
            let at = found.unwrap_or_else(|| panic!("{name}: lost record {}", json::to_json(rec)));
            pool.remove(at);
        }
        // Repairing again changes nothing.
        let again = repair_bytes(&r.bytes, None);
        assert_eq!(again.bytes, r.bytes, "{name}: repair is idempotent");
        assert!(r.bytes.ends_with(b"\n") || r.bytes.is_empty(), "{name}");
    }
}

#[test]
fn unchanged_lines_keep_their_bytes_and_changes_are_reported_by_line() {
    let original = std::fs::read(fixture("blank-and-malformed-lines.jsonl")).unwrap();
    let r = repair_bytes(&original, None);
    let text = String::from_utf8(r.bytes.clone()).unwrap();
    for line in text.lines() {
        assert!(
            String::from_utf8_lossy(&original)
                .lines()
                .any(|l| l == line),
            "kept byte for byte: {line}"
        );
    }
    let lines: Vec<Option<usize>> = r.actions.iter().map(|a| a.line).collect();
    assert_eq!(
        lines,
        [
            Some(2),
            Some(4),
            Some(5),
            Some(6),
            Some(7),
            Some(8),
            Some(10),
            Some(11)
        ]
    );
    assert_eq!(r.dropped, 8);
    assert_eq!(r.changed, 0);
}

#[test]
fn duplicates_keep_the_record_readers_resolve_and_cycles_are_cut() {
    let original = std::fs::read(fixture("cycles/duplicate-id-cycle.jsonl")).unwrap();
    let r = repair_bytes(&original, None);
    let text = String::from_utf8(r.bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The later c6000002 keeps its id; the earlier one is renamed.
    assert!(lines[4].contains("\"id\":\"c6000002\""), "{text}");
    assert!(!lines[2].contains("\"id\":\"c6000002\""), "{text}");
    assert!(lines[2].contains("original c6000002"));
    // The cycle c6000003 <-> c6000002 is cut at its first entry in file order.
    assert!(
        lines[3].contains("\"id\":\"c6000003\",\"parentId\":null"),
        "{text}"
    );
}

#[test]
fn repair_writes_a_new_file_with_out_and_reports_what_it_did() {
    let w = World::new("repair-out");
    let out = w.root.join("fixed.jsonl");
    let o = w.run(&[
        "repair",
        fixture("torn-last-line.jsonl").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(
        o.out
            .contains("torn-last-line.jsonl:4: dropped the torn last line"),
        "{}",
        o.out
    );
    assert!(o.out.contains("3 records kept (0 changed), 1 line dropped"));
    assert!(o.out.contains("✓ the repaired file verifies clean"));
    let v = w.run(&["verify", out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "{}", v.out);
    // --out never overwrites.
    let again = w.run(&[
        "repair",
        fixture("torn-last-line.jsonl").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.code, 2);
    assert!(again.err.contains("exists"));
}

#[test]
fn in_place_keeps_a_backup_of_the_original() {
    let w = World::new("repair-inplace");
    let p = w.add(FIXTURE_CWD, "nul-line.jsonl", "n.jsonl");
    let original = std::fs::read(&p).unwrap();
    let o = w.run(&["repair", p.to_str().unwrap(), "--in-place"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let bak = p.with_file_name("n.jsonl.bak");
    assert_eq!(std::fs::read(&bak).unwrap(), original);
    assert!(o.out.contains("Kept the original as"));
    assert_eq!(w.run(&["verify", p.to_str().unwrap()]).code, 0);
    // A clean file is left alone.
    let again = w.run(&["repair", p.to_str().unwrap(), "--in-place"]);
    assert_eq!(again.code, 0);
    assert!(again.out.contains("Nothing to repair"), "{}", again.out);
    assert!(!p.with_file_name("n.jsonl.bak.1").exists());
}

#[test]
fn without_out_the_repaired_file_goes_to_stdout_and_the_report_to_stderr() {
    let w = World::new("repair-stdout");
    let o = w.run(&["repair", fixture("crlf.jsonl").to_str().unwrap()]);
    assert_eq!(o.code, 0);
    assert!(!o.out.contains('\r'));
    assert_eq!(o.out.lines().count(), 4);
    assert!(o.err.contains("made 4 CRLF line end(s) LF"), "{}", o.err);
    let both = w.run(&[
        "repair",
        fixture("crlf.jsonl").to_str().unwrap(),
        "--in-place",
        "--out",
        "x",
    ]);
    assert_eq!(both.code, 2);
}

#[test]
fn records_repair_must_keep_leave_a_problem_and_exit_1() {
    let w = World::new("repair-left");
    let out = w.root.join("n.jsonl");
    let o = w.run(&[
        "repair",
        fixture("non-object-lines.jsonl").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 1);
    assert!(o.out.contains("Left as they are"), "{}", o.out);
    assert!(o.out.contains("[non-object]"));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.lines().any(|l| l == "42") && text.lines().any(|l| l == "[1,2]"));
    assert!(!text.lines().any(|l| l == "null"));
}

#[test]
fn a_missing_header_is_rebuilt_from_the_file_name() {
    let r = repair_bytes(
        b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2025-01-15T10:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n",
        Some("2025-01-15T10-00-00-000Z_0193f0a0-1111-7000-8000-00000000000a.jsonl"),
    );
    let first = String::from_utf8(r.bytes)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(
        first,
        r#"{"type":"session","version":3,"id":"0193f0a0-1111-7000-8000-00000000000a","timestamp":"2025-01-15T10:00:00.000Z","cwd":""}"#
    );
}

#[test]
fn a_torn_record_is_split_from_the_entry_glued_after_it_which_is_kept_byte_for_byte() {
    let w = World::new("repair-glued");
    let (bytes, b) = glued_session();
    let p = w.root.join("g.jsonl");
    std::fs::write(&p, &bytes).unwrap();
    let out = w.root.join("fixed.jsonl");
    let o = w.run(&[
        "repair",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{}{}", o.out, o.err);
    assert!(
        o.out
            .contains("g.jsonl:3: split a torn record from the entry glued after it: dropped its"),
        "{}",
        o.out
    );
    assert!(o
        .out
        .contains("g.jsonl:3: kept the entry glued after the torn record"));
    assert!(
        o.out.contains("4 records kept (0 changed), 1 line dropped"),
        "{}",
        o.out
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2], b);
    assert!(o.out.contains("✓ the repaired file verifies clean"));
    assert_eq!(w.run(&["verify", out.to_str().unwrap()]).code, 0);
}
