//! What the store does to its files when things go wrong (torn lines, failed or interrupted
//! writes, migration, cycles, forks): each writes real files in its own temp dir and reopens them.

use std::fs;

use pi_session_core::record::string_key;
use pi_session_core::session;
use pi_session_core::{context, fsio, tree, Error, ErrorCode, Session};

mod common;
use common::{open, temp_dir};

type R = Result<(), Error>;

fn msg(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let parent = parent
        .map(|p| format!("\"{p}\""))
        .unwrap_or_else(|| "null".into());
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2024-01-01T00:00:0{}.000Z","message":{{"role":"{role}","content":"{text}"}}}}"#,
        id.len() % 10
    )
}

fn header(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}}"#
    )
}

fn append_message(s: &mut Session, role: &str, text: &str) -> Result<String, Error> {
    let id = s.next_entry_id();
    let parent = s.leaf_key().unwrap_or("null").to_string();
    let line = format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2024-01-02T00:00:00.000Z","message":{{"role":"{role}","content":"{text}"}}}}"#
    );
    s.append(line.as_bytes())?;
    Ok(id)
}

#[test]
fn a_torn_last_line_gets_one_newline_and_no_complete_line_is_lost() -> R {
    let dir = temp_dir("torn");
    let file = dir.join("s.jsonl");
    let content = format!(
        "{}\n{}\n{{\"type\":\"message\",\"id\":\"b\"",
        header("h"),
        msg("a", None, "user", "hi")
    );
    fs::write(&file, &content).unwrap();
    let mut s = open(&dir, &file)?;
    assert_eq!(s.entry_count(), 1);
    assert_eq!(fs::read_to_string(&file).unwrap(), format!("{content}\n"));
    let id = append_message(&mut s, "assistant", "there")?;
    let reopened = open(&dir, &file)?;
    assert!(reopened.lookup(&string_key(&id)).is_some());
    assert!(reopened.lookup(&string_key("a")).is_some());
    Ok(())
}

#[test]
fn a_new_session_is_written_only_once_it_has_a_conversation() -> R {
    let dir = temp_dir("lazy");
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true)?;
    let created = s.new_session(None, None)?;
    let file = created.file.unwrap();
    s.append(br#"{"type":"model_change","id":"m1","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","provider":"p","modelId":"x"}"#)?;
    assert!(!file.exists());
    append_message(&mut s, "user", "go")?;
    let text = fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 3);
    append_message(&mut s, "assistant", "ok")?;
    assert_eq!(fs::read_to_string(&file).unwrap().lines().count(), 4);
    Ok(())
}

#[test]
fn a_failed_first_write_rolls_back_memory_exactly() -> R {
    let dir = temp_dir("rollback");
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true)?;
    let file = s.new_session(None, None)?.file.unwrap();
    fs::write(&file, "taken").unwrap();
    let before = (s.entry_count(), s.leaf(), s.record_count());
    let err = append_message(&mut s, "user", "x").unwrap_err();
    assert_eq!(err.errno_name, Some("EEXIST"));
    assert_eq!((s.entry_count(), s.leaf(), s.record_count()), before);
    assert_eq!(fs::read_to_string(&file).unwrap(), "taken");
    Ok(())
}

#[test]
fn a_v1_file_is_migrated_with_a_backup_and_its_malformed_lines_kept_in_place() -> R {
    let dir = temp_dir("migrate");
    let file = dir.join("old.jsonl");
    let original = concat!(
        "{\"type\":\"session\",\"id\":\"old\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
        "{\"type\":\"message\",\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n",
        "not json at all\n",
        "{\"type\":\"message\",\"timestamp\":\"2024-01-01T00:00:02.000Z\",\"message\":{\"role\":\"hookMessage\",\"content\":\"b\"}}\n",
        "{\"type\":\"compaction\",\"timestamp\":\"2024-01-01T00:00:03.000Z\",\"summary\":\"s\",\"firstKeptEntryIndex\":1,\"tokensBefore\":5}\n",
    );
    fs::write(&file, original).unwrap();
    let s = open(&dir, &file)?;
    let backup = fs::read_to_string(dir.join("old.jsonl.bak")).unwrap();
    assert_eq!(backup, original);
    let text = fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[0].ends_with(",\"version\":3}"), "{}", lines[0]);
    assert_eq!(lines[2], "not json at all");
    assert!(lines[3].contains("\"role\":\"custom\""));
    assert!(lines[4].contains("\"firstKeptEntryId\""));
    assert!(!lines[4].contains("firstKeptEntryIndex"));
    assert_eq!(s.entry_count(), 3);
    // The chain is linear and rooted.
    let path = s.context_path();
    assert_eq!(path.len(), 3);
    Ok(())
}

#[test]
fn a_crash_between_temp_write_and_rename_leaves_the_old_file_intact() -> R {
    let dir = temp_dir("crash");
    let file = dir.join("s.jsonl");
    fs::write(&file, "old content\n").unwrap();
    let res = fsio::replace_atomic_with_hook(&file, b"new content\n", |_tmp| {
        Err(Error::new(ErrorCode::Io, "simulated crash before rename"))
    });
    assert!(res.is_err());
    assert_eq!(fs::read_to_string(&file).unwrap(), "old content\n");
    let leftovers: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != "s.jsonl")
        .collect();
    assert!(leftovers.is_empty(), "temp file left behind");
    Ok(())
}

