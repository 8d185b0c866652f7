//! Moving a project's sessions to the session directory of another project directory (the
//! project was renamed or moved on disk): `<agentDir>/sessions/--<old>--/*.jsonl` to
//! `--<new>--/`, with each header's `cwd` set to the new directory and a `parentSession` that
//! names a file of the moved set pointed at that file's new path. Every other line is copied byte
//! for byte, unparseable ones too.
//!
//! [`plan`] only looks; [`apply`] moves. Each file is written to its destination atomically
//! (temp file, fsync, link), then the old file is retired (`retire.rs`): stock pi appends by
//! reopening the path, so what it added meanwhile, just before the unlink or just after it, is
//! copied over. A run
//! that was interrupted is completed by the next one: a destination with the same header id is
//! the earlier copy, and only what the old file has beyond it is appended. A destination that is
//! another session, or that grew apart from the old file, is left alone and reported; so is a
//! file held under this store's writer lease.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsio::{self, Durability};
use crate::json::{self, JsStr, Value};
use crate::{lock, paths};

mod retire;
use retire::retire_old;

/// A header field the move rewrites, with its value before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    pub field: &'static str,
    pub from: Option<String>,
    pub to: String,
}

/// What the report says of a file moved while pi kept appending at its old path.
pub const LEFT_AT_OLD: &str =
    "pi is still appending at the old path: its newest lines stay in the file there";

/// What happens to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Written to the destination, then the old file removed.
    Move,
    /// An earlier run wrote the destination but did not remove the old file: `tail` bytes the
    /// old one has beyond it are appended, then the old file is removed.
    Resume { tail: u64 },
    /// Left where it is, for the reason given.
    Skip(Skip),
}

/// Why a file is not moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// A live writer of this store holds its lease (`<file>.lock`).
    Locked { pid: u32, hostname: String },
    /// The destination is another session (its header id differs).
    OtherSession { dest_id: Option<String> },
    /// The destination is this session but it and the old file grew apart since the copy.
    Diverged,
    /// The first line is no session header.
    NotASession,
}

impl Skip {
    /// A sentence for the user.
    pub fn message(&self, dest: &Path) -> String {
        match self {
            Skip::Locked { pid, hostname } => format!(
                "held by a session writer (pid {pid} on {hostname}); run again once it is closed"
            ),
            Skip::OtherSession { dest_id } => format!(
                "{} exists and is another session ({}); left in place",
                dest.display(),
                dest_id.as_deref().unwrap_or("no header id")
            ),
            Skip::Diverged => format!(
                "{} is this session but both copies changed since it was written; join them with `pi-sessions merge`",
                dest.display()
            ),
            Skip::NotASession => "the first line is no session header; left in place".to_owned(),
        }
    }

    /// A stable name (`locked`, `other-session`, `diverged`, `not-a-session`).
    pub fn code(&self) -> &'static str {
        match self {
            Skip::Locked { .. } => "locked",
            Skip::OtherSession { .. } => "other-session",
            Skip::Diverged => "diverged",
            Skip::NotASession => "not-a-session",
        }
    }
}

/// One file of a move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMove {
    pub from: PathBuf,
    pub to: PathBuf,
    /// The header id of the old file.
    pub session_id: Option<String>,
    pub action: Action,
    /// The header fields rewritten (for a [`Action::Move`]).
    pub rewrites: Vec<Rewrite>,
}

/// What a move will do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub old_dir: PathBuf,
    pub new_dir: PathBuf,
    /// The new project directory, as headers will name it.
    pub new_cwd: String,
    /// The files of the old directory, by name.
    pub files: Vec<FileMove>,
}

/// The outcome of one file of [`apply`].
#[derive(Debug)]
pub enum Done {
    /// Moved; `tail` bytes were appended to the old file while it was copied (or, resuming,
    /// beyond the earlier copy) and carried over.
    Moved {
        tail: u64,
        /// pi kept appending at the old path after it was retired, round after round: its latest
        /// lines were left there, in a file of their own (see [`retire_old`]).
        left_at_old: bool,
    },
    Skipped(Skip),
    Failed(Error),
}

