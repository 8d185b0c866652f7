//! Deletions: a session the last sync saw on both sides (the state records it) that is gone
//! from one of them now. Gone from one side and unchanged on the other since (the stamp, else the
//! hash of its bytes, is what the state recorded) is a deletion, carried to the other side: a
//! remote file is removed (git keeps it in its history), a local one goes to the trash where a
//! `trash` command exists. Changed on the other side since is new work, which beats the old
//! deletion: the session is copied back to the side that deleted it.
//!
//! Only evidence deletes. A side that is missing as a whole (no `<agentDir>/sessions`, a git
//! remote without the branch, a shared folder without `sessions/`), a session of a version 1
//! state (no hashes), or a file still at the recorded place that no longer reads as a session,
//! is never taken for a deletion. After the remote's history was rewritten (a purge), a session
//! missing there counts as deleted only when the new history says so (a commit deleting it, or
//! the purge's record): a history set back by hand loses nothing here.

use std::collections::HashSet;
use std::path::Path;

use super::scan::{Group, Side};
use super::state::{self, Seen};
use super::{Ctx, Deleted, Place, Removal};
use crate::error::{Error, ErrorCode, Result};
use crate::{fsio, lock, trash};

/// Which sessions missing on the remote were deleted there.
#[derive(Debug, Clone)]
pub enum Trust {
    /// Every one (the remote is there and its history ran forward).
    All,
    /// Those of these remote file names (the history was rewritten; these it says were deleted).
    Only(HashSet<String>),
    /// None (there is no remote copy at all).
    Nothing,
}

impl Trust {
    fn allows(&self, name: &str) -> bool {
        match self {
            Trust::All => true,
            Trust::Only(names) => names.contains(name),
            Trust::Nothing => false,
        }
    }
}

/// What a session gone from one side comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Gone from both sides: the state forgets it.
    Forget,
    /// Deleted on one side, unchanged on the other: removed from the other (the place named).
    Delete(Place),
    /// Deleted on the place named, continued on the other: copied back there.
    Restore(Place),
    /// No evidence of a deletion: copied to the side that lacks it, as a new session would be.
    CopyBack,
}

/// Judge a session the state saw that `l` (here) or `r` (the remote) no longer holds.
pub fn verdict(ctx: &Ctx, seen: &Seen, l: Option<&Group>, r: Option<&Group>) -> Result<Verdict> {
    let Some((local_hash, remote_hash)) = seen.hashes else {
        return Ok(match (l, r) {
            (None, None) => Verdict::Forget,
            _ => Verdict::CopyBack,
        });
    };
    let remote_path = ctx.remote_dir.join(&seen.remote);
    match (l, r) {
        (None, None) => Ok(Verdict::Forget),
        (None, Some(r)) => {
            if !ctx.local_present {
                return Ok(Verdict::CopyBack);
            }
            unreadable(&seen.local, ctx.local, &seen.id)?;
            Ok(
                if unchanged(r, &remote_path, seen.remote_stamp, remote_hash)? {
                    Verdict::Delete(Place::Remote)
                } else {
                    Verdict::Restore(Place::Here)
                },
            )
        }
        (Some(l), None) => {
            if !ctx.remote_trust.allows(&seen.remote) {
                return Ok(Verdict::CopyBack);
            }
            unreadable(&remote_path, ctx.remote, &seen.id)?;
            Ok(
                if unchanged(l, &seen.local, seen.local_stamp, local_hash)? {
                    Verdict::Delete(Place::Here)
                } else {
                    Verdict::Restore(Place::Remote)
                },
            )
        }
        (Some(_), Some(_)) => Ok(Verdict::CopyBack),
    }
}

/// A file still at the place the state recorded that the scan could not read as a session: it
/// may be the session, damaged or unreadable for now, so nothing is deleted on its account.
fn unreadable(path: &Path, side: &Side, id: &str) -> Result<()> {
    if fsio::exists(path) && !side.id_of_name.contains_key(path) {
        return Err(Error::new(
            ErrorCode::InvalidSessionFile,
            format!(
                "{} held session {id} at the last sync and reads as no session now; it is left \
                 alone and not deleted elsewhere",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// Whether a side's copy is what the state recorded: same place and stamp, or the same bytes.
fn unchanged(g: &Group, seen_path: &Path, stamp: state::Stamp, hash: u64) -> Result<bool> {
    if !g.copies.is_empty() {
        return Ok(false);
    }
    if g.main.path == seen_path && g.main.stamp == stamp && stamp != state::Stamp::default() {
        return Ok(true);
    }
    let bytes = fsio::read_all(&g.main.path)?.unwrap_or_default();
    Ok(state::hash(&bytes) == hash)
}

/// Carry out `Verdict::Delete(from)`: remove the session's file from that side (a dry run only
/// says so).
pub fn apply(
    ctx: &Ctx,
    seen: &Seen,
    l: Option<&Group>,
    r: Option<&Group>,
    from: Place,
) -> Result<Deleted> {
    let how = match (from, l, r) {
        (Place::Here, Some(l), _) => {
            let path = &l.main.path;
            if ctx.dry_run {
                if ctx.trash.is_some() {
                    Removal::Trash
                } else {
                    Removal::Removed
                }
            } else {
                // Our own writers wait while the file goes; a live one was refused before.
                let _lease = lock::acquire(path)?;
                trash::remove(path, ctx.trash)?
            }
        }
        (Place::Remote, _, Some(r)) => {
            let path = &r.main.path;
            if !ctx.dry_run {
                std::fs::remove_file(path).map_err(|e| Error::io(&e, "unlink", path))?;
                if ctx.remote_durability == fsio::Durability::Fsync {
                    fsio::sync_dir(path);
                }
            }
            Removal::Removed
        }
        _ => {
            return Err(Error::new(
                ErrorCode::Internal,
                format!("sync: no file of {} to delete", seen.id),
            ))
        }
    };
    Ok(Deleted {
        id: seen.id.clone(),
        local: l.map_or_else(|| seen.local.clone(), |g| g.main.path.clone()),
        remote: seen.remote.clone(),
        from,
        how,
    })
}
