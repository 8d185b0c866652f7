//! The `NativeSession` class: one manager's state (the core `Session`). Its methods are grouped
//! by what they do: [`load`], [`write`], [`read`], [`edit`]; the memory it reports to V8 is in
//! `crate::memory`, the early release of collected managers in `crate::reclaim`.

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{session, timefmt, Session};

use crate::error::ForJs;
use crate::{config, reclaim};

mod edit;
mod load;
mod read;
mod write;

/// A position, or "no record" as every format spells it (`NONE`, u32::MAX; see src/wire.rs).
fn pos_or_none(p: Option<u32>) -> u32 {
    p.unwrap_or(crate::wire::NONE)
}

/// One session's state (the core `Session`). The bytes it holds are reported to V8 as external
/// memory, so the garbage collector weighs them when deciding to collect dropped managers.
#[napi(custom_finalize)]
pub struct NativeSession {
    pub(crate) inner: Session,
    /// Bytes last reported to V8 (see `crate::memory`).
    pub(crate) reported: i64,
    /// Its entry in [`reclaim`] (0: not tracked).
    pub(crate) track_id: u64,
}

impl NativeSession {
    fn of(inner: Session) -> Self {
        NativeSession {
            inner,
            reported: 0,
            track_id: 0,
        }
    }
}

#[napi]
impl NativeSession {
    /// Called once on each new manager, with the manager itself as `this`: from then on its state
    /// is dropped as soon as the GC has collected it (see [`reclaim`]). Returns its tracking id
    /// (0: not tracked), by which `loadRecordsOf` of another manager finds it.
    #[napi(catch_unwind)]
    pub fn track(&mut self, env: Env, this: This) -> f64 {
        if self.track_id == 0 {
            self.track_id = reclaim::track(&env, this.raw(), self);
        }
        self.track_id as f64
    }

    /// An empty manager, configured from the environment as it is now and the current tuning
    /// (see `src/config.rs`); follow with `newSession`, `setSessionFile` or `loadPreloaded`.
    #[napi(factory, catch_unwind)]
    pub fn blank(env: Env, cwd: String, session_dir: String, persist: bool) -> Result<Self> {
        let config = config::for_new_manager(&env);
        Ok(NativeSession::of(
            Session::with_config(cwd, session_dir, persist, config).for_js(&env)?,
        ))
    }

    /// `forkFrom(source, targetCwd, dir, id)`: writes the fork of `source` (resolved here) into
    /// `dir` and returns a manager (cwd `target_cwd`, resolved already, session dir `dir`) that has
    /// opened it, without reading the new file again. Nothing is created when the source is
    /// refused. `now_ms`: JS's `Date.now()`, the clock of the new header's time and id.
    #[napi(factory, catch_unwind)]
    pub fn fork_from(
        env: Env,
        source: String,
        target_cwd: String,
        dir: String,
        custom_id: Option<String>,
        now_ms: Option<f64>,
    ) -> Result<Self> {
        let config = config::for_new_manager(&env);
        let forked = timefmt::with_host_now(now_ms, || {
            session::fork(
                Path::new(&pi_session_core::paths::resolve(&source)),
                &target_cwd,
                Path::new(&dir),
                custom_id.as_deref(),
                session::ForkWrites::of(&config),
            )
        })
        .for_js(&env)?;
        let mut inner = Session::with_config(target_cwd, dir, true, config).for_js(&env)?;
        inner.set_session_file_forked(forked).for_js(&env)?;
        let mut this = NativeSession::of(inner);
        this.account(&env);
        Ok(this)
    }

    /// `dispose()`: drop the state now (lines, index, descriptors, the lease), as a collected
    /// manager's is, and stop tracking it (another manager can no longer take its records).
    #[napi(catch_unwind)]
    pub fn dispose(&mut self, env: Env) {
        reclaim::untrack(&env, self.track_id);
        self.track_id = 0;
        self.release(&env);
    }
}
