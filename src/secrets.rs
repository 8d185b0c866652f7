//! `scanSecrets`: the scan of `pi-sessions secrets` as a library call (the core's `secrets`),
//! returning masked findings only.

use std::path::{Path, PathBuf};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{listing, paths, secrets};

use crate::error::ForJs;

/// One credential-shaped string (never the secret: a masked preview and a fingerprint).
#[napi(object)]
pub struct SecretFinding {
    /// 1-based line of the session file.
    pub line: u32,
    /// The entry that holds it; null in the header or a line that is not JSON.
    pub entry_id: Option<String>,
    /// `user`, `tool-output`, `tool-args`, `assistant`, `thinking`, `custom`, `summary`, `other`.
    pub place: String,
    /// `anthropic-api-key`, `aws-access-key-id`, `private-key`, `url-password`, `jwt`, ….
    pub kind: String,
    /// 16 hex digits of the secret's SHA-256: what `pi-sessions secrets --ack` takes.
    pub fingerprint: String,
    pub preview: String,
    /// The secret's byte range in the file (`[start, end)`), escapes included.
    pub start: f64,
    pub end: f64,
}

/// The findings of one session file.
#[napi(object)]
pub struct SecretScan {
    pub path: String,
    /// The header's id; null without a header.
    pub id: Option<String>,
    pub findings: Vec<SecretFinding>,
    /// Findings left out because they are acknowledged.
    pub acknowledged: u32,
    /// Why the file could not be read (`ENOENT: …`); null when it was scanned.
    pub error: Option<String>,
}

fn finding(f: &secrets::Finding) -> SecretFinding {
    SecretFinding {
        line: u32::try_from(f.line).unwrap_or(u32::MAX),
        entry_id: f.entry_id.clone(),
        place: f.place.name().to_owned(),
        kind: f.kind.name().to_owned(),
        fingerprint: f.fingerprint.clone(),
        preview: f.preview.clone(),
        start: f.range.start as f64,
        end: f.range.end as f64,
    }
}

fn run(
    agent_dir: &str,
    files: Vec<String>,
    all: bool,
    acknowledged: bool,
) -> pi_session_core::Result<Vec<SecretScan>> {
    let agent = Path::new(agent_dir);
    let mut list: Vec<PathBuf> = files.into_iter().map(PathBuf::from).collect();
    if all {
        let root = PathBuf::from(paths::sessions_root(agent_dir));
        list.extend(
            listing::list_all_candidates(&root, listing::NameOrder::Bytes)
                .into_iter()
                .map(|(p, _)| p),
        );
    }
    let acks = if acknowledged {
        secrets::Acks::default()
    } else {
        secrets::Acks::load(agent)?
    };
    let scans = secrets::scan_files(&list, &acks, &mut |_| {});
    Ok(list
        .iter()
        .zip(scans)
        .map(|(p, r)| match r {
            Ok(s) => SecretScan {
                path: p.to_string_lossy().into_owned(),
                id: s.session_id.clone(),
                findings: s.findings.iter().map(finding).collect(),
                acknowledged: u32::try_from(s.acknowledged).unwrap_or(u32::MAX),
                error: None,
            },
            Err(e) => SecretScan {
                path: p.to_string_lossy().into_owned(),
                id: None,
                findings: Vec::new(),
                acknowledged: 0,
                error: Some(e.message),
            },
        })
        .collect())
}

/// Scan session files (`files`, and with `all` every session under `<agentDir>/sessions`) for
/// credential-shaped strings. Acknowledged findings are left out unless `include_acknowledged`.
/// The agent dir (else the one `process.env` names) and the files are resolved here.
#[napi(catch_unwind)]
pub fn scan_secrets(
    env: Env,
    agent_dir: Option<String>,
    files: Vec<String>,
    all: bool,
    include_acknowledged: bool,
) -> Result<Vec<SecretScan>> {
    let agent = paths::resolve(&agent_dir.unwrap_or_else(|| crate::config::agent_dir(&env)));
    let files = files.iter().map(|f| paths::resolve(f)).collect();
    run(&agent, files, all, include_acknowledged).for_js(&env)
}
