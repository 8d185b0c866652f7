//! Migrating damaged old files: whatever cannot be migrated stays in place, and the chain of the
//! entries that can is not broken by it.

use std::fs;

use pi_session_core::{Error, Session};

mod common;
use common::temp_dir;

#[test]
fn scalar_and_array_records_in_a_v1_file_do_not_break_the_parent_chain() -> Result<(), Error> {
    let dir = temp_dir("dmig");
    let file = dir.join("v1.jsonl");
    let original = concat!(
        "{\"type\":\"session\",\"id\":\"old\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
        "{\"type\":\"message\",\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n",
        "42\n",
        "\"text\"\n",
        "[1,2]\n",
        "{\"type\":\"message\",\"timestamp\":\"2024-01-01T00:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":\"b\"}}\n",
    );
    fs::write(&file, original).unwrap();
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true)?;
    s.set_session_file(file.clone())?;
    // The reference throws on this file (it cannot give `42` an id). We open it, keep the scalar
    // and array lines where they were, and link the assistant message to the user message.
    let text = fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(&lines[2..5], ["42", "\"text\"", "[1,2]"]);
    let path = s.context_path();
    let mut roles = Vec::new();
    for &p in &path {
        roles.push(String::from_utf8_lossy(&s.line(p)?).into_owned());
    }
    assert_eq!(path.len(), 2, "{roles:?}");
    assert!(roles[0].contains("\"role\":\"user\"") && roles[1].contains("\"role\":\"assistant\""));
    assert_eq!(
        fs::read_to_string(dir.join("v1.jsonl.bak")).unwrap(),
        original
    );
    Ok(())
}