/// How one file of a move is reported (`move --json`, `moveSessions`): one rule for both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// `move`, `resume` or `skip`: what the plan said.
    pub action: &'static str,
    /// `planned` (not applied), `moved`, `skipped` or `failed`.
    pub status: &'static str,
    /// A [`Skip::code`], or `error` for a failure.
    pub reason: Option<&'static str>,
    pub message: Option<String>,
    /// Bytes carried over beyond the first copy (planned, for a resume).
    pub tail: u64,
}

impl FileMove {
    /// The report of this file, planned (`done` is `None`) or applied.
    pub fn outcome(&self, done: Option<&Done>) -> Outcome {
        let (action, planned_tail) = match &self.action {
            Action::Move => ("move", 0),
            Action::Resume { tail } => ("resume", *tail),
            Action::Skip(_) => ("skip", 0),
        };
        let (status, reason, message, tail) = match (done, &self.action) {
            (None, Action::Skip(sk)) => ("planned", Some(sk.code()), Some(sk.message(&self.to)), 0),
            (None, _) => ("planned", None, None, planned_tail),
            (
                Some(Done::Moved {
                    tail,
                    left_at_old: true,
                }),
                _,
            ) => (
                "moved",
                Some("left_at_old"),
                Some(LEFT_AT_OLD.to_owned()),
                *tail,
            ),
            (Some(Done::Moved { tail, .. }), _) => ("moved", None, None, *tail),
            (Some(Done::Skipped(sk)), _) => {
                ("skipped", Some(sk.code()), Some(sk.message(&self.to)), 0)
            }
            (Some(Done::Failed(e)), _) => ("failed", Some("error"), Some(e.message.clone()), 0),
        };
        Outcome {
            action,
            status,
            reason,
            message,
            tail,
        }
    }
}

/// The `.jsonl` files of a directory (no hidden temp files), sorted; none if it does not exist.
fn session_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(fsio::session_files(dir)?
        .into_iter()
        .map(|(p, _)| p)
        .collect())
}

/// The number of session files the session directory of `cwd` holds.
pub fn count_sessions(agent_dir: &str, cwd: &str) -> Result<usize> {
    Ok(session_files(&paths::default_session_dir(agent_dir, cwd))?.len())
}

/// The first line with its line end, and the rest.
fn split_header(bytes: &[u8]) -> (&[u8], &[u8]) {
    let end = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |i| i + 1);
    bytes.split_at(end)
}

/// The header of a file's first line, if it is one.
fn parse_header(line: &[u8]) -> Option<Value> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    let v = json::parse(body).ok()?;
    let is_session = v
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_str("session"));
    (is_session && v.as_object().is_some()).then_some(v)
}

fn header_id(v: &Value) -> Option<String> {
    v.get("id")
        .and_then(Value::as_str)
        .map(JsStr::to_string_lossy)
}

fn read_start(path: &Path) -> Result<Option<Vec<u8>>> {
    // The header is all a plan needs, but the whole file is small enough for the comparisons.
    fsio::read_all(path)
}

