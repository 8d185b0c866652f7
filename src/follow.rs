//! The library forms of `pi-sessions merge`, `sync` and `move`: `mergeSessions` (two copies of one
//! session joined), `syncSessions` and `moveSessions`, each returning the report its command
//! prints with `--json`. `mergeSessions`: two copies of one session joined
//! through the core's merge (`pi_session_core::merge`), with the report `merge --json` prints.

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{fsio, merge, paths, relocate, Error as CoreError, Result as CoreResult};

use crate::error::ForJs;

/// An entry of `b` that `a` has under the same id with other content.
#[napi(object)]
pub struct MergeConflict {
    /// The id both files use.
    pub id: String,
    /// The id `b`'s entry was given in the result (it carries `mergedFrom: id`).
    pub new_id: String,
}

/// What a merge did (the shape of `pi-sessions merge --json`).
#[napi(object)]
pub struct MergeReport {
    /// The session id both files share.
    pub session: String,
    /// The file written (`out`, or `a` in place), or null when nothing was written.
    pub out: Option<String>,
    /// Entries in the result.
    pub entries: u32,
    pub conflicts: Vec<MergeConflict>,
    /// Lines that are no entry, kept as they were (each distinct line once).
    pub kept_lines: u32,
    /// The id of the last entry, where a reader resumes; null when there is no entry.
    pub leaf_id: Option<String>,
    /// The merged file's text, when it was written nowhere (neither `out` nor `inPlace`).
    pub text: Option<String>,
}

fn read(p: &Path) -> CoreResult<Vec<u8>> {
    fsio::read_all(p)?.ok_or_else(|| {
        CoreError::io(
            &std::io::Error::from(std::io::ErrorKind::NotFound),
            "open",
            p,
        )
    })
}

fn run(a: &str, b: &str, out: Option<&str>, in_place: bool) -> CoreResult<MergeReport> {
    if in_place && out.is_some() {
        return Err(CoreError::invalid_argument(
            "give either out or inPlace, not both",
        ));
    }
    let a = Path::new(a);
    let m = merge::merge_bytes(&read(a)?, &read(Path::new(b))?)?;
    let (written, text) = match out {
        // A new file only, as `merge --out`: an existing one is refused (EEXIST), never replaced.
        Some(o) => {
            fsio::create_new_atomic(Path::new(o), &m.bytes)?;
            (Some(o.to_owned()), None)
        }
        None if in_place => {
            fsio::replace_atomic(a, &m.bytes)?;
            (Some(a.to_string_lossy().into_owned()), None)
        }
        None => (None, Some(String::from_utf8_lossy(&m.bytes).into_owned())),
    };
    Ok(MergeReport {
        session: m.session_id,
        out: written,
        entries: u32::try_from(m.entries).unwrap_or(u32::MAX),
        conflicts: m
            .conflicts
            .into_iter()
            .map(|c| MergeConflict {
                id: c.id,
                new_id: c.new_id,
            })
            .collect(),
        kept_lines: u32::try_from(m.kept_lines).unwrap_or(u32::MAX),
        leaf_id: m.leaf_id,
        text,
    })
}

/// Merge session files `a` and `b` (copies of one session): into `out` (a new file), into `a`
/// with `in_place`, or into the returned `text`. Different sessions: `SESSION_MISMATCH`, nothing
/// written. Each path is expanded (tilde, file URL) here.
#[napi(catch_unwind)]
pub fn merge_sessions(
    env: Env,
    a: String,
    b: String,
    out: Option<String>,
    in_place: Option<bool>,
) -> Result<MergeReport> {
    let out = out.map(|o| paths::normalize(&o));
    let (a, b) = (paths::normalize(&a), paths::normalize(&b));
    run(&a, &b, out.as_deref(), in_place.unwrap_or(false)).for_js(&env)
}

/// The agent directory a library command works on: `agent_dir` when given, else the one
/// `process.env` names; resolved.
fn agent_dir_or_env(env: &Env, agent_dir: Option<String>) -> String {
    paths::resolve(&agent_dir.unwrap_or_else(|| crate::config::agent_dir(env)))
}

/// A session that `syncSessions` wrote (or, in a dry run, would write).
#[napi(object)]
pub struct SyncedSession {
    pub id: String,
    /// The local file.
    pub local: String,
    /// Its file name on the remote.
    pub remote: String,
    /// `push`, `pull` or `merge`.
    pub action: String,
    /// Entries kept beside a differing one under a new id (`mergedFrom`).
    pub conflicts: u32,
    /// Conflict copies merged in and removed.
    pub copies_removed: Vec<String>,
    /// Bytes pi appended during the write, carried over.
    pub tail: f64,
    /// `here` or `remote`: the side that had deleted this session, which another side continued;
    /// it is back there now. Null otherwise.
    pub restored: Option<String>,
}

/// A session `syncSessions` deleted (or, in a dry run, would delete) because the other side had.
#[napi(object)]
pub struct SyncDeleted {
    pub id: String,
    /// The local file (gone now, or going).
    pub local: String,
    /// Its file name on the remote.
    pub remote: String,
    /// The side it was removed from: `remote` (deleted here) or `here` (deleted on the remote).
    pub from: String,
    /// `trash` (moved to the trash by a `trash` command) or `removed`.
    pub how: String,
}

