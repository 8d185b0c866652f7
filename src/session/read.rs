//! Reads: identity, positions of the id index, labels and leaf, record lines, paths, the context
//! plan and the tree plan.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::transcript::Transcript;
use pi_session_core::{context, tree};

use super::{pos_or_none, NativeSession};
use pi_session_core::materialize::Form;

use crate::cut::{batch_value, JsBatch, U32s};
use crate::error::{js_error, ForJs};
use crate::lazy::LazyValues;
use crate::wire;

/// At most this many threads prepare batches of lines (see `each_lines_json`): beyond it the
/// page faults of the buffers being filled contend more than they gain.
const MAX_PREPARE_THREADS: usize = 4;

/// `each(batch)` with the JS values of one prepared batch (and, for a skeleton batch, its
/// holders as a second argument, then for a column batch its refs and signatures: see
/// `eachSkeletons`).
///
/// # Safety
/// `env` is the environment of the running call, on its thread, and `each` a value of it.
unsafe fn call_each(
    env: sys::napi_env,
    each: sys::napi_value,
    mut batch: pi_session_core::materialize::PreparedBatch,
    form: Form,
) -> Result<()> {
    let holders = std::mem::take(&mut batch.holders);
    let refs = std::mem::take(&mut batch.refs);
    let sigs = std::mem::take(&mut batch.sigs);
    // SAFETY: this function's contract (the same holds for each block below).
    let mut args = vec![unsafe { batch_value(env, batch) }?];
    if form != Form::Whole {
        // SAFETY: as above.
        args.push(unsafe { crate::cut::copied_u32_array(env, &holders) }?);
    }
    if form == Form::Columns {
        // SAFETY: as above.
        args.push(unsafe { crate::cut::copied_u32_array(env, &refs) }?);
        // SAFETY: as above.
        args.push(unsafe { crate::cut::latin1_array(env, &sigs) }?);
    }
    let mut undefined = std::ptr::null_mut();
    // SAFETY: as above.
    check_status!(unsafe { sys::napi_get_undefined(env, &mut undefined) })?;
    let mut result = std::ptr::null_mut();
    // SAFETY: as above; `args` are values of this call. A thrown exception stays pending, and the
    // error made of the status (PendingException) leaves it to be thrown as it is.
    check_status!(unsafe {
        sys::napi_call_function(env, undefined, each, args.len(), args.as_ptr(), &mut result)
    })
}

#[napi]
impl NativeSession {
    #[napi(catch_unwind)]
    pub fn session_id(&self) -> String {
        self.inner.session_id().to_owned()
    }

    #[napi(catch_unwind)]
    pub fn session_file(&self) -> Option<String> {
        self.inner
            .session_file()
            .map(|p| p.to_string_lossy().into_owned())
    }

    /// `usesDefaultSessionDir()`: the session dir is the cwd's default one (under the agent
    /// directory `process.env` names now).
    #[napi(catch_unwind)]
    pub fn uses_default_session_dir(&self, env: Env) -> bool {
        let agent = crate::config::agent_dir(&env);
        pi_session_core::places::is_default_dir(self.inner.session_dir(), self.inner.cwd(), &agent)
    }

    #[napi(catch_unwind)]
    pub fn entry_count(&self) -> u32 {
        self.inner.entry_count() as u32
    }

    #[napi(catch_unwind)]
    pub fn record_count(&self) -> u32 {
        self.inner.record_count() as u32
    }

    #[napi(catch_unwind)]
    pub fn header_pos(&self) -> u32 {
        pos_or_none(self.inner.header_pos())
    }

    /// The leaf as a key: `null` for a null leaf, `NO_ID_KEY` for an id-less record.
    #[napi(catch_unwind)]
    pub fn leaf_key(&self) -> Option<String> {
        self.inner.leaf_key().map(|k| k.to_owned())
    }

    #[napi(catch_unwind)]
    pub fn leaf_pos(&self) -> u32 {
        pos_or_none(self.inner.leaf_pos())
    }

    #[napi(catch_unwind)]
    pub fn lookup(&self, key: String) -> u32 {
        pos_or_none(self.inner.lookup(&key))
    }

    #[napi(catch_unwind)]
    pub fn label_pos(&self, key: String) -> u32 {
        pos_or_none(self.inner.label_pos(&key))
    }

