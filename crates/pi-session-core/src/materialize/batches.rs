//! Many lines for JS at once, prepared on several threads: for each line, the work of
//! [`Session::line_for_js`] (reading it from the file, finding and decoding its long strings,
//! adding it to the text), for a run of batches split between the calling thread and helpers, with
//! every value owned so that the binding makes the JS values afterwards, on its own thread.
//!
//! Materializing every entry of a big session is mostly this work (on a 134 MB session, 130 ms
//! of native time against 20 ms of `JSON.parse`), and pi asks for every entry right after a
//! resume; batches are independent, so a second core halves it.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::columns::Columns;
use super::{push_any_line, CutSink, Step, WalkScratch, MIN_CUT_BYTES};
use crate::error::{Error, Result};
use crate::fxhash::FxHashMap;
use crate::json::{self, JsText};
use crate::session::Session;

/// The first batch of a run is `budget >> RAMP` bytes, each next one twice the one before until
/// they are `budget`: the caller waits for the first batch alone (the helpers prepare the next
/// ones while it takes it), so a small one lets its work start at once.
const RAMP: usize = 4;

/// One batch of lines ready for JS: how many of the positions asked for it covers, its JSON text
/// (see [`json::json_text_units`]), and the strings cut out of it, described by `plan` (see
/// [`PreparedBatch::plan`]): the member names of their paths, each once, the code units of the
/// short ones one after the other (`wide`), and the values of the others (`values`), in order.
/// Thousands of short cuts then cross to JS as a few values, not thousands (JS slices `wide`).
#[derive(Debug)]
pub struct PreparedBatch {
    pub count: usize,
    pub text: JsText,
    /// Cut after cut: the item (line) of the batch it goes into, the length of its path, each
    /// step as two numbers ([`STEP_NAME`] and an index into `names`, or [`STEP_INDEX`] and the
    /// array index), then where its value is: [`FROM_VALUES`] (the next of `values`), or
    /// [`FROM_WIDE`] and the start and end of its units in `wide`.
    pub plan: Vec<u32>,
    pub names: Vec<Box<[u8]>>,
    pub wide: Vec<u16>,
    pub values: Vec<CutValue>,
    /// Skeleton batches only (see [`Session::for_each_batch_as`]): for each item whose
    /// entry has lazy values, the item and its holder's shape id (see [`crate::lazy`]).
    pub holders: Vec<u32>,
    /// Column batches only (see [`Session::for_each_batch_as`]): the text is the batch's
    /// values (one item: the array of them), `sigs` the signatures of its items, and `refs` per
    /// item its signature's index in `sigs`, then its slots (indexes into the values). See
    /// `materialize::columns`.
    pub refs: Vec<u32>,
    pub sigs: Vec<Box<[u8]>>,
}

/// What a batch holds of each record: its whole line, or its skeleton (see [`crate::lazy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Whole,
    Skeleton,
    /// Skeletons as columns (see `materialize::columns`).
    Columns,
}

/// A path step of [`PreparedBatch::plan`] that is a member name.
pub const STEP_NAME: u32 = 0;
/// A path step of [`PreparedBatch::plan`] that is an array index.
pub const STEP_INDEX: u32 = 1;
/// A cut of [`PreparedBatch::plan`] whose value is the next of `values`.
pub const FROM_VALUES: u32 = 0;
/// A cut of [`PreparedBatch::plan`] whose value is a range of `wide`.
pub const FROM_WIDE: u32 = 1;

/// A value of [`PreparedBatch::values`]: decoded code units, or Latin-1 bytes inside a line's
/// shared buffer.
#[derive(Debug)]
pub enum CutValue {
    Text(JsText),
    Shared(Arc<Vec<u8>>, Range<usize>),
}

/// A path step that owns its member name (see [`Step`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnedStep {
    Key(Box<[u8]>),
    Index(u32),
}

/// One cut of a batch, read back from its plan (see [`PreparedBatch::cuts`]).
#[derive(Debug)]
pub struct PreparedCut<'a> {
    pub item: u32,
    pub path: Vec<OwnedStep>,
    pub value: CutRef<'a>,
}

