//! Retiring a moved session's old file: removed only once every line stock pi appended to it,
//! before or just after the unlink, is in the new one.

use std::fs;
use std::io;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::fsio::{self, Durability};

/// How long a writer that opened the old path just before it was unlinked may take to land its
/// line: stock pi's append is one open, write and close, many times quicker than this.
const SETTLE: Duration = Duration::from_millis(25);

/// Carry over what `held` (the old file, open) has beyond `copied` bytes to `to`, until its length
/// holds still; `copied` follows, and so does `left`, the length this move left `to` at (a chunk
/// continues the last one directly while nobody else wrote to `to`, and starts on a line of its
/// own after another writer's torn bytes: see [`fsio::append_continuing`]). Returns the bytes
/// carried.
fn follow_held(
    held: &fs::File,
    from: &Path,
    to: &Path,
    copied: &mut u64,
    left: &mut Option<u64>,
) -> Result<u64> {
    let mut carried = 0;
    loop {
        let len = held
            .metadata()
            .map_err(|e| Error::io(&e, "fstat", from))?
            .len();
        if len <= *copied {
            return Ok(carried);
        }
        let mut buf = vec![0; (len - *copied) as usize];
        fsio::read_exact_at(held, &mut buf, *copied).map_err(|e| Error::io(&e, "read", from))?;
        *left = Some(fsio::append_continuing(to, &buf, *left, Durability::Fsync)?);
        carried += buf.len() as u64;
        *copied = len;
    }
}

/// Rounds of [`retire_old`] before a writer that keeps recreating the old path is left to it.
const RETIRE_ROUNDS: usize = 4;

/// Remove `from`, whose first `copied` bytes `to` holds, without losing a line stock pi appends
/// meanwhile (it reopens the path for every append and takes no lease):
/// - what it added before the unlink is carried over first;
/// - a writer that opened the path before the unlink still writes into the unlinked file, which
///   stays readable through the descriptor held here: after a settling pause, its growth is
///   carried over too;
/// - a writer that opens the path after the unlink makes a new file there (its append creates
///   what is missing), holding only its own lines: those are carried over whole, the same way,
///   for a few rounds. A pi still at work in the old directory after them keeps its newest lines
///   in that file, which is left (reported, never removed).
///
/// `left` is the length this move left `to` at. Returns the bytes carried, and whether such a
/// file was left.
pub(super) fn retire_old(
    from: &Path,
    to: &Path,
    mut copied: u64,
    mut left: Option<u64>,
) -> Result<(u64, bool)> {
    let mut carried = 0;
    for _ in 0..RETIRE_ROUNDS {
        let held = match fsio::open_read(from) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((carried, false)),
            Err(e) => return Err(Error::io(&e, "open", from)),
        };
        carried += follow_held(&held, from, to, &mut copied, &mut left)?;
        remove_old(from)?;
        std::thread::sleep(SETTLE);
        carried += follow_held(&held, from, to, &mut copied, &mut left)?;
        // Anything at the path now is a new file of late lines, read from its start.
        copied = 0;
    }
    Ok((carried, from.exists()))
}

fn remove_old(from: &Path) -> Result<()> {
    match fs::remove_file(from) {
        Ok(()) => {
            fsio::sync_dir(from);
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&e, "unlink", from)),
    }
}
