//! `pi-sessions sync <remote>`: the sessions of two or more machines kept as one history,
//! through a git remote or a shared folder (see `transport`).
//!
//! A round: the remote is brought up to date (git: fetch, reset the sync's own work tree), both
//! sides are listed (`scan`), the local sessions that would leave the machine are scanned for
//! credentials (`gate`: one held back sits the round out on both sides, deletions included),
//! every other session that changed on either side since the state recorded it is reconciled
//! (`reconcile`), one the state saw that is gone from a side is judged a deletion or not
//! (`deletion`), and the remote is published (git: commit, push; a push someone beat is
//! answered by another round, up to three). Then the state is saved: only once the remote holds
//! what it describes, so that a run killed or refused before that is judged again from the old
//! state and never takes a session it failed to publish for one deleted there.
//!
//! Safe while pi runs: local files are replaced whole as `write` describes (what pi appends
//! meanwhile is carried over), and a file under this store's writer lease is skipped and
//! reported (`SESSION_LOCKED`). Per session problems (`SESSION_MISMATCH`: two files of different
//! sessions; `SYNC_UNMAPPED_PATH`: a project path of another machine with no place here) leave
//! that session's files as they were and the rest goes on. A remote that is not what it should be fails the whole sync before
//! anything is written. After the sync, a purge (`purge`) can take deleted sessions out of a git
//! remote's history.

mod deletion;
pub mod gate;
mod git;
pub mod header;
pub mod names;
pub mod pathmap;
mod purge;
mod reconcile;
pub mod report;
pub mod scan;
pub mod state;
pub mod transport;
pub(crate) mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use gate::{Flagged, SecretPolicy};
pub use pathmap::PathMap;
pub use report::{Action, Deleted, Place, Problem, Purged, Removal, Report, Synced};
pub use transport::Kind;

use crate::error::{Error, ErrorCode, Result};
use crate::fsio;
use deletion::Trust;
use reconcile::Step;
use scan::Side;
use state::State;
use transport::{Pulled, Pushed, Transport};

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
    /// The git branch; `None` is `main`. A branch for a folder is `INVALID_ARGUMENT`.
    pub branch: Option<String>,
    /// The `trash` command a session deleted on the remote goes through here (see
    /// [`crate::trash::find`]); `None` deletes it.
    pub trash: Option<PathBuf>,
    /// Sessions (ids, id prefixes or file names) to take out of a git remote's history after
    /// the sync (see `purge`); each must be deleted already.
    pub purge: Vec<String>,
    /// What happens to sessions holding unacknowledged credentials (see `gate`).
    pub secrets: SecretPolicy,
}

impl Options {
    /// A sync of `agent_dir` with `remote` that writes, on `main`, with the default path map,
    /// deleting without a trash command, purging nothing, with the default secrets policy.
    pub fn new(agent_dir: impl Into<String>, remote: impl Into<String>, kind: Kind) -> Options {
        Options {
            agent_dir: agent_dir.into(),
            remote: remote.into(),
            kind,
            dry_run: false,
            path_map: None,
            branch: None,
            trash: None,
            purge: Vec::new(),
            secrets: SecretPolicy::default(),
        }
    }
}

