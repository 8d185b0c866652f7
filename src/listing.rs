//! `list`/`listAll`: candidate files read off the JS thread, and a [`SummaryRun`] that summarizes
//! them on the core's threads and hands the results over in batches.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::json::JsText;
use pi_session_core::listing::job::{default_threads, SummaryJob};
use pi_session_core::{listing, places};

use crate::strings::external_string;
use crate::task::OffThread;
use crate::wire;

#[napi(object)]
pub struct Candidate {
    /// Subdirectory name under the root.
    pub dir: String,
    /// File name in that subdirectory.
    pub file: String,
    pub mtime_ms: Option<f64>,
}

/// `listAll()` candidates under a sessions root, newest first (read and stat-ed off the JS thread);
/// `sorted`: `readdirSync` sorts names in the calling runtime (see `findById`).
#[napi(catch_unwind, ts_return_type = "Promise<Candidate[]>")]
pub fn list_all_candidates(root: String, sorted: bool) -> AsyncTask<OffThread<Vec<Candidate>>> {
    let order = crate::store::name_order(sorted);
    OffThread::task(move || {
        Ok(listing::list_all_candidates(Path::new(&root), order)
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
            .map_err(|e| pi_session_core::Error::io(&e, "scandir", Path::new(&dir)))
    })
}

/// One `list`/`listAll` run: the core's [`SummaryJob`] summarizes the files on its own threads
/// (through the listing cache when a cache file is given), and `next()` hands finished results
/// over in order.
#[napi]
pub struct SummaryRun {
    job: Arc<SummaryJob>,
    /// `list` of a shared directory: the resolved cwd whose sessions it keeps to, and what was
    /// decided for each header cwd met so far (resolving one costs microseconds).
    keep_cwd: Option<Arc<KeepCwd>>,
}

/// Which summaries a `list` of a shared directory keeps: those of one cwd.
struct KeepCwd {
    resolved: String,
    decided: Mutex<HashMap<String, bool>>,
}

impl KeepCwd {
    fn keeps(&self, header_cwd: &str) -> bool {
        let mut decided = self.decided.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&keep) = decided.get(header_cwd) {
            return keep;
        }
        let keep = places::cwd_matches(header_cwd, &self.resolved);
        decided.insert(header_cwd.to_owned(), keep);
        keep
    }
}

#[napi]
impl SummaryRun {
    /// Start summarizing `paths` (with known mtimes, ms, where given); returns at once. With
    /// `keep_cwd` (a resolved cwd), the summaries of sessions of other cwds say so (see
    /// `wire::summary_info`).
    #[napi(factory, catch_unwind)]
    pub fn start(
        paths: Vec<String>,
        mtimes: Option<Vec<Option<f64>>>,
        cache_file: Option<String>,
        keep_cwd: Option<String>,
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
            job: Arc::new(SummaryJob::start(
                files,
                cache_file.map(PathBuf::from),
                default_threads(),
            )),
            keep_cwd: keep_cwd.map(|resolved| {
                Arc::new(KeepCwd {
                    resolved,
                    decided: Mutex::default(),
                })
            }),
        }
    }

    /// The next finished results, in order, as a flat array `[info, first, all, ...]` (three
    /// items per file; `info` is the JSON text of `wire::summary_info`, null for a skipped
    /// file). Empty when the run is over.
    #[napi(catch_unwind, ts_return_type = "Promise<Array<string | null>>")]
    pub fn next(&self, max: u32) -> AsyncTask<OffThread<SummaryBatch>> {
        let job = self.job.clone();
        let keep = self.keep_cwd.clone();
        OffThread::task(move || {
            let elsewhere = |cwd: &str| keep.as_ref().is_some_and(|k| !k.keeps(cwd));
            Ok(SummaryBatch(
                job.next(max as usize)
                    .into_iter()
                    .map(|r| {
                        r.map(|r| {
                            let away = elsewhere(&r.info.cwd.to_string_lossy());
                            (
                                wire::summary_info(&r.info, away),
                                r.first_message,
                                r.all_text,
                            )
                        })
                    })
                    .collect(),
            ))
        })
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

/// How many array slots each session of a [`SummaryBatch`] takes: its info JSON, its first
/// message and its whole message text (three nulls for a file that is not a session). The one
/// decoder is `eachSummary` in lib/wire.js.
#[napi_derive::napi]
pub const SUMMARY_FIELDS: u32 = 3;

/// Summaries on their way to JS, made off the JS thread: the fields' JSON text, and the texts
/// decoded into JS code units, so each string is a copy, or for long texts no copy at all (see
/// [`external_string`]).
pub struct SummaryBatch(Vec<Option<(String, JsText, JsText)>>);

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
        // SAFETY: napi-rs converts a resolved value with the environment of the promise's JS
        // thread, during its completion callback; every value used is made here, in that
        // callback's handle scope. The same holds for each block below.
        check_status!(unsafe {
            sys::napi_create_array_with_length(env, val.0.len() * SUMMARY_FIELDS as usize, &mut arr)
        })?;
        // SAFETY: as above.
        let text = |t: JsText| unsafe { external_string(env, t) };
        let mut null = std::ptr::null_mut();
        // SAFETY: as above.
        check_status!(unsafe { sys::napi_get_null(env, &mut null) })?;
        for (i, item) in val.0.into_iter().enumerate() {
            let i = i as u32 * SUMMARY_FIELDS;
            let (m, f, a) = match item {
                None => (null, null, null),
                Some((meta, first, all)) => {
                    let mut m = std::ptr::null_mut();
                    // SAFETY: as above; pointer and length describe `meta`, which V8 copies.
                    check_status!(unsafe {
                        sys::napi_create_string_utf8(
                            env,
                            meta.as_ptr().cast(),
                            meta.len() as isize,
                            &mut m,
                        )
                    })?;
                    (m, text(first)?, text(all)?)
                }
            };
            for (k, v) in [m, f, a].into_iter().enumerate() {
                // SAFETY: as above.
                check_status!(unsafe { sys::napi_set_element(env, arr, i + k as u32, v) })?;
            }
        }
        Ok(arr)
    }
}
