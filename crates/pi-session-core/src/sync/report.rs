//! What a sync tells its caller: each session it wrote, deleted, held back or left alone, and
//! why.

use std::path::{Path, PathBuf};

use super::gate::{Flagged, SecretPolicy};
use super::Kind;
pub use crate::trash::Removal;

/// What a sync did to one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Copied (or its changes copied) from this machine to the remote.
    Pushed,
    /// Copied (or its changes copied) from the remote to this machine.
    Pulled,
    /// Both sides (or conflict copies) changed it: joined, and both sides hold the union.
    Merged,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Pushed => "push",
            Action::Pulled => "pull",
            Action::Merged => "merge",
        }
    }
}

/// One side of a sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// This machine.
    Here,
    /// The shared copy (and through it the other machines).
    Remote,
}

impl Place {
    pub fn name(self) -> &'static str {
        match self {
            Place::Here => "here",
            Place::Remote => "remote",
        }
    }
}

/// A session a sync wrote (or, in a dry run, would write).
#[derive(Debug, Clone)]
pub struct Synced {
    pub id: String,
    pub local: PathBuf,
    /// Its file name on the remote.
    pub remote: String,
    pub action: Action,
    /// Entries kept under a new id because both sides had the id with other content.
    pub conflicts: usize,
    /// Conflict copies merged in and removed.
    pub copies_removed: Vec<PathBuf>,
    /// Bytes pi appended while the file was rewritten, carried over.
    pub tail: u64,
    /// Deleted on this side since the last sync but continued on the other, so brought back
    /// here (with the other side's lines): new work beats an old deletion.
    pub restored: Option<Place>,
}

/// A session a sync deleted (or, in a dry run, would delete) because the other side had.
#[derive(Debug, Clone)]
pub struct Deleted {
    pub id: String,
    /// Its file here (gone, or going).
    pub local: PathBuf,
    /// Its file name on the remote.
    pub remote: String,
    /// The side this sync removed it from: `Remote` when it was deleted here, `Here` when it was
    /// deleted on the remote (by another machine's sync).
    pub from: Place,
    /// How it went: a remote file is removed (git keeps it in its history); a local one goes to
    /// the trash where a `trash` command exists.
    pub how: Removal,
}

/// A session whose bytes a purge removed from the git remote's history.
#[derive(Debug, Clone)]
pub struct Purged {
    pub id: String,
    /// Its file name on the remote.
    pub remote: String,
}

/// A session left alone, and why.
#[derive(Debug, Clone)]
pub struct Problem {
    /// A stable code: `SESSION_MISMATCH`, `SYNC_UNMAPPED_PATH`, `SESSION_LOCKED`,
    /// `SYNC_DUPLICATE_SESSION`, `INVALID_SESSION_FILE`, or an I/O errno name.
    pub code: &'static str,
    pub id: Option<String>,
    pub path: PathBuf,
    pub message: String,
}

impl Problem {
    pub fn new(code: &'static str, id: Option<&str>, path: &Path, message: String) -> Problem {
        Problem {
            code,
            id: id.map(str::to_owned),
            path: path.to_path_buf(),
            message,
        }
    }
}

/// What a sync did.
#[derive(Debug, Clone)]
pub struct Report {
    pub remote: String,
    pub kind: Kind,
    /// The git branch (`None` for a folder).
    pub branch: Option<String>,
    pub dry_run: bool,
    pub synced: Vec<Synced>,
    pub deleted: Vec<Deleted>,
    /// Sessions both sides already held alike.
    pub unchanged: usize,
    pub problems: Vec<Problem>,
    /// Rounds run (more than one when a push was beaten by another machine's).
    pub rounds: u32,
    /// The remote's history had been rewritten (a purge on another machine); this machine's copy
    /// now follows the new history.
    pub rewritten: bool,
    /// Sessions removed from the remote's history by this run's purge.
    pub purged: Vec<Purged>,
    /// The secrets policy in force (`skip` or `warn`; `auto` resolved).
    pub secrets_policy: SecretPolicy,
    /// Sessions holding unacknowledged credentials: held back (neither side touched, nothing
    /// deleted on their account), or sent with a warning.
    pub secrets: Vec<Flagged>,
}

impl Report {
    pub fn count(&self, a: Action) -> usize {
        self.synced.iter().filter(|s| s.action == a).count()
    }

    /// Sessions brought back on a side that had deleted them.
    pub fn restored(&self) -> usize {
        self.synced.iter().filter(|s| s.restored.is_some()).count()
    }
}