/// A session a purge removed from the git remote's history.
#[napi(object)]
pub struct SyncPurged {
    pub id: String,
    /// Its file name on the remote.
    pub remote: String,
}

/// A session `syncSessions` left alone.
#[napi(object)]
pub struct SyncProblem {
    /// `SESSION_MISMATCH`, `SYNC_UNMAPPED_PATH`, `SESSION_LOCKED`, `SYNC_DUPLICATE_SESSION`, or an
    /// errno name.
    pub code: String,
    pub id: Option<String>,
    pub path: String,
    pub message: String,
}

/// What a sync did (the shape of `pi-sessions sync --json`).
#[napi(object)]
pub struct SyncReport {
    pub remote: String,
    /// `git` or `folder`.
    pub transport: String,
    /// The git branch; null for a folder.
    pub branch: Option<String>,
    pub dry_run: bool,
    pub rounds: u32,
    /// The remote's history had been rewritten by a purge elsewhere; this machine follows it.
    pub rewritten: bool,
    pub synced: Vec<SyncedSession>,
    pub deleted: Vec<SyncDeleted>,
    pub purged: Vec<SyncPurged>,
    pub pushed: u32,
    pub pulled: u32,
    pub merged: u32,
    pub restored: u32,
    pub unchanged: u32,
    pub problems: Vec<SyncProblem>,
    /// `skip`, `refuse` or `warn`: the secrets policy in force.
    pub secrets_policy: String,
    /// Sessions to send that hold unacknowledged credentials.
    pub secrets: Vec<SyncSecrets>,
}

/// A session `syncSessions` held back (or sent, under `warn`) because it holds credentials.
#[napi(object)]
pub struct SyncSecrets {
    pub id: String,
    pub path: String,
    /// The kinds found (`anthropic-api-key`, `private-key`, …).
    pub kinds: Vec<String>,
    pub findings: u32,
    /// False: held back; true: sent with a warning.
    pub sent: bool,
    /// This run reported it first (a later run only counts it).
    pub first: bool,
}

fn n32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn sync_report(r: pi_session_core::sync::Report) -> SyncReport {
    use pi_session_core::sync::Action;
    let lossy = |p: &Path| p.to_string_lossy().into_owned();
    SyncReport {
        remote: r.remote.clone(),
        transport: r.kind.name().to_owned(),
        branch: r.branch.clone(),
        dry_run: r.dry_run,
        rounds: r.rounds,
        rewritten: r.rewritten,
        pushed: n32(r.count(Action::Pushed)),
        pulled: n32(r.count(Action::Pulled)),
        merged: n32(r.count(Action::Merged)),
        restored: n32(r.restored()),
        unchanged: n32(r.unchanged),
        deleted: r
            .deleted
            .iter()
            .map(|d| SyncDeleted {
                id: d.id.clone(),
                local: lossy(&d.local),
                remote: d.remote.clone(),
                from: d.from.name().to_owned(),
                how: d.how.name().to_owned(),
            })
            .collect(),
        purged: r
            .purged
            .iter()
            .map(|p| SyncPurged {
                id: p.id.clone(),
                remote: p.remote.clone(),
            })
            .collect(),
        synced: r
            .synced
            .iter()
            .map(|x| SyncedSession {
                id: x.id.clone(),
                local: lossy(&x.local),
                remote: x.remote.clone(),
                action: x.action.name().to_owned(),
                conflicts: n32(x.conflicts),
                copies_removed: x.copies_removed.iter().map(|c| lossy(c)).collect(),
                tail: x.tail as f64,
                restored: x.restored.map(|p| p.name().to_owned()),
            })
            .collect(),
        problems: r
            .problems
            .iter()
            .map(|p| SyncProblem {
                code: p.code.to_owned(),
                id: p.id.clone(),
                path: lossy(&p.path),
                message: p.message.clone(),
            })
            .collect(),
        secrets_policy: r.secrets_policy.name().to_owned(),
        secrets: r
            .secrets
            .iter()
            .map(|f| SyncSecrets {
                id: f.id.clone(),
                path: lossy(&f.path),
                kinds: f.kinds.iter().map(|k| k.name().to_owned()).collect(),
                findings: n32(f.findings),
                sent: f.sent,
                first: f.first,
            })
            .collect(),
    }
}

/// What `syncSessions` is asked, beyond the agent dir and the remote.
#[napi(object)]
pub struct SyncOptions {
    pub folder: bool,
    pub dry_run: bool,
    /// The path map file (default `<agentDir>/sync/paths`).
    pub paths: Option<String>,
    /// The git branch (default `main`).
    pub branch: Option<String>,
    /// Sessions (ids, id prefixes or file names) to take out of the git remote's history after
    /// the sync.
    pub purge: Vec<String>,
    /// `auto` (default), `skip`, `refuse` or `warn`: what happens to sessions holding
    /// unacknowledged credentials.
    pub secrets: Option<String>,
}

