//! Reading lazy values back: a [`LazyReader`] is a snapshot of where the lazy values of one
//! load's records are, taken from the session when JavaScript first needs one, and valid for as
//! long as an object of that load may ask, even after the session moved on (another file, a
//! prune, `dispose()`): it shares the loaded text's bytes, or keeps the file open it read.
//!
//! The session file is append-only for this store: nothing of ours rewrites a line in place
//! (rewrites go to a new file renamed over the old, whose bytes the open descriptor still
//! reads). A file changed in place by someone else is seen by the line's fingerprint, as for
//! any line read back (`SESSION_FILE_CHANGED`).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use super::{LazyMeta, Shapes};
use crate::error::{Error, ErrorCode, Result};
use crate::file::fingerprint;
use crate::materialize::{BatchBuilder, PreparedBatch};
use crate::store::records::{file_changed, read_held, Records};
use crate::text::Text;

/// Where one holder record's line is, and its lazy values within it.
#[derive(Debug, Clone)]
struct Located {
    start: usize,
    end: usize,
    in_file: bool,
    check: u32,
    lazy: LazyMeta,
}

/// The lazy values of one load's records (see the module docs).
#[derive(Debug)]
pub struct LazyReader {
    shapes: Shapes,
    /// Per record position: an index into `located`, or `u32::MAX`.
    index: Vec<u32>,
    located: Vec<Located>,
    text: Text,
    file: Option<(PathBuf, Arc<std::fs::File>)>,
}

const NOT_LAZY: u32 = u32::MAX;

impl LazyReader {
    /// A snapshot of `records` (their text is shared, not copied; its tail is frozen for that).
    pub(crate) fn of(records: &mut Records) -> LazyReader {
        let mut index = vec![NOT_LAZY; records.recs.len()];
        let mut located = Vec::new();
        for (pos, r) in records.recs.iter().enumerate() {
            let known = |l: &LazyMeta| (l.shape as usize) < records.shapes.len();
            if let Some(lazy) = r.meta.lazy.filter(known) {
                index[pos] = located.len() as u32;
                located.push(Located {
                    start: r.start,
                    end: r.end,
                    in_file: r.in_file,
                    check: r.check,
                    lazy,
                });
            }
        }
        LazyReader {
            shapes: records.shapes.clone(),
            index,
            located,
            text: Text::sharing(&mut records.text),
            file: records.reader.clone(),
        }
    }

    /// A reader of nothing (what a released reader becomes).
    pub fn empty() -> LazyReader {
        LazyReader {
            shapes: Shapes::default(),
            index: Vec::new(),
            located: Vec::new(),
            text: Text::default(),
            file: None,
        }
    }

    /// The shapes of the load, by id.
    pub fn shapes(&self) -> &Shapes {
        &self.shapes
    }

    /// How many records the snapshot covers.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Does the record at `pos` have lazy values?
    pub fn has(&self, pos: u32) -> bool {
        self.located(pos).is_some()
    }

    /// The record at `pos` and the slot of its lazy member `key`.
    fn slot_of(&self, pos: u32, key: &[u8]) -> Option<(&Located, usize)> {
        let l = self.located(pos)?;
        let shape = self.shapes.get(l.lazy.shape)?;
        Some((l, shape.slot_of(key)?))
    }

    fn located(&self, pos: u32) -> Option<&Located> {
        let i = *self.index.get(pos as usize)?;
        self.located.get(i as usize)
    }

    /// The record's line, from the shared text or read from the file (checked).
    fn line(&self, l: &Located) -> Result<Cow<'_, [u8]>> {
        if !l.in_file {
            return Ok(Cow::Borrowed(&self.text[l.start..l.end]));
        }
        let (path, file) = self
            .file
            .as_ref()
            .ok_or_else(|| Error::internal("a file-backed line without its file"))?;
        let mut buf = vec![0u8; l.end - l.start];
        read_held(path, file, &mut buf, l.start)?;
        if fingerprint(&buf) != l.check {
            return Err(file_changed(path));
        }
        Ok(Cow::Owned(buf))
    }

    /// The value of the lazy member `key` of the record at `pos`, as a batch of one item for
    /// `JSON.parse` (long strings cut out as everywhere, see [`crate::materialize`]; a value that
    /// is itself a long string stays in the text: only strings inside containers are cut).
    pub fn value(&self, pos: u32, key: &[u8]) -> Result<PreparedBatch> {
        let (l, slot) = self.slot_of(pos, key).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "record {pos} has no lazy member {}",
                    String::from_utf8_lossy(key)
                ),
            )
        })?;
        let line = self.line(l)?;
        let range = l.lazy.ranges().nth(slot).expect("a slot of the shape");
        let mut b = BatchBuilder::default();
        b.push(Cow::Borrowed(&line[range]));
        Ok(b.finish())
    }

    /// The values of the lazy member `key` of the records of `positions` that have one, in
    /// batches of about `budget` bytes (about `max_total` in all), prepared on up to `threads`
    /// threads and handed to `consume(of, batch)` in order on the calling thread as soon as each
    /// is ready (`of`: the positions of its items); stops when `consume` returns false. Returns
    /// how many values were handed over. This is the read-ahead of code that reads one member of
    /// many entries in order (see lib/lazy.js).
    pub fn for_each_values(
        &self,
        positions: &[u32],
        key: &[u8],
        budget: usize,
        max_total: usize,
        threads: usize,
        mut consume: impl FnMut(Vec<u32>, PreparedBatch) -> bool,
    ) -> Result<usize> {
        // The records that have the member, cut into batches by the size of their values.
        let mut wanted: Vec<(u32, &Located, usize)> = Vec::new();
        let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
        let (mut start, mut size, mut total) = (0, 0usize, 0usize);
        for &pos in positions {
            let Some((l, slot)) = self.slot_of(pos, key) else {
                continue;
            };
            wanted.push((pos, l, slot));
            size += l.lazy.slots[slot].1 as usize;
            if size >= budget {
                spans.push(start..wanted.len());
                total += size;
                (start, size) = (wanted.len(), 0);
                if total >= max_total {
                    break;
                }
            }
        }
        if start < wanted.len() && total < max_total {
            spans.push(start..wanted.len());
        }
        let prepare = |k: usize| -> Result<(Vec<u32>, PreparedBatch)> {
            let mut b = BatchBuilder::default();
            let mut of = Vec::with_capacity(spans[k].len());
            for &(pos, l, slot) in &wanted[spans[k].clone()] {
                let line = self.line(l)?;
                let range = l.lazy.ranges().nth(slot).expect("a slot of the shape");
                b.push(Cow::Borrowed(&line[range]));
                of.push(pos);
            }
            Ok((of, b.finish()))
        };
        let mut given = 0;
        crate::materialize::in_order(spans.len(), threads, prepare, |k, batch| match batch {
            Ok((of, b)) => {
                given += of.len();
                Ok(consume(of, b))
            }
            Err(e) if k == 0 => Err(e),
            Err(_) => Ok(false),
        })?;
        Ok(given)
    }
}