    /// Positions of the label records in effect, one per labelled entry (JS keeps the labels of
    /// string ids in a Map, as the reference does, and asks again after a label change).
    #[napi(catch_unwind, ts_return_type = "Uint32Array")]
    pub fn label_positions(&self) -> U32s {
        U32s(self.inner.labels().map(|(_, pos)| pos).collect())
    }

    #[napi(catch_unwind)]
    pub fn session_name_pos(&self) -> u32 {
        pos_or_none(self.inner.session_name_pos())
    }

    /// One record's line for `JSON.parse`, as a batch of one (see `batch_value` in
    /// src/cut.rs): the JSON text `[line]`, or `[text, plan, names, wide, ...values]` when strings
    /// were cut out.
    #[napi(
        catch_unwind,
        ts_return_type = "string | [string, Uint32Array, string[], string, ...string[]]"
    )]
    pub fn line(&self, env: Env, pos: u32) -> Result<JsBatch> {
        let mut batches = self
            .inner
            .prepare_batches(&[pos], usize::MAX, usize::MAX, 1)
            .for_js(&env)?;
        match batches.pop() {
            Some(batch) => Ok(JsBatch(batch)),
            None => Err(js_error(
                &env,
                pi_session_core::Error::internal(format!("record {pos} gave no line")),
            )),
        }
    }

    /// The lines of many records for `JSON.parse`, in batches of about `budget` bytes (about
    /// `max_total` bytes in all): `each(batch)` is called with each batch in order as soon as it
    /// is ready, while other threads prepare the next ones, so that its `JSON.parse` overlaps
    /// their work. A batch is given as `line` gives one record (the text, or the array of
    /// `batch_value` when strings were cut out; see `batch_value` in src/cut.rs), its text being the
    /// JSON array `[line, line, …]`. Returns how many positions the batches covered (a prefix of
    /// `positions`); an exception thrown by `each` ends the call with it. `each` must not call
    /// into this session (it runs while the session is being read).
    #[napi(
        catch_unwind,
        ts_args_type = "positions: Uint32Array, budget: number, maxTotal: number, each: (batch: string | [string, Uint32Array, string[], string, ...string[]]) => void"
    )]
    pub fn each_lines_json(
        &self,
        env: Env,
        positions: Uint32Array,
        budget: u32,
        max_total: u32,
        each: Unknown<'_>,
    ) -> Result<u32> {
        self.each_batch(env, Form::Whole, positions, budget, max_total, each)
    }

    /// `eachLinesJson` of skeletons (see the core's `lazy` module): each record's line with its
    /// lazy values replaced by `0`, and `each(batch, holders)` gets with each batch the items that
    /// have lazy values and their holders' shapes, as pairs `[item, shapeId, …]` (shapes from
    /// `lazyValues().shapes()`). With `columns`, the skeletons as columns (see the core's
    /// `materialize::columns`): `each(batch, holders, refs, sigs)`, where the batch's one item is
    /// the array of its values, `sigs` the signatures of its items (each the JSON `[slots,
    /// signature]`: the signature's numbers are slots, `-1` its lazy members), and `refs` per
    /// item its signature's index, then its slots (indexes into the values).
    #[napi(
        catch_unwind,
        ts_args_type = "positions: Uint32Array, budget: number, maxTotal: number, columns: boolean, each: (batch: string | [string, Uint32Array, string[], string, ...string[]], holders: Uint32Array, refs: Uint32Array, sigs: string[]) => void"
    )]
    pub fn each_skeletons(
        &self,
        env: Env,
        positions: Uint32Array,
        budget: u32,
        max_total: u32,
        columns: bool,
        each: Unknown<'_>,
    ) -> Result<u32> {
        let form = if columns {
            Form::Columns
        } else {
            Form::Skeleton
        };
        self.each_batch(env, form, positions, budget, max_total, each)
    }

    /// The reader of the lazy values of the records loaded last: made at the first call after a
    /// load, and valid for as long as JS keeps it, whatever this session does next.
    #[napi(catch_unwind)]
    pub fn lazy_values(&mut self) -> LazyValues {
        LazyValues::of(self.inner.lazy_reader())
    }

    #[napi(catch_unwind, ts_return_type = "Uint32Array")]
    pub fn entry_positions(&self) -> U32s {
        U32s(self.inner.entry_positions())
    }

    /// The positions `getEntriesSince(count)` returns; null past the end.
    #[napi(catch_unwind, ts_return_type = "Uint32Array | null")]
    pub fn entry_positions_since(&self, count: u32) -> Option<U32s> {
        self.inner.entry_positions_since(count as usize).map(U32s)
    }

    #[napi(catch_unwind, ts_return_type = "Uint32Array")]
    pub fn children(&self, key: String) -> U32s {
        U32s(self.inner.children(&key))
    }

    /// `getBranch`: path to the record of `start_key` (None: empty).
    #[napi(catch_unwind, ts_return_type = "Uint32Array")]
    pub fn branch_path(&self, start_key: Option<String>) -> U32s {
        U32s(self.inner.branch_from(start_key.as_deref()))
    }

    #[napi(catch_unwind, ts_return_type = "Uint32Array")]
    pub fn context_entries(&self) -> U32s {
        let path = self.inner.context_path();
        U32s(context::select(&self.inner, &path))
    }

    /// The context plan, in the format `plan` of src/wire.rs (decoded by lib/wire.js).
    #[napi(catch_unwind, ts_return_type = "Uint32Array")]
    pub fn context_plan(&self) -> U32s {
        let path = self.inner.context_path();
        U32s(wire::plan(&context::plan(&self.inner, &path)))
    }

    /// A page of the transcript read model (see the core's `transcript` module), in the format
    /// `transcript_page` of src/wire.rs: up to `limit` items next to the boundary after the first
    /// `within` items of the entry `anchor` (a key), before it when `backward`; with no anchor,
    /// the newest `limit` items. Only the page's items are located; nothing is parsed.
    #[napi(catch_unwind, ts_return_type = "Uint32Array")]
    pub fn transcript_page(
        &self,
        anchor: Option<String>,
        within: u32,
        limit: u32,
        backward: bool,
    ) -> U32s {
        let view = pi_session_core::store::View::from(&self.inner);
        let t = Transcript::of(view, view.branch_from(view.leaf_key()));
        let boundary = anchor.map(|k| t.boundary(self.inner.lookup(&k), within as usize));
        U32s(wire::transcript_page(
            &t,
            boundary,
            limit as usize,
            backward,
        ))
    }

    /// The transcript's counts `[total, itemsAfterLatestCompaction]` once the record at `pos` was
    /// appended to a branch whose counts were `total` and `after` (the core's one rule,
    /// `transcript::Counts::then`): a subscriber's append event asks this instead of counting.
    #[napi(catch_unwind)]
    pub fn transcript_counts_after(&self, pos: u32, total: u32, after: u32) -> Vec<u32> {
        let before = pi_session_core::transcript::Counts {
            total: total as usize,
            after_compaction: after as usize,
        };
        let c = before.then(&self.inner, pos);
        vec![c.total as u32, c.after_compaction as u32]
    }

    /// `getTree()`'s shape, in the format `tree` of src/wire.rs (decoded by lib/wire.js).
    #[napi(catch_unwind, ts_return_type = "Uint32Array")]
    pub fn tree_plan(&self) -> U32s {
        U32s(wire::tree(&tree::tree(&self.inner)))
    }

    /// Changes whenever records, index, labels or leaf may have changed (JS keeps the tree plan
    /// until then). A double: JS numbers hold integers exactly up to 2^53.
    #[napi(catch_unwind)]
    pub fn generation(&self) -> f64 {
        (self.inner.generation() & ((1 << 53) - 1)) as f64
    }
}

impl NativeSession {
    /// `eachLinesJson` / `eachSkeletons` (see there).
    fn each_batch(
        &self,
        env: Env,
        form: Form,
        positions: Uint32Array,
        budget: u32,
        max_total: u32,
        each: Unknown<'_>,
    ) -> Result<u32> {
        let threads = pi_session_core::cores::available().map_or(1, |n| n.min(MAX_PREPARE_THREADS));
        let raw_env = env.raw();
        let mut failed: Option<napi::Error> = None;
        let consume = |batch| {
            // SAFETY: this runs on the calling thread, during this call, with its environment;
            // `each` is a value of this call (the core calls `consume` on the thread that called
            // it).
            match unsafe { call_each(raw_env, each.raw(), batch, form) } {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        };
        let (b, t) = (budget as usize, max_total as usize);
        let covered = self
            .inner
            .for_each_batch_as(form, &positions, b, t, threads, consume)
            .for_js(&env)?;
        match failed {
            Some(e) => Err(e),
            None => Ok(covered as u32),
        }
    }
}
