//! Opening a manager's state: a new session, a session file, preloaded entries (serialized,
//! or records taken from another manager).

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{paths, places, timefmt, Error as CoreError, Session};

use super::{pos_or_none, NativeSession};
use crate::error::ForJs;
use crate::{config, reclaim};

/// What the shell keeps of a session just loaded from a file (`open`, `setSessionFile`), so that
/// it asks nothing more before the caller's first call.
#[napi(object)]
pub struct LoadInfo {
    /// The manager's cwd, resolved: the caller's override, the header's, or the process's.
    pub cwd: String,
    /// The manager's session directory (see the core's `places::open_place`).
    pub session_dir: String,
    /// The file's records became the state (false: a fresh session was started for the path).
    pub loaded: bool,
    pub record_count: u32,
    /// The leaf as a key (see `leafKey`) and its position (`NONE`: none).
    pub leaf_key: Option<String>,
    pub leaf_pos: u32,
    /// The file's size as it was loaded (0: none was).
    pub bytes: f64,
    /// How many bytes of JSON the entries' skeletons are (what making every entry object parses:
    /// see the core's `lazy` module); idle parsing is for sessions where that is small.
    pub skeleton_bytes: f64,
    /// Whether the manager holds (or wants) the file's lease: it is then never parsed when idle.
    pub exclusive: bool,
    /// The tracking id (see `track`; 0: not tracked).
    pub track_id: f64,
}

#[napi(object)]
pub struct NewSessionInfo {
    /// The header line the session starts with (JS parses it into the header object).
    pub header: String,
    pub file: Option<String>,
}

#[napi]
impl NativeSession {
    /// `newSession(options)`; `now_ms` is JS's `Date.now()`, the clock of the header's time and
    /// id (the core's `timefmt::with_host_now`).
    #[napi(catch_unwind)]
    pub fn new_session(
        &mut self,
        env: Env,
        custom_id: Option<String>,
        parent_session_json: Option<String>,
        now_ms: Option<f64>,
    ) -> Result<NewSessionInfo> {
        let n = timefmt::with_host_now(now_ms, || {
            self.inner
                .new_session(custom_id.as_deref(), parent_session_json.as_deref())
        })
        .for_js(&env)?;
        self.account(&env);
        Ok(NewSessionInfo {
            header: n.header,
            file: n.file.map(|f| f.to_string_lossy().into_owned()),
        })
    }

    /// `SessionManager.open` in one call: a manager for `file` (resolved here) in `session_dir`
    /// (else the file's directory: the core's `places::open_place`), of cwd `cwd_override` or else
    /// the file's header cwd (see the core's `Session::open`), tracked, with the file loaded.
    /// `now_ms`: JS's `Date.now()`, the clock of the header a missing or empty file starts with.
    #[napi(
        catch_unwind,
        ts_return_type = "{ core: NativeSession; info: LoadInfo }"
    )]
    pub fn open_file(
        env: &Env,
        file: String,
        session_dir: Option<String>,
        cwd_override: Option<String>,
        now_ms: Option<f64>,
    ) -> Result<Object<'_>> {
        let config = config::for_new_manager(env);
        let (file, session_dir) = places::open_place(&file, session_dir.as_deref());
        let opened = timefmt::with_host_now(now_ms, || {
            Session::open(
                PathBuf::from(file),
                session_dir,
                cwd_override.as_deref(),
                config,
            )
        })
        .for_js(env)?;
        let mut core = NativeSession::of(opened.session).into_instance(env)?;
        let object = core.value;
        core.track_id = reclaim::track(env, object, &mut core);
        core.account(env);
        let info = core.load_info(&opened.report);
        let mut out = Object::new(env)?;
        out.set("core", core)?;
        out.set("info", info)?;
        Ok(out)
    }

    /// Loads `path` (resolved here); the answer says whether the file was loaded, or a fresh
    /// session was started for it (the file is missing, or was empty and got a header; `now_ms`,
    /// JS's `Date.now()`, is the clock of that header).
    #[napi(catch_unwind)]
    pub fn set_session_file(
        &mut self,
        env: Env,
        path: String,
        now_ms: Option<f64>,
    ) -> Result<LoadInfo> {
        let result = timefmt::with_host_now(now_ms, || {
            self.inner
                .set_session_file(PathBuf::from(paths::resolve(&path)))
        });
        self.account(&env);
        let report = result.for_js(&env)?;
        Ok(self.load_info(&report))
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

impl NativeSession {
    fn load_info(&self, report: &pi_session_core::session::LoadReport) -> LoadInfo {
        let s = &self.inner;
        LoadInfo {
            cwd: s.cwd().to_owned(),
            session_dir: s.session_dir().to_owned(),
            loaded: report.loaded,
            record_count: s.record_count() as u32,
            leaf_key: s.leaf_key().map(|k| k.to_owned()),
            leaf_pos: pos_or_none(s.leaf_pos()),
            bytes: report.bytes as f64,
            skeleton_bytes: s.skeleton_bytes() as f64,
            exclusive: s.is_exclusive(),
            track_id: self.track_id as f64,
        }
    }
}