/// Sync the sessions of `agent_dir` (else the environment's) with `remote`: a git repository (a
/// URL as given, a path resolved), or a shared folder with `folder`. A session deleted on one side since the last sync is deleted on the other (here
/// through the `trash` command on `PATH` when there is one). Remote errors throw
/// (`SYNC_REMOTE_NOT_GIT`, `SYNC_REMOTE_NOT_FOLDER`, `SYNC_GIT_FAILED`, `INVALID_ARGUMENT` for a
/// bad branch or secrets policy, `SYNC_SECRETS_FOUND` when `refuse` finds credentials: nothing
/// sent); sessions left alone are in `problems`, those holding credentials in `secrets`.
#[napi(catch_unwind)]
pub fn sync_sessions(
    env: Env,
    agent_dir: Option<String>,
    remote: String,
    options: SyncOptions,
) -> Result<SyncReport> {
    use pi_session_core::sync::{self, Kind, Options, SecretPolicy};
    let policy = match options.secrets.as_deref() {
        None => Ok(SecretPolicy::Auto),
        Some(name) => SecretPolicy::from_name(name).ok_or_else(|| {
            CoreError::invalid_argument(format!(
                "syncSessions: secrets must be auto, skip, refuse or warn, not {name}"
            ))
        }),
    }
    .for_js(&env)?;
    let opts = Options {
        dry_run: options.dry_run,
        path_map: options.paths.map(|p| paths::resolve(&p).into()),
        branch: options.branch,
        trash: pi_session_core::trash::find(None),
        purge: options.purge,
        secrets: policy,
        ..Options::new(
            agent_dir_or_env(&env, agent_dir),
            sync::transport::remote_arg(&remote, &paths::process_cwd(), &paths::home()),
            if options.folder {
                Kind::Folder
            } else {
                Kind::Git
            },
        )
    };
    sync::sync(&opts, &mut |_, _| {})
        .map(sync_report)
        .for_js(&env)
}

/// A header field a move rewrote.
#[napi(object)]
pub struct MoveRewrite {
    pub field: String,
    pub from: Option<String>,
    pub to: String,
}

/// One file of a move (a `files` item of `pi-sessions move --json`).
#[napi(object)]
pub struct MovedFile {
    pub from: String,
    pub to: String,
    pub id: Option<String>,
    /// `move`, `resume` or `skip`.
    pub action: String,
    /// `planned`, `moved`, `skipped` or `failed`.
    pub status: String,
    pub rewrites: Vec<MoveRewrite>,
    pub tail: f64,
    /// `locked`, `other-session`, `diverged`, `not-a-session`, `error`, or null.
    pub reason: Option<String>,
    pub message: Option<String>,
}

/// What a move did or would do (the shape of `pi-sessions move --json`).
#[napi(object)]
pub struct MoveReport {
    pub from: String,
    pub to: String,
    pub old_dir: String,
    pub new_dir: String,
    pub applied: bool,
    pub files: Vec<MovedFile>,
    pub moved: u32,
    pub skipped: u32,
}

fn moved_file(f: &relocate::FileMove, done: Option<&relocate::Done>) -> MovedFile {
    let o = f.outcome(done);
    MovedFile {
        from: f.from.to_string_lossy().into_owned(),
        to: f.to.to_string_lossy().into_owned(),
        id: f.session_id.clone(),
        action: o.action.to_owned(),
        status: o.status.to_owned(),
        rewrites: f
            .rewrites
            .iter()
            .map(|r| MoveRewrite {
                field: r.field.to_owned(),
                from: r.from.clone(),
                to: r.to.clone(),
            })
            .collect(),
        tail: o.tail as f64,
        reason: o.reason.map(str::to_owned),
        message: o.message,
    }
}

fn run_move(agent_dir: &str, old: &str, new: &str, apply: bool) -> CoreResult<MoveReport> {
    let plan = relocate::plan(agent_dir, old, new)?;
    let done = apply.then(|| relocate::apply(&plan));
    let files: Vec<MovedFile> = plan
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| moved_file(f, done.as_ref().map(|d| &d[i])))
        .collect();
    let moved = files
        .iter()
        .filter(|f| f.status == "moved" || (f.status == "planned" && f.action != "skip"))
        .count();
    Ok(MoveReport {
        from: old.to_owned(),
        to: plan.new_cwd.clone(),
        old_dir: plan.old_dir.to_string_lossy().into_owned(),
        new_dir: plan.new_dir.to_string_lossy().into_owned(),
        applied: apply,
        moved: n32(moved),
        skipped: n32(files.len() - moved),
        files,
    })
}

/// Move the sessions of project `old_dir` to project `new_dir` (both resolved here) under
/// `agent_dir` (else the environment's) (`pi-sessions move`); only the plan unless `apply`.
#[napi(catch_unwind)]
pub fn move_sessions(
    env: Env,
    agent_dir: Option<String>,
    old_dir: String,
    new_dir: String,
    apply: bool,
) -> Result<MoveReport> {
    let agent = agent_dir_or_env(&env, agent_dir);
    let (old, new) = (paths::resolve(&old_dir), paths::resolve(&new_dir));
    run_move(&agent, &old, &new, apply).for_js(&env)
}