/// Where a cut's value is: one of the batch's values, or units of its `wide`.
#[derive(Debug)]
pub enum CutRef<'a> {
    Value(&'a CutValue),
    Wide(&'a [u16]),
}

impl PreparedBatch {
    /// The cuts of the plan, in order (for tests and tools; the binding hands the plan as it is).
    pub fn cuts(&self) -> Vec<PreparedCut<'_>> {
        let p = &self.plan;
        let mut out = Vec::new();
        let (mut i, mut next) = (0, 0);
        while i < p.len() {
            let (item, depth) = (p[i], p[i + 1] as usize);
            i += 2;
            let path = (0..depth)
                .map(|d| match p[i + 2 * d] {
                    STEP_NAME => OwnedStep::Key(self.names[p[i + 2 * d + 1] as usize].clone()),
                    _ => OwnedStep::Index(p[i + 2 * d + 1]),
                })
                .collect();
            i += 2 * depth;
            let value = if p[i] == FROM_WIDE {
                i += 3;
                CutRef::Wide(&self.wide[p[i - 2] as usize..p[i - 1] as usize])
            } else {
                i += 1;
                next += 1;
                CutRef::Value(&self.values[next - 1])
            };
            out.push(PreparedCut { item, path, value });
        }
        out
    }
}

/// A sink that keeps every cut in the form of [`PreparedBatch`], decoded (or shared) on the
/// thread preparing the batch.
#[derive(Default)]
struct Collect {
    plan: Vec<u32>,
    names: Vec<Box<[u8]>>,
    name_at: FxHashMap<Box<[u8]>, u32>,
    wide: Vec<u16>,
    values: Vec<CutValue>,
}

impl Collect {
    fn push_path(&mut self, item: u32, path: &[Step<'_>]) {
        self.plan.extend([item, path.len() as u32]);
        for step in path {
            match *step {
                Step::Key(k) => {
                    let at = match self.name_at.get(k) {
                        Some(&at) => at,
                        None => {
                            let at = self.names.len() as u32;
                            self.names.push(k.into());
                            self.name_at.insert(k.into(), at);
                            at
                        }
                    };
                    self.plan.extend([STEP_NAME, at]);
                }
                Step::Index(i) => self.plan.extend([STEP_INDEX, i]),
            }
        }
    }

    fn push_value(&mut self, value: CutValue) {
        self.plan.push(FROM_VALUES);
        self.values.push(value);
    }
}

impl CutSink for Collect {
    fn cut(&mut self, item: u32, path: &[Step<'_>], escaped: &[u8], plain: bool) {
        self.push_path(item, path);
        if plain {
            self.push_value(CutValue::Text(JsText::Latin1(escaped.to_vec())));
        } else if escaped.len() < MIN_CUT_BYTES {
            // Cut for its characters above U+00FF (see MIN_WIDE_CUT_BYTES).
            let start = self.wide.len();
            json::decode_utf16_into(escaped, &mut self.wide);
            self.plan
                .extend([FROM_WIDE, start as u32, self.wide.len() as u32]);
        } else {
            self.push_value(CutValue::Text(json::decode_escaped_bytes(escaped)));
        }
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
        self.push_path(item, path);
        self.push_value(CutValue::Shared(Arc::clone(line), range));
    }
}

impl Session {
    /// The lines of `positions` for JS, as a run of batches: `positions` is cut into batches of
    /// about `budget` bytes each (a batch ends after the line that reaches it), the batches covering
    /// at most about `max_total` bytes in all, and they are prepared on up to `threads` threads
    /// (the calling one included). Returns the batches in order, together covering a prefix of
    /// `positions`; an error only when the first batch fails (the ones before a failing batch
    /// are returned, and asking for the rest, again and again, gives the lines before the failing
    /// one and then the error).
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
        consume: impl FnMut(PreparedBatch) -> bool,
    ) -> Result<usize> {
        self.for_each_batch_as(Form::Whole, positions, budget, max_total, threads, consume)
    }

