//! Writing a session file that stock pi may be appending to at the same moment. pi reopens the
//! file by path for every append and takes no lease, so: a result that only adds lines at the end
//! is appended (pi's own appends land before or after it, whole); any other result replaces the
//! file atomically, and then the replaced file, still open here, is read again until its length
//! holds still, so that what pi appended to it meanwhile is carried over to the new one.

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
        fsio::append(path, &new[old.len()..], Durability::Fsync)?;
        return Ok(Vec::new());
    }
    fsio::replace_atomic(path, new)?;
    carry_tail(path, &opened.file, old.len() as u64)
}

/// Copy what `old` (the replaced file) has beyond `copied` bytes to `path`, until its length
/// has held still across a short pause.
pub(crate) fn carry_tail(path: &Path, old: &File, mut copied: u64) -> Result<Vec<u8>> {
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
        fsio::append(path, &buf, Durability::Fsync)?;
        carried.extend_from_slice(&buf);
        copied = len;
    }
    Ok(carried)
}
