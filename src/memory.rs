//! What a session reports to V8 as external memory, so that the garbage collector weighs the
//! bytes a manager holds when deciding to collect dropped managers.

use napi::bindgen_prelude::*;
use pi_session_core::Session;

use crate::reclaim;
use crate::session::NativeSession;

/// Report changes of a session's size to V8 in steps of at least this many bytes.
const ACCOUNT_STEP: i64 = 1 << 20;

impl ObjectFinalize for NativeSession {
    fn finalize(self, env: Env) -> napi::Result<()> {
        reclaim::untrack(&env, self.track_id);
        if self.reported != 0 {
            env.adjust_external_memory(-self.reported)?;
        }
        Ok(())
    }
}

impl NativeSession {
    /// Tell V8 how much memory this session now holds (only when it changed by a step).
    pub(crate) fn account(&mut self, env: &Env) {
        let now = self.inner.memory_bytes() as i64;
        let delta = now - self.reported;
        if delta >= ACCOUNT_STEP {
            // Growing: give back what collected sessions still hold, when due.
            reclaim::sweep_if_due(env, self.track_id, delta);
        }
        if delta.abs() >= ACCOUNT_STEP && env.adjust_external_memory(delta).is_ok() {
            self.reported = now;
        }
    }

    /// Its JS object is gone (or it was disposed): drop the state now (the finalizer comes later,
    /// to an empty shell).
    pub(crate) fn release(&mut self, env: &Env) {
        if let Ok(empty) = Session::blank(String::new(), String::new(), false) {
            self.inner = empty;
        }
        if self.reported != 0 && env.adjust_external_memory(-self.reported).is_ok() {
            self.reported = 0;
        }
    }
}