/// The paths a `parentSession` may name a file of the old directory by.
fn spellings(path: &Path) -> Vec<String> {
    let mut out = vec![path.to_string_lossy().into_owned()];
    if let Ok(abs) = std::path::absolute(path) {
        let a = abs.to_string_lossy().into_owned();
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// The rewritten header line (same line end) and what changed.
fn rewrite_header(
    header: &Value,
    line: &[u8],
    new_cwd: &str,
    moved: &[(Vec<String>, PathBuf)],
) -> (Vec<u8>, Vec<Rewrite>) {
    let mut v = header.clone();
    let mut rewrites = Vec::new();
    let obj = v.as_object_mut().expect("a header is an object");
    let old_cwd = obj
        .get("cwd")
        .and_then(Value::as_str)
        .map(JsStr::to_string_lossy);
    if old_cwd.as_deref() != Some(new_cwd) {
        obj.insert(
            JsStr::from_str("cwd"),
            Value::String(JsStr::from_str(new_cwd)),
        );
        rewrites.push(Rewrite {
            field: "cwd",
            from: old_cwd,
            to: new_cwd.to_owned(),
        });
    }
    let parent = obj
        .get("parentSession")
        .and_then(Value::as_str)
        .map(JsStr::to_string_lossy);
    if let Some(p) = parent {
        if let Some((_, to)) = moved.iter().find(|(names, _)| names.contains(&p)) {
            let to = to.to_string_lossy().into_owned();
            obj.insert(
                JsStr::from_str("parentSession"),
                Value::String(JsStr::from_str(&to)),
            );
            rewrites.push(Rewrite {
                field: "parentSession",
                from: Some(p),
                to,
            });
        }
    }
    if rewrites.is_empty() {
        return (line.to_vec(), rewrites);
    }
    let mut out = json::to_json(&v).into_bytes();
    let body_len = line.strip_suffix(b"\n").map_or(line.len(), |b| {
        b.strip_suffix(b"\r").map_or(b.len(), <[u8]>::len)
    });
    out.extend_from_slice(&line[body_len..]);
    (out, rewrites)
}

/// What moving the sessions of project `old_cwd` to project `new_cwd` under `agent_dir` would do
/// (both resolved as stock pi resolves a cwd). Changes nothing.
pub fn plan(agent_dir: &str, old_cwd: &str, new_cwd: &str) -> Result<Plan> {
    let new_cwd = paths::resolve(new_cwd);
    let old_dir = paths::default_session_dir(agent_dir, old_cwd);
    let new_dir = paths::default_session_dir(agent_dir, &new_cwd);
    if old_dir == new_dir {
        // Moving a file onto itself would end with removing it.
        return Err(Error::invalid_argument(format!(
            "{old_cwd} and {new_cwd} have the same session directory: nothing to move"
        )));
    }
    let sources = session_files(&old_dir)?;
    let moved: Vec<(Vec<String>, PathBuf)> = sources
        .iter()
        .map(|p| (spellings(p), new_dir.join(p.file_name().expect("a file"))))
        .collect();
    let mut files = Vec::with_capacity(sources.len());
    for (from, (_, to)) in sources.iter().zip(&moved) {
        files.push(plan_one(from, to, &new_cwd, &moved)?);
    }
    Ok(Plan {
        old_dir,
        new_dir,
        new_cwd,
        files,
    })
}

fn plan_one(
    from: &Path,
    to: &Path,
    new_cwd: &str,
    moved: &[(Vec<String>, PathBuf)],
) -> Result<FileMove> {
    let bytes = read_start(from)?.unwrap_or_default();
    let (line, _) = split_header(&bytes);
    let header = parse_header(line);
    let session_id = header.as_ref().and_then(header_id);
    let mut fm = FileMove {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
        session_id,
        action: Action::Move,
        rewrites: Vec::new(),
    };
    let Some(header) = header else {
        fm.action = Action::Skip(Skip::NotASession);
        return Ok(fm);
    };
    if let Some(h) = lock::live_holder(from)? {
        fm.action = Action::Skip(Skip::Locked {
            pid: h.pid,
            hostname: h.hostname,
        });
        return Ok(fm);
    }
    fm.rewrites = rewrite_header(&header, line, new_cwd, moved).1;
    if let Some(dest) = read_start(to)? {
        fm.action = match compare_dest(&bytes, &dest, fm.session_id.as_deref()) {
            Ok(tail) => Action::Resume { tail },
            Err(skip) => Action::Skip(skip),
        };
    }
    Ok(fm)
}

/// A destination against the old file: the bytes the old one has beyond it, or why it is not an
/// earlier copy of it.
fn compare_dest(old: &[u8], dest: &[u8], id: Option<&str>) -> std::result::Result<u64, Skip> {
    let (dline, dbody) = split_header(dest);
    let dest_id = parse_header(dline).as_ref().and_then(header_id);
    if dest_id.is_none() || dest_id.as_deref() != id {
        return Err(Skip::OtherSession { dest_id });
    }
    let (_, obody) = split_header(old);
    if obody.starts_with(dbody) {
        Ok((obody.len() - dbody.len()) as u64)
    } else if dbody.starts_with(obody) {
        Ok(0)
    } else {
        Err(Skip::Diverged)
    }
}

/// Carry out a plan, file by file (a failure or skip of one leaves the others going). Each file
/// is looked at again first: the plan may be old.
pub fn apply(plan: &Plan) -> Vec<Done> {
    let moved: Vec<(Vec<String>, PathBuf)> = plan
        .files
        .iter()
        .map(|f| (spellings(&f.from), f.to.clone()))
        .collect();
    if plan
        .files
        .iter()
        .any(|f| !matches!(f.action, Action::Skip(_)))
    {
        if let Err(e) = fsio::ensure_dir(&plan.new_dir) {
            return plan.files.iter().map(|_| Done::Failed(e.clone())).collect();
        }
    }
    plan.files
        .iter()
        .map(|f| match move_one(&f.from, &f.to, &plan.new_cwd, &moved) {
            Ok(d) => d,
            Err(e) => Done::Failed(e),
        })
        .collect()
}

fn move_one(
    from: &Path,
    to: &Path,
    new_cwd: &str,
    moved: &[(Vec<String>, PathBuf)],
) -> Result<Done> {
    if let Some(h) = lock::live_holder(from)? {
        return Ok(Done::Skipped(Skip::Locked {
            pid: h.pid,
            hostname: h.hostname,
        }));
    }
    // Our own writers stay away while the file moves (stock pi does not look at the lease; the
    // length checks below are for it).
    let _lease = match lock::acquire(from) {
        Ok(l) => l,
        Err(e) if e.code == crate::ErrorCode::SessionLocked => {
            let h = lock::live_holder(from)?;
            return Ok(Done::Skipped(Skip::Locked {
                pid: h.as_ref().map_or(0, |h| h.pid),
                hostname: h.map(|h| h.hostname).unwrap_or_default(),
            }));
        }
        Err(e) => return Err(e),
    };
    let Some(old) = fsio::read_all(from)? else {
        // Gone since the plan (another run finished it).
        return Ok(Done::Moved {
            tail: 0,
            left_at_old: false,
        });
    };
    let (line, body) = split_header(&old);
    let Some(header) = parse_header(line) else {
        return Ok(Done::Skipped(Skip::NotASession));
    };
    let id = header_id(&header);
    let copied = old.len() as u64;
    let mut tail = 0;
    // The length this move left `to` at: later carries continue from there.
    let left = match fsio::read_all(to)? {
        Some(dest) => {
            let missing = match compare_dest(&old, &dest, id.as_deref()) {
                Ok(n) => n,
                Err(skip) => return Ok(Done::Skipped(skip)),
            };
            let mut left = dest.len() as u64;
            if missing > 0 {
                let rest = &old[old.len() - missing as usize..];
                left = fsio::append_continuing(to, rest, Some(left), Durability::Fsync)?;
                tail += missing;
            }
            left
        }
        None => {
            let (new_line, _) = rewrite_header(&header, line, new_cwd, moved);
            let mut bytes = new_line;
            bytes.extend_from_slice(body);
            fsio::create_new_atomic(to, &bytes)?;
            bytes.len() as u64
        }
    };
    let (carried, left_at_old) = retire_old(from, to, copied, Some(left))?;
    Ok(Done::Moved {
        tail: tail + carried,
        left_at_old,
    })
}
