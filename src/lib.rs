//! napi binding: a thin shell over `pi_session_core`. Each method converts its arguments, calls
//! the core, and converts the result; errors become JS `Error`s whose `code` is stable.
//!
//! Ids cross the boundary as *keys* (the JSON text of the id value, see `record.rs`), positions as
//! `u32` record indices, and bulk results as typed arrays or one JSON text, so that building JS
//! objects stays on the JS side where `JSON.parse` does it fastest.

#![deny(clippy::all)]

use std::path::{Path, PathBuf};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::json::JsText;
use pi_session_core::session;
use pi_session_core::summary_job::{self, Ready, SummaryJob};
use pi_session_core::{context, file, fsio, listing, materialize, tree, Session};

mod reclaim;

const NONE: i64 = -1;

/// The `code` a thrown JS error carries (napi-rs uses the error status as `code`).
#[derive(Debug, Clone, Copy)]
pub struct Code(pub &'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

fn to_napi(e: pi_session_core::Error) -> napi::Error<Code> {
    napi::Error::new(Code(e.js_code()), e.message)
}

/// JS spells the key of an absent id `"undefined"`; the core uses the empty key.
fn core_key(k: &str) -> &str {
    if k == "undefined" {
        pi_session_core::record::UNDEFINED
    } else {
        k
    }
}

fn js_key(k: &str) -> String {
    if k == pi_session_core::record::UNDEFINED {
        "undefined".to_owned()
    } else {
        k.to_owned()
    }
}

fn pos_or_none(p: Option<u32>) -> i64 {
    p.map(i64::from).unwrap_or(NONE)
}

/// One session's state (the core `Session`). The bytes it holds are reported to V8 as external
/// memory, so the garbage collector weighs them when deciding to collect dropped managers.
#[napi(custom_finalize)]
pub struct NativeSession {
    inner: Session,
    reported: i64,
    /// Its entry in [`reclaim`] (0: not tracked).
    track_id: u64,
}

impl ObjectFinalize for NativeSession {
    fn finalize(self, env: Env) -> napi::Result<()> {
        reclaim::untrack(&env, self.track_id);
        if self.reported != 0 {
            env.adjust_external_memory(-self.reported)?;
        }
        Ok(())
    }
}

/// Report changes of a session's size to V8 in steps of at least this many bytes.
const ACCOUNT_STEP: i64 = 1 << 20;

#[napi(object)]
pub struct NewSessionInfo {
    pub id: String,
    pub timestamp: String,
    pub file: Option<String>,
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

    /// An empty manager; follow with `newSession`, `setSessionFile` or `loadPreloaded`.
    #[napi(factory, catch_unwind)]
    pub fn blank(cwd: String, session_dir: String, persist: bool) -> Result<Self, Code> {
        Ok(NativeSession {
            inner: Session::blank(cwd, session_dir, persist).map_err(to_napi)?,
            reported: 0,
            track_id: 0,
        })
    }

    /// `forkFrom(source, targetCwd, dir, id)`: writes the fork of `source` into `dir` and returns
    /// a manager (cwd `target_cwd`, session dir `dir`) that has opened it, without reading the
    /// new file again. Nothing is created when the source is refused.
    #[napi(factory, catch_unwind)]
    pub fn fork_from(
        env: Env,
        source: String,
        target_cwd: String,
        dir: String,
        custom_id: Option<String>,
    ) -> Result<Self, Code> {
        let forked = session::fork(
            Path::new(&source),
            &target_cwd,
            Path::new(&dir),
            custom_id.as_deref(),
            fsio::Durability::from_env(),
        )
        .map_err(to_napi)?;
        let mut inner = Session::blank(target_cwd, dir, true).map_err(to_napi)?;
        inner.set_session_file_forked(forked).map_err(to_napi)?;
        let mut this = NativeSession {
            inner,
            reported: 0,
            track_id: 0,
        };
        this.account(&env);
        Ok(this)
    }

    #[napi(catch_unwind)]
    pub fn new_session(
        &mut self,
        env: Env,
        custom_id: Option<String>,
        parent_session_json: Option<String>,
    ) -> Result<NewSessionInfo, Code> {
        let n = self
            .inner
            .new_session(custom_id.as_deref(), parent_session_json.as_deref())
            .map_err(to_napi)?;
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
    pub fn set_session_file(&mut self, env: Env, path: String) -> Result<bool, Code> {
        let result = self.inner.set_session_file(PathBuf::from(path));
        self.account(&env);
        result.map(|r| r.loaded).map_err(to_napi)
    }

    #[napi(catch_unwind)]
    pub fn load_preloaded(
        &mut self,
        env: Env,
        lines: Vec<String>,
        skeletons: bool,
    ) -> Result<(), Code> {
        let result = self.inner.load_preloaded(lines, skeletons);
        self.account(&env);
        result.map(|_| ()).map_err(to_napi)
    }

    /// Preloaded entries that are all objects made from records of the session tracked as
    /// `source` (at `positions`, the header first): the records are taken from it instead of
    /// serialized entries being parsed. JS knows the source by its tracking id, not its object: a
    /// reference to the object (even a WeakRef, alive until the running job ends) would keep every
    /// source of a synchronous loop alive. Fails when the source is gone (JS then serializes).
    #[napi(catch_unwind)]
    pub fn load_records_of(
        &mut self,
        env: Env,
        source: f64,
        positions: Uint32Array,
    ) -> Result<(), Code> {
        let gone = || napi::Error::new(Code("INVALID_ARGUMENT"), "the source session is gone");
        let ptr = reclaim::session_of(source as u64).ok_or_else(gone)?;
        if std::ptr::eq(ptr, self) {
            return Err(gone());
        }
        // SAFETY: a tracked session is allocated until its finalizer, which removes it from the
        // registry first; it is not `self`, and no call on it runs now (one JS thread, and this
        // call makes none).
        let source = unsafe { &mut (*ptr).inner };
        let result = self.inner.load_records_of(source, &positions);
        self.account(&env);
        result.map_err(to_napi)
    }

    #[napi(catch_unwind)]
    pub fn push_preloaded(
        &mut self,
        env: Env,
        lines: Vec<String>,
        skeletons: bool,
    ) -> Result<(), Code> {
        let result = self.inner.push_preloaded(lines, skeletons);
        self.account(&env);
        result.map_err(to_napi)
    }

    /// Append an entry whose UTF-8 JSON text is the first `len` bytes of `bytes` (JS encodes it
    /// with `TextEncoder.encodeInto`, much cheaper than a string crossing the boundary).
    #[napi(catch_unwind)]
    pub fn append_utf8(&mut self, env: Env, bytes: &[u8], len: u32) -> Result<u32, Code> {
        self.append_prefix(&env, bytes, len, Session::append)
    }

    /// An `inMemory` session's entry, as the skeleton the core reads (the object stays in JS).
    #[napi(catch_unwind)]
    pub fn append_skeleton_utf8(&mut self, env: Env, bytes: &[u8], len: u32) -> Result<u32, Code> {
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
    ) -> Result<u32, Code> {
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

    /// `releaseEntryId(id)` by key: false when it was not reserved.
    #[napi(catch_unwind)]
    pub fn release_entry_id(&mut self, key: String) -> bool {
        self.inner.release_entry_id(core_key(&key))
    }

    #[napi(catch_unwind)]
    pub fn persist_external(&mut self, line: String) -> Result<(), Code> {
        self.inner
            .persist_external(line.as_bytes())
            .map_err(to_napi)
    }

    /// `dispose()`: drop the state now (lines, index, descriptors, the lease), as a collected
    /// manager's is, and stop tracking it (another manager can no longer take its records).
    #[napi(catch_unwind)]
    pub fn dispose(&mut self, env: Env) {
        reclaim::untrack(&env, self.track_id);
        self.track_id = 0;
        self.release(&env);
    }

    /// Writes a session not written yet and fsyncs it; false for an in-memory session.
    #[napi(catch_unwind)]
    pub fn flush(&mut self) -> Result<bool, Code> {
        self.inner.flush().map_err(to_napi)
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
    pub fn set_exclusive(&mut self, on: bool) -> Result<(), Code> {
        self.inner.set_exclusive(on).map_err(to_napi)
    }

    /// Whether this manager holds (or wants) the session file's lease.
    #[napi(catch_unwind)]
    pub fn is_exclusive(&self) -> bool {
        self.inner.is_exclusive()
    }

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

    #[napi(catch_unwind)]
    pub fn entry_count(&self) -> u32 {
        self.inner.entry_count() as u32
    }

    #[napi(catch_unwind)]
    pub fn record_count(&self) -> u32 {
        self.inner.record_count() as u32
    }

    #[napi(catch_unwind)]
    pub fn header_pos(&self) -> i64 {
        pos_or_none(self.inner.header_pos())
    }

    /// The leaf as a key: `null` for a null leaf, `"undefined"` for an id-less record.
    #[napi(catch_unwind)]
    pub fn leaf_key(&self) -> Option<String> {
        self.inner.leaf_key().map(js_key)
    }

    #[napi(catch_unwind)]
    pub fn leaf_pos(&self) -> i64 {
        pos_or_none(self.inner.leaf_pos())
    }

    #[napi(catch_unwind)]
    pub fn lookup(&self, key: String) -> i64 {
        pos_or_none(self.inner.lookup(core_key(&key)))
    }

    #[napi(catch_unwind)]
    pub fn label_pos(&self, key: String) -> i64 {
        pos_or_none(self.inner.label_pos(core_key(&key)))
    }

    /// Positions of the label records in effect, one per labelled entry (JS keeps the labels of
    /// string ids in a Map, as the reference does, and asks again after a label change).
    #[napi(catch_unwind)]
    pub fn label_positions(&self) -> Uint32Array {
        Uint32Array::new(self.inner.labels().map(|(_, pos)| pos).collect())
    }

    #[napi(catch_unwind)]
    pub fn session_name_pos(&self) -> i64 {
        pos_or_none(self.inner.session_name_pos())
    }

    /// The JSON text of one record, or `[text, ...cuts]` when long strings were cut out of it
    /// (see [`JsLines`]).
    #[napi(catch_unwind, ts_return_type = "string | Array<string | number>")]
    pub fn line(&self, env: Env, pos: u32) -> Result<JsLines, Code> {
        let mut cuts = JsCuts::new(&env);
        let text = self.inner.line_for_js(pos, &mut cuts).map_err(to_napi)?;
        cuts.finish(text)
    }

    /// `[line, line, …]` for many records, parsed by JS in one `JSON.parse`, or `[text, ...cuts]`
    /// when long strings were cut out (see [`JsLines`]). Stops after the line that reaches
    /// `max_bytes` (JS strings have a size limit), so the text may cover only a prefix of
    /// `positions`; the caller asks again for the rest.
    #[napi(catch_unwind, ts_return_type = "string | Array<string | number>")]
    pub fn lines_json(
        &self,
        env: Env,
        positions: Uint32Array,
        max_bytes: Option<u32>,
    ) -> Result<JsLines, Code> {
        let budget = max_bytes.unwrap_or(u32::MAX) as usize;
        let mut cuts = JsCuts::new(&env);
        let text = self
            .inner
            .lines_for_js(&positions, budget, &mut cuts)
            .map_err(to_napi)?;
        cuts.finish(text)
    }

    #[napi(catch_unwind)]
    pub fn entry_positions(&self) -> Uint32Array {
        Uint32Array::new(self.inner.entry_positions())
    }

    /// The positions `getEntriesSince(count)` returns; null past the end.
    #[napi(catch_unwind)]
    pub fn entry_positions_since(&self, count: u32) -> Option<Uint32Array> {
        self.inner
            .entry_positions_since(count as usize)
            .map(Uint32Array::new)
    }

    #[napi(catch_unwind)]
    pub fn children(&self, key: String) -> Uint32Array {
        Uint32Array::new(self.inner.children(core_key(&key)))
    }

    /// `getBranch`: path to the record of `start_key` (None: empty).
    #[napi(catch_unwind)]
    pub fn branch_path(&self, start_key: Option<String>) -> Uint32Array {
        Uint32Array::new(self.inner.branch_from(start_key.as_deref().map(core_key)))
    }

    #[napi(catch_unwind)]
    pub fn context_entries(&self) -> Uint32Array {
        let path = self.inner.context_path();
        Uint32Array::new(context::select(&self.inner, &path))
    }

    #[napi(catch_unwind)]
    pub fn projection_plan(&self) -> Uint32Array {
        let path = self.inner.context_path();
        Uint32Array::new(context::encode(&context::plan(&self.inner, &path)))
    }

    /// A page of `projection_plan` next to the boundary `anchor` (see `context::encode_page`):
    /// the transcript read model's cursors are such boundaries.
    #[napi(catch_unwind)]
    pub fn projection_page(&self, anchor: u32, limit: u32, backward: bool) -> Uint32Array {
        let path = self.inner.context_path();
        let plan = context::plan(&self.inner, &path);
        Uint32Array::new(context::encode_page(
            &plan,
            anchor as usize,
            limit as usize,
            backward,
        ))
    }

    #[napi(catch_unwind)]
    pub fn tree_plan(&self) -> Uint32Array {
        Uint32Array::new(tree::tree_plan(&self.inner))
    }

    /// Changes whenever records, index, labels or leaf may have changed (JS keeps the tree plan
    /// until then). A double: JS numbers hold integers exactly up to 2^53.
    #[napi(catch_unwind)]
    pub fn generation(&self) -> f64 {
        (self.inner.generation() & ((1 << 53) - 1)) as f64
    }

    #[napi(catch_unwind)]
    pub fn branch(&mut self, key: String, display: String) -> Result<(), Code> {
        self.inner.branch(core_key(&key), &display).map_err(to_napi)
    }

    /// `countSubtree(id)`: entries in the subtree of `key` (the entry included).
    #[napi(catch_unwind)]
    pub fn count_subtree(&self, key: String, display: String) -> Result<u32, Code> {
        self.inner
            .count_subtree(core_key(&key), &display)
            .map(|n| n as u32)
            .map_err(to_napi)
    }

    /// `pruneBranch(id)`: delete the subtree of `key` (see the core's `prune` module).
    #[napi(catch_unwind)]
    pub fn prune_branch(&mut self, key: String, display: String) -> Result<PruneResult, Code> {
        let p = self
            .inner
            .prune_branch(core_key(&key), &display)
            .map_err(to_napi)?;
        Ok(PruneResult {
            removed: p.removed as u32,
            labels_dropped: p.labels_dropped as u32,
            rewired: p.rewired as u32,
            bytes_before: p.bytes_before as f64,
            bytes_after: p.bytes_after as f64,
            written: p.written,
            kept: Uint32Array::new(p.kept),
            edit_pos: p.edits.iter().map(|e| e.0).collect(),
            edit_member: p.edits.iter().map(|e| e.1.to_owned()).collect(),
            edit_json: p.edits.into_iter().map(|e| e.2).collect(),
        })
    }

    /// Set the leaf without checks (`null` → null leaf).
    #[napi(catch_unwind)]
    pub fn set_leaf_key(&mut self, key: Option<String>) {
        self.inner.set_leaf_key(key.as_deref().map(core_key));
    }

    #[napi(catch_unwind)]
    pub fn reset_leaf(&mut self) {
        self.inner.reset_leaf();
    }

    #[napi(catch_unwind)]
    pub fn create_branched_session(
        &mut self,
        env: Env,
        start_key: Option<String>,
        display: String,
    ) -> Result<Option<String>, Code> {
        let result = self
            .inner
            .create_branched_session(start_key.as_deref().map(core_key), &display);
        self.account(&env);
        result
            .map(|p| p.map(|p| p.to_string_lossy().into_owned()))
            .map_err(to_napi)
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
    ) -> Result<u32, Code> {
        let line = bytes
            .get(..len as usize)
            .ok_or_else(|| napi::Error::new(Code("INVALID_ARGUMENT"), "length out of range"))?;
        let pos = append(&mut self.inner, line).map_err(to_napi)?;
        self.account(env);
        Ok(pos)
    }

    /// Tell V8 how much memory this session now holds (only when it changed by a step).
    fn account(&mut self, env: &Env) {
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
    fn release(&mut self, env: &Env) {
        if let Ok(empty) = Session::blank(String::new(), String::new(), false) {
            self.inner = empty;
        }
        if self.reported != 0 && env.adjust_external_memory(-self.reported).is_ok() {
            self.reported = 0;
        }
    }
}

/// What `pruneBranch` did, with what a host holding entry objects needs to follow it.
#[napi(object)]
pub struct PruneResult {
    pub removed: u32,
    pub labels_dropped: u32,
    pub rewired: u32,
    pub bytes_before: f64,
    pub bytes_after: f64,
    pub written: bool,
    /// Old positions of the records kept, in their new order.
    pub kept: Uint32Array,
    /// Member edits on survivors: new position, member name, JSON value.
    pub edit_pos: Vec<u32>,
    pub edit_member: Vec<String>,
    pub edit_json: Vec<String>,
}

#[napi(object)]
pub struct HeaderScan {
    /// "header", "none" or "limit".
    pub kind: String,
    pub cwd: Option<String>,
}

/// How many managers had their state dropped as soon as the GC took them (see `reclaim`).
#[napi]
pub fn reclaimed_session_count() -> u32 {
    reclaim::released_count()
}

/// The bounded header scan used by `open` to learn a file's cwd.
#[napi(catch_unwind)]
pub fn scan_header(path: String) -> Result<HeaderScan, Code> {
    match listing::read_header(Path::new(&path)) {
        Ok(Some(h)) => Ok(HeaderScan {
            kind: "header".into(),
            cwd: h.cwd,
        }),
        Ok(None) => Ok(HeaderScan {
            kind: "none".into(),
            cwd: None,
        }),
        Err(listing::ScanError::Limit) => Ok(HeaderScan {
            kind: "limit".into(),
            cwd: None,
        }),
        Err(listing::ScanError::Io(e)) => Err(to_napi(pi_session_core::Error::io(
            &e,
            "read",
            Path::new(&path),
        ))),
    }
}

#[napi(catch_unwind)]
pub fn find_most_recent(dir: String, resolved_cwd: Option<String>) -> Option<String> {
    listing::find_most_recent(Path::new(&dir), resolved_cwd.as_deref())
        .map(|p| p.to_string_lossy().into_owned())
}

#[napi(catch_unwind)]
pub fn find_by_id(dir: String, id: String, resolved_cwd: Option<String>) -> Option<String> {
    listing::find_by_id(Path::new(&dir), &id, resolved_cwd.as_deref())
        .map(|p| p.to_string_lossy().into_owned())
}

/// `loadEntriesFromFile`: the records as one JSON array text (`[]` when missing or not a session).
#[napi(catch_unwind)]
pub fn load_entries_json(path: String) -> Result<String, Code> {
    let loaded = file::load_file(Path::new(&path)).map_err(to_napi)?;
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

/// `.jsonl` names of a directory, in the order `list` reads them (name descending), read off the
/// JS thread (thousands of names take milliseconds to read and sort).
#[napi(catch_unwind, ts_return_type = "Promise<string[]>")]
pub fn list_dir_names(dir: String) -> AsyncTask<OffThread<Vec<String>>> {
    OffThread::task(move || {
        listing::list_dir_files(Path::new(&dir))
            .map(|v| {
                v.into_iter()
                    .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect()
            })
            .map_err(|e| {
                let e = pi_session_core::Error::io(&e, "scandir", Path::new(&dir));
                napi::Error::new(Status::GenericFailure, e.message)
            })
    })
}

/// A computation run on the libuv thread pool whose result becomes the promise's value.
pub struct OffThread<T> {
    work: Option<Box<dyn FnOnce() -> Result<T> + Send>>,
}

impl<T> OffThread<T> {
    fn task(work: impl FnOnce() -> Result<T> + Send + 'static) -> AsyncTask<OffThread<T>>
    where
        OffThread<T>: Task,
    {
        AsyncTask::new(OffThread {
            work: Some(Box::new(work)),
        })
    }
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for OffThread<T> {
    type Output = T;
    type JsValue = T;

    fn compute(&mut self) -> Result<T> {
        // This runs on libuv's pool, where napi-rs catches no panic: one unwinding through the
        // pool's C frames would end the process. A panic rejects the promise instead.
        match self.work.take() {
            Some(work) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| {
                    Err(napi::Error::new(
                        Status::GenericFailure,
                        "a background task of pi-session-native panicked (a bug: please report it)",
                    ))
                }),
            None => Err(napi::Error::new(Status::GenericFailure, "task ran twice")),
        }
    }

    fn resolve(&mut self, _env: Env, output: T) -> Result<T> {
        Ok(output)
    }
}

#[napi(object)]
pub struct Candidate {
    /// Subdirectory name under the root.
    pub dir: String,
    /// File name in that subdirectory.
    pub file: String,
    pub mtime_ms: Option<f64>,
}

/// `listAll()` candidates under a sessions root, newest first (read and stat-ed off the JS thread).
#[napi(catch_unwind, ts_return_type = "Promise<Candidate[]>")]
pub fn list_all_candidates(root: String) -> AsyncTask<OffThread<Vec<Candidate>>> {
    OffThread::task(move || {
        Ok(listing::list_all_candidates(Path::new(&root))
            .into_iter()
            .map(|(p, m)| {
                let name = |q: Option<&std::ffi::OsStr>| {
                    q.map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                };
                Candidate {
                    dir: name(p.parent().and_then(|d| d.file_name())),
                    file: name(p.file_name()),
                    mtime_ms: m,
                }
            })
            .collect())
    })
}

/// One `list`/`listAll` run: the core's [`SummaryJob`] summarizes the files on its own threads
/// (through the listing cache when a cache file is given), and `next()` hands finished results
/// over in order.
#[napi]
pub struct SummaryRun {
    job: std::sync::Arc<SummaryJob>,
}

#[napi]
impl SummaryRun {
    /// Start summarizing `paths` (with known mtimes, ms, where given); returns at once.
    #[napi(factory, catch_unwind)]
    pub fn start(
        paths: Vec<String>,
        mtimes: Option<Vec<Option<f64>>>,
        cache_file: Option<String>,
    ) -> Self {
        let files = paths
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                (
                    PathBuf::from(p),
                    mtimes.as_ref().and_then(|m| m.get(i).copied().flatten()),
                )
            })
            .collect();
        SummaryRun {
            job: std::sync::Arc::new(SummaryJob::start(
                files,
                cache_file.map(PathBuf::from),
                summary_job::default_threads(),
            )),
        }
    }

    /// The next finished results, in order, as a flat array `[meta, first, all, ...]` (three
    /// items per file; `meta` is null for a skipped file). Empty when the run is over.
    #[napi(catch_unwind, ts_return_type = "Promise<Array<string | null>>")]
    pub fn next(&self, max: u32) -> AsyncTask<OffThread<SummaryBatch>> {
        let job = self.job.clone();
        OffThread::task(move || Ok(SummaryBatch(job.next(max as usize))))
    }

    /// After the last result: wait for the workers, then write the listing cache back (off the
    /// JS thread). Resolves to whether a cache was written.
    #[napi(catch_unwind, ts_return_type = "Promise<boolean>")]
    pub fn finish(&self) -> AsyncTask<OffThread<bool>> {
        let job = self.job.clone();
        OffThread::task(move || Ok(job.finish()))
    }

    /// Stop reading files; pending and later `next()` calls resolve empty.
    #[napi(catch_unwind)]
    pub fn cancel(&self) {
        self.job.cancel();
    }
}

/// Record lines for `JSON.parse`: the text alone when nothing was cut, else the array
/// `[text, item, depth, ...steps, string, item, depth, ...]`, where each cut string goes at the
/// path of `depth` steps (names as strings, indexes as numbers) in item `item` of the parsed text.
/// The values were made during this call (they live in its handle scope).
pub struct JsLines {
    text: String,
    cuts: Vec<sys::napi_value>,
}

impl TypeName for JsLines {
    fn type_name() -> &'static str {
        "string | Array<string | number>"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ToNapiValue for JsLines {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let text = String::to_napi_value(env, val.text)?;
        if val.cuts.is_empty() {
            return Ok(text);
        }
        let mut arr = std::ptr::null_mut();
        check_status!(sys::napi_create_array_with_length(
            env,
            val.cuts.len() + 1,
            &mut arr
        ))?;
        check_status!(sys::napi_set_element(env, arr, 0, text))?;
        for (i, &v) in val.cuts.iter().enumerate() {
            check_status!(sys::napi_set_element(env, arr, i as u32 + 1, v))?;
        }
        Ok(arr)
    }
}

/// Makes the JS values of each cut string while its line is in memory: image data (ASCII, no
/// escapes) becomes a string straight from the line's bytes, anything else is decoded first.
struct JsCuts {
    env: sys::napi_env,
    values: Vec<sys::napi_value>,
    failed: Option<napi::Error>,
}

impl JsCuts {
    fn new(env: &Env) -> Self {
        JsCuts {
            env: env.raw(),
            values: Vec::new(),
            failed: None,
        }
    }

    fn finish(self, text: String) -> Result<JsLines, Code> {
        match self.failed {
            Some(e) => Err(napi::Error::new(Code("INTERNAL_ERROR"), e.reason)),
            None => Ok(JsLines {
                text,
                cuts: self.values,
            }),
        }
    }

    unsafe fn push_cut(
        &mut self,
        item: u32,
        path: &[pi_session_core::json::Step<'_>],
        escaped: &[u8],
        plain: bool,
    ) -> Result<()> {
        use pi_session_core::json::{self, Step};
        let env = self.env;
        self.values.push(u32::to_napi_value(env, item)?);
        self.values
            .push(u32::to_napi_value(env, path.len() as u32)?);
        for step in path {
            self.values.push(match *step {
                Step::Key(name) => latin1(env, name)?,
                Step::Index(i) => u32::to_napi_value(env, i)?,
            });
        }
        // Cut strings are long (see MIN_CUT_BYTES): as external strings V8 keeps pointing at
        // their decoded buffer instead of copying it onto its heap, where a tool output of tens
        // of kilobytes would also be copied again by every young-generation collection.
        let text = if plain {
            JsText::Latin1(escaped.to_vec())
        } else {
            json::decode_escaped_bytes(escaped)
        };
        self.values.push(external_js_text(env, text)?);
        Ok(())
    }
}

impl materialize::CutSink for JsCuts {
    fn cut(
        &mut self,
        item: u32,
        path: &[pi_session_core::json::Step<'_>],
        escaped: &[u8],
        plain: bool,
    ) {
        if self.failed.is_none() {
            // SAFETY: `env` is the environment of the call this sink was made in, still running.
            if let Err(e) = unsafe { self.push_cut(item, path, escaped, plain) } {
                self.failed = Some(e);
            }
        }
    }
}

unsafe fn latin1(env: sys::napi_env, bytes: &[u8]) -> Result<sys::napi_value> {
    let mut v = std::ptr::null_mut();
    check_status!(sys::napi_create_string_latin1(
        env,
        bytes.as_ptr().cast(),
        bytes.len() as isize,
        &mut v
    ))?;
    Ok(v)
}

/// Texts at least this long become external strings.
const EXTERNAL_TEXT_MIN: usize = 1024;

/// A JS string of `t`'s code units that, when long, keeps pointing at `t`'s buffer instead of
/// copying it onto the V8 heap (an external string; the finalizer frees the buffer when the string
/// is collected). A warm listing hands over ~40 MB of session text: copied, that was most of the
/// JS thread's work (allocation, page faults, then the young-generation GC copying it again).
unsafe fn external_js_text(env: sys::napi_env, t: JsText) -> Result<sys::napi_value> {
    let units = match &t {
        JsText::Latin1(b) => b.len(),
        JsText::Utf16(u) => u.len(),
    };
    if units < EXTERNAL_TEXT_MIN || !has_external_strings(env) {
        return js_text(env, &t);
    }
    let hint = Box::into_raw(Box::new(t));
    let mut v = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: `hint` owns the buffer until the finalizer runs (at once if V8 copied instead).
    let status = match &*hint {
        JsText::Latin1(b) => sys::node_api_create_external_string_latin1(
            env,
            b.as_ptr().cast_mut().cast(),
            b.len() as isize,
            Some(drop_external_text),
            hint.cast(),
            &mut v,
            &mut copied,
        ),
        JsText::Utf16(u) => sys::node_api_create_external_string_utf16(
            env,
            u.as_ptr(),
            u.len() as isize,
            Some(drop_external_text),
            hint.cast(),
            &mut v,
            &mut copied,
        ),
    };
    if status != sys::Status::napi_ok {
        // No finalizer runs for a string that was not made.
        drop(Box::from_raw(hint));
    }
    check_status!(status)?;
    Ok(v)
}

/// `node_api_create_external_string_*` exist from Node 20.4 on (and must not be called before:
/// on Linux and macOS a missing symbol would end the process).
unsafe fn has_external_strings(env: sys::napi_env) -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        let mut v: *const sys::napi_node_version = std::ptr::null();
        sys::napi_get_node_version(env, &mut v) == sys::Status::napi_ok
            && !v.is_null()
            && ((*v).major, (*v).minor) >= (20, 4)
    })
}

unsafe extern "C" fn drop_external_text(
    _env: sys::node_api_basic_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    drop(Box::from_raw(hint.cast::<JsText>()));
}

/// A JS string of `text`'s code units (a plain copy on the JS side, unlike UTF-8).
unsafe fn js_text(env: sys::napi_env, t: &JsText) -> Result<sys::napi_value> {
    match t {
        JsText::Latin1(b) => latin1(env, b),
        JsText::Utf16(u) => {
            let mut v = std::ptr::null_mut();
            check_status!(sys::napi_create_string_utf16(
                env,
                u.as_ptr(),
                u.len() as isize,
                &mut v
            ))?;
            Ok(v)
        }
    }
}

/// Summaries on their way to JS: texts already decoded into JS code units (off the JS thread),
/// so each string is a copy, or for long texts no copy at all (see [`external_js_text`]).
pub struct SummaryBatch(Vec<Option<Ready>>);

impl TypeName for SummaryBatch {
    fn type_name() -> &'static str {
        "Array"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for SummaryBatch {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let mut arr = std::ptr::null_mut();
        check_status!(sys::napi_create_array_with_length(
            env,
            val.0.len() * 3,
            &mut arr
        ))?;
        let text = |t: JsText| external_js_text(env, t);
        let mut null = std::ptr::null_mut();
        check_status!(sys::napi_get_null(env, &mut null))?;
        for (i, item) in val.0.into_iter().enumerate() {
            let i = (i * 3) as u32;
            let (m, f, a) = match item {
                None => (null, null, null),
                Some(Ready {
                    meta,
                    first_message: first,
                    all_text: all,
                }) => {
                    let mut m = std::ptr::null_mut();
                    check_status!(sys::napi_create_string_utf8(
                        env,
                        meta.as_ptr().cast(),
                        meta.len() as isize,
                        &mut m
                    ))?;
                    (m, text(first)?, text(all)?)
                }
            };
            check_status!(sys::napi_set_element(env, arr, i, m))?;
            check_status!(sys::napi_set_element(env, arr, i + 1, f))?;
            check_status!(sys::napi_set_element(env, arr, i + 2, a))?;
        }
        Ok(arr)
    }
}

/// Remove the lease files this process holds (called when the process exits).
#[napi(catch_unwind)]
pub fn release_all_locks() {
    pi_session_core::lock::release_all();
}

#[napi(catch_unwind)]
pub fn is_valid_session_id(id: String) -> bool {
    pi_session_core::ids::is_valid_session_id(&id)
}

/// A writer that waits when the other end is not ready. Node makes a piped stdout non-blocking,
/// so `pi-sessions list --all | less` met `EAGAIN` as soon as the pipe was full; an error from
/// `write` means nothing was taken, so trying again later is safe.
struct Patient<W>(W);

impl<W: std::io::Write> Patient<W> {
    fn patiently<T>(
        &mut self,
        mut op: impl FnMut(&mut W) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        loop {
            match op(&mut self.0) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(1))
                }
                r => return r,
            }
        }
    }
}

impl<W: std::io::Write> std::io::Write for Patient<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.patiently(|w| w.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.patiently(|w| w.flush())
    }
}

/// The `pi-sessions` command line (`bin/pi-sessions.js`): runs one command with the real terminal,
/// environment (`NO_COLOR`, `PI_CODING_AGENT_DIR`, `COLUMNS`) and stdio; returns the exit code.
#[napi(catch_unwind)]
pub fn run_cli(args: Vec<String>) -> i32 {
    use std::io::Write;
    let env = pi_sessions_cli::CliEnv::from_process();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut out = Patient(stdout.lock());
    let mut err = Patient(stderr.lock());
    let code = pi_sessions_cli::run(&args, &env, &mut out, &mut err);
    let _ = out.flush();
    let _ = err.flush();
    code
}
