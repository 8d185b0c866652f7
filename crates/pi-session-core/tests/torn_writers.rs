//! A writer that dies mid-line takes no one else's entry with it: an entry glued after a torn
//! record is read by every reader (open in memory and streaming, a fork, a migration, a listing,
//! verify, a merge), and our appends never start after another writer's torn bytes.

use std::fs;
use std::path::Path;

use pi_session_core::record::string_key;
use pi_session_core::{inspect, listing, merge, session, Config, Error, Session, Tuning};

mod common;
use common::temp_dir;

type R = Result<(), Error>;

fn header(version: u32) -> String {
    format!(
        r#"{{"type":"session","version":{version},"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}}"#
    )
}

fn msg(id: &str, parent: &str, role: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}]}}}}"#
    )
}

/// The first 60 bytes of a tool result a killed writer was writing.
fn torn() -> String {
    msg("dead", "a", "toolResult", &"o".repeat(200))[..60].to_owned()
}

/// A session of `version`: a user message, then a line of torn bytes with an assistant reply
/// glued after them, then a user message that answers it.
fn glued_file(version: u32) -> String {
    let (a, b, c) = (
        msg("a", "s1", "user", "question"),
        msg("b", "a", "assistant", "answer"),
        msg("c", "b", "user", "thanks"),
    );
    let a = a.replace(r#""parentId":"s1""#, r#""parentId":null"#);
    format!("{}\n{a}\n{}{b}\n{c}\n", header(version), torn())
}

fn config(lazy_file_bytes: u64) -> Config {
    Config {
        tuning: Tuning {
            lazy_file_bytes,
            ..Tuning::PRODUCT
        },
        ..Config::default()
    }
}

fn open_with(dir: &Path, file: &Path, lazy_file_bytes: u64) -> Result<Session, Error> {
    let dir = dir.to_string_lossy().into_owned();
    let mut s = Session::with_config("/w".into(), dir, true, config(lazy_file_bytes))?;
    s.set_session_file(file.to_path_buf())?;
    Ok(s)
}

/// The ids of the branch from the root to the leaf.
fn branch_ids(s: &Session) -> Vec<String> {
    s.context_path()
        .into_iter()
        .map(|p| s.meta(p).id.to_string())
        .collect()
}

#[test]
fn open_reads_the_glued_entry_in_memory_and_streaming_and_leaves_the_file() -> R {
    let dir = temp_dir("glued-open");
    let file = dir.join("s.jsonl");
    let text = glued_file(3);
    fs::write(&file, &text).unwrap();
    // Read whole (the product's threshold), and in one streaming pass (every file).
    for lazy in [u64::MAX, 0] {
        let s = open_with(&dir, &file, lazy)?;
        assert_eq!(s.entry_count(), 3, "lazy at {lazy}");
        let b = s.lookup(&string_key("b")).expect("the glued entry is read");
        assert!(s.line(b)?.starts_with(br#"{"type":"message","id":"b""#));
        assert_eq!(
            branch_ids(&s),
            ["\"a\"", "\"b\"", "\"c\""],
            "lazy at {lazy}"
        );
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            text,
            "reading changed the file"
        );
    }
    fs::remove_dir_all(dir).unwrap();
    Ok(())
}

#[test]
fn a_fork_writes_the_glued_entry_on_a_line_of_its_own() -> R {
    let dir = temp_dir("glued-fork");
    let file = dir.join("s.jsonl");
    fs::write(&file, glued_file(3)).unwrap();
    let forked = session::fork(&file, "/t", &dir.join("forks"), None, Default::default())?;
    let text = fs::read_to_string(&forked.file).unwrap();
    assert!(text
        .lines()
        .any(|l| l == msg("b", "a", "assistant", "answer")));
    assert!(!text.contains(&torn()), "the torn bytes are no record");
    let s = open_with(&dir, &forked.file, u64::MAX)?;
    assert_eq!(branch_ids(&s), ["\"a\"", "\"b\"", "\"c\""]);
    fs::remove_dir_all(dir).unwrap();
    Ok(())
}

#[test]
fn a_migration_keeps_the_torn_bytes_and_the_entry_on_lines_of_their_own() -> R {
    let dir = temp_dir("glued-migrate");
    let file = dir.join("s.jsonl");
    fs::write(&file, glued_file(2)).unwrap();
    let s = open_with(&dir, &file, u64::MAX)?;
    assert_eq!(branch_ids(&s), ["\"a\"", "\"b\"", "\"c\""]);
    let text = fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert_eq!(lines[2], torn(), "the torn bytes, kept at their place");
    assert_eq!(lines[3], msg("b", "a", "assistant", "answer"));
    fs::remove_dir_all(dir).unwrap();
    Ok(())
}

#[test]
fn a_listing_counts_the_glued_message_and_its_text() -> R {
    let dir = temp_dir("glued-list");
    let file = dir.join("s.jsonl");
    fs::write(&file, glued_file(3)).unwrap();
    let summary = listing::summarize_file_parts(&file, None).expect("a session");
    assert_eq!(summary.info.message_count, 3);
    assert_eq!(summary.all_text, "question answer thanks");
    fs::remove_dir_all(dir).unwrap();
    Ok(())
}

#[test]
fn verify_reports_the_torn_bytes_and_no_dangling_parent() -> R {
    let text = glued_file(3);
    let found = inspect::inspect(text.as_bytes());
    let codes: Vec<(&str, Option<usize>)> =
        found.findings.iter().map(|f| (f.code, f.line)).collect();
    assert_eq!(codes, [("torn-record", Some(3))]);
    assert_eq!((found.records, found.entries), (4, 3));
    Ok(())
}

#[test]
fn a_merge_keeps_the_glued_entry_and_the_torn_bytes_apart() -> R {
    let text = glued_file(3);
    let plain = text.replace(&torn(), "");
    let merged = merge::merge_bytes(text.as_bytes(), plain.as_bytes())?;
    let out = String::from_utf8(merged.bytes).unwrap();
    assert_eq!(merged.entries, 3, "b is one entry in both copies");
    assert_eq!(
        merged.kept_lines, 1,
        "the torn bytes, as a line that is no entry"
    );
    assert!(out.lines().any(|l| l == torn()), "{out}");
    assert_eq!(merged.leaf_id.as_deref(), Some("c"));
    Ok(())
}

/// Another process's append: its own descriptor, the bytes as they are.
fn other_writer(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

fn append_reply(s: &mut Session, id: &str, text: &str) -> R {
    let parent = s.leaf_key().unwrap_or("null").to_owned();
    let line = msg(id, "", "assistant", text)
        .replace(r#""parentId":"""#, &format!(r#""parentId":{parent}"#));
    s.append(line.as_bytes()).map(drop)
}

#[test]
fn an_append_after_another_writers_torn_line_starts_on_a_line_of_its_own() -> R {
    let dir = temp_dir("append-after-torn");
    let file = dir.join("s.jsonl");
    fs::write(&file, glued_file(3)).unwrap();
    let mut s = open_with(&dir, &file, u64::MAX)?;
    append_reply(&mut s, "d", "mine")?;
    // Another writer dies inside its write; this session goes on.
    other_writer(&file, torn().as_bytes());
    append_reply(&mut s, "e", "still mine")?;
    let text = fs::read_to_string(&file).unwrap();
    assert!(
        text.ends_with(&format!(
            "\n{}\n{}",
            torn(),
            msg("e", "d", "assistant", "still mine") + "\n"
        )),
        "{text}"
    );
    // Every line but the torn bytes parses: the reference's reader loses nothing of ours.
    let unparsed: Vec<&str> = text
        .lines()
        .filter(|l| pi_session_core::json::parse(l.as_bytes()).is_err())
        .collect();
    assert_eq!(
        unparsed.len(),
        2,
        "the torn bytes of the file, and the new ones alone: {unparsed:?}"
    );
    let again = open_with(&dir, &file, u64::MAX)?;
    assert_eq!(
        branch_ids(&again),
        ["\"a\"", "\"b\"", "\"c\"", "\"d\"", "\"e\""]
    );
    fs::remove_dir_all(dir).unwrap();
    Ok(())
}

#[test]
fn an_append_after_another_writers_whole_line_adds_no_empty_line() -> R {
    let dir = temp_dir("append-after-whole");
    let file = dir.join("s.jsonl");
    fs::write(&file, glued_file(3)).unwrap();
    let mut s = open_with(&dir, &file, u64::MAX)?;
    append_reply(&mut s, "d", "mine")?;
    let theirs = msg("x", "c", "user", "from another process");
    other_writer(&file, format!("{theirs}\n").as_bytes());
    append_reply(&mut s, "e", "still mine")?;
    let text = fs::read_to_string(&file).unwrap();
    assert!(
        text.ends_with(&format!(
            "\n{theirs}\n{}\n",
            msg("e", "d", "assistant", "still mine")
        )),
        "{text}"
    );
    assert!(!text.contains("\n\n"));
    fs::remove_dir_all(dir).unwrap();
    Ok(())
}
