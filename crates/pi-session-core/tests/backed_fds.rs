//! Reading back appended lines from the session file costs no descriptor of its own: the one
//! appends go through is read from. Alone in its test binary, so that no other test opens or
//! closes files while the descriptors are counted.
#![cfg(target_os = "linux")]

use std::fs;

use pi_session_core::Session;

mod common;
use common::temp_dir;

#[test]
fn a_writing_session_that_reads_back_holds_one_descriptor() {
    let open_fds = || fs::read_dir("/proc/self/fd").unwrap().count();
    let dir = temp_dir("fds");
    let before = open_fds();
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
    s.new_session(None, None).unwrap();
    let first = r#"{"type":"message","id":"u","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}"#;
    s.append(first.as_bytes()).unwrap();
    let long = format!(
        r#"{{"type":"message","id":"a","parentId":"u","timestamp":"2024-01-01T00:00:01.000Z","message":{{"role":"assistant","content":"{}"}}}}"#,
        "x".repeat(4096)
    );
    let pos = s.append(long.as_bytes()).unwrap();
    assert_eq!(&*s.line(pos).unwrap(), long.as_bytes());
    assert!(s.memory_bytes() < long.len(), "the long line is not held");
    assert_eq!(
        open_fds() - before,
        1,
        "descriptors held by one writing session"
    );
    drop(s);
    assert_eq!(open_fds(), before);
    fs::remove_dir_all(&dir).unwrap();
}
