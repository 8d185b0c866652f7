//! Session files whose header is not their first record: oh-my-pi writes a fixed-width `title`
//! record before it. Such records (objects of no pi type with neither `id` nor `parentId`,
//! directly followed by the header) are kept where they are and are no entries; a file without a
//! header after them stays no session, as does one whose leading record could be an entry.

use std::fs;
use std::path::{Path, PathBuf};

use pi_session_core::file::scan;
use pi_session_core::record::Kind;
use pi_session_core::{listing, session, ErrorCode};

mod common;
use common::{open, temp_dir};

const TITLE: &str = r#"{"type":"title","v":1,"title":"Fix the parser","source":"auto","updatedAt":"2026-01-01T00:00:00.000Z","pad":"      "}"#;
const HEADER: &str = r#"{"type":"session","version":3,"id":"sess-title-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

fn message(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"{role}","content":"{text}","timestamp":1767225601000}}}}"#
    )
}

fn write(dir: &Path, name: &str, lines: &[&str]) -> PathBuf {
    let p = dir.join(name);
    let mut text = lines.join("\n");
    text.push('\n');
    fs::write(&p, text).unwrap();
    p
}

fn titled(dir: &Path) -> PathBuf {
    let u = message("a1", None, "user", "hello");
    let a = message("a2", Some("a1"), "assistant", "hi");
    write(dir, "titled.jsonl", &[TITLE, HEADER, &u, &a])
}

#[test]
fn a_title_record_before_the_header_is_kept_but_is_no_entry() -> pi_session_core::Result<()> {
    let dir = temp_dir("lead-load");
    let file = titled(&dir);
    let before = fs::read(&file).unwrap();
    let s = open(&dir, &file)?;
    assert_eq!(s.session_id(), "sess-title-1");
    assert_eq!(s.record_count(), 4);
    assert_eq!(s.meta(0).kind, Kind::Leading);
    assert_eq!(s.header_pos(), Some(1));
    assert_eq!(s.entry_positions(), vec![2, 3]);
    assert_eq!(s.entry_count(), 2);
    assert_eq!(s.leaf_key(), Some("\"a2\""));
    assert_eq!(s.context_path(), vec![2, 3]);
    assert_eq!(fs::read(&file).unwrap(), before, "loading changes nothing");
    Ok(())
}

#[test]
fn appends_go_after_the_last_entry_and_the_title_stays_the_first_line(
) -> pi_session_core::Result<()> {
    let dir = temp_dir("lead-append");
    let file = titled(&dir);
    let mut s = open(&dir, &file)?;
    let m = message("a3", Some("a2"), "user", "more");
    s.append(m.as_bytes())?;
    let text = fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], TITLE);
    assert_eq!(lines[1], HEADER);
    assert_eq!(lines.last(), Some(&m.as_str()));
    let again = open(&dir, &file)?;
    assert_eq!(again.entry_positions(), vec![2, 3, 4]);
    Ok(())
}

#[test]
fn leading_records_without_a_header_after_them_are_still_no_session() {
    let dir = temp_dir("lead-noheader");
    let other = r#"{"type":"note","text":"x"}"#;
    let file = write(&dir, "no-header.jsonl", &[TITLE, other]);
    let before = fs::read(&file).unwrap();
    let err = open(&dir, &file).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidSessionFile);
    assert_eq!(fs::read(&file).unwrap(), before);
    assert!(listing::read_header_for_discovery(&file).is_none());
    assert!(listing::summarize_file_parts(&file, None).is_none());
}

#[test]
fn a_record_with_a_tree_role_or_a_pi_type_before_the_header_leaves_the_file_invalid() {
    let dir = temp_dir("lead-treerole");
    for (name, lead) in [
        ("id.jsonl", r#"{"type":"title","id":"t1"}"#.to_owned()),
        (
            "parent.jsonl",
            r#"{"type":"title","parentId":null}"#.to_owned(),
        ),
        ("message.jsonl", message("m0", None, "user", "early")),
        ("scalar.jsonl", "5".to_owned()),
        // A v1 message has no id yet, but it is conversation: it must not be hidden as a title.
        (
            "v1-message.jsonl",
            r#"{"type":"message","message":{"role":"user","content":"early"}}"#.to_owned(),
        ),
        (
            "label.jsonl",
            r#"{"type":"label","targetId":"x"}"#.to_owned(),
        ),
    ] {
        let file = write(&dir, name, &[&lead, HEADER]);
        let err = open(&dir, &file).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidSessionFile, "{name}");
        assert!(
            listing::read_header_for_discovery(&file).is_none(),
            "{name}"
        );
        assert!(
            listing::summarize_file_parts(&file, None).is_none(),
            "{name}"
        );
    }
}

