//! `mergeSessions`: the library form of `pi-sessions merge`, two copies of one session joined
//! through the core's merge (`pi_session_core::merge`), with the report `merge --json` prints.

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{fsio, merge, Error as CoreError, Result as CoreResult};

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
/// written.
#[napi(catch_unwind)]
pub fn merge_sessions(
    env: Env,
    a: String,
    b: String,
    out: Option<String>,
    in_place: Option<bool>,
) -> Result<MergeReport> {
    run(&a, &b, out.as_deref(), in_place.unwrap_or(false)).for_js(&env)
}
