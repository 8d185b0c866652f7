//! `mergeSessions`, the library form of `pi-sessions merge`: two copies of one session joined by
//! the core's merge, reported as `merge --json` reports it (the core's `reports::merged`).

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::json::{self, JsStr, Value};
use pi_session_core::{fsio, merge, paths, reports, Error as CoreError, Result as CoreResult};

use crate::error::ForJs;

fn read(p: &Path) -> CoreResult<Vec<u8>> {
    fsio::read_all(p)?.ok_or_else(|| {
        CoreError::io(
            &std::io::Error::from(std::io::ErrorKind::NotFound),
            "open",
            p,
        )
    })
}

fn run(a: &str, b: &str, out: Option<&str>, in_place: bool) -> CoreResult<String> {
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
    let mut report = reports::merged(&m, written.as_deref());
    if let (Value::Object(o), Some(text)) = (&mut report, text) {
        o.insert(JsStr::from_str("text"), Value::from(text.as_str()));
    }
    Ok(json::to_json(&report))
}

/// Merge session files `a` and `b` (copies of one session): into `out` (a new file), into `a`
/// with `in_place`, or into the report's `text`. Different sessions: `SESSION_MISMATCH`, nothing
/// written. Each path is expanded (tilde, file URL) here. Returns the report's JSON text.
#[napi(catch_unwind)]
pub fn merge_sessions(
    env: Env,
    a: String,
    b: String,
    out: Option<String>,
    in_place: Option<bool>,
) -> Result<String> {
    let out = out.map(|o| paths::normalize(&o));
    let (a, b) = (paths::normalize(&a), paths::normalize(&b));
    run(&a, &b, out.as_deref(), in_place.unwrap_or(false)).for_js(&env)
}
