//! One session, both sides: decide what each side must hold, then write it. A session new on one
//! side is copied to the other; one changed on both is joined by the core's merge (every entry of
//! both, conflicts kept beside each other); conflict copies are merged into their file and then
//! removed. A session the state saw that is gone from one side is judged by `deletion`. All
//! bytes are compared in the remote's spelling of the project path (see `header`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::deletion::{self, Verdict};
use super::scan::{head_id, Found, Group};
use super::state::{self, Seen, Stamp};
use super::write::{self, Opened, Watch};
use super::{header, pathmap, Action, Ctx, Deleted, Place, Synced};
use crate::error::{Error, ErrorCode, Result};
use crate::{fsio, lock, merge, paths};

/// What one session comes to.
pub enum Step {
    Unchanged,
    /// Both sides already held the same; only the state learns it.
    Same(Seen),
    /// With the watch of the local file it replaced, if it did (see [`finish`]).
    Synced(Synced, Seen, Option<Box<Pending>>),
    /// Removed from one side because the other had deleted it; the state forgets it.
    Deleted(Deleted),
    /// Gone from both sides; the state forgets it.
    Forget,
}

/// The bytes each side holds now and must hold after.
struct Target {
    local_path: PathBuf,
    local_old: Option<Opened>,
    local_new: Vec<u8>,
    remote_path: PathBuf,
    remote_old: Option<Vec<u8>>,
    remote_new: Vec<u8>,
    copies: Vec<PathBuf>,
    conflicts: usize,
    merged: bool,
}

fn changed(g: Option<&Group>, seen: Option<(&Path, Stamp)>) -> bool {
    g.is_some_and(|g| {
        !g.copies.is_empty() || seen.is_none_or(|(p, st)| p != g.main.path || st != g.main.stamp)
    })
}

pub fn one(ctx: &Ctx, id: &str, seen: Option<&Seen>) -> Result<Step> {
    let l = ctx.local.by_id.get(id);
    let r = ctx.remote.by_id.get(id);
    let remote_seen = seen.map(|s| (ctx.remote_dir.join(&s.remote), s.remote_stamp));
    let dirty = changed(l, seen.map(|s| (s.local.as_path(), s.local_stamp)))
        || changed(r, remote_seen.as_ref().map(|(p, st)| (p.as_path(), *st)))
        || l.is_none()
        || r.is_none()
        // A session of a version 1 state is compared once more, so that its hashes are recorded.
        || seen.is_some_and(|s| s.hashes.is_none());
    if !dirty {
        return Ok(Step::Unchanged);
    }
    if let Some(g) = l {
        if let Some(h) = lock::live_holder(&g.main.path)? {
            return Err(Error::new(
                ErrorCode::SessionLocked,
                format!(
                    "held by a session writer (pid {} on {}); synced once it is closed",
                    h.pid, h.hostname
                ),
            ));
        }
    }
    let mut restored = None;
    if let Some(seen) = seen.filter(|_| l.is_none() || r.is_none()) {
        match deletion::verdict(ctx, seen, l, r)? {
            Verdict::Forget => return Ok(Step::Forget),
            Verdict::Delete(from) => {
                return deletion::apply(ctx, seen, l, r, from).map(Step::Deleted)
            }
            Verdict::Restore(place) => restored = Some(place),
            Verdict::CopyBack => {}
        }
    }
    let target = match (l, r) {
        (Some(l), None) => push_new(ctx, id, l)?,
        (None, Some(r)) => pull_new(ctx, id, r)?,
        (Some(l), Some(r)) => both(ctx, l, r)?,
        (None, None) => return Ok(Step::Forget),
    };
    commit(ctx, id, target, restored)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fsio::read_all(path)?.ok_or_else(|| {
        Error::io(
            &std::io::Error::from(std::io::ErrorKind::NotFound),
            "open",
            path,
        )
    })
}

/// `bytes` with every conflict copy merged in.
fn fold(mut bytes: Vec<u8>, copies: &[Found]) -> Result<(Vec<u8>, usize)> {
    let mut conflicts = 0;
    for c in copies {
        let m = merge::merge_bytes(&bytes, &read(&c.path)?)?;
        conflicts += m.conflicts.len();
        bytes = m.bytes;
    }
    Ok((bytes, conflicts))
}

fn cwd_of(bytes: &[u8]) -> Option<String> {
    header::read(bytes).and_then(|h| h.cwd)
}

fn mismatch(path: &Path, other: &str, id: &str) -> Error {
    Error::new(
        ErrorCode::SessionMismatch,
        format!(
            "{} is another session ({other}) than the one synced to it ({id}); both are left alone",
            path.display()
        ),
    )
}

