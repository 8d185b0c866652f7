//! Long lines appended to a written session are not kept in memory: their records point into the
//! session file and are read back (checked against a fingerprint) when needed. These tests check
//! that what is read back is what was appended, that copies into a branched session are byte for
//! byte, and that a file changed behind the session's back is reported or worked around, never
//! misread.
//!
//! The threshold is the session's `Tuning::backed_line_bytes` (1 KiB by default); these tests rely
//! on the default.

use std::fs;
use std::path::{Path, PathBuf};

use pi_session_core::{ErrorCode, Session};

mod common;
use common::temp_dir;

fn message(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2024-01-01T00:00:00.000Z","message":{{"role":"{role}","content":"{text}"}}}}"#
    )
}

/// A written session (flushed by its first user message), then `n` long appended lines; with its
/// lines and its file.
fn grown(dir: &Path, n: usize) -> (Session, Vec<String>, PathBuf) {
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
    s.new_session(None, None).unwrap();
    let mut lines = vec![message("u0", None, "user", "hi")];
    s.append(lines[0].as_bytes()).unwrap();
    for i in 1..=n {
        let body = format!("{i}:{}", "x".repeat(8 * 1024));
        let parent = if i == 1 {
            "u0".to_owned()
        } else {
            format!("m{}", i - 1)
        };
        let line = message(&format!("m{i}"), Some(&parent), "assistant", &body);
        s.append(line.as_bytes()).unwrap();
        lines.push(line);
    }
    let file = s.session_file().unwrap().to_path_buf();
    (s, lines, file)
}

/// Each of `lines`, in order after the header, is what its record reads.
fn assert_reads_back(s: &Session, lines: &[String]) {
    for (i, line) in lines.iter().enumerate() {
        let pos = i as u32 + 1;
        assert_eq!(&*s.line(pos).unwrap(), line.as_bytes(), "record {pos}");
    }
}

#[test]
fn long_appended_lines_are_read_back_from_the_file() {
    let dir = temp_dir("read-back");
    let (s, lines, file) = grown(&dir, 200);
    // 200 lines of 8 KiB: far more than what the session holds.
    let appended: usize = lines.iter().map(String::len).sum();
    assert!(
        s.memory_bytes() < appended / 10,
        "holds {} of {appended} bytes",
        s.memory_bytes()
    );
    assert_reads_back(&s, &lines);
    let text = fs::read_to_string(&file).unwrap();
    assert!(text.ends_with(&format!("{}\n", lines.last().unwrap())));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_branched_session_copies_them_byte_for_byte() {
    let dir = temp_dir("branch");
    let (mut s, lines, source) = grown(&dir, 50);
    let target = s
        .create_branched_session(Some("\"m30\""), "m30")
        .unwrap()
        .unwrap();
    let copied = fs::read_to_string(&target).unwrap();
    let copied: Vec<&str> = copied.lines().skip(1).collect();
    assert_eq!(copied.len(), 31);
    for (got, want) in copied.iter().zip(&lines) {
        assert_eq!(got, want);
    }
    // The source file is untouched, and the new session reads its records back.
    assert!(fs::read_to_string(&source)
        .unwrap()
        .ends_with(&format!("{}\n", lines[50])));
    assert_eq!(&*s.line(31).unwrap(), lines[30].as_bytes());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_rewritten_in_place_is_reported_not_misread() {
    let dir = temp_dir("rewritten");
    let (s, lines, file) = grown(&dir, 5);
    // Same length, other bytes, same inode.
    let text = fs::read(&file).unwrap();
    let changed: Vec<u8> = text
        .iter()
        .map(|&b| if b == b'x' { b'y' } else { b })
        .collect();
    fs::write(&file, &changed).unwrap();
    let err = s.line(3).unwrap_err();
    assert_eq!(err.code, ErrorCode::FileChanged);
    // Short lines were kept in memory: the first message is still there.
    assert_eq!(&*s.line(1).unwrap(), lines[0].as_bytes());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_deleted_file_keeps_its_lines_and_is_written_back_whole() {
    let dir = temp_dir("deleted");
    let (mut s, mut lines, file) = grown(&dir, 3);
    let header = fs::read_to_string(&file)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    fs::remove_file(&file).unwrap();
    // The next append writes the session back whole (the earlier lines read through the old
    // file's descriptor), then its own line; the records still read back as they were.
    let line = message("m4", Some("m3"), "assistant", &"z".repeat(4096));
    s.append(line.as_bytes()).unwrap();
    lines.push(line);
    assert_reads_back(&s, &lines);
    let mut whole = format!("{header}\n");
    for line in &lines {
        whole.push_str(line);
        whole.push('\n');
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), whole);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_writers_on_one_file_each_read_back_their_own_lines() {
    let dir = temp_dir("two-writers");
    let (mut a, _, file) = grown(&dir, 1);
    let mut b = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
    b.set_session_file(file.clone()).unwrap();
    let (mut mine_a, mut mine_b) = (Vec::new(), Vec::new());
    for i in 0..20 {
        // Interleaved: each writer's lines land between the other's.
        let la = message(
            &format!("a{i}"),
            Some("m1"),
            "assistant",
            &format!("a{i}{}", "a".repeat(3000 + i)),
        );
        let lb = message(
            &format!("b{i}"),
            Some("m1"),
            "assistant",
            &format!("b{i}{}", "b".repeat(2000 + i)),
        );
        mine_a.push((a.append(la.as_bytes()).unwrap(), la));
        mine_b.push((b.append(lb.as_bytes()).unwrap(), lb));
    }
    for (s, mine) in [(&a, &mine_a), (&b, &mine_b)] {
        for (pos, line) in mine {
            assert_eq!(&*s.line(*pos).unwrap(), line.as_bytes());
        }
    }
    let text = fs::read_to_string(&file).unwrap();
    let order: Vec<&str> = text
        .lines()
        .skip(3)
        .map(|l| &l[l.find("\"id\":\"").unwrap() + 6..][..3])
        .collect();
    assert_eq!(order[..4], ["a0\"", "b0\"", "a1\"", "b1\""]);
    fs::remove_dir_all(&dir).unwrap();
}
