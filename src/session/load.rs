//! Opening a manager's state: a new session, a session file, preloaded entries (serialized,
//! or records taken from another manager).

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::Error as CoreError;

use super::NativeSession;
use crate::error::ForJs;
use crate::reclaim;

#[napi(object)]
pub struct NewSessionInfo {
    pub id: String,
    pub timestamp: String,
    pub file: Option<String>,
}

#[napi]
impl NativeSession {
    #[napi(catch_unwind)]
    pub fn new_session(
        &mut self,
        env: Env,
        custom_id: Option<String>,
        parent_session_json: Option<String>,
    ) -> Result<NewSessionInfo> {
        let n = self
            .inner
            .new_session(custom_id.as_deref(), parent_session_json.as_deref())
            .for_js(&env)?;
        self.account(&env);
        Ok(NewSessionInfo {
            id: n.id,
            timestamp: n.timestamp,
            file: n.file.map(|f| f.to_string_lossy().into_owned()),
        })
    }

    #[napi(catch_unwind)]
    /// Returns true when the file was loaded, false when a fresh session was started for it (the
    /// file is missing, or was empty and got a header).
    pub fn set_session_file(&mut self, env: Env, path: String) -> Result<bool> {
        let result = self.inner.set_session_file(PathBuf::from(path));
        self.account(&env);
        result.map(|r| r.loaded).for_js(&env)
    }

    #[napi(catch_unwind)]
    pub fn load_preloaded(&mut self, env: Env, lines: Vec<String>, skeletons: bool) -> Result<()> {
        let result = self.inner.load_preloaded(lines, skeletons);
        self.account(&env);
        result.map(|_| ()).for_js(&env)
    }

    /// Preloaded entries that are all objects made from records of the session tracked as
    /// `source` (at `positions`, the header first): the records are taken from it instead of
    /// serialized entries being parsed. JS knows the source by its tracking id, not its object: a
    /// reference to the object (even a WeakRef, alive until the running job ends) would keep every
    /// source of a synchronous loop alive. Fails when the source is gone (JS then serializes).
    #[napi(catch_unwind)]
    pub fn load_records_of(&mut self, env: Env, source: f64, positions: Uint32Array) -> Result<()> {
        let gone = || CoreError::invalid_argument("the source session is gone");
        let ptr = reclaim::session_of(source as u64)
            .filter(|&p| !std::ptr::eq(p, self))
            .ok_or_else(gone)
            .for_js(&env)?;
        // SAFETY: a tracked session is allocated until its finalizer, which removes it from the
        // registry first; it is not `self`, and no call on it runs now (one JS thread, and this
        // call makes none).
        let source = unsafe { &mut (*ptr).inner };
        let result = self.inner.load_records_of(source, &positions);
        self.account(&env);
        result.for_js(&env)
    }

    #[napi(catch_unwind)]
    pub fn push_preloaded(&mut self, env: Env, lines: Vec<String>, skeletons: bool) -> Result<()> {
        let result = self.inner.push_preloaded(lines, skeletons);
        self.account(&env);
        result.for_js(&env)
    }
}
