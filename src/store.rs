//! Free functions over the session store that need no manager: the finders of `continueRecent`
//! and `findById`, `loadEntriesFromFile`, the lease files and the session-id check; and the
//! core's constants JS needs (the format version, where the listing cache lives), so the shell
//! names them without a copy of its own.

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{file, listing, paths};

use crate::error::ForJs;

/// The session format version the core writes (`CURRENT_SESSION_VERSION` of the module).
#[napi]
pub const CURRENT_SESSION_VERSION: u32 = pi_session_core::CURRENT_SESSION_VERSION;

/// The listing cache file of an agent dir (`<agent dir>/.pi-session-native/list-cache`), as
/// `pi-sessions list` finds it too.
#[napi(catch_unwind)]
pub fn list_cache_file(agent_dir: String) -> String {
    listing::cache::file_in(Path::new(&agent_dir))
        .to_string_lossy()
        .into_owned()
}

/// The order `readdirSync` gives a directory's names in the calling runtime: sorted by their
/// bytes (`sorted`), or as the system lists them.
pub(crate) fn name_order(sorted: bool) -> listing::NameOrder {
    if sorted {
        listing::NameOrder::Bytes
    } else {
        listing::NameOrder::System
    }
}

/// `findMostRecentSession(sessionDir, cwd?)`: `dir` expanded (tilde, file URL) and `cwd`, when
/// given, resolved here; `sorted` as for [`name_order`].
#[napi(catch_unwind)]
pub fn find_most_recent(dir: String, cwd: Option<String>, sorted: bool) -> Option<String> {
    let resolved = cwd.map(|c| paths::resolve(&c));
    let dir = paths::normalize(&dir);
    listing::find_most_recent(Path::new(&dir), resolved.as_deref(), name_order(sorted))
        .map(|p| p.to_string_lossy().into_owned())
}

/// `findById` in a factory's place (see `sessionPlace`): the directory as the place has it, and
/// the place's resolved cwd when the directory is shared; `sorted` as for [`name_order`].
#[napi(catch_unwind)]
pub fn find_by_id(
    dir: String,
    id: String,
    resolved_cwd: Option<String>,
    sorted: bool,
) -> Option<String> {
    let order = name_order(sorted);
    listing::find_by_id(Path::new(&dir), &id, resolved_cwd.as_deref(), order)
        .map(|p| p.to_string_lossy().into_owned())
}

/// `loadEntriesFromFile`: the records as one JSON array text (`[]` when missing or not a session);
/// `path` is expanded (tilde, file URL) here.
#[napi(catch_unwind)]
pub fn load_entries_json(env: Env, path: String) -> Result<String> {
    let loaded = file::load_file(Path::new(&paths::normalize(&path))).for_js(&env)?;
    let Some(loaded) = loaded.filter(|l| l.has_valid_header()) else {
        return Ok("[]".into());
    };
    let mut out = Vec::with_capacity(loaded.text.len() + 2);
    out.push(b'[');
    for (i, (line, _)) in loaded.records().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(line);
    }
    out.push(b']');
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Start reading the session file `path` (resolved) on a thread of its own, ahead of its open:
/// `pi-native` does so for the session pi's arguments name, while pi loads its own code. The open
/// takes what was read only if the file is unchanged (see the core's `file::preread`).
#[napi(catch_unwind)]
pub fn preread_session(path: String) {
    file::preread::start(path.into(), crate::config::lazy_file_bytes());
}

/// Drop what was read ahead and not taken by an open.
#[napi(catch_unwind)]
pub fn forget_preread() {
    file::preread::forget();
}

/// Remove the lease files this process holds (called when the process exits).
#[napi(catch_unwind)]
pub fn release_all_locks() {
    pi_session_core::lock::release_all();
}

/// `count` random entry ids of 8 hex chars, one after the other: JS takes the id of each new
/// entry from them (an append refuses one the session has; `freshEntryId` then gives another).
#[napi(catch_unwind)]
pub fn random_entry_ids(count: u32) -> String {
    pi_session_core::ids::random_entry_ids(count as usize)
}

/// `assertValidSessionId(id)`, given the id as a string (`INVALID_SESSION_ID`).
#[napi(catch_unwind)]
pub fn assert_valid_session_id(env: Env, id: String) -> Result<()> {
    pi_session_core::ids::check_session_id(&id).for_js(&env)
}
