//! Writing a session file that stock pi may be appending to at the same moment. pi reopens the
//! file by path for every append and takes no lease, so the new content replaces the file
//! atomically (a temp file renamed over it), and then the replaced file, still open here, is read
//! again until its length holds still, so that what pi appended to it meanwhile is carried over to
//! the new one.
//!
//! A result that only adds lines at the end is replaced the same way, not appended: a `write` is
//! not whole under a kill. Linux copies a write into the page cache a page at a time and stops
//! between two pages once a fatal signal (`SIGKILL`, or Ctrl-C's `SIGINT` left to its default) is
//! pending, so a sync killed inside an append of a few kilobytes would leave part of a line at the
//! end of the file, the session half synced, and stock pi's next append glued to those bytes (the
//! reference's reader drops that line). A rename is whole or not at all.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::fsio::{self, Durability};
use crate::lock::Lease;

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

/// Make the file at `path`, read as `opened`, hold `new`, and start watching the replaced file
/// (its first look is taken at once). `lease`, held while the watch lasts, keeps our own writers
/// out until what was carried over is in place.
pub fn replace(path: &Path, opened: Opened, new: &[u8], lease: Option<Lease>) -> Result<Watch> {
    fsio::replace_atomic(path, new)?;
    let mut watch = Watch {
        path: path.to_path_buf(),
        old: opened.file,
        copied: opened.bytes.len() as u64,
        left: Some(new.len() as u64),
        carried: Vec::new(),
        quiet: 0,
        due: Instant::now(),
        _lease: lease,
    };
    watch.look()?;
    Ok(watch)
}

/// The pause between two looks at a replaced file...
const LOOK_PAUSE: Duration = Duration::from_millis(5);
/// ...and how many looks in a row must find it unchanged before the watch ends (the first is
/// taken right after the rename, so a writer gets at least 10 ms to land a line it began).
const QUIET_LOOKS: u32 = 3;

/// A replaced file, still open here, watched for what a writer that opened it just before the
/// rename (stock pi opens the path for each append) writes into it after: that goes on to the
/// new file, until the old one has held still across [`QUIET_LOOKS`] looks [`LOOK_PAUSE`] apart.
/// A chunk that continues a line the last one began follows it directly while nobody else wrote
/// to the new file (see [`fsio::append_continuing`]).
///
/// The looks need not hold anything up: a sync takes them between sessions (`look` when `due`)
/// and waits only for the watches still open at the end of its round.
pub struct Watch {
    path: PathBuf,
    old: File,
    /// How much of `old` the new file holds.
    copied: u64,
    /// The length the new file was left at by this watch.
    left: Option<u64>,
    carried: Vec<u8>,
    quiet: u32,
    due: Instant,
    /// Held, not read: let go with the watch.
    _lease: Option<Lease>,
}

impl Watch {
    /// When the next look is due.
    pub fn due(&self) -> Instant {
        self.due
    }

    /// Whether the watch has ended.
    pub fn done(&self) -> bool {
        self.quiet >= QUIET_LOOKS
    }

    /// Look once: carry over what the old file gained since the last look. The next look is due
    /// a pause later.
    pub fn look(&mut self) -> Result<()> {
        let len = self
            .old
            .metadata()
            .map_err(|e| Error::io(&e, "fstat", &self.path))?
            .len();
        self.due = Instant::now() + LOOK_PAUSE;
        if len <= self.copied {
            self.quiet += 1;
            return Ok(());
        }
        self.quiet = 0;
        let mut buf = vec![0; (len - self.copied) as usize];
        fsio::read_exact_at(&self.old, &mut buf, self.copied)
            .map_err(|e| Error::io(&e, "read", &self.path))?;
        self.left = Some(fsio::append_continuing(
            &self.path,
            &buf,
            self.left,
            Durability::Fsync,
        )?);
        self.carried.extend_from_slice(&buf);
        self.copied = len;
        Ok(())
    }

    /// Look until the watch ends, pausing between looks. Returns the bytes carried over (they
    /// end the new file).
    pub fn wait(mut self) -> Result<Vec<u8>> {
        while !self.done() {
            std::thread::sleep(self.due.saturating_duration_since(Instant::now()));
            self.look()?;
        }
        Ok(self.finish())
    }

    /// The bytes carried over; the lease, if any, is let go.
    pub fn finish(self) -> Vec<u8> {
        self.carried
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_dir;

    /// Lines added at the end are not appended to the file in place, where a kill inside the
    /// `write` could leave part of them: the file is replaced whole (on Unix the path names a new
    /// inode; the one read stays as it was until the rename).
    #[test]
    fn lines_added_at_the_end_replace_the_file_whole() {
        let dir = temp_dir("sync-extend-whole");
        let path = dir.join("s.jsonl");
        std::fs::write(&path, "h\na\n").unwrap();
        let opened = open(&path).unwrap();
        let old = opened.file.try_clone().unwrap();
        let carried = replace(&path, opened, b"h\na\nb\n", None)
            .unwrap()
            .wait()
            .unwrap();
        assert!(carried.is_empty());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "h\na\nb\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let old = old.metadata().unwrap();
            assert_ne!(std::fs::metadata(&path).unwrap().ino(), old.ino());
            assert_eq!(old.len(), 4, "the file read was not written to");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn torn_bytes_another_writer_left_during_the_sync_are_carried_over_as_they_are() {
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
        let carried = replace(&path, opened, b"h\na\nb\n", None)
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(carried, b"{\"type\":\"mess");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "h\na\nb\n{\"type\":\"mess");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
