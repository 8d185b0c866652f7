//! The `LazyValues` class: where the lazy values of one load's entries are read back from when
//! JavaScript first reads them (see the core's `lazy` module and lib/lazy.js). Each entry object
//! made from a skeleton keeps the `LazyValues` of its load, so it can still read its values after
//! its manager moved to another session or was disposed.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::lazy::LazyReader;

use pi_session_core::materialize::PreparedBatch;

use crate::cut::{batch_value, JsBatch};
use crate::error::ForJs;
use crate::reclaim;

#[napi(custom_finalize)]
pub struct LazyValues {
    reader: Arc<LazyReader>,
    /// Its entry in `crate::reclaim` (0: not tracked).
    track_id: u64,
}

impl LazyValues {
    pub(crate) fn of(reader: Arc<LazyReader>) -> Self {
        LazyValues {
            reader,
            track_id: 0,
        }
    }

    /// Drop the reader now (its JS object was collected: nothing can read through it again).
    pub(crate) fn release(&mut self) {
        self.reader = Arc::new(LazyReader::empty());
    }
}

impl ObjectFinalize for LazyValues {
    fn finalize(self, env: Env) -> Result<()> {
        reclaim::untrack(&env, self.track_id);
        Ok(())
    }
}

#[napi]
impl LazyValues {
    /// Called once, with the object itself as `this`: from then on its reader is dropped as soon
    /// as the GC has collected it (see `crate::reclaim`), not when Node runs finalizers.
    #[napi(catch_unwind)]
    pub fn track(&mut self, env: Env, this: This) {
        if self.track_id == 0 {
            self.track_id = reclaim::track_lazy(&env, this.raw(), self);
        }
    }

    /// The holder shapes of the load, by id, each as JSON `{"holder":0|1,"keys":[…],"lazy":[…]}`:
    /// the holder is the entry (0) or its `message` (1), `keys` its member names in order, `lazy`
    /// the indexes of the lazy ones.
    #[napi(catch_unwind)]
    pub fn shapes(&self) -> Vec<String> {
        self.reader.shapes().iter().map(|s| s.to_json()).collect()
    }

    /// The value of the lazy member `key` of the record at `pos`, as a batch of one item (see
    /// `batch_value` in src/cut.rs).
    #[napi(
        catch_unwind,
        ts_return_type = "string | [string, Uint32Array, string[], string, ...string[]]"
    )]
    pub fn value(&self, env: Env, pos: u32, key: String) -> Result<JsBatch> {
        Ok(JsBatch(
            self.reader.value(pos, key.as_bytes()).for_js(&env)?,
        ))
    }

    /// The values of the lazy member `key` of the records of `positions` that have one, in
    /// batches of about `budget` bytes (about `maxTotal` in all): `each(of, batch)` is called with
    /// each batch in order as soon as it is ready (`of`: the positions of its items) while other
    /// threads prepare the next ones. Returns how many values were handed over; an exception
    /// thrown by `each` ends the call with it.
    #[napi(
        catch_unwind,
        ts_args_type = "positions: Uint32Array, key: string, budget: number, maxTotal: number, each: (of: Uint32Array, batch: string | [string, Uint32Array, string[], string, ...string[]]) => void"
    )]
    pub fn each_values(
        &self,
        env: Env,
        positions: Uint32Array,
        key: String,
        budget: u32,
        max_total: u32,
        each: Unknown<'_>,
    ) -> Result<u32> {
        let threads = pi_session_core::cores::available().map_or(1, |n| n.min(4));
        let raw_env = env.raw();
        let mut failed: Option<napi::Error> = None;
        let given = self
            .reader
            .for_each_values(
                &positions,
                key.as_bytes(),
                budget as usize,
                max_total as usize,
                threads,
                |of, batch| {
                    // SAFETY: this runs on the calling thread, during this call, with its
                    // environment; `each` is a value of this call.
                    match unsafe { call_with(raw_env, each.raw(), of, batch) } {
                        Ok(()) => true,
                        Err(e) => {
                            failed = Some(e);
                            false
                        }
                    }
                },
            )
            .for_js(&env)?;
        match failed {
            Some(e) => Err(e),
            None => Ok(given as u32),
        }
    }
}

/// `each(of, batch)` with the JS values of one batch of lazy values.
///
/// # Safety
/// `env` is the environment of the running call, on its thread, and `each` a value of it.
unsafe fn call_with(
    env: sys::napi_env,
    each: sys::napi_value,
    of: Vec<u32>,
    batch: PreparedBatch,
) -> Result<()> {
    // SAFETY: this function's contract (the same holds for each block below).
    let args = unsafe {
        [
            crate::cut::copied_u32_array(env, &of)?,
            batch_value(env, batch)?,
        ]
    };
    let mut undefined = std::ptr::null_mut();
    // SAFETY: as above.
    check_status!(unsafe { sys::napi_get_undefined(env, &mut undefined) })?;
    let mut result = std::ptr::null_mut();
    // SAFETY: as above; `args` are values of this call. A thrown exception stays pending.
    check_status!(unsafe {
        sys::napi_call_function(env, undefined, each, args.len(), args.as_ptr(), &mut result)
    })
}
