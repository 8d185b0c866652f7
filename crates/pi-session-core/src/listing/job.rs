//! A listing run in the background: worker threads summarize files (through the listing cache
//! when there is one) in input order, a bounded window ahead of the consumer, who takes finished
//! results in order as soon as they are ready. Big files no longer stall a whole chunk: while one
//! worker reads a 200 MB session the others keep going, and the consumer is never more than the
//! window behind.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use crate::json::{decode_escaped, decode_escaped_bytes, JsText};
use crate::listing::cache::{Cached, Hit, ListCache, Stamp};
use crate::listing::{self, FileSummary, SummaryInfo};

/// How many files the workers may run ahead of the consumer. Results wait here until taken, so
/// this bounds the memory of a consumer that is slower than the disk.
const WINDOW: usize = 256;

/// A summary ready to become JS values: the texts are decoded into JS code units by the worker,
/// so the JS thread only copies them (or hands the buffers over).
#[derive(Debug, Clone, PartialEq)]
pub struct Ready {
    pub info: SummaryInfo,
    pub first_message: JsText,
    pub all_text: JsText,
}

impl Ready {
    fn of(s: &FileSummary) -> Ready {
        Ready {
            info: s.info.clone(),
            first_message: decode_escaped(&s.first_message),
            all_text: decode_escaped(&s.all_text),
        }
    }
}

struct State {
    /// `None` until the file is done; then its result (`Some(None)`: skipped file).
    slots: Vec<Option<Option<Ready>>>,
    /// Results before this index have been handed out.
    taken: usize,
    workers_left: usize,
}

struct Shared {
    files: Vec<(PathBuf, Option<f64>)>,
    cache_file: Option<PathBuf>,
    /// Loaded by the first worker that needs it (the others wait): never on the caller's thread.
    cache: OnceLock<Option<Mutex<ListCache>>>,
    next: AtomicUsize,
    cancelled: AtomicBool,
    state: Mutex<State>,
    /// Signalled when a slot fills, the consumer takes results, or the run is cancelled.
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cache(&self) -> Option<&Mutex<ListCache>> {
        self.cache
            .get_or_init(|| {
                self.cache_file
                    .clone()
                    .map(|f| Mutex::new(ListCache::load(f)))
            })
            .as_ref()
    }

    fn summarize(&self, i: usize) -> Option<Ready> {
        let (path, mtime) = &self.files[i];
        let fresh = |mtime| listing::summarize_file_parts(path, mtime).map(Arc::new);
        let Some(cache) = self.cache() else {
            return fresh(*mtime).as_deref().map(Ready::of);
        };
        // A file that cannot be stat-ed is skipped, as the reference's summary would be.
        let Ok(meta) = std::fs::metadata(path) else {
            return None;
        };
        let stamp = Stamp::of(&meta);
        let key = path.to_string_lossy();
        let hit = lock_cache(cache).get(&key, &stamp);
        match hit {
            Some(Hit::Fresh(c)) => return c.as_deref().map(Ready::of),
            Some(Hit::Stored(blocks, at)) => {
                let record = Hit::read(&blocks, &at, &key, &stamp);
                match record.as_deref().map(Hit::line) {
                    Ok(Ok(None)) => return None,
                    Ok(Ok(Some((info, first, all)))) => {
                        return Some(Ready {
                            info,
                            first_message: decode_escaped_bytes(first),
                            all_text: decode_escaped_bytes(all),
                        })
                    }
                    _ => {} // damaged: read the session file again
                }
            }
            None => {}
        }
        let summary: Cached = fresh(meta.modified().ok().map(listing::mtime_ms));
        let ready = summary.as_deref().map(Ready::of);
        lock_cache(cache).put(&key, stamp, summary);
        ready
    }

    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.files.len() {
                break;
            }
            {
                let mut st = self.lock();
                while i >= st.taken + WINDOW && !self.cancelled.load(Ordering::Relaxed) {
                    st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
                }
            }
            if self.cancelled.load(Ordering::Relaxed) {
                break;
            }
            let r = self.summarize(i);
            self.lock().slots[i] = Some(r);
            self.changed.notify_all();
        }
        self.lock().workers_left -= 1;
        self.changed.notify_all();
    }
}

/// Workers run at a lower priority than the thread that started them: when the JS thread wakes
/// up it gets a core at once instead of waiting out the workers' time slices (a listing must not
/// stall the event loop). Linux applies nice values per thread; elsewhere this does nothing.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on the calling thread's own id.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

fn lock_cache(c: &Mutex<ListCache>) -> MutexGuard<'_, ListCache> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}

/// Workers for a listing: one per core, at most 8 (reading and parsing stop scaling there).
pub fn default_threads() -> usize {
    crate::cores::available().unwrap_or(2).min(8)
}

/// A running listing; dropping it cancels the workers (which finish their current file on their
/// own; nobody waits for them, so a drop on the JS thread never blocks).
pub struct SummaryJob {
    shared: Arc<Shared>,
}