    /// [`Session::for_each_batch`] with the records in `form`: [`Form::Skeleton`], each record's
    /// line with its lazy values replaced by `0`, and the batch's `holders` saying which items
    /// have them (see [`crate::lazy`]); [`Form::Columns`], the skeletons as columns (see
    /// `materialize::columns`): each batch's text holds the values, its `refs` and `sigs` what
    /// the items are built of, and its `holders` as for skeletons.
    pub fn for_each_batch_as(
        &self,
        form: Form,
        positions: &[u32],
        budget: usize,
        max_total: usize,
        threads: usize,
        mut consume: impl FnMut(PreparedBatch) -> bool,
    ) -> Result<usize> {
        let spans = self.batch_spans(form, positions, budget, max_total)?;
        let prepare = |k: usize| self.prepare_batch(form, &positions[spans[k].clone()]);
        let mut covered = 0;
        // Hands batch k (or its error) over; false: stop. A failing batch after the first ends
        // the run without an error (the caller asks for the rest and meets it then).
        in_order(spans.len(), threads, prepare, |k, batch| match batch {
            Ok(b) => {
                covered += b.count;
                Ok(consume(b))
            }
            Err(e) if k == 0 => Err(e),
            Err(_) => Ok(false),
        })?;
        Ok(covered)
    }