fn push_new(ctx: &Ctx, id: &str, l: &Group) -> Result<Target> {
    let remote_path = ctx.remote_dir.join(&l.main.name);
    if let Some(other) = ctx.remote.id_of_name.get(&remote_path) {
        return Err(mismatch(&remote_path, other, id));
    }
    let opened = write::open(&l.main.path)?;
    let (lf, conflicts) = fold(opened.bytes.clone(), &l.copies)?;
    let remote_new = header::to_remote(&lf, ctx.map);
    Ok(Target {
        local_path: l.main.path.clone(),
        local_old: Some(opened),
        local_new: lf,
        remote_path,
        remote_old: None,
        remote_new,
        copies: l.copies.iter().map(|c| c.path.clone()).collect(),
        conflicts,
        merged: !l.copies.is_empty(),
    })
}

/// The project path of a remote session on this machine: mapped, or the same path when that is
/// a project here (its directory or its session dir exists); else `SYNC_UNMAPPED_PATH`.
fn local_cwd(ctx: &Ctx, remote_cwd: Option<&str>) -> Result<String> {
    let Some(rc) = remote_cwd else {
        return Err(pathmap::unmapped("(no cwd)", ctx.map_path));
    };
    let (lc, mapped) = ctx.map.to_local(rc);
    let here = paths::Style::HOST.is_absolute(&lc)
        && (Path::new(&lc).is_dir() || paths::default_session_dir(ctx.agent_dir, &lc).is_dir());
    if mapped || here {
        Ok(lc)
    } else {
        Err(pathmap::unmapped(rc, ctx.map_path))
    }
}

fn pull_new(ctx: &Ctx, id: &str, r: &Group) -> Result<Target> {
    let rb = read(&r.main.path)?;
    let (rf, conflicts) = fold(rb.clone(), &r.copies)?;
    let lc = local_cwd(ctx, cwd_of(&rf).as_deref())?;
    let local_path = paths::default_session_dir(ctx.agent_dir, &lc).join(&r.main.name);
    if fsio::exists(&local_path) {
        let other = head_id(&local_path).unwrap_or_else(|| "no session header".into());
        return Err(mismatch(&local_path, &other, id));
    }
    Ok(Target {
        local_path,
        local_old: None,
        local_new: header::to_local(&rf, ctx.map, &lc),
        remote_path: r.main.path.clone(),
        remote_old: Some(rb),
        remote_new: rf,
        copies: r.copies.iter().map(|c| c.path.clone()).collect(),
        conflicts,
        merged: !r.copies.is_empty(),
    })
}

/// The non-blank lines after the header, a CR before the newline dropped.
fn body_lines(bytes: &[u8]) -> HashSet<&[u8]> {
    bytes
        .split(|&b| b == b'\n')
        .skip(1)
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .collect()
}

/// Whether every line of `small` is in `big` (then `big` already holds all of it).
fn covers(big: &[u8], small: &[u8]) -> bool {
    let b = body_lines(big);
    body_lines(small).iter().all(|l| b.contains(l))
}

/// The union of two copies in the remote's spelling: one of them when it holds all of the
/// other (so two machines that hold the same entries agree on the bytes), else their merge.
fn combine(local: Vec<u8>, remote: &[u8]) -> Result<(Vec<u8>, usize, bool)> {
    if local == remote || covers(remote, &local) {
        return Ok((remote.to_vec(), 0, false));
    }
    if covers(&local, remote) {
        return Ok((local, 0, false));
    }
    let m = merge::merge_bytes(&local, remote)?;
    Ok((m.bytes, m.conflicts.len(), true))
}

fn both(ctx: &Ctx, l: &Group, r: &Group) -> Result<Target> {
    let opened = write::open(&l.main.path)?;
    let (lf, c1) = fold(opened.bytes.clone(), &l.copies)?;
    let cwd = cwd_of(&lf);
    let lc = header::to_remote(&lf, ctx.map);
    let rb = read(&r.main.path)?;
    let (rf, c2) = fold(rb.clone(), &r.copies)?;
    let (m, c3, merged) = combine(lc, &rf)?;
    let local_new = match &cwd {
        Some(c) => header::to_local(&m, ctx.map, c),
        None => m.clone(),
    };
    let copies = l.copies.iter().chain(&r.copies).map(|c| c.path.clone());
    Ok(Target {
        local_path: l.main.path.clone(),
        local_old: Some(opened),
        local_new,
        remote_path: r.main.path.clone(),
        remote_old: Some(rb),
        remote_new: m,
        copies: copies.collect(),
        conflicts: c1 + c2 + c3,
        merged: merged || !l.copies.is_empty() || !r.copies.is_empty(),
    })
}

/// A local file this sync replaced, still watched for what a writer that had it open appends to
/// the old file (see [`write::Watch`]), and what [`finish`] needs once the watch ends.
pub struct Pending {
    pub watch: Watch,
    /// The length the sync wrote the local file at.
    local_len: usize,
    /// The bytes it wrote the remote copy with.
    remote_new: Vec<u8>,
}