impl SummaryJob {
    /// Start summarizing `files` on `threads` workers; `cache_file` names the listing cache to
    /// read and update (`None`: read every file). Returns at once: the cache is loaded by the
    /// first worker.
    pub fn start(
        files: Vec<(PathBuf, Option<f64>)>,
        cache_file: Option<PathBuf>,
        threads: usize,
    ) -> SummaryJob {
        let n = files.len();
        let threads = threads.clamp(1, n.max(1));
        let shared = Arc::new(Shared {
            files,
            cache_file,
            cache: OnceLock::new(),
            next: AtomicUsize::new(0),
            cancelled: AtomicBool::new(false),
            state: Mutex::new(State {
                slots: vec![None; n],
                taken: 0,
                workers_left: threads,
            }),
            changed: Condvar::new(),
        });
        for _ in 0..threads {
            let s = shared.clone();
            std::thread::spawn(move || {
                lower_priority();
                s.work()
            });
        }
        SummaryJob { shared }
    }

    /// Take up to `max` finished results, in input order, waiting for the next one. An empty
    /// result means the run is over (all taken, or cancelled).
    pub fn next(&self, max: usize) -> Vec<Option<Ready>> {
        let s = &self.shared;
        let mut st = s.lock();
        loop {
            if s.cancelled.load(Ordering::Relaxed) {
                return Vec::new();
            }
            let ready = st.slots[st.taken..]
                .iter()
                .take(max.max(1))
                .take_while(|r| r.is_some())
                .count();
            if ready > 0 {
                let start = st.taken;
                let out: Vec<Option<Ready>> = st.slots[start..start + ready]
                    .iter_mut()
                    .map(|r| r.take().flatten())
                    .collect();
                st.taken += ready;
                drop(st);
                s.changed.notify_all();
                return out;
            }
            if st.taken == st.slots.len() {
                return Vec::new();
            }
            st = s.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Wait for the workers to stop, then (unless cancelled) write the cache back. Called by the
    /// consumer after the last result, so that nothing is written once the listing has returned:
    /// a caller may delete the agent dir right after. Returns whether a cache was saved.
    pub fn finish(&self) -> bool {
        let s = &self.shared;
        let mut st = s.lock();
        while st.workers_left > 0 {
            st = s.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        drop(st);
        if s.cancelled.load(Ordering::Relaxed) {
            return false;
        }
        match s.cache.get() {
            Some(Some(cache)) => lock_cache(cache).save().is_ok(),
            _ => false,
        }
    }

    /// Stop the workers after the files they are on; later `next` calls return nothing.
    pub fn cancel(&self) {
        self.shared.cancelled.store(true, Ordering::Relaxed);
        let _guard = self.shared.lock();
        self.shared.changed.notify_all();
    }

    /// How many files this run covers.
    pub fn len(&self) -> usize {
        self.shared.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shared.files.is_empty()
    }
}

impl Drop for SummaryJob {
    fn drop(&mut self) {
        self.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_sessions(dir: &std::path::Path, n: usize) -> Vec<(PathBuf, Option<f64>)> {
        std::fs::create_dir_all(dir).unwrap();
        (0..n)
            .map(|i| {
                let p = dir.join(format!("s{i:04}.jsonl"));
                let body = if i % 7 == 3 {
                    "not a session\n".to_owned()
                } else {
                    format!(
                        "{{\"type\":\"session\",\"id\":\"s{i}\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}}\n\
                         {{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{{\"role\":\"user\",\"content\":\"hi {i}\\n\u{e9}\"}}}}\n"
                    )
                };
                std::fs::write(&p, body).unwrap();
                (p, None)
            })
            .collect()
    }

    fn expected(files: &[(PathBuf, Option<f64>)]) -> Vec<Option<Ready>> {
        files
            .iter()
            .map(|(p, m)| listing::summarize_file_parts(p, *m).as_ref().map(Ready::of))
            .collect()
    }

    fn drain(job: &SummaryJob, max: usize) -> Vec<Option<Ready>> {
        let mut all = Vec::new();
        loop {
            let batch = job.next(max);
            if batch.is_empty() {
                return all;
            }
            assert!(batch.len() <= max.max(1));
            all.extend(batch);
        }
    }

    #[test]
    fn results_come_in_input_order_with_and_without_the_cache() {
        let dir = std::env::temp_dir().join(format!("pi-summary-job-{}", std::process::id()));
        let files = write_sessions(&dir.join("s"), WINDOW + 45);
        let want = expected(&files);
        assert!(want.iter().any(Option::is_none) && want.iter().any(Option::is_some));
        let cache = dir.join("list-cache");
        assert_eq!(drain(&SummaryJob::start(files.clone(), None, 3), 7), want);
        // Cold cache, then warm (served from the loaded file's lines).
        let job = SummaryJob::start(files.clone(), Some(cache.clone()), 2);
        assert_eq!(drain(&job, 50), want);
        assert!(!cache.exists(), "nothing is written before finish()");
        assert!(job.finish());
        assert!(cache.exists(), "saved by finish()");
        assert_eq!(
            drain(
                &SummaryJob::start(files.clone(), Some(cache.clone()), 2),
                50
            ),
            want
        );
        assert!(
            cache.exists(),
            "saved before the end of the run is reported"
        );
        assert_eq!(
            drain(
                &SummaryJob::start(files.clone(), Some(cache.clone()), 2),
                1000
            ),
            want
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cancelled_run_ends_and_an_empty_run_is_over_at_once() {
        let dir = std::env::temp_dir().join(format!("pi-summary-job-c-{}", std::process::id()));
        let files = write_sessions(&dir, 40);
        let job = SummaryJob::start(files, None, 2);
        assert_eq!(job.next(1).len(), 1);
        job.cancel();
        assert!(job.next(10).is_empty());
        assert!(!job.finish(), "a cancelled run saves nothing");
        assert!(SummaryJob::start(Vec::new(), None, 2).next(5).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
