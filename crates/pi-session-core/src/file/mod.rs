//! The session file layer, below the session: reading a file's lines ([`LoadedFile`]), the
//! streaming scan of big files ([`scan`]), the format migrations ([`migrate`]), and the two rules
//! every reader of a session file shares: the fingerprint of a line left in the file, and the
//! repair of a torn tail. Nothing here knows the in-memory session.

pub mod migrate;
pub mod preread;
pub mod scan;

mod load;

pub use load::{end_tail, load_file, read_file, Line, LoadedFile};

use std::path::Path;

use crate::error::Result;
use crate::fsio;

/// The fingerprint of a line whose bytes stay in the file (length and up to 16 bytes at each
/// end, folded): cheap, and any rewrite in place changes it. Checked on every read of the line,
/// so a file changed behind our back is reported instead of misread.
pub fn fingerprint(line: &[u8]) -> u32 {
    use std::hash::Hasher;
    let mut h = crate::fxhash::FxHasher::default();
    h.write_usize(line.len());
    h.write(&line[..line.len().min(16)]);
    h.write(&line[line.len().saturating_sub(16)..]);
    h.finish() as u32
}

/// The torn-tail repair of `loadEntriesFromFile`, for a session file the caller found valid and
/// `len` bytes long: when its last line has no newline (`ends_with_newline` false; an empty file
/// counts as ended), one `\n` is appended so that later appends start on a fresh line, unless
/// another writer ended that line since (see [`fsio::end_last_line`]). Nothing else is changed.
/// Returns whether the file was repaired.
pub fn end_torn_tail(path: &Path, len: u64, ends_with_newline: bool) -> Result<bool> {
    if ends_with_newline {
        return Ok(false);
    }
    fsio::end_last_line(path, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_dir, HEADER};

    #[test]
    fn a_torn_tail_gets_exactly_one_newline() {
        let dir = temp_dir("torn");
        let path = dir.join("s.jsonl");
        std::fs::write(&path, format!("{HEADER}\n{{\"type\":\"message\"")).unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(end_torn_tail(&path, len, false).unwrap());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            bytes,
            format!("{HEADER}\n{{\"type\":\"message\"\n").as_bytes()
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_that_ends_its_last_line_is_left_alone() {
        let dir = temp_dir("ended");
        let path = dir.join("s.jsonl");
        std::fs::write(&path, format!("{HEADER}\n")).unwrap();
        assert!(!end_torn_tail(&path, 0, true).unwrap());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            format!("{HEADER}\n").as_bytes()
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn loading_a_valid_file_with_a_torn_tail_ends_it_on_disk_and_in_memory() {
        let dir = temp_dir("load-torn");
        let path = dir.join("s.jsonl");
        std::fs::write(&path, format!("{HEADER}\n{{\"a\":")).unwrap();
        let loaded = load_file(&path).unwrap().expect("the file exists");
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(on_disk, format!("{HEADER}\n{{\"a\":\n").as_bytes());
        assert_eq!(loaded.text, on_disk);
        assert_eq!(loaded.records().count(), 1, "the torn line is no record");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn loading_a_file_without_a_valid_header_changes_nothing_on_disk() {
        let dir = temp_dir("load-invalid");
        let path = dir.join("s.jsonl");
        std::fs::write(&path, "{\"type\":\"message\",\"id\":\"a\"}").unwrap();
        let loaded = load_file(&path).unwrap().expect("the file exists");
        assert!(!loaded.has_valid_header());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"{\"type\":\"message\",\"id\":\"a\"}"
        );
        assert!(load_file(&dir.join("missing.jsonl")).unwrap().is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_fingerprint_of_a_line_changes_with_its_ends_or_its_length() {
        let line = br#"{"type":"message","id":"a","message":{"content":"hello"}}"#;
        let base = fingerprint(line);
        assert_eq!(base, fingerprint(line), "stable");
        let mut first = line.to_vec();
        first[2] = b'T';
        assert_ne!(base, fingerprint(&first));
        let mut last = line.to_vec();
        let n = last.len();
        last[n - 3] = b'X';
        assert_ne!(base, fingerprint(&last));
        assert_ne!(base, fingerprint(&line[..line.len() - 1]));
    }
}
