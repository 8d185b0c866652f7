//! Who may write a session file: an ownership lease next to it, `<file>.lock`.
//!
//! The lease is one JSON line naming its holder: `pid`, `hostname`, `startedAt` (when it was
//! taken), the holder process's start time where the OS tells it (`procStart`: clock ticks since
//! boot on Linux, milliseconds since 1601 on Windows, where pids are reused quickly), and a random
//! `nonce` that tells two leases of one process apart. It appears complete or not at all: it is
//! written to a temp file and linked into place, which fails if the name is taken (the same
//! exclusivity as `O_EXCL`, which is the fallback where hard links are not supported).
//!
//! - **Exclusive mode** (opt-in per manager, or for a new one by [`crate::Config::exclusive`]):
//!   the manager takes the lease when it opens an existing file and before its first write to
//!   any file, and keeps it until it moves to another file, leaves exclusive mode, or is dropped.
//!   A live holder makes these fail with `SESSION_LOCKED`, naming its pid.
//! - **Default mode** takes no lease (two default writers may share a file, as with the
//!   reference; lines stay whole), but respects one: before its first write to a file, and again at
//!   most once per [`RECHECK`], it looks for a live exclusive holder and refuses with
//!   `SESSION_LOCKED` if there is one. Errors reading a lease never block a default writer.
//! - **Stale leases** are taken over: the holder is on this host and its pid is gone (or now
//!   belongs to a process started later, or, for our own pid, no manager of this process holds that
//!   lease). A lease from another host is never judged stale: we cannot see its processes.
//!
//! What it does not do: it is advisory (a process that ignores it, such as the reference, writes
//! anyway); a holder does not notice its lease file being deleted by hand; on network file systems
//! both exclusivity and the liveness test are only as good as the server's `link` and the pid
//! namespace (two hosts are told apart by hostname only).
//!
//! Here: [`WriterGuard`], one manager's mode and lease. The lease file is in `lease` (take, take
//! over, release), what it says in `holder` (the line, and whether its holder is gone), and what
//! the OS tells about a process in `process`.

mod holder;
mod lease;
mod process;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::Result;

pub use holder::Holder;
use lease::locked;
pub use lease::{acquire, live_holder, lock_path, release_all, Lease};
pub use process::hostname;

/// How long a default-mode manager trusts its last look for an exclusive holder.
pub const RECHECK: Duration = Duration::from_secs(1);

/// Exclusive mode on or off, the lease it holds, and default mode's last look for a holder.
#[derive(Debug, Default)]
pub struct WriterGuard {
    exclusive: bool,
    /// The session file the lease is for, and the lease.
    lease: Option<(PathBuf, Lease)>,
    /// Default mode: the file last checked for an exclusive holder, and when.
    checked: Option<(PathBuf, Instant)>,
}

impl WriterGuard {
    /// A guard in exclusive mode or not (see [`crate::Config::exclusive`]), holding no lease yet.
    pub fn new(exclusive: bool) -> WriterGuard {
        WriterGuard {
            exclusive,
            ..WriterGuard::default()
        }
    }

    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Whether this manager holds the lease of `file`.
    pub fn holds(&self, file: &Path) -> bool {
        matches!(&self.lease, Some((f, _)) if f == file)
    }

    /// Turn exclusive mode on (taking the lease of `existing`, the session's file if it exists, at
    /// once) or off (releasing the lease). A refused lease leaves the mode on: writes keep trying.
    pub fn set_exclusive(&mut self, on: bool, existing: Option<&Path>) -> Result<()> {
        self.exclusive = on;
        if !on {
            self.lease = None;
            return Ok(());
        }
        match existing {
            Some(file) => self.take(file),
            None => Ok(()),
        }
    }

    /// Before loading `file` (loading may repair or migrate it): an exclusive manager takes its
    /// lease if the file exists.
    pub fn before_open(&mut self, file: &Path) -> Result<()> {
        if self.exclusive && crate::fsio::exists(file) {
            self.take(file)
        } else {
            Ok(())
        }
    }

    /// Before any write to `file`.
    pub fn before_write(&mut self, file: &Path) -> Result<()> {
        if self.exclusive {
            return self.take(file);
        }
        if let Some((f, at)) = &self.checked {
            if f == file && at.elapsed() < RECHECK {
                return Ok(());
            }
        }
        // A default writer is never blocked by a lease it cannot read.
        if let Ok(Some(h)) = live_holder(file) {
            return Err(locked(file, Some(&h)));
        }
        self.checked = Some((file.to_path_buf(), Instant::now()));
        Ok(())
    }

    /// After `file`'s directory was made again (it had been removed, the lease file with it):
    /// an exclusive manager that held the lease takes it again, unless another process took it
    /// meanwhile (`SESSION_LOCKED`).
    pub fn renew(&mut self, file: &Path) -> Result<()> {
        let intact = match &self.lease {
            Some((f, lease)) if f == file => fs::read(&lease.lock)
                .ok()
                .and_then(|b| Holder::parse(&b))
                .is_some_and(|h| h.nonce == lease.nonce),
            _ => return Ok(()),
        };
        if !self.exclusive || intact {
            return Ok(());
        }
        self.lease = None;
        self.take(file)
    }

    /// The session now lives at `file`: a lease on any other file is released.
    pub fn follow(&mut self, file: Option<&Path>) {
        if !matches!((&self.lease, file), (Some((f, _)), Some(file)) if f == file) {
            self.lease = None;
        }
    }

    fn take(&mut self, file: &Path) -> Result<()> {
        if self.holds(file) {
            return Ok(());
        }
        let lease = acquire(file)?;
        self.lease = Some((file.to_path_buf(), lease));
        Ok(())
    }
}
