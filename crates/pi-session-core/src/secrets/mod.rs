//! Credential-shaped strings in session files: found, shown masked, acknowledged, redacted.
//!
//! A session file holds every prompt and tool output verbatim, so a `cat .env` or a failed
//! deploy leaves live credentials in it. The scanner looks for high-specificity shapes only
//! (provider API keys, AWS key ids and the secret next to one, GitHub, GitLab, Slack, Stripe and
//! npm tokens, PEM private keys, URL passwords, JWTs; see [`Kind`]), so that prose, code,
//! hashes, UUIDs and base64 images do not trip it, and it looks at the *decoded* string values of
//! each entry (a key inside JSON text inside a tool output is found, and its bytes in the file
//! known, escapes and all).
//!
//! Speed: the file's raw bytes go through one multi-literal search for the anchors (and the JSON
//! escapes that could spell one); only a line with an anchor followed by a plausible start of a
//! secret is parsed and decoded. Files are scanned in parallel, one per core.
//!
//! - [`scan_bytes`] / [`scan_file`] / [`scan_files`]: the findings.
//! - [`Acks`]: acknowledged fingerprints, no longer reported.
//! - [`redact`]: a session with its secrets replaced by `[REDACTED:<kind>]`, every other byte kept.

mod ack;
mod alphabet;
mod forms;
mod kind;
mod mask;
mod place;
pub mod redact;
mod scan;
mod sha256;
mod shapes;
mod walk;

use std::path::{Path, PathBuf};

pub use ack::Acks;
pub use kind::{Kind, Place};
pub use mask::{fingerprint, is_fingerprint, preview, FINGERPRINT_LEN};
pub use scan::{scan_bytes, Finding};

use crate::error::{Error, Result};

/// The findings of one session file, acknowledged ones left out.
#[derive(Debug, Clone)]
pub struct FileScan {
    pub path: PathBuf,
    /// The header's id, when the file has a header.
    pub session_id: Option<String>,
    pub findings: Vec<Finding>,
    /// Findings left out because their fingerprint is acknowledged.
    pub acknowledged: usize,
}

/// The session id of a file's bytes: the header's `id` (records before the header skipped).
pub fn session_id(bytes: &[u8]) -> Option<String> {
    for line in bytes.split(|&b| b == b'\n').take(16) {
        let Some(meta) = crate::record::read_meta(line) else {
            continue;
        };
        if meta.kind == crate::record::Kind::Header {
            return scan::id_text(&meta.id);
        }
        if !crate::record::may_lead(&meta) {
            return None;
        }
    }
    None
}

/// The findings of `bytes` (read from `path`), without those `acks` acknowledges.
pub fn scan_read(path: &Path, bytes: &[u8], acks: &Acks) -> FileScan {
    let all = scan_bytes(bytes);
    let total = all.len();
    let findings: Vec<Finding> = all
        .into_iter()
        .filter(|f| !acks.contains(&f.fingerprint))
        .collect();
    FileScan {
        path: path.to_path_buf(),
        session_id: session_id(bytes),
        acknowledged: total - findings.len(),
        findings,
    }
}

/// Scan one file.
pub fn scan_file(path: &Path, acks: &Acks) -> Result<FileScan> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(&e, "open", path))?;
    Ok(scan_read(path, &bytes, acks))
}

/// Scan `paths` on one thread per core (at most 8), results in input order; `progress(done)`
/// is called on the calling thread as files finish.
pub fn scan_files(
    paths: &[PathBuf],
    acks: &Acks,
    progress: &mut dyn FnMut(usize),
) -> Vec<Result<FileScan>> {
    crate::pool::map(paths, |p| scan_file(p, acks), progress)
}
