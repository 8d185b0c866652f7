//! Which session files a command looks at, and their summaries: the same files, order and
//! `SessionInfo` values as `SessionManager.list(cwd)` / `SessionManager.listAll()`.

use std::convert::Infallible;
use std::path::PathBuf;

use pi_session_core::json::{self, Value};
use pi_session_core::listing;
use pi_session_core::listing::job::{default_threads, Ready, SummaryJob};
use pi_session_core::listing::SummaryInfo;

use crate::env::CliEnv;
use crate::fmt;
use crate::progress::Progress;

/// Sessions of one project, or of all projects.
#[derive(Debug, Clone)]
pub enum Scope {
    /// The project of this working directory (its default session directory).
    Project(String),
    All,
}

impl Scope {
    /// `--all` wins; else `--cwd DIR`; else the working directory.
    pub fn from_flags(env: &CliEnv, all: bool, cwd: Option<&str>) -> Scope {
        if all {
            Scope::All
        } else {
            Scope::Project(cwd.map(str::to_owned).unwrap_or_else(|| env.cwd()))
        }
    }

    /// Where the files are, for messages.
    pub fn describe(&self, env: &CliEnv) -> String {
        match self {
            Scope::Project(cwd) => env.project_dir(cwd).display().to_string(),
            Scope::All => env.sessions_root().display().to_string(),
        }
    }
}

/// The candidate files in the order the reference summarizes them, with mtimes when known.
pub fn files(env: &CliEnv, scope: &Scope) -> Vec<(PathBuf, Option<f64>)> {
    match scope {
        Scope::Project(cwd) => listing::list_dir_files(&env.project_dir(cwd))
            .map(|v| v.into_iter().map(|p| (p, None)).collect())
            .unwrap_or_default(),
        Scope::All => listing::list_all_candidates(&env.sessions_root(), listing::NameOrder::Bytes),
    }
}

/// One session as `SessionInfo` describes it, plus its size.
#[derive(Debug, Clone)]
pub struct Info {
    pub path: PathBuf,
    /// The header's `id` value (a string for every valid session).
    pub id: Value,
    pub cwd: String,
    pub name: Option<String>,
    pub parent_session: Value,
    /// `created` in ms; `None` for an invalid date.
    pub created: Option<f64>,
    pub modified: f64,
    pub message_count: f64,
    pub first_message: String,
    pub size: u64,
}

impl Info {
    pub fn id_text(&self) -> String {
        match &self.id {
            Value::String(s) => s.to_string_lossy(),
            Value::Null => String::new(),
            v => json::to_json(v),
        }
    }

    /// The name, else the first message.
    pub fn title(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.first_message)
    }
}

/// `new Date(value).getTime()` as far as the CLI knows JavaScript's `Date` (strings through
/// [`fmt::parse_time`]); `None` for an invalid date.
pub fn date_ms(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => fmt::parse_time(&s.to_string_lossy()),
        Value::Number(n) if n.abs() <= 8.64e15 => Some(n.trunc() + 0.0),
        Value::Null => Some(0.0),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// A `SessionInfo` from the core's summary: its fields made into dates (the core's `modified`
/// rule, with the CLI's reading of the dates only JavaScript reads exactly).
fn finish(r: SummaryInfo, first: String, size: u64) -> Info {
    let created = match &r.created {
        Some(Value::String(s)) => fmt::parse_time(&s.to_string_lossy()),
        Some(Value::Number(n)) if n.abs() <= 8.64e15 => Some(n.trunc()),
        _ => None,
    };
    let modified = match r.modified_by(|v| Ok::<_, Infallible>(date_ms(v))) {
        Ok(m) => m,
        Err(never) => match never {},
    };
    Info {
        path: PathBuf::from(&r.path),
        id: r.id.unwrap_or(Value::Null),
        cwd: r.cwd.to_string_lossy(),
        name: r.name.map(|n| n.to_string_lossy()),
        parent_session: r.parent_session_path.unwrap_or(Value::Null),
        created,
        modified,
        message_count: r.message_count as f64,
        first_message: if first.is_empty() {
            "(no messages)".into()
        } else {
            first
        },
        size,
    }
}

/// Summaries of `files`, newest activity first (ties keep the input order), with a progress bar.
/// Unchanged files come from the listing cache the addon keeps (and this run keeps it up to date).
pub fn summarize(
    files: &[(PathBuf, Option<f64>)],
    cache_file: Option<PathBuf>,
    progress: &mut Progress,
) -> Vec<Info> {
    let job = SummaryJob::start(files.to_vec(), cache_file, default_threads());
    let mut infos = Vec::new();
    let mut done = 0;
    while done < files.len() {
        let batch = job.next(64);
        if batch.is_empty() {
            break;
        }
        for r in batch {
            let path = &files[done].0;
            done += 1;
            if let Some(Ready {
                info,
                first_message,
                ..
            }) = r
            {
                let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                infos.push(finish(info, first_message.to_string_lossy(), size));
            }
        }
        progress.update(done);
    }
    // A failed save only costs the next run its speed.
    job.finish();
    progress.finish();
    infos.sort_by(|a, b| b.modified.total_cmp(&a.modified));
    infos
}

/// The shortest prefix length (at least `min`) that tells every id apart.
pub fn unique_prefix_len(ids: &[String], min: usize) -> usize {
    let mut sorted: Vec<&str> = ids.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let mut need = min;
    for w in sorted.windows(2) {
        let common = w[0]
            .chars()
            .zip(w[1].chars())
            .take_while(|(a, b)| a == b)
            .count();
        if w[0] != w[1] {
            need = need.max(common + 1);
        }
    }
    need
}

/// The first `n` characters.
pub fn prefix(id: &str, n: usize) -> String {
    id.chars().take(n).collect()
}