#[test]
fn a_v1_file_with_a_title_migrates_its_entries_and_keeps_the_title_bytes(
) -> pi_session_core::Result<()> {
    let dir = temp_dir("lead-v1");
    // The compaction keeps from index 1 (the header is index 0, as its writer counted).
    let lines = [
        TITLE,
        r#"{"type":"session","id":"sess-v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"one"}}"#,
        r#"{"type":"compaction","timestamp":"2026-01-01T00:00:02.000Z","summary":"s","firstKeptEntryIndex":1,"tokensBefore":5}"#,
    ];
    let file = write(&dir, "v1.jsonl", &lines);
    let s = open(&dir, &file)?;
    let text = fs::read_to_string(&file).unwrap();
    let written: Vec<&str> = text.lines().collect();
    assert_eq!(written[0], TITLE, "the title keeps its place and bytes");
    assert!(written[1].contains("\"version\":3"));
    assert_eq!(s.meta(0).kind, Kind::Leading);
    assert_eq!(s.entry_positions(), vec![2, 3]);
    let first_id = s.meta(2).id.to_string();
    assert_eq!(&*s.meta(3).first_kept, first_id.as_str());
    assert_eq!(&*s.meta(2).parent, "null");
    Ok(())
}

#[test]
fn the_streaming_scan_marks_leading_records_like_the_loader() {
    let dir = temp_dir("lead-scan");
    let file = titled(&dir);
    let scan = scan::scan_file(&file).unwrap().unwrap();
    let kinds: Vec<Kind> = scan.recs.iter().map(|r| r.2.kind).collect();
    assert_eq!(
        kinds,
        vec![Kind::Leading, Kind::Header, Kind::Message, Kind::Message]
    );
    assert_eq!(scan.header_id, "sess-title-1");
}

#[test]
fn discovery_and_listing_find_the_header_after_a_title() {
    let dir = temp_dir("lead-list");
    let file = titled(&dir);
    let h = listing::read_header_for_discovery(&file).expect("a session");
    assert_eq!(h.id, "sess-title-1");
    assert_eq!(h.cwd.as_deref(), Some("/w"));
    assert_eq!(
        listing::find_most_recent(&dir, Some("/w"), listing::NameOrder::Bytes),
        Some(file.clone())
    );
    assert_eq!(
        listing::find_by_id(&dir, "sess-title-1", None, listing::NameOrder::System),
        Some(file.clone())
    );
    let summary = listing::summarize_file_parts(&file, None).expect("listed");
    assert!(
        matches!(&summary.info.id, Some(pi_session_core::json::Value::String(id)) if id.eq_str("sess-title-1"))
    );
    assert_eq!(summary.info.message_count, 2);
    assert_eq!(summary.first_message, "hello");
}

#[test]
fn a_fork_starts_with_its_own_header_and_leaves_the_title_with_the_source(
) -> pi_session_core::Result<()> {
    let dir = temp_dir("lead-fork");
    let file = titled(&dir);
    let out = dir.join("forks");
    fs::create_dir_all(&out).unwrap();
    let forked = session::fork(&file, "/w", &out, None, Default::default())?;
    let text = fs::read_to_string(&forked.file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with(r#"{"type":"session""#));
    assert!(!text.contains("\"type\":\"title\""));
    Ok(())
}

#[test]
fn a_branched_session_from_a_titled_file_holds_only_the_path() -> pi_session_core::Result<()> {
    let dir = temp_dir("lead-branch");
    let file = titled(&dir);
    let mut s = open(&dir, &file)?;
    let branched = s
        .create_branched_session(Some("\"a2\""), "a2")?
        .expect("a file");
    let text = fs::read_to_string(&branched).unwrap();
    assert!(text.starts_with(r#"{"type":"session""#));
    assert!(!text.contains("\"type\":\"title\""));
    assert_eq!(s.entry_positions(), vec![1, 2]);
    Ok(())
}

#[test]
fn verify_reports_a_title_before_the_header_as_a_warning_and_checks_the_entries_after_it() {
    use pi_session_core::inspect::{inspect, Severity};
    let u = message("a1", None, "user", "hello");
    let text = format!("{TITLE}\n{HEADER}\n{u}\n");
    let found = inspect(text.as_bytes());
    let codes: Vec<(&str, Severity)> = found
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Note)
        .map(|f| (f.code, f.severity))
        .collect();
    assert_eq!(codes, vec![("records-before-header", Severity::Warning)]);
    assert_eq!(found.entries, 1);
    let entry_first = format!("{u}\n{HEADER}\n");
    let found = inspect(entry_first.as_bytes());
    assert!(found
        .findings
        .iter()
        .any(|f| f.code == "header-not-first" && f.severity == Severity::Error));
}
