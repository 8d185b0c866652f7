//! The lease file itself: taken by an atomic link, taken over when stale, released when dropped,
//! and the process-wide list of the leases this process holds.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use super::holder::Holder;
use crate::error::{Error, ErrorCode, Result};

/// Leases this process holds: (lock path, nonce). Tells our own live leases from ones a previous
/// process with the same pid left behind, and lets [`release_all`] clean up at exit.
static HELD: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());

pub(super) fn held() -> std::sync::MutexGuard<'static, Vec<(PathBuf, String)>> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether this process holds a lease of `nonce`.
fn held_here(nonce: &str) -> bool {
    held().iter().any(|(_, n)| n == nonce)
}

/// `<file>.lock`.
pub fn lock_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// A lease this manager holds; dropping it releases the lock file (if it is still ours).
#[derive(Debug)]
pub struct Lease {
    pub(super) lock: PathBuf,
    pub(super) nonce: String,
}

impl Drop for Lease {
    fn drop(&mut self) {
        release(&self.lock, &self.nonce);
        held().retain(|(_, n)| *n != self.nonce);
    }
}

fn release(lock: &Path, nonce: &str) {
    if let Ok(bytes) = fs::read(lock) {
        if Holder::parse(&bytes).is_some_and(|h| h.nonce == nonce) {
            let _ = fs::remove_file(lock);
        }
    }
}

/// Remove every lease this process holds (for a process about to exit).
pub fn release_all() {
    for (lock, nonce) in held().drain(..) {
        release(&lock, &nonce);
    }
}

/// The live holder of `file`'s lease, if any; `Ok(None)` when there is none or it is stale.
pub fn live_holder(file: &Path) -> Result<Option<Holder>> {
    let lock = lock_path(file);
    match fs::read(&lock) {
        Ok(bytes) => match Holder::parse(&bytes) {
            Some(h) if !h.is_stale(held_here) => Ok(Some(h)),
            _ => Ok(None),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&e, "open", &lock)),
    }
}

/// Take the lease of `file`, taking over a stale one.
pub fn acquire(file: &Path) -> Result<Lease> {
    let lock = lock_path(file);
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let line = Holder::ours(nonce.clone()).to_line();
    for _ in 0..8 {
        match create_exclusive(&lock, line.as_bytes()) {
            Ok(()) => {
                held().push((lock.clone(), nonce.clone()));
                return Ok(Lease { lock, nonce });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(&e, "open", &lock)),
        }
        let bytes = match fs::read(&lock) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&e, "open", &lock)),
        };
        match Holder::parse(&bytes) {
            Some(h) if !h.is_stale(held_here) => return Err(locked(file, Some(&h))),
            Some(_) => {}
            // Unreadable: a lease being written through the O_EXCL fallback, or garbage. Garbage
            // older than a few seconds is taken over.
            None if recently_modified(&lock) => return Err(locked(file, None)),
            None => {}
        }
        take_over(&lock, &bytes).map_err(|e| Error::io(&e, "rename", &lock))?;
    }
    Err(locked(file, live_holder(file)?.as_ref()))
}

/// Move a stale lease out of the way. If what we moved is not the lease we judged (someone took
/// over first), it is put back.
fn take_over(lock: &Path, judged: &[u8]) -> io::Result<()> {
    let aside = sibling(lock, "stale");
    match fs::rename(lock, &aside) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    if fs::read(&aside).ok().as_deref() != Some(judged) {
        let _ = fs::hard_link(&aside, lock);
    }
    let _ = fs::remove_file(&aside);
    Ok(())
}

/// Create `lock` with `bytes`, failing with `AlreadyExists` if the name is taken. Written aside and
/// linked into place so that a reader never sees a partial lease.
fn create_exclusive(lock: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = sibling(lock, "tmp");
    let linked = (|| {
        let mut f = crate::fsio::private_options()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        fs::hard_link(&tmp, lock)
    })();
    let _ = fs::remove_file(&tmp);
    match linked {
        Err(e)
            if e.kind() != io::ErrorKind::AlreadyExists && e.kind() != io::ErrorKind::NotFound =>
        {
            // No hard links here (some network and FUSE file systems): plain O_EXCL.
            let mut f = crate::fsio::private_options()
                .write(true)
                .create_new(true)
                .open(lock)?;
            f.write_all(bytes)
        }
        other => other,
    }
}

fn sibling(lock: &Path, what: &str) -> PathBuf {
    let name = lock
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let unique = uuid::Uuid::new_v4().simple().to_string();
    lock.with_file_name(format!(
        ".{name}.{}.{}.{what}",
        std::process::id(),
        &unique[..8]
    ))
}

fn recently_modified(path: &Path) -> bool {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < Duration::from_secs(5))
}

/// `SESSION_LOCKED`, naming the holder (or saying its lease is still being written).
pub(super) fn locked(file: &Path, h: Option<&Holder>) -> Error {
    let who = match h {
        Some(h) => format!(
            "pid {} on {} (since {})",
            h.pid,
            if h.hostname.is_empty() {
                "an unknown host"
            } else {
                &h.hostname
            },
            h.started_at
        ),
        None => "a process whose lease is still being written (pid unknown)".to_owned(),
    };
    Error::new(
        ErrorCode::SessionLocked,
        format!(
            "Session file {} is locked by {who}: another session manager is writing to it. If that process is gone, delete {}",
            file.display(),
            lock_path(file).display()
        ),
    )
}