/// Write what changed: the local file first, then the remote file, then the conflict copies go.
/// What a writer appends to the replaced local file meanwhile is carried over by the returned
/// watch, and from there to the remote by [`finish`].
fn commit(ctx: &Ctx, id: &str, mut t: Target, restored: Option<Place>) -> Result<Step> {
    let local_changes = t.local_old.as_ref().is_none_or(|o| o.bytes != t.local_new);
    let remote_changes = t.remote_old.as_ref().is_none_or(|o| *o != t.remote_new);
    let mut watch = None;
    if !ctx.dry_run {
        if local_changes {
            watch = write_local(&mut t)?;
        }
        if let Err(e) = write_rest(ctx, &t, remote_changes) {
            // The local file is replaced already: its watch still carries what a writer puts
            // into the old one (the next sync sends it), and then the session is a problem,
            // reported with the first failure (and the watch's, if it failed too).
            return Err(match watch.map(Watch::wait) {
                Some(Err(w)) => carried_not(e, &w),
                _ => e,
            });
        }
    }
    let name = t
        .remote_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let seen = Seen {
        id: id.to_owned(),
        local: t.local_path.clone(),
        local_stamp: Stamp::of_len(&t.local_path, t.local_new.len()),
        hashes: Some((state::hash(&t.local_new), state::hash(&t.remote_new))),
        remote: name.clone().unwrap_or_default(),
        remote_stamp: Stamp::of_len(&t.remote_path, t.remote_new.len()),
    };
    let action = match (local_changes, remote_changes) {
        _ if t.merged => Action::Merged,
        (true, true) => Action::Merged,
        (true, false) => Action::Pulled,
        (false, true) => Action::Pushed,
        (false, false) => return Ok(Step::Same(seen)),
    };
    let pending = watch.map(|watch| {
        Box::new(Pending {
            watch,
            local_len: t.local_new.len(),
            remote_new: t.remote_new,
        })
    });
    let synced = Synced {
        id: id.to_owned(),
        local: t.local_path,
        remote: name.unwrap_or_default(),
        action,
        conflicts: t.conflicts,
        copies_removed: t.copies,
        tail: 0,
        restored,
    };
    Ok(Step::Synced(synced, seen, pending))
}

/// After the local file: the remote file, then the conflict copies go.
fn write_rest(ctx: &Ctx, t: &Target, remote_changes: bool) -> Result<()> {
    if remote_changes {
        write_remote(ctx, &t.remote_path, &t.remote_new)?;
    }
    for c in &t.copies {
        std::fs::remove_file(c).map_err(|e| Error::io(&e, "unlink", c))?;
        fsio::sync_dir(c);
    }
    Ok(())
}

/// `first`, telling also that carrying a writer's appends over to the new local file failed
/// (`watch`): lines it appended to the replaced file meanwhile may be missing from the new one.
fn carried_not(mut first: Error, watch: &Error) -> Error {
    first.message = format!(
        "{}; and what another writer appended to the replaced local file meanwhile could not be carried over: {}",
        first.message, watch.message
    );
    first
}

fn write_remote(ctx: &Ctx, path: &Path, bytes: &[u8]) -> Result<()> {
    fsio::ensure_session_dir(ctx.remote_dir, ctx.remote_private)?;
    let mut tmp = fsio::TempFile::create_session(path, ctx.remote_private)?;
    tmp.write_all(bytes)?;
    tmp.rename_over(path, ctx.remote_durability).map(drop)
}

/// The local file made to hold `local_new`; a file replaced is watched under this store's lease,
/// so that our own writers wait until what another writer appended to it is carried over.
fn write_local(t: &mut Target) -> Result<Option<Watch>> {
    match t.local_old.take() {
        Some(old) => {
            let lease = lock::acquire(&t.local_path)?;
            write::replace(&t.local_path, old, &t.local_new, Some(lease)).map(Some)
        }
        None => {
            if let Some(dir) = t.local_path.parent() {
                fsio::ensure_dir(dir)?;
            }
            fsio::create_new_atomic(&t.local_path, &t.local_new)?;
            Ok(None)
        }
    }
}

/// A watch has ended: what it carried over into the local file (written there already) goes to
/// the remote copy too, so both sides hold the same bytes, and the report and the state learn it.
pub fn finish(ctx: &Ctx, p: Pending, synced: &mut Synced, seen: &mut Seen) -> Result<()> {
    let tail = p.watch.finish();
    if tail.is_empty() {
        return Ok(());
    }
    let remote_path = ctx.remote_dir.join(&synced.remote);
    let mut remote = p.remote_new;
    remote.extend_from_slice(&tail);
    write_remote(ctx, &remote_path, &remote)?;
    let local_len = p.local_len + tail.len();
    seen.local_stamp = Stamp::of_len(&synced.local, local_len);
    seen.remote_stamp = Stamp::of_len(&remote_path, remote.len());
    seen.hashes = seen
        .hashes
        .map(|(l, _)| (state::hash_on(l, &tail), state::hash(&remote)));
    synced.tail = tail.len() as u64;
    synced.action = Action::Merged;
    Ok(())
}