#[test]
fn the_appender_writes_each_line_whole_whatever_came_before() -> R {
    // Its line buffer is reused between appends (and dropped after a very long line): each
    // line must still be written alone, with its newline, and nothing of an earlier line.
    let dir = temp_dir("appender");
    let file = dir.join("s.jsonl");
    let mut appender = fsio::Appender::default();
    let long = "x".repeat(200_000);
    let lines = ["first line", long.as_str(), "2", "", "after the long one"];
    for line in lines {
        appender.append_line(&file, line.as_bytes(), fsio::Durability::Buffered)?;
    }
    let expected: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(fs::read_to_string(&file).unwrap(), expected);
    // A file deleted between appends is created again, holding only what follows.
    fs::remove_file(&file).unwrap();
    appender.append_line(&file, b"again", fsio::Durability::Buffered)?;
    assert_eq!(fs::read_to_string(&file).unwrap(), "again\n");
    Ok(())
}

#[test]
fn a_non_session_file_is_refused_and_left_untouched() -> R {
    let dir = temp_dir("refuse");
    let file = dir.join("x.jsonl");
    fs::write(&file, "{\"type\":\"message\"}\nno newline").unwrap();
    let err = open(&dir, &file).expect_err("refused");
    assert_eq!(err.code, ErrorCode::InvalidSessionFile);
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        "{\"type\":\"message\"}\nno newline"
    );
    Ok(())
}

#[test]
fn parent_cycles_end_walks_instead_of_hanging() -> R {
    let dir = temp_dir("cycle");
    let file = dir.join("c.jsonl");
    let text = format!(
        "{}\n{}\n{}\n",
        header("h"),
        msg("a", Some("b"), "user", "x"),
        msg("b", Some("a"), "assistant", "y")
    );
    fs::write(&file, text).unwrap();
    let s = open(&dir, &file)?;
    assert_eq!(s.context_path().len(), 2);
    let t = tree::tree(&s);
    assert_eq!(t.roots().len(), 1, "one cycle entry becomes a root");
    Ok(())
}

#[test]
fn a_retained_tail_compaction_keeps_nothing_before_it() -> R {
    let dir = temp_dir("tail");
    let file = dir.join("t.jsonl");
    let comp = r#"{"type":"compaction","id":"c","parentId":"b","timestamp":"2024-01-01T00:00:09.000Z","summary":"s","firstKeptEntryId":"a","tokensBefore":1,"retainedTail":[]}"#;
    let text = format!(
        "{}\n{}\n{}\n{comp}\n{}\n",
        header("h"),
        msg("a", None, "user", "x"),
        msg("b", Some("a"), "assistant", "y"),
        msg("d", Some("c"), "user", "z")
    );
    fs::write(&file, text).unwrap();
    let s = open(&dir, &file)?;
    let path = s.context_path();
    let selected = context::select(&s, &path);
    assert_eq!(selected.len(), 2, "compaction + the entry after it");
    Ok(())
}

#[test]
fn fork_copies_records_under_a_new_header_and_never_leaves_a_partial_target() -> R {
    let dir = temp_dir("fork");
    let src = dir.join("src.jsonl");
    fs::write(
        &src,
        format!("{}\n{}\n", header("h"), msg("a", None, "user", "x")),
    )
    .unwrap();
    let out = session::fork_file(&src, "/elsewhere", &dir.join("target"), None)?;
    let text = fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("{\"type\":\"session\",\"version\":3,"));
    assert!(text.contains("\"parentSession\":"));
    assert_eq!(text.lines().count(), 2);
    let bad =
        session::fork_file(&dir.join("missing.jsonl"), "/e", &dir.join("t2"), None).unwrap_err();
    assert_eq!(bad.code, ErrorCode::ForkSourceInvalid);
    assert!(!dir.join("t2").exists());
    Ok(())
}

#[test]
fn create_branched_session_rewrites_only_the_path_and_carries_labels() -> R {
    let dir = temp_dir("branch");
    let file = dir.join("b.jsonl");
    let label = r#"{"type":"label","id":"l","parentId":"b","timestamp":"2024-01-01T00:00:05.000Z","targetId":"a","label":"start"}"#;
    let text = format!(
        "{}\n{}\n{}\n{}\n{label}\n",
        header("h"),
        msg("a", None, "user", "x"),
        msg("b", Some("a"), "assistant", "y"),
        msg("z", Some("a"), "assistant", "other branch")
    );
    fs::write(&file, text).unwrap();
    let mut s = open(&dir, &file)?;
    let new_file = s
        .create_branched_session(Some(&string_key("b")), "b")?
        .unwrap();
    let written = fs::read_to_string(&new_file).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 4, "header, a, b, label: {written}");
    assert!(!written.contains("other branch"));
    assert!(
        lines[3].contains("\"label\":\"start\"")
            && lines[3].contains("\"timestamp\":\"2024-01-01T00:00:05.000Z\"")
    );
    assert!(s.label_pos(&string_key("a")).is_some());
    Ok(())
}
