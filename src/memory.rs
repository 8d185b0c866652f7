//! What sessions report to V8 as external memory, so that the garbage collector weighs the bytes
//! a manager holds when deciding to collect dropped managers.
//!
//! While a thread has just one session, what it takes is told to V8 only once another manager is
//! made (or memory is given back): until then no collection could give any of it back, and told
//! at once, the bytes of a 12 MB session held in memory made V8 start a full collection in the
//! middle of the resume that opened it (3-5 ms of the main thread and concurrent marking on the
//! other core, for nothing). With other sessions about (a loop that opens one after another),
//! each change is told at once, as any of them may be dropped.

use std::cell::Cell;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::Session;

use crate::reclaim;
use crate::session::NativeSession;

/// Report changes of a session's size to V8 in steps of at least this many bytes.
const ACCOUNT_STEP: i64 = 1 << 20;

thread_local! {
    /// Bytes counted in the sessions' `reported` that V8 has not been told of yet (per thread, as
    /// every Node environment has its own).
    static UNTOLD: Cell<i64> = const { Cell::new(0) };
}

/// Adds `delta` to what V8 is to be told, and tells it now when `now`, or when more was given
/// back than is untold (V8's figure then never exceeds what the sessions hold, nor goes below
/// what it was told of).
fn tell(env: &Env, delta: i64, now: bool) {
    // `try_with`: a finalizer may run while the thread's storage is being torn down.
    let _ = UNTOLD.try_with(|untold| {
        let sum = untold.get() + delta;
        untold.set(sum);
        if (now || sum < 0) && sum != 0 && env.adjust_external_memory(sum).is_ok() {
            untold.set(0);
        }
    });
}

/// What V8 counts as external memory of this Node environment, in bytes: what it was told by
/// everything in the process, ours included (for tests and diagnostics).
#[napi]
pub fn external_memory_told(env: Env) -> Result<i64> {
    env.adjust_external_memory(0)
}

/// A new manager is being made: tell V8 what the others hold (they may be dropped from now on).
pub(crate) fn tell_held(env: &Env) {
    tell(env, 0, true);
}

impl ObjectFinalize for NativeSession {
    fn finalize(self, env: Env) -> napi::Result<()> {
        reclaim::untrack(&env, self.track_id);
        if self.reported != 0 {
            tell(&env, -self.reported, true);
        }
        Ok(())
    }
}

impl NativeSession {
    /// Count what this session now holds (only when it changed by a step).
    pub(crate) fn account(&mut self, env: &Env) {
        let now = self.inner.memory_bytes() as i64;
        let delta = now - self.reported;
        if delta >= ACCOUNT_STEP {
            // Growing: give back what collected sessions still hold, when due.
            reclaim::sweep_if_due(env, self.track_id, delta);
        }
        if delta.abs() >= ACCOUNT_STEP {
            tell(env, delta, reclaim::other_sessions());
            self.reported = now;
        }
    }

    /// Its JS object is gone (or it was disposed): drop the state now (the finalizer comes later,
    /// to an empty shell).
    pub(crate) fn release(&mut self, env: &Env) {
        if let Ok(empty) = Session::blank(String::new(), String::new(), false) {
            self.inner = empty;
        }
        if self.reported != 0 {
            tell(env, -self.reported, true);
            self.reported = 0;
        }
    }
}
