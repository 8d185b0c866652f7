//! Appends, reserved ids and durability: how entries get into the session and onto disk.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{fsio, session, Error as CoreError, Session};

use super::NativeSession;
use crate::error::ForJs;

#[napi]
impl NativeSession {
    /// Append an entry whose UTF-8 JSON text is the first `len` bytes of `bytes` (JS encodes it
    /// with `TextEncoder.encodeInto`, much cheaper than a string crossing the boundary).
    #[napi(catch_unwind)]
    pub fn append_utf8(&mut self, env: Env, bytes: &[u8], len: u32) -> Result<u32> {
        self.append_prefix(&env, bytes, len, Session::append)
    }

    /// An `inMemory` session's entry, as the skeleton the core reads (the object stays in JS).
    #[napi(catch_unwind)]
    pub fn append_skeleton_utf8(&mut self, env: Env, bytes: &[u8], len: u32) -> Result<u32> {
        self.append_prefix(&env, bytes, len, Session::append_skeleton)
    }

    /// `appendMessage(message, { id, flush })`: an append naming a reserved id and/or durable at
    /// once (see `session::AppendHow`); `skeleton` as for `appendSkeletonUtf8`.
    #[napi(catch_unwind)]
    pub fn append_with_utf8(
        &mut self,
        env: Env,
        bytes: &[u8],
        len: u32,
        skeleton: bool,
        reserved: bool,
        durable: bool,
    ) -> Result<u32> {
        let how = session::AppendHow { reserved, durable };
        self.append_prefix(&env, bytes, len, |s, line| {
            s.append_with(line, skeleton, how)
        })
    }

    /// `reserveEntryId()`: the id itself (not its key).
    #[napi(catch_unwind)]
    pub fn reserve_entry_id(&mut self) -> String {
        self.inner.reserve_entry_id()
    }

    /// `reserveEntryId(id)` of an id the caller chose: its key (null when the value is no string)
    /// and how a refusal shows it; the core checks its form (`INVALID_ENTRY_ID`, a `TypeError`).
    #[napi(catch_unwind)]
    pub fn reserve_named_entry_id(
        &mut self,
        env: Env,
        key: Option<String>,
        shown: String,
    ) -> Result<()> {
        self.inner
            .reserve_entry_id_named(key.as_deref(), &shown)
            .for_js(&env)
    }

    /// An id no entry has and none reserved, for an append whose random id was taken (the core's
    /// rule: more random ids, a whole UUID after 100 of them).
    #[napi(catch_unwind)]
    pub fn fresh_entry_id(&self) -> String {
        self.inner.fresh_entry_id()
    }

    /// `releaseEntryId(id)` by key: false when it was not reserved.
    #[napi(catch_unwind)]
    pub fn release_entry_id(&mut self, key: String) -> bool {
        self.inner.release_entry_id(&key)
    }

    #[napi(catch_unwind)]
    pub fn persist_external(&mut self, env: Env, line: String) -> Result<()> {
        self.inner.persist_external(line.as_bytes()).for_js(&env)
    }

    /// Writes a session not written yet and fsyncs it; false for an in-memory session.
    #[napi(catch_unwind)]
    pub fn flush(&mut self, env: Env) -> Result<bool> {
        self.inner.flush().for_js(&env)
    }

    #[napi(catch_unwind)]
    pub fn set_fsync(&mut self, on: bool) {
        self.inner.set_durability(if on {
            fsio::Durability::Fsync
        } else {
            fsio::Durability::Buffered
        });
    }

    /// Restore mode: make a vanished directory or file again at write time (see the core's
    /// `Session::set_restore_missing`).
    #[napi(catch_unwind)]
    pub fn set_restore_missing(&mut self, on: bool) {
        self.inner.set_restore_missing(on);
    }

    /// Exclusive mode: take (or release) the ownership lease of the session file.
    #[napi(catch_unwind)]
    pub fn set_exclusive(&mut self, env: Env, on: bool) -> Result<()> {
        self.inner.set_exclusive(on).for_js(&env)
    }

    /// Whether this manager holds (or wants) the session file's lease.
    #[napi(catch_unwind)]
    pub fn is_exclusive(&self) -> bool {
        self.inner.is_exclusive()
    }
}

impl NativeSession {
    /// `append` with the first `len` bytes of `bytes` as the line.
    fn append_prefix(
        &mut self,
        env: &Env,
        bytes: &[u8],
        len: u32,
        append: impl FnOnce(&mut Session, &[u8]) -> pi_session_core::Result<u32>,
    ) -> Result<u32> {
        let line = bytes
            .get(..len as usize)
            .ok_or_else(|| CoreError::invalid_argument("length out of range"))
            .for_js(env)?;
        let pos = append(&mut self.inner, line).for_js(env)?;
        self.account(env);
        Ok(pos)
    }
}
