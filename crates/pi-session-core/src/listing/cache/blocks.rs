//! The cache file's body: records packed into zstd frames ("blocks"), read back by byte range
//! and shared between the workers of one listing, each record checked against its checksum.

use std::collections::VecDeque;
use std::fs;
use std::io::Write;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

/// Records are packed into zstd frames of about this many bytes (raw): the texts of one session
/// alone compress to ~30% at best (xz does no better), while sessions of one user share their
/// vocabulary, so a window across many records gets ~23% (scale set, level 3; 256 KiB: 29%).
pub(super) const BLOCK: usize = 2 << 20;
/// zstd level: 3 compresses ~42 MB of text in ~0.2 s; higher levels gain 1–2 points for 2–4×
/// the time, on the cold listing's path.
pub(super) const LEVEL: i32 = 3;
/// Decompressed blocks kept per loaded cache. A listing asks for records nearly in the order they
/// were saved (the previous run's order), so a handful serves every worker; memory stays bounded.
const RECENT_BLOCKS: usize = 6;

/// Where a stored record is: its block's byte range in the cache file, the record's byte range
/// in the decompressed block, and the record's checksum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordAt {
    pub(super) block: Range<u64>,
    pub(super) record: Range<usize>,
    pub(super) checksum: u64,
}

/// The open cache file and the blocks of it decompressed lately (shared by the workers: the
/// first one to need a block decompresses it, the others wait for it).
#[derive(Debug)]
pub struct Blocks {
    file: fs::File,
    /// Every block's range, in file order (to find the one after a block).
    all: Vec<Range<u64>>,
    recent: Mutex<VecDeque<(u64, Arc<BlockCell>)>>,
}

type BlockCell = OnceLock<Option<Arc<Vec<u8>>>>;

impl Blocks {
    pub(super) fn new(file: fs::File, mut all: Vec<Range<u64>>) -> Blocks {
        all.sort_unstable_by_key(|r| r.start);
        all.dedup();
        Blocks {
            file,
            all,
            recent: Mutex::new(VecDeque::new()),
        }
    }

    /// The cell of the block at `range`, and whether it is new (this caller decompresses it).
    fn cell(&self, range: &Range<u64>) -> (Arc<BlockCell>, bool) {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, cell)) = recent.iter().find(|(at, _)| *at == range.start) {
            return (cell.clone(), false);
        }
        let cell = Arc::new(OnceLock::new());
        if recent.len() >= RECENT_BLOCKS {
            recent.pop_front();
        }
        recent.push_back((range.start, cell.clone()));
        (cell, true)
    }

    /// The decompressed block at `range` of the file (`None`: unreadable or damaged).
    fn get(&self, range: &Range<u64>) -> Option<Arc<Vec<u8>>> {
        let (cell, new) = self.cell(range);
        if !new && cell.get().is_none() {
            // Another worker may be decompressing this block; the workers go through the blocks
            // in order, so rather than wait for it, decompress the next block meanwhile.
            let next = self.all.partition_point(|r| r.start <= range.start);
            if let Some(next) = self.all.get(next) {
                let (ahead, new) = self.cell(next);
                if new {
                    ahead.get_or_init(|| read_block(&self.file, next).map(Arc::new));
                }
            }
        }
        cell.get_or_init(|| read_block(&self.file, range).map(Arc::new))
            .clone()
    }
}

/// Read and decompress one zstd frame (its checksum is checked by the decoder).
pub(super) fn read_block(file: &fs::File, range: &Range<u64>) -> Option<Vec<u8>> {
    let len = usize::try_from(range.end.checked_sub(range.start)?).ok()?;
    let mut compressed = vec![0u8; len];
    crate::fsio::read_exact_at(file, &mut compressed, range.start).ok()?;
    let raw_len = zstd::zstd_safe::get_frame_content_size(&compressed).ok()??;
    // A damaged size field must not make us allocate the moon: blocks are about BLOCK bytes,
    // or one big record.
    let raw_len = usize::try_from(raw_len).ok()?;
    if raw_len > len.saturating_mul(64).max(BLOCK * 2) {
        return None;
    }
    zstd::bulk::decompress(&compressed, raw_len).ok()
}

