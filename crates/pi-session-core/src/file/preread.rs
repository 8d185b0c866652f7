//! A session file read ahead of its open, on a thread of its own.
//!
//! `pi-native` knows from pi's arguments which session pi is about to open (`--session <file>`,
//! `-c`) long before pi gets there: pi loads its own code first (~0.4 s). Reading and scanning
//! the file is most of opening a big session, and it needs nothing of pi, so it runs on another
//! core meanwhile ([`start`]). The open takes the result ([`take`]) only if the file is still the
//! one that was read: the same device, inode, size and modification time before the read, after
//! it and at the open. Anything else (another file, a file that changed, a result nobody took in
//! time: [`forget`]) is dropped and the open reads as it always does. Nothing is written here:
//! the torn-tail repair stays the open's.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::thread::JoinHandle;

use super::load::{read_file, LoadedFile};
use super::scan::{scan_file, Scan};

/// What was read ahead: a file read whole, or a big file's streaming scan.
pub enum Read {
    Whole(LoadedFile),
    Scanned(Scan),
}

/// What says a file is the one that was read: size, modification time and (Unix) device and
/// inode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    id: (u64, u64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    #[cfg(unix)]
    let id = {
        use std::os::unix::fs::MetadataExt;
        (m.dev(), m.ino())
    };
    #[cfg(not(unix))]
    let id = (0, 0);
    Some(Stamp {
        len: m.len(),
        modified: m.modified().ok(),
        id,
    })
}

/// The read in flight: its file and the thread reading it (which answers with the file's stamp
/// before and after the read).
struct Pending {
    path: PathBuf,
    thread: JoinHandle<Option<(Stamp, Read, Stamp)>>,
}

static PENDING: Mutex<Option<Pending>> = Mutex::new(None);

/// Starts reading `path` ahead of its open: whole when it is smaller than `lazy_file_bytes`,
/// else by the streaming scan (as the open would). A read already in flight is dropped.
pub fn start(path: PathBuf, lazy_file_bytes: u64) {
    let reading = path.clone();
    let thread = std::thread::Builder::new()
        .name("pi-session-preread".into())
        .spawn(move || {
            let before = stamp(&reading)?;
            let read = if before.len >= lazy_file_bytes {
                Read::Scanned(scan_file(&reading).ok()??)
            } else {
                Read::Whole(read_file(&reading).ok()??)
            };
            Some((before, read, stamp(&reading)?))
        });
    if let Ok(thread) = thread {
        *lock() = Some(Pending { path, thread });
    }
}

/// What was read ahead for `path`, if it is still the file: waits for the read when it is in
/// flight. `lazy_file_bytes` is the opening session's threshold: a read of the other kind is not
/// taken.
pub fn take(path: &Path, lazy_file_bytes: u64) -> Option<Read> {
    let pending = {
        let mut slot = lock();
        if slot.as_ref()?.path != path {
            return None;
        }
        slot.take()?
    };
    let (before, read, after) = pending.thread.join().ok()??;
    let big = before.len >= lazy_file_bytes;
    let same_kind = matches!(
        (&read, big),
        (Read::Scanned(_), true) | (Read::Whole(_), false)
    );
    (before == after && stamp(path).as_ref() == Some(&after) && same_kind).then_some(read)
}

/// Drops a read nobody took (the program did not open that file after all). The thread, if still
/// reading, finishes on its own and its result is dropped.
pub fn forget() {
    lock().take();
}

fn lock() -> std::sync::MutexGuard<'static, Option<Pending>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_dir, HEADER};

    // One test, since the read in flight is the process's: tests in parallel would take each
    // other's.
    #[test]
    fn a_read_is_taken_only_for_its_file_unchanged_and_of_the_opens_kind() {
        let dir = temp_dir("preread");
        let path = dir.join("s.jsonl");
        std::fs::write(&path, format!("{HEADER}\n")).unwrap();
        start(path.clone(), u64::MAX);
        assert!(take(&dir.join("other.jsonl"), u64::MAX).is_none());
        assert!(matches!(take(&path, u64::MAX), Some(Read::Whole(l)) if l.records().count() == 1));
        assert!(take(&path, u64::MAX).is_none(), "taken once");
        start(path.clone(), 0);
        assert!(matches!(take(&path, 0), Some(Read::Scanned(s)) if s.recs.len() == 1));
        // The open's threshold says "whole": a scan is not what it would have read.
        start(path.clone(), 0);
        assert!(take(&path, u64::MAX).is_none());
        // Changed after the read: dropped.
        start(path.clone(), u64::MAX);
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::fs::write(&path, format!("{HEADER}\n{HEADER}\n")).unwrap();
        assert!(take(&path, u64::MAX).is_none());
        start(path.clone(), u64::MAX);
        forget();
        assert!(take(&path, u64::MAX).is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