    /// Where `positions` is cut into batches (see [`Session::prepare_batches`]); each position is
    /// checked to be in range. The first batches are smaller (see [`RAMP`]).
    fn batch_spans(
        &self,
        form: Form,
        positions: &[u32],
        budget: usize,
        max_total: usize,
    ) -> Result<Vec<Range<usize>>> {
        let mut spans = Vec::new();
        let (mut start, mut size, mut total) = (0, 0usize, 0usize);
        for (i, &p) in positions.iter().enumerate() {
            let p = self.checked(p)?;
            size += match form {
                Form::Whole => self.line_len(p),
                Form::Skeleton | Form::Columns => self.skeleton_len(p),
            } + 1;
            if size >= budget >> RAMP.saturating_sub(spans.len()) {
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

    /// One batch: every position of `positions` (already checked), in `form`.
    fn prepare_batch(&self, form: Form, positions: &[u32]) -> Result<PreparedBatch> {
        let mut b = BatchBuilder::default();
        match form {
            Form::Whole => {
                for &p in positions {
                    b.push(self.full_line(p)?);
                }
            }
            Form::Skeleton | Form::Columns => {
                let mut scratch = Vec::new();
                let mut columns = (form == Form::Columns).then(Columns::default);
                for (i, &p) in positions.iter().enumerate() {
                    // Held since it was read and checked; else read back from the file now.
                    let held = self.skeleton_held(p);
                    let (skeleton, shape) = self.skeleton(p, &mut scratch)?;
                    match &mut columns {
                        Some(c) => c.push(&skeleton, shape.and_then(|id| self.shape(id)), held),
                        None if held || json::validate(&skeleton) => b.push(skeleton),
                        // Changed in the file and no longer JSON: what fails the batch's
                        // `JSON.parse` for sure (its text, such as `{…},{…}`, could parse as two
                        // items and shift the others).
                        None => b.push(Cow::Borrowed(b"!")),
                    }
                    if let Some(shape) = shape {
                        b.holders.extend([i as u32, shape]);
                    }
                }
                if let Some(mut columns) = columns {
                    // Borrowed: a long string cut out of the values is copied out, not an
                    // external string keeping the whole batch's values alive with the entry
                    // holding it.
                    b.push(Cow::Borrowed(&columns.values_text()));
                    let mut batch = b.finish();
                    batch.count = positions.len();
                    (batch.refs, batch.sigs) = (columns.refs, columns.sigs);
                    return Ok(batch);
                }
            }
        }
        Ok(b.finish())
    }
}

/// A batch being made: JSON texts (lines, skeletons or lazy values) pushed one by one become the
/// items of its JSON array, with their long strings cut out (see [`crate::materialize`]).
#[derive(Default)]
pub(crate) struct BatchBuilder {
    cuts: Collect,
    scratch: WalkScratch,
    out: Vec<u8>,
    count: usize,
    pub(crate) holders: Vec<u32>,
}

impl BatchBuilder {
    pub(crate) fn push(&mut self, item: Cow<'_, [u8]>) {
        self.out.push(if self.count == 0 { b'[' } else { b',' });
        push_any_line(
            item,
            self.count as u32,
            &mut self.out,
            &mut self.cuts,
            &mut self.scratch,
        );
        self.count += 1;
    }

    pub(crate) fn finish(mut self) -> PreparedBatch {
        if self.count == 0 {
            self.out.push(b'[');
        }
        self.out.push(b']');
        PreparedBatch {
            count: self.count,
            text: json::json_text_units(self.out),
            plan: self.cuts.plan,
            names: self.cuts.names,
            wide: self.cuts.wide,
            values: self.cuts.values,
            holders: self.holders,
            refs: Vec::new(),
            sigs: Vec::new(),
        }
    }
}

/// Prepares `count` batches, `prepare(k)` each, on up to `threads` threads (the calling one
/// included), and hands each to `deliver(k, batch)` on the calling thread, in order, as soon as it
/// is ready: the caller's work on one batch overlaps the preparing of the next. Stops when
/// `deliver` returns false, or with its error.
pub(crate) fn in_order<T: Send>(
    count: usize,
    threads: usize,
    prepare: impl Fn(usize) -> Result<T> + Sync,
    mut deliver: impl FnMut(usize, Result<T>) -> Result<bool>,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    // The next batch nobody has taken, if it is not after `last`. Helpers take any; the caller
    // only the one it is about to hand over: a later one would keep it busy while a helper's
    // batch, the one it needs, waits.
    let claim = |last: usize| {
        next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n <= last && n < count).then_some(n + 1)
        })
        .ok()
    };
    let helpers = threads.min(count).saturating_sub(1);
    if helpers == 0 {
        // One batch (a single line) or one thread: no channel, no thread scope.
        for k in 0..count {
            if !deliver(k, prepare(k))? {
                break;
            }
        }
        return Ok(());
    }
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<T>)>();
    std::thread::scope(|scope| {
        for _ in 0..helpers {
            let tx = tx.clone();
            let (claim, prepare) = (&claim, &prepare);
            scope.spawn(move || {
                while let Some(k) = claim(usize::MAX) {
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
        let mut ready: Vec<Option<Result<T>>> = (0..count).map(|_| None).collect();
        for k in 0..count {
            let batch = batch_in_order(k, &mut ready, &claim, &prepare, &rx)?;
            if !deliver(k, batch)? {
                break;
            }
        }
        Ok(())
    })
}

/// Batch `k` for the in-order hand-over of [`in_order`]: from `ready` when a
/// helper (or this thread) has made it, else prepared here when no helper has taken it yet, else
/// waited for. `claim(k)` claims the next batch if it is not after `k`.
fn batch_in_order<T>(
    k: usize,
    ready: &mut [Option<Result<T>>],
    claim: &impl Fn(usize) -> Option<usize>,
    prepare: &impl Fn(usize) -> Result<T>,
    rx: &std::sync::mpsc::Receiver<(usize, Result<T>)>,
) -> Result<Result<T>> {
    loop {
        if let Some(r) = ready[k].take() {
            return Ok(r);
        }
        if let Some(j) = claim(k) {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Mutex;
    use std::time::Duration;

    #[test]
    fn the_caller_prepares_only_the_batch_it_hands_over_next() {
        // Helpers are slow here: a caller that made a later batch while it waited for a helper's
        // would hand the helper's over late. Every batch the caller makes, it hands over next.
        for threads in [2, 3] {
            let caller = std::thread::current().id();
            let delivered = AtomicUsize::new(0);
            let early = AtomicBool::new(false);
            let made_here = Mutex::new(Vec::new());
            in_order(
                12,
                threads,
                |k| {
                    if std::thread::current().id() == caller {
                        made_here.lock().unwrap().push(k);
                        if delivered.load(Ordering::SeqCst) != k {
                            early.store(true, Ordering::SeqCst);
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    } else {
                        std::thread::sleep(Duration::from_millis(4));
                    }
                    Ok(k)
                },
                |k, batch| {
                    assert_eq!(batch?, k, "in order");
                    delivered.store(k + 1, Ordering::SeqCst);
                    Ok(true)
                },
            )
            .unwrap();
            assert_eq!(delivered.load(Ordering::SeqCst), 12);
            // (The caller may make none: a helper can claim the first batch before it.)
            let made_here = made_here.into_inner().unwrap();
            assert!(!early.load(Ordering::SeqCst), "made early: {made_here:?}");
        }
    }
}