/// A record's bytes (a slice of its decompressed block).
#[derive(Debug, Clone)]
pub struct Record {
    block: Arc<Vec<u8>>,
    range: Range<usize>,
}

impl std::ops::Deref for Record {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.block[self.range.clone()]
    }
}

/// A stored record whose checksum matches (`None`: its block or its bytes are damaged).
pub(super) fn stored_record(blocks: &Blocks, at: &RecordAt) -> Option<Record> {
    let block = blocks.get(&at.block)?;
    let record = block.get(at.record.clone())?;
    (record_checksum(record) == at.checksum).then(|| Record {
        block: block.clone(),
        range: at.record.clone(),
    })
}

/// The index entries of one block's records: entry number, range in the block, checksum.
type Pending = Vec<(usize, Range<usize>, u64)>;

/// The blocks being filled and compressed by [`ListCache::save`]: the raw records of the current
/// block, full blocks waiting to be compressed (one per core, compressed side by side: this is
/// on the cold listing's path), and where each record went (entry number and place), known once
/// its block is written: the index is made of these (see `format::write_index_line`).
pub(super) struct BlockWriter {
    pub(super) raw: Vec<u8>,
    pub(super) pending: Pending,
    pub(super) wave: Vec<(Vec<u8>, Pending)>,
    pub(super) threads: usize,
    pub(super) at: u64,
    pub(super) placed: Vec<(usize, RecordAt)>,
}

fn compress_block(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut enc = zstd::bulk::Compressor::new(LEVEL)?;
    enc.include_checksum(true)?;
    enc.include_contentsize(true)?;
    enc.compress(raw)
}

impl BlockWriter {
    /// Close the current block; compress and write the waiting ones once there is one per core
    /// (or `last`).
    pub(super) fn seal(
        &mut self,
        last: bool,
        w: &mut impl Write,
        io: &impl Fn(std::io::Error) -> crate::Error,
    ) -> crate::Result<()> {
        if !self.raw.is_empty() {
            let raw = std::mem::replace(&mut self.raw, Vec::with_capacity(BLOCK + (BLOCK >> 2)));
            self.wave.push((raw, std::mem::take(&mut self.pending)));
        }
        if self.wave.is_empty() || (!last && self.wave.len() < self.threads) {
            return Ok(());
        }
        let wave = std::mem::take(&mut self.wave);
        let frames: Vec<std::io::Result<Vec<u8>>> = std::thread::scope(|s| {
            let others: Vec<_> = wave[1..]
                .iter()
                .map(|(raw, _)| s.spawn(move || compress_block(raw)))
                .collect();
            let first = compress_block(&wave[0].0);
            std::iter::once(first)
                .chain(others.into_iter().map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(std::io::Error::other("compressor panicked")))
                }))
                .collect()
        });
        for (frame, (_, pending)) in frames.into_iter().zip(wave) {
            let frame = frame.map_err(io)?;
            w.write_all(&frame).map_err(io)?;
            let block = self.at..self.at + frame.len() as u64;
            for (i, record, checksum) in pending {
                let at = RecordAt {
                    block: block.clone(),
                    record,
                    checksum,
                };
                self.placed.push((i, at));
            }
            self.at = block.end;
        }
        Ok(())
    }
}

/// A record's checksum, kept in the index: the cache is written without fsync, and a record whose
/// bytes changed (a block lost in a crash, a stray edit) must not be served even when it still
/// parses and names the right file.
pub(super) fn record_checksum(record: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::fxhash::FxHasher::default();
    h.write_usize(record.len());
    h.write(record);
    h.finish()
}