/// What a round needs to know for every session: made by [`sync`] for each round, read by the
/// reconciling of each session (`reconcile`) and by the decision on a deletion (`deletion`).
pub struct Ctx<'a> {
    pub agent_dir: &'a str,
    pub map: &'a PathMap,
    pub map_path: &'a Path,
    pub remote_dir: &'a Path,
    pub local: &'a Side,
    pub remote: &'a Side,
    pub dry_run: bool,
    /// How remote files are written: fsynced for a shared folder (it is the shared copy); not
    /// for a git work tree, which the commit makes durable and the next round resets anyway.
    pub remote_durability: fsio::Durability,
    /// This machine has a sessions dir at all (else nothing here counts as deleted).
    pub local_present: bool,
    /// Which sessions missing on the remote were deleted there.
    pub remote_trust: &'a Trust,
    /// The `trash` command a local deletion goes through, if there is one.
    pub trash: Option<&'a Path>,
    /// Remote files are private: a git work tree under the sync's own directory is (see
    /// `fsio::private`); a shared folder is the user's and keeps the usual modes.
    pub remote_private: bool,
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
    let t = Transport::open(agent, &opts.remote, opts.kind, opts.branch.as_deref())?;
    if !opts.purge.is_empty() && t.kind == Kind::Folder {
        return Err(Error::invalid_argument(
            "a purge is for a git remote (a shared folder keeps no history of its own)",
        ));
    }
    // One sync per remote at a time (a second is refused with SESSION_LOCKED); under this lease a
    // lock git left in the work tree is a killed sync's, and safe to clear.
    // Ours, and it holds copies of every session: private (see `fsio::private`).
    crate::fsio::ensure_private_dir(&agent.join("sync"))?;
    crate::fsio::ensure_private_dir(&t.home)?;
    let _lease = crate::lock::acquire(&t.home.join("sync"))?;
    for rounds in 1..=3 {
        let pulled = t.pull()?;
        let (mut report, st) = round(opts, &t, pulled, &map, &map_path, progress)?;
        report.rounds = rounds;
        if opts.dry_run {
            purge_into(&t, opts, &mut report)?;
            return Ok(report);
        }
        let msg = format!(
            "pi-sessions sync from {}: {} pushed, {} merged, {} deleted",
            crate::lock::hostname(),
            report.count(Action::Pushed),
            report.count(Action::Merged),
            report
                .deleted
                .iter()
                .filter(|d| d.from == Place::Remote)
                .count()
        );
        if t.push(&msg)? == Pushed::Rejected {
            continue;
        }
        st.save(&t.state_path())?;
        t.settled();
        purge_into(&t, opts, &mut report)?;
        return Ok(report);
    }
    Err(Error::new(
        ErrorCode::SyncGitFailed,
        format!(
            "{}: other machines kept pushing first; run sync again",
            t.remote
        ),
    ))
}

