//! Many lines for JS at once, prepared on several threads: for each line, the work of
//! [`Session::line_for_js`] (reading it from the file, finding and decoding its long strings,
//! adding it to the text), for a run of batches split between the calling thread and helpers, with
//! every value owned so that the binding makes the JS values afterwards, on its own thread.
//!
//! Materializing every entry of a big session is mostly this work (on a 134 MB session, 130 ms
//! of native time against 20 ms of `JSON.parse`), and pi asks for every entry right after a
//! resume; batches are independent, so a second core halves it.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{push_any_line, CutSink};
use crate::error::{Error, Result};
use crate::json::{self, JsText, Step};
use crate::session::Session;

/// One batch of lines ready for JS: how many of the positions asked for it covers, its JSON text
/// (see [`json::json_text_units`]) and the strings cut out of it, in order.
#[derive(Debug)]
pub struct PreparedBatch {
    pub count: usize,
    pub text: JsText,
    pub cuts: Vec<PreparedCut>,
}

/// A string cut out of a batch: the item (line) of the batch it belongs to, the path to it in
/// that item, and its value.
#[derive(Debug)]
pub struct PreparedCut {
    pub item: u32,
    pub path: Vec<OwnedStep>,
    pub value: CutValue,
}

/// A path step that owns its member name (see [`Step`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnedStep {
    Key(Box<[u8]>),
    Index(u32),
}

/// A cut string's value: decoded code units, or Latin-1 bytes inside a line's shared buffer.
#[derive(Debug)]
pub enum CutValue {
    Text(JsText),
    Shared(Arc<Vec<u8>>, Range<usize>),
}

/// A sink that keeps every cut, decoded (or shared) on the thread preparing the batch.
#[derive(Default)]
struct Collect(Vec<PreparedCut>);

