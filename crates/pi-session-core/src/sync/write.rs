//! Writing a session file that stock pi may be appending to at the same moment. pi reopens the
//! file by path for every append and takes no lease, so: a result that only adds lines at the end
//! is appended (pi's own appends land before or after it, whole; after torn bytes a pi killed
//! mid-write left, it starts on a line of its own); any other result replaces the file
//! atomically, and then the replaced file, still open here, is read again until its length holds
//! still, so that what pi appended to it meanwhile is carried over to the new one.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::fsio::{self, Durability};

/// A local session file opened for a sync: the descriptor it was read through, and its bytes.
pub struct Opened {
    pub file: File,
    pub bytes: Vec<u8>,
}

pub fn open(path: &Path) -> Result<Opened> {
    let mut file = fsio::open_read(path).map_err(|e| Error::io(&e, "open", path))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| Error::io(&e, "read", path))?;
    Ok(Opened { file, bytes })
}

/// Whether `new` is `old` with whole lines added at the end.
pub fn extends(new: &[u8], old: &[u8]) -> bool {
    new.len() > old.len() && new.starts_with(old) && (old.is_empty() || old.ends_with(b"\n"))
}

/// Make the file at `path`, read as `opened`, hold `new`. Returns the bytes that were appended to
/// it by someone else during the write and carried over (they end the file).
pub fn replace(path: &Path, opened: &Opened, new: &[u8]) -> Result<Vec<u8>> {
    let old = &opened.bytes;
    if extends(new, old) {
        // After another writer's torn bytes (appended since the read), on a line of its own.
        let left = Some(old.len() as u64);
        fsio::append_continuing(path, &new[old.len()..], left, Durability::Fsync)?;
        return Ok(Vec::new());
    }
    fsio::replace_atomic(path, new)?;
    carry_tail(path, &opened.file, old.len() as u64, new.len() as u64)
}

/// Copy what `old` (the replaced file) has beyond `copied` bytes to `path` (`written` bytes long
/// as this sync left it), until its length has held still across a short pause. A chunk that
/// continues a line the last one began follows it directly while nobody else wrote to `path`.
pub(crate) fn carry_tail(
    path: &Path,
    old: &File,
    mut copied: u64,
    written: u64,
) -> Result<Vec<u8>> {
    let mut left = Some(written);
    let mut carried = Vec::new();
    let mut quiet = 0;
    while quiet < 2 {
        let len = old
            .metadata()
            .map_err(|e| Error::io(&e, "fstat", path))?
            .len();
        if len <= copied {
            quiet += 1;
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        quiet = 0;
        let mut buf = vec![0; (len - copied) as usize];
        fsio::read_exact_at(old, &mut buf, copied).map_err(|e| Error::io(&e, "read", path))?;
        left = Some(fsio::append_continuing(
            path,
            &buf,
            left,
            Durability::Fsync,
        )?);
        carried.extend_from_slice(&buf);
        copied = len;
    }
    Ok(carried)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_dir;

    #[test]
    fn lines_added_after_a_torn_line_another_writer_left_start_on_a_line_of_their_own() {
        let dir = temp_dir("sync-extend-torn");
        let path = dir.join("s.jsonl");
        std::fs::write(&path, "h\na\n").unwrap();
        let opened = open(&path).unwrap();
        // Between the sync's read and its write, pi is killed inside an append.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, b"{\"type\":\"mess").unwrap();
        assert!(replace(&path, &opened, b"h\na\nb\n").unwrap().is_empty());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "h\na\n{\"type\":\"mess\nb\n");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