/// The purge asked for, after the sync: a target that names no deleted session is a problem of
/// the report (nothing is purged then), a failure of git an error.
fn purge_into(t: &Transport, opts: &Options, report: &mut Report) -> Result<()> {
    if opts.purge.is_empty() {
        return Ok(());
    }
    match purge::purge(t, &opts.purge, opts.dry_run) {
        Ok(p) => report.purged = p,
        Err(e) if e.code == ErrorCode::InvalidArgument => {
            report
                .problems
                .push(Problem::new(e.js_code(), None, Path::new(""), e.message));
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Which sessions missing on the remote it deleted (see `deletion`).
fn remote_trust(t: &Transport, pulled: Pulled) -> Result<Trust> {
    Ok(if !pulled.present {
        Trust::Nothing
    } else if pulled.rewritten {
        Trust::Only(purge::deleted_in_history(t)?)
    } else {
        Trust::All
    })
}

/// Whether the gate held session `id` back. Such a session is left out of the round on both
/// sides, deletions included: the remote's copy (or its absence) is not judged against it, so
/// what the remote lacks is not taken for a deletion there (which would delete the copy here),
/// and the state keeps what it recorded at the last sync the session went through (or nothing),
/// never bytes this run did not send (which would make the next run take the remote's lack of
/// them for a deletion). Once it may go, it is judged as any session changed here since.
fn held_back(flagged: &[gate::Flagged], id: &str) -> bool {
    flagged.iter().any(|f| !f.sent && f.id == id)
}

/// One round: every session of either side or of the state reconciled. Returns the report and
/// the state to save once the remote is published.
fn round(
    opts: &Options,
    t: &Transport,
    pulled: Pulled,
    map: &PathMap,
    map_path: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Report, State)> {
    let st = State::load(&t.state_path());
    let mut problems = Vec::new();
    let remote_dir = t.sessions_dir();
    let (local, remote) = scan_sides(&opts.agent_dir, &st, &remote_dir, &mut problems)?;
    // Before anything is written: a refusal stops the run here, and a session held back is
    // left out of the round altogether (see `held_back`).
    let flagged = gate::check(opts.secrets, t, &opts.agent_dir, &local, &st, opts.dry_run)?;
    let mut ids: Vec<String> = local
        .by_id
        .keys()
        .chain(remote.by_id.keys())
        .chain(st.sessions.keys())
        .cloned()
        .collect();
    ids.sort();
    ids.dedup();
    ids.retain(|id| !held_back(&flagged, id));
    let trust = remote_trust(t, pulled)?;
    let ctx = Ctx {
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
        local_present: Path::new(&crate::paths::sessions_root(&opts.agent_dir)).is_dir(),
        remote_trust: &trust,
        trash: opts.trash.as_deref(),
        remote_private: t.kind == Kind::Git,
    };
    let mut tally = Tally {
        report: Report::start(opts, t, pulled, flagged),
        st,
        problems,
        watched: Vec::new(),
    };
    for (i, id) in ids.iter().enumerate() {
        progress(i, ids.len());
        let step = reconcile::one(&ctx, id, tally.st.sessions.get(id));
        tally.take(&ctx, id, step);
        tally.settle(&ctx, false);
    }
    tally.settle(&ctx, true);
    progress(ids.len(), ids.len());
    tally.report.problems = tally.problems;
    Ok((tally.report, tally.st))
}

/// A session whose local file the round replaced: its id, its place in the report, its watch.
type Watched = (String, usize, Box<reconcile::Pending>);

/// What a round has come to so far: the report, the state to save, the problems, and the local
/// files it replaced that are still watched (see `write::Watch`).
struct Tally {
    report: Report,
    st: State,
    problems: Vec<Problem>,
    watched: Vec<Watched>,
}

impl Tally {
    /// Record what reconciling session `id` came to.
    fn take(&mut self, ctx: &Ctx, id: &str, step: Result<Step>) {
        let (report, st) = (&mut self.report, &mut self.st);
        match step {
            Ok(Step::Unchanged) => report.unchanged += 1,
            Ok(Step::Same(seen)) => {
                report.unchanged += 1;
                st.sessions.insert(id.to_owned(), seen);
            }
            Ok(Step::Synced(s, seen, pending)) => {
                if let Some(p) = pending {
                    self.watched.push((id.to_owned(), report.synced.len(), p));
                }
                report.synced.push(s);
                st.sessions.insert(id.to_owned(), seen);
            }
            Ok(Step::Deleted(d)) => {
                report.deleted.push(d);
                st.sessions.remove(id);
            }
            Ok(Step::Forget) => {
                st.sessions.remove(id);
            }
            Err(e) => self
                .problems
                .push(problem(ctx.local, ctx.remote, st, id, e)),
        }
    }

    /// Take the looks that are due at the local files this round replaced, and finish each
    /// watch that has ended ([`reconcile::finish`]); with `wait`, until every watch has ended. A
    /// session whose watch fails is reported as a problem and forgotten by the state, so that
    /// the next sync compares both sides again.
    fn settle(&mut self, ctx: &Ctx, wait: bool) {
        loop {
            let now = std::time::Instant::now();
            let mut i = 0;
            while i < self.watched.len() {
                let w = &mut self.watched[i].2.watch;
                let looked = if w.due() <= now { w.look() } else { Ok(()) };
                if looked.is_ok() && !w.done() {
                    i += 1;
                    continue;
                }
                let (id, at, p) = self.watched.swap_remove(i);
                let finished = looked.and_then(|()| match self.st.sessions.get_mut(&id) {
                    Some(seen) => reconcile::finish(ctx, *p, &mut self.report.synced[at], seen),
                    None => Ok(()),
                });
                if let Err(e) = finished {
                    let p = problem(ctx.local, ctx.remote, &self.st, &id, e);
                    self.problems.push(p);
                    self.st.sessions.remove(&id);
                }
            }
            let next = self.watched.iter().map(|w| w.2.watch.due()).min();
            match next {
                Some(next) if wait => {
                    std::thread::sleep(next.saturating_duration_since(std::time::Instant::now()))
                }
                _ => return,
            }
        }
    }
}

impl Report {
    /// The report of a round that has done nothing yet.
    fn start(opts: &Options, t: &Transport, pulled: Pulled, secrets: Vec<gate::Flagged>) -> Report {
        Report {
            remote: t.remote.clone(),
            kind: t.kind,
            branch: (t.kind == Kind::Git).then(|| t.branch.clone()),
            dry_run: opts.dry_run,
            synced: Vec::new(),
            deleted: Vec::new(),
            unchanged: 0,
            problems: Vec::new(),
            rounds: 1,
            rewritten: pulled.rewritten,
            purged: Vec::new(),
            secrets_policy: gate::effective(opts.secrets, t),
            secrets,
        }
    }
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

fn problem(local: &scan::Side, remote: &scan::Side, st: &State, id: &str, e: Error) -> Problem {
    let path = local
        .by_id
        .get(id)
        .or_else(|| remote.by_id.get(id))
        .map(|g| g.main.path.clone())
        .or_else(|| st.sessions.get(id).map(|s| s.local.clone()))
        .unwrap_or_default();
    Problem::new(e.js_code(), Some(id), &path, e.message)
}