fn owned_path(path: &[Step<'_>]) -> Vec<OwnedStep> {
    path.iter()
        .map(|s| match *s {
            Step::Key(k) => OwnedStep::Key(k.into()),
            Step::Index(i) => OwnedStep::Index(i),
        })
        .collect()
}

impl CutSink for Collect {
    fn cut(&mut self, item: u32, path: &[Step<'_>], escaped: &[u8], plain: bool) {
        let value = if plain {
            JsText::Latin1(escaped.to_vec())
        } else {
            json::decode_escaped_bytes(escaped)
        };
        self.0.push(PreparedCut {
            item,
            path: owned_path(path),
            value: CutValue::Text(value),
        });
    }

    fn cut_shared(
        &mut self,
        item: u32,
        path: &[Step<'_>],
        line: &Arc<Vec<u8>>,
        range: Range<usize>,
        plain: bool,
    ) {
        if !plain {
            return self.cut(item, path, &line[range], plain);
        }
        self.0.push(PreparedCut {
            item,
            path: owned_path(path),
            value: CutValue::Shared(Arc::clone(line), range),
        });
    }
}

impl Session {
    /// The lines of `positions` for JS, as a run of batches: `positions` is cut into batches of
    /// about `budget` bytes each (a batch ends after the line that reaches it), the batches covering
    /// at most about `max_total` bytes in all, and they are prepared on up to `threads` threads
    /// (the calling one included). Returns the batches in order, together covering a prefix of
    /// `positions`; an error only when the first batch fails (the ones before a failing batch
    /// are returned, and asking for the rest meets the error again).
    pub fn prepare_batches(
        &self,
        positions: &[u32],
        budget: usize,
        max_total: usize,
        threads: usize,
    ) -> Result<Vec<PreparedBatch>> {
        let mut out = Vec::new();
        self.for_each_batch(positions, budget, max_total, threads, |b| {
            out.push(b);
            true
        })?;
        Ok(out)
    }

    /// [`Session::prepare_batches`] that hands each batch to `consume` on the calling thread, in
    /// order, as soon as it is ready, while helper threads (`threads` in all, the calling one
    /// included) prepare the next ones: the caller's work on a batch (for JS, making its values
    /// and `JSON.parse`) overlaps the preparing of the others. Stops when `consume` returns
    /// false. Returns how many positions the batches given to `consume` covered; an error only
    /// when the first batch fails (see [`Session::prepare_batches`]).
    pub fn for_each_batch(
        &self,
        positions: &[u32],
        budget: usize,
        max_total: usize,
        threads: usize,
        mut consume: impl FnMut(PreparedBatch) -> bool,
    ) -> Result<usize> {
        let spans = self.batch_spans(positions, budget, max_total)?;
        let prepare = |k: usize| self.prepare_batch(&positions[spans[k].clone()]);
        let next = AtomicUsize::new(0);
        let claim = || {
            let k = next.fetch_add(1, Ordering::Relaxed);
            (k < spans.len()).then_some(k)
        };
        let helpers = threads.min(spans.len()).saturating_sub(1);
        let mut covered = 0;
        // Hands batch k (or its error) over; false: stop. A failing batch after the first ends
        // the run without an error (the caller asks for the rest and meets it then).
        let mut deliver = |k: usize, batch: Result<PreparedBatch>| match batch {
            Ok(b) => {
                covered += b.count;
                Ok(consume(b))
            }
            Err(e) if k == 0 => Err(e),
            Err(_) => Ok(false),
        };
        if helpers == 0 {
            // One batch (a single line) or one thread: no channel, no thread scope.
            for k in 0..spans.len() {
                if !deliver(k, prepare(k))? {
                    break;
                }
            }
            return Ok(covered);
        }
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<PreparedBatch>)>();
        std::thread::scope(|scope| {
            for _ in 0..helpers {
                let tx = tx.clone();
                scope.spawn(move || {
                    while let Some(k) = claim() {
                        // The caller stopped: nobody wants the rest.
                        if tx.send((k, prepare(k))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            // Owned here, so that leaving this closure (at the end, or early) drops it before the
            // scope waits for the helpers: their next send fails and they stop.
            let rx = rx;
            let mut ready: Vec<Option<Result<PreparedBatch>>> =
                (0..spans.len()).map(|_| None).collect();
            for k in 0..spans.len() {
                // Batch k, from a helper or prepared here while the helpers are busy.
                let batch = loop {
                    if let Some(r) = ready[k].take() {
                        break r;
                    }
                    if let Some(j) = claim() {
                        ready[j] = Some(prepare(j));
                        continue;
                    }
                    match rx.recv() {
                        Ok((j, r)) => ready[j] = Some(r),
                        // Every helper ended without delivering it (one panicked).
                        Err(_) => {
                            return Err(Error::internal(format!(
                                "batch {k} of entry lines was never prepared"
                            )))
                        }
                    }
                };
                if !deliver(k, batch)? {
                    break;
                }
            }
            Ok(())
        })?;
        Ok(covered)
    }

    /// Where `positions` is cut into batches (see [`Session::prepare_batches`]); each position is
    /// checked to be in range.
    fn batch_spans(
        &self,
        positions: &[u32],
        budget: usize,
        max_total: usize,
    ) -> Result<Vec<Range<usize>>> {
        let mut spans = Vec::new();
        let (mut start, mut size, mut total) = (0, 0usize, 0usize);
        for (i, &p) in positions.iter().enumerate() {
            size += self.line_len(self.checked(p)?) + 1;
            if size >= budget {
                spans.push(start..i + 1);
                total += size;
                (start, size) = (i + 1, 0);
                if total >= max_total {
                    return Ok(spans);
                }
            }
        }
        if start < positions.len() {
            spans.push(start..positions.len());
        }
        Ok(spans)
    }

    /// One batch: every position of `positions` (already checked).
    fn prepare_batch(&self, positions: &[u32]) -> Result<PreparedBatch> {
        let mut cuts = Collect::default();
        let mut out = Vec::with_capacity(2 + positions.len() * 64);
        out.push(b'[');
        for (i, &p) in positions.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_any_line(self.full_line(p)?, i as u32, &mut out, &mut cuts);
        }
        out.push(b']');
        Ok(PreparedBatch {
            count: positions.len(),
            text: json::json_text_units(out),
            cuts: cuts.0,
        })
    }
}
