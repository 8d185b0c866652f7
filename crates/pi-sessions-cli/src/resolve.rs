//! `<id|path>` arguments: a path to a file, or a session id / unique id prefix looked up in the
//! headers of every session under `<agent dir>/sessions`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use pi_session_core::json::{self, Value};
use pi_session_core::listing::{self, MAX_HEADER_SCAN_BYTES};

use crate::env::CliEnv;
use crate::error::CliError;

/// Does the argument look like a path rather than an id?
fn looks_like_path(arg: &str) -> bool {
    arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") || arg.starts_with('.')
}

/// A session's header id, reading only as far as the header (the first line that parses).
pub fn header_id(path: &Path) -> Option<String> {
    let f = File::open(path).ok()?;
    let mut r = BufReader::new(f);
    let mut line = Vec::new();
    let mut read = 0usize;
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line).ok()?;
        if n == 0 || read > MAX_HEADER_SCAN_BYTES {
            return None;
        }
        read += n;
        let Ok(v) = json::parse(&line) else { continue };
        if !v.is_truthy() {
            continue;
        }
        let is_header = matches!(v.get("type"), Some(Value::String(t)) if t.eq_str("session"));
        return match (is_header, v.get("id")) {
            (true, Some(Value::String(id))) => Some(id.to_string_lossy()),
            _ => None,
        };
    }
}

/// Resolve `<id|path>` to a session file.
pub fn session(env: &CliEnv, arg: &str) -> Result<PathBuf, CliError> {
    let as_path = Path::new(arg);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    if looks_like_path(arg) {
        return Err(CliError::not_found(format!("{arg}: no such file")));
    }
    if arg.is_empty() {
        return Err(CliError::usage("empty session id"));
    }
    let root = env.sessions_root();
    let mut hits: Vec<(String, PathBuf)> = Vec::new();
    for (path, _) in listing::list_all_candidates(&root, listing::NameOrder::Bytes) {
        if let Some(id) = header_id(&path) {
            if id == arg {
                return Ok(path);
            }
            if id.starts_with(arg) {
                hits.push((id, path));
            }
        }
    }
    match hits.len() {
        1 => Ok(hits.remove(0).1),
        0 => Err(CliError::not_found(format!(
            "no session with an id starting with {arg} under {} (give a path to open a file elsewhere)",
            root.display()
        ))),
        n => {
            hits.sort();
            let mut msg = format!("session id prefix {arg} is ambiguous: {n} sessions match\n");
            for (id, path) in hits.iter().take(20) {
                msg.push_str(&format!("  {id}  {}\n", path.display()));
            }
            if n > 20 {
                msg.push_str(&format!("  … and {} more\n", n - 20));
            }
            msg.push_str("give more characters of the id");
            Err(CliError::usage(msg))
        }
    }
}
