//! A session with its secrets replaced by `[REDACTED:<kind>]`: only the bytes of each finding
//! change (inside a JSON string, so every line that parsed still parses to the same structure,
//! ids, links and signature fields untouched), and the file is written as the store rewrites a
//! session: a temp file beside it, fsync, rename over it, fsync of the directory, with the
//! original kept as a private `<file>.bak` first. A file under a live writer lease is refused
//! (`SESSION_LOCKED`); during the rewrite this store's own writers wait on our lease, and what a
//! stock pi appends meanwhile is carried over to the new file (and reported: it was not looked
//! at).

use std::path::{Path, PathBuf};

use super::{scan_read, Acks, Finding};
use crate::error::{Error, ErrorCode, Result};
use crate::sync::write;
use crate::{fsio, lock};

/// The text a finding of `kind` is replaced with.
pub fn replacement(kind: super::Kind) -> String {
    format!("[REDACTED:{}]", kind.name())
}

/// `bytes` with each finding's range replaced (findings in file order, not overlapping, as
/// [`super::scan_bytes`] gives them).
pub fn redact_bytes(bytes: &[u8], findings: &[Finding]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for f in findings {
        if f.range.start < at || f.range.end > bytes.len() {
            continue;
        }
        out.extend_from_slice(&bytes[at..f.range.start]);
        out.extend_from_slice(replacement(f.kind).as_bytes());
        at = f.range.end;
    }
    out.extend_from_slice(&bytes[at..]);
    out
}

/// Where a redaction goes.
#[derive(Debug, Clone)]
pub enum Target {
    /// Over the session itself; `backup` keeps the original as `<file>.bak` first.
    InPlace { backup: bool },
    /// A new file (refused with `EEXIST` if it exists), private; the session is not touched.
    Out(PathBuf),
}

/// What a redaction did.
#[derive(Debug, Clone)]
pub struct Redacted {
    pub path: PathBuf,
    /// The file written; `None` when there was nothing to redact (nothing is written then).
    pub written: Option<PathBuf>,
    pub backup: Option<PathBuf>,
    /// The findings replaced.
    pub findings: Vec<Finding>,
    /// Bytes another writer appended during an in-place rewrite, carried over unscanned.
    pub tail: u64,
}

/// Redact the unacknowledged findings of the session at `path` into `target`.
pub fn redact(path: &Path, target: &Target, acks: &Acks) -> Result<Redacted> {
    let _lease = match target {
        Target::InPlace { .. } => {
            if let Some(h) = lock::live_holder(path)? {
                return Err(Error::new(
                    ErrorCode::SessionLocked,
                    format!(
                        "Session file {} is locked by pid {} on {} (since {}): close that session first",
                        path.display(),
                        h.pid,
                        h.hostname,
                        h.started_at
                    ),
                ));
            }
            Some(lock::acquire(path)?)
        }
        Target::Out(_) => None,
    };
    let opened = crate::sync::write::open(path)?;
    let scan = scan_read(path, &opened.bytes, acks);
    let mut done = Redacted {
        path: path.to_path_buf(),
        written: None,
        backup: None,
        findings: scan.findings,
        tail: 0,
    };
    if done.findings.is_empty() {
        return Ok(done);
    }
    let new = redact_bytes(&opened.bytes, &done.findings);
    match target {
        Target::Out(out) => {
            fsio::create_new_private(out, &new)?;
            done.written = Some(out.clone());
        }
        Target::InPlace { backup } => {
            if *backup {
                done.backup = Some(fsio::backup(path, &opened.bytes)?);
            }
            // Under the lease taken above: the watch needs none of its own.
            let carried = write::replace(path, opened, &new, None)?.wait()?;
            done.tail = carried.len() as u64;
            done.written = Some(path.to_path_buf());
        }
    }
    Ok(done)
}
