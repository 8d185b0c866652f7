//! `pi-sessions sync <remote>`: the sessions of two or more machines kept as one history,
//! through a git remote or a shared folder (see `transport`).
//!
//! A round: the remote is brought up to date (git: fetch, reset the sync's own work tree), both
//! sides are listed (`scan`), every session that changed on either side since the state recorded
//! it is reconciled (`reconcile`), the state is saved and the remote published (git: commit,
//! push; a push someone beat is answered by another round, up to three). A session is never
//! deleted by a sync: one removed on one side comes back from the other.
//!
//! Safe while pi runs: local files are written as `write` describes (appends carried over), and a
//! file under this store's writer lease is skipped and reported (`SESSION_LOCKED`). Per session
//! problems (`SESSION_MISMATCH`: two files of different sessions; `SYNC_UNMAPPED_PATH`: a
//! project path of another machine with no place here) leave that session's files as they were
//! and the rest goes on. A remote that is not what it should be fails the whole sync before
//! anything is written.

pub mod header;
pub mod names;
pub mod pathmap;
mod reconcile;
pub mod scan;
pub mod state;
pub mod transport;
mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use pathmap::PathMap;
pub use transport::Kind;

use crate::error::{Error, ErrorCode, Result};
use reconcile::Step;
use state::State;
use transport::{Pushed, Transport};

/// What to sync with, and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub agent_dir: String,
    /// A git URL or path, or (with [`Kind::Folder`]) a shared folder.
    pub remote: String,
    pub kind: Kind,
    /// Look only: nothing is written (a git remote is still fetched into the sync's own dir).
    pub dry_run: bool,
    /// The path map config; `None` is `<agentDir>/sync/paths`.
    pub path_map: Option<PathBuf>,
}

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
}

/// A session left alone, and why.
#[derive(Debug, Clone)]
pub struct Problem {
    /// A stable code: `SESSION_MISMATCH`, `SYNC_UNMAPPED_PATH`, `SESSION_LOCKED`,
    /// `SYNC_DUPLICATE_SESSION`, or an I/O errno name.
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
    pub dry_run: bool,
    pub synced: Vec<Synced>,
    /// Sessions both sides already held alike.
    pub unchanged: usize,
    pub problems: Vec<Problem>,
    /// Rounds run (more than one when a push was beaten by another machine's).
    pub rounds: u32,
}

impl Report {
    pub fn count(&self, a: Action) -> usize {
        self.synced.iter().filter(|s| s.action == a).count()
    }
}

/// Sync the sessions of `opts.agent_dir` with the remote. `progress(done, total)` is called as
/// sessions are looked at.
pub fn sync(opts: &Options, progress: &mut dyn FnMut(usize, usize)) -> Result<Report> {
    let agent = Path::new(&opts.agent_dir);
    let map_path = opts
        .path_map
        .clone()
        .unwrap_or_else(|| agent.join("sync").join("paths"));
    let map = PathMap::load(&map_path)?;
    let t = Transport::open(agent, &opts.remote, opts.kind)?;
    // One sync per remote at a time (a second is refused with SESSION_LOCKED); under this lease a
    // lock git left in the work tree is a killed sync's, and safe to clear.
    crate::fsio::ensure_dir(&t.home)?;
    let _lease = crate::lock::acquire(&t.home.join("sync"))?;
    for rounds in 1..=3 {
        t.pull()?;
        let mut report = round(opts, &t, &map, &map_path, progress)?;
        report.rounds = rounds;
        if opts.dry_run {
            return Ok(report);
        }
        let msg = format!(
            "pi-sessions sync from {}: {} pushed, {} merged",
            crate::lock::hostname(),
            report.count(Action::Pushed),
            report.count(Action::Merged)
        );
        if t.push(&msg)? != Pushed::Rejected {
            return Ok(report);
        }
    }
    Err(Error::new(
        ErrorCode::SyncGitFailed,
        format!(
            "{}: other machines kept pushing first; run sync again",
            t.remote
        ),
    ))
}

fn round(
    opts: &Options,
    t: &Transport,
    map: &PathMap,
    map_path: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report> {
    let state_path = t.state_path();
    let mut st = State::load(&state_path);
    let mut problems = Vec::new();
    let remote_dir = t.sessions_dir();
    let (local, remote) = scan_sides(&opts.agent_dir, &st, &remote_dir, &mut problems)?;
    let mut ids: Vec<&String> = local.by_id.keys().chain(remote.by_id.keys()).collect();
    ids.sort();
    ids.dedup();
    let ctx = reconcile::Ctx {
        agent_dir: &opts.agent_dir,
        map,
        map_path,
        remote_dir: &remote_dir,
        local: &local,
        remote: &remote,
        dry_run: opts.dry_run,
        remote_durability: match t.kind {
            Kind::Git => crate::fsio::Durability::Buffered,
            Kind::Folder => crate::fsio::Durability::Fsync,
        },
    };
    let mut report = Report {
        remote: t.remote.clone(),
        kind: t.kind,
        dry_run: opts.dry_run,
        synced: Vec::new(),
        unchanged: 0,
        problems: Vec::new(),
        rounds: 1,
    };
    for (i, id) in ids.iter().enumerate() {
        progress(i, ids.len());
        match reconcile::one(&ctx, id, st.sessions.get(*id)) {
            Ok(Step::Unchanged) => report.unchanged += 1,
            Ok(Step::Same(seen)) => {
                report.unchanged += 1;
                st.sessions.insert((*id).clone(), seen);
            }
            Ok(Step::Synced(s, seen)) => {
                report.synced.push(s);
                st.sessions.insert((*id).clone(), seen);
            }
            Err(e) => problems.push(problem(&local, &remote, id, e)),
        }
    }
    progress(ids.len(), ids.len());
    report.problems = problems;
    if !opts.dry_run {
        st.save(&state_path)?;
    }
    Ok(report)
}

/// Both sides' sessions; a file whose size and mtime are as `st` recorded is known without
/// being opened.
fn scan_sides(
    agent_dir: &str,
    st: &State,
    remote_dir: &Path,
    problems: &mut Vec<Problem>,
) -> Result<(scan::Side, scan::Side)> {
    let by_path: HashMap<&Path, &state::Seen> = st
        .sessions
        .values()
        .map(|s| (s.local.as_path(), s))
        .collect();
    let by_name: HashMap<&str, &state::Seen> = st
        .sessions
        .values()
        .map(|s| (s.remote.as_str(), s))
        .collect();
    let by_local = |f: &scan::Found| {
        by_path
            .get(f.path.as_path())
            .filter(|s| s.local_stamp == f.stamp)
            .map(|s| s.id.clone())
    };
    let by_remote = |f: &scan::Found| {
        by_name
            .get(f.name.as_str())
            .filter(|s| s.remote_stamp == f.stamp)
            .map(|s| s.id.clone())
    };
    let root = PathBuf::from(crate::paths::sessions_root(agent_dir));
    Ok((
        scan::local(&root, problems, &by_local)?,
        scan::remote(remote_dir, problems, &by_remote)?,
    ))
}

fn problem(local: &scan::Side, remote: &scan::Side, id: &str, e: Error) -> Problem {
    let path = local
        .by_id
        .get(id)
        .or_else(|| remote.by_id.get(id))
        .map(|g| g.main.path.clone())
        .unwrap_or_default();
    Problem::new(e.js_code(), Some(id), &path, e.message)
}
