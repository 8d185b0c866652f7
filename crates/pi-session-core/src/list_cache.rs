//! The listing cache: per-file `SessionInfo` summaries kept between runs, keyed by path and
//! validated by size, modification time (ns), change time and inode. A file whose stat differs in
//! any of these is read again, so an entry can never be stale; a deleted file simply stops being
//! asked for and is pruned on save. The cache file is disposable: missing, unreadable or damaged,
//! it is treated as empty (a damaged line only loses its own entry: each record has a checksum in
//! the index); deleting it is always safe.

use std::collections::{HashMap, VecDeque};
use std::fs;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::fsio;
use crate::json::{self, JsStr, Value};
use crate::listing::FileSummary;

/// Bump when the summary format changes: old caches are then ignored.
const FORMAT: &str = "pi-session-list-cache/6";

/// The directory of the cache inside the agent dir. The stock agent reads every `*.jsonl` file at
/// the top of its agent dir in full on each start (`migrateSessionsFromAgentRoot`, which moves
/// sessions saved there by an old bug), and its other scans of the agent dir only look into named
/// subdirectories (`sessions`, `extensions`, `skills`, `prompts`, `themes`, `tools`, `bin`, `npm`,
/// `git`, `tmp`) and skip dot entries: a hidden directory of our own is read by nobody but us.
pub const DIR: &str = ".pi-session-native";
/// The cache file's name in [`DIR`] (not `.jsonl`: its records are compressed blocks).
pub const FILE_NAME: &str = "list-cache";
/// Where caches of format 4 and older lived: in the agent root, where the agent reads it on every
/// start. Deleted by the first save of a cache at [`file_in`] of the same agent dir.
pub const LEGACY_FILE: &str = "session-list-cache.jsonl";

/// The cache file of an agent dir: `<agent dir>/.pi-session-native/list-cache`.
pub fn file_in(agent_dir: &Path) -> PathBuf {
    agent_dir.join(DIR).join(FILE_NAME)
}

/// The old cache file that a cache at `file` replaces (only for a file laid out by [`file_in`]).
fn legacy_of(file: &Path) -> Option<PathBuf> {
    let dir = file.parent()?;
    (dir.file_name()? == DIR && file.file_name()? == FILE_NAME)
        .then(|| dir.parent().map(|agent| agent.join(LEGACY_FILE)))
        .flatten()
}

/// The old cache (format 4, in the agent root) is never read again: it only costs the agent a
/// full read on every start. Removed once a cache of ours is in place (nothing else is touched).
fn remove_legacy(file: Option<&Path>) {
    if let Some(old) = file.and_then(legacy_of) {
        let _ = fs::remove_file(old);
    }
}

/// Records are packed into zstd frames of about this many bytes (raw): the texts of one session
/// alone compress to ~30% at best (xz does no better), while sessions of one user share their
/// vocabulary, so a window across many records gets ~23% (scale set, level 3; 256 KiB: 29%).
const BLOCK: usize = 2 << 20;
/// zstd level: 3 compresses ~42 MB of text in ~0.2 s; higher levels gain 1–2 points for 2–4×
/// the time, on the cold listing's path.
const LEVEL: i32 = 3;
/// Decompressed blocks kept per loaded cache. A listing asks for records nearly in the order they
/// were saved (the previous run's order), so a handful serves every worker; memory stays bounded.
const RECENT_BLOCKS: usize = 6;

/// What identifies a file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
}

impl Stamp {
    pub fn of(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Stamp {
                size: meta.len(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                ino: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let ns = |t: std::io::Result<std::time::SystemTime>| {
                t.ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos() as i128)
                    .unwrap_or(-1)
            };
            Stamp {
                size: meta.len(),
                mtime_ns: ns(meta.modified()),
                ctime_ns: ns(meta.created()),
                ino: 0,
            }
        }
    }
}

/// A cached answer: the summary, or `None` for a file that is not a session.
pub type Cached = Option<Arc<FileSummary>>;

/// Where a stored record is: its block's byte range in the cache file, the record's byte range
/// in the decompressed block, and the record's checksum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordAt {
    block: Range<u64>,
    record: Range<usize>,
    checksum: u64,
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
    fn new(file: fs::File, mut all: Vec<Range<u64>>) -> Blocks {
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
fn read_block(file: &fs::File, range: &Range<u64>) -> Option<Vec<u8>> {
    let len = usize::try_from(range.end.checked_sub(range.start)?).ok()?;
    let mut compressed = vec![0u8; len];
    read_exact_at(file, &mut compressed, range.start).ok()?;
    let raw_len = zstd::zstd_safe::get_frame_content_size(&compressed).ok()??;
    // A damaged size field must not make us allocate the moon: blocks are about BLOCK bytes,
    // or one big record.
    let raw_len = usize::try_from(raw_len).ok()?;
    if raw_len > len.saturating_mul(64).max(BLOCK * 2) {
        return None;
    }
    zstd::bulk::decompress(&compressed, raw_len).ok()
}

/// A hit: a summary computed in this run, or a record of the cache file, which is only read,
/// validated and decoded when used (on the worker that asked, see [`Hit::read`]).
#[derive(Debug, Clone)]
pub enum Hit {
    Fresh(Cached),
    /// The cache file's blocks and where the record is in them.
    Stored(Arc<Blocks>, RecordAt),
}

/// A stored summary as read: `meta` JSON and the two texts' escaped bytes.
pub type StoredSummary<'a> = (&'a str, &'a [u8], &'a [u8]);

/// A cache line that does not hold a summary (torn or edited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damaged;

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

impl Hit {
    /// Read a stored record (`Err(Damaged)`: unreadable, changed since it was written, or not
    /// the record of `path`/`stamp`).
    pub fn read(
        blocks: &Blocks,
        at: &RecordAt,
        path: &str,
        stamp: &Stamp,
    ) -> Result<Record, Damaged> {
        let record = stored_record(blocks, at).ok_or(Damaged)?;
        match parse_key(&record) {
            Some((p, s)) if p == path && s == *stamp => Ok(record),
            _ => Err(Damaged),
        }
    }

    /// The summary of a cache-file line (`Err(Damaged)`: read the file again).
    pub fn line(text: &[u8]) -> Result<Option<StoredSummary<'_>>, Damaged> {
        let members = json::top_level_members(text)
            .map_err(|_| Damaged)?
            .ok_or(Damaged)?;
        let get = |k: &str| {
            members
                .iter()
                .rev()
                .find(|(key, _)| key.as_escaped() == k)
                .map(|(_, r)| &text[r.clone()])
        };
        let v = get("v").ok_or(Damaged)?;
        if v == b"null" {
            return Ok(None);
        }
        if v.first() != Some(&b'{') {
            return Err(Damaged);
        }
        // The texts stay bytes: the decoder checks UTF-8 where it meets non-ASCII.
        let inner = |k: &str| -> Result<&[u8], Damaged> {
            let raw = get(k).ok_or(Damaged)?;
            raw.strip_prefix(b"\"")
                .and_then(|r| r.strip_suffix(b"\""))
                .ok_or(Damaged)
        };
        let meta = std::str::from_utf8(v).map_err(|_| Damaged)?;
        Ok(Some((meta, inner("f")?, inner("a")?)))
    }
}

/// A stored record whose checksum matches (`None`: its block or its bytes are damaged).
fn stored_record(blocks: &Blocks, at: &RecordAt) -> Option<Record> {
    let block = blocks.get(&at.block)?;
    let record = block.get(at.record.clone())?;
    (record_checksum(record) == at.checksum).then(|| Record {
        block: block.clone(),
        range: at.record.clone(),
    })
}

#[derive(Debug, Clone)]
enum Stored {
    Fresh(Cached),
    At(RecordAt),
}

#[derive(Debug, Clone)]
struct Entry {
    stamp: Stamp,
    value: Stored,
    used: bool,
    /// Save order: the order in which this run asked for the entries (loaded entries not asked
    /// for keep their relative place, after those), so that the next run finds its records
    /// block by block.
    order: u64,
}

/// An in-memory view of the cache file: the index of its records (read at load) and the open
/// file they are read from when used.
#[derive(Debug, Default)]
pub struct ListCache {
    file: Option<PathBuf>,
    data: Option<Arc<Blocks>>,
    entries: HashMap<String, Entry>,
    dirty: bool,
    asked: u64,
}

#[cfg(unix)]
fn read_exact_at(f: &fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
}

#[cfg(windows)]
fn read_exact_at(f: &fs::File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match f.seek_read(buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

/// Length of the fixed-size last line: `{"index":<offset>}` padded with spaces.
const TRAILER: usize = 40;

/// The index entries of one block's records: entry number, range in the block, checksum.
type Pending = Vec<(usize, Range<usize>, u64)>;

/// The blocks being filled and compressed by [`ListCache::save`]: the raw records of the current
/// block, full blocks waiting to be compressed (one per core, compressed side by side: this is
/// on the cold listing's path), and the index, whose block ranges are known once written.
struct BlockWriter {
    raw: Vec<u8>,
    pending: Pending,
    wave: Vec<(Vec<u8>, Pending)>,
    threads: usize,
    at: u64,
    index: String,
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
    fn seal(
        &mut self,
        last: bool,
        w: &mut impl Write,
        entries: &[(&String, &Entry)],
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
                let (path, e) = entries[i];
                let at = RecordAt {
                    block: block.clone(),
                    record,
                    checksum,
                };
                write_index_line(path, e.stamp, &at, &mut self.index);
            }
            self.at = block.end;
        }
        Ok(())
    }
}

impl ListCache {
    /// Read the cache at `file` (anything unreadable is ignored). Only the index at its end is
    /// read here; a summary is read and checked when it is used.
    pub fn load(file: PathBuf) -> ListCache {
        let mut cache = ListCache {
            file: Some(file.clone()),
            ..ListCache::default()
        };
        let Ok(f) = fs::File::open(&file) else {
            return cache;
        };
        match read_index(&f) {
            Some(entries) => {
                let blocks = entries
                    .values()
                    .filter_map(|e| match &e.value {
                        Stored::At(at) => Some(at.block.clone()),
                        Stored::Fresh(_) => None,
                    })
                    .collect();
                cache.entries = entries;
                cache.data = Some(Arc::new(Blocks::new(f, blocks)));
            }
            None => cache.dirty = true,
        }
        cache
    }

    /// The cached answer for `path` if its stamp still matches.
    pub fn get(&mut self, path: &str, stamp: &Stamp) -> Option<Hit> {
        let e = self.entries.get_mut(path)?;
        if e.stamp != *stamp {
            return None;
        }
        e.used = true;
        self.asked += 1;
        e.order = self.asked;
        Some(match &e.value {
            Stored::Fresh(c) => Hit::Fresh(c.clone()),
            Stored::At(at) => Hit::Stored(self.data.clone()?, at.clone()),
        })
    }

    pub fn put(&mut self, path: &str, stamp: Stamp, summary: Cached) {
        self.asked += 1;
        self.entries.insert(
            path.to_owned(),
            Entry {
                stamp,
                value: Stored::Fresh(summary),
                used: true,
                order: self.asked,
            },
        );
        self.dirty = true;
    }

    /// Write the cache back if it changed, dropping entries of files that are gone. The new file
    /// is streamed to a temp file and renamed over the old one, so readers see either version;
    /// then the cache file of older versions (in the agent root) is deleted.
    /// No fsync: after a power loss the cache may be torn or old, and both are merely ignored
    /// or re-validated by stamp.
    pub fn save(&mut self) -> crate::Result<()> {
        let before = self.entries.len();
        self.entries.retain(|p, e| e.used || Path::new(p).exists());
        if !self.dirty && self.entries.len() == before {
            if self.data.is_some() {
                // A valid cache is in place (an older version may have written its file since).
                remove_legacy(self.file.as_deref());
            }
            return Ok(());
        }
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        // The cache never creates the agent dir: listing must not leave traces where the
        // reference would not (an agent dir that does not exist yet stays absent). Its own
        // directory is made, inside an agent dir that exists.
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                let parent_exists = dir
                    .parent()
                    .is_none_or(|p| p.as_os_str().is_empty() || p.is_dir());
                if !parent_exists {
                    return Ok(());
                }
                if let Err(e) = fs::create_dir(dir) {
                    if e.kind() != std::io::ErrorKind::AlreadyExists {
                        return Err(crate::Error::io(&e, "mkdir", dir));
                    }
                }
            }
        }
        let tmp = fsio::TempFile::create(&file)?;
        let io = |e: std::io::Error| crate::Error::io(&e, "write", &file);
        {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.file());
            let header = format!("{{\"format\":\"{FORMAT}\"}}\n");
            w.write_all(header.as_bytes()).map_err(io)?;
            let mut entries: Vec<(&String, &Entry)> = self.entries.iter().collect();
            entries.sort_unstable_by_key(|(_, e)| (!e.used, e.order));
            let mut block = BlockWriter {
                raw: Vec::with_capacity(BLOCK + (BLOCK >> 2)),
                pending: Vec::new(),
                wave: Vec::new(),
                threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
                at: header.len() as u64,
                index: String::with_capacity(entries.len() * 220),
            };
            let mut line = String::new();
            for (i, (path, e)) in entries.iter().enumerate() {
                let start = block.raw.len();
                match &e.value {
                    Stored::At(at) => {
                        // Unchanged records are copied from the old file (which stays readable
                        // through our descriptor until the rename below replaces its name); a
                        // damaged one is dropped (its file is read again when next listed).
                        let Some(record) = self.data.as_ref().and_then(|d| stored_record(d, at))
                        else {
                            continue;
                        };
                        block.raw.extend_from_slice(&record);
                    }
                    Stored::Fresh(summary) => {
                        line.clear();
                        write_entry(path, e.stamp, summary, &mut line);
                        block.raw.extend_from_slice(line.as_bytes());
                    }
                }
                let record = start..block.raw.len();
                let checksum = record_checksum(&block.raw[record.clone()]);
                block.raw.push(b'\n');
                block.pending.push((i, record, checksum));
                if block.raw.len() >= BLOCK {
                    block.seal(false, &mut w, &entries, &io)?;
                }
            }
            block.seal(true, &mut w, &entries, &io)?;
            let index_at = block.at;
            let index = zstd::bulk::compress(block.index.as_bytes(), LEVEL).map_err(io)?;
            w.write_all(&index).map_err(io)?;
            let mut trailer = format!("{{\"index\":{index_at}}}");
            while trailer.len() < TRAILER - 1 {
                trailer.push(' ');
            }
            trailer.push('\n');
            w.write_all(trailer.as_bytes()).map_err(io)?;
            w.flush().map_err(io)?;
        }
        tmp.rename_over(&file, fsio::Durability::Buffered)?;
        self.dirty = false;
        remove_legacy(Some(&file));
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The index of a cache file: header check, trailer, then one key line per record (a zstd frame).
fn read_index(f: &fs::File) -> Option<HashMap<String, Entry>> {
    let size = f.metadata().ok()?.len();
    let mut head = vec![0u8; (FORMAT.len() + 16).min(size as usize)];
    read_exact_at(f, &mut head, 0).ok()?;
    let header_end = memchr::memchr(b'\n', &head)?;
    let header_ok = json::parse(&head[..header_end])
        .is_ok_and(|h| matches!(h.get("format"), Some(Value::String(v)) if v.eq_str(FORMAT)));
    if !header_ok || size < TRAILER as u64 {
        return None;
    }
    let mut trailer = [0u8; TRAILER];
    read_exact_at(f, &mut trailer, size - TRAILER as u64).ok()?;
    let index_at = match json::parse(trailer.strip_suffix(b"\n")?).ok()?.get("index") {
        Some(Value::Number(n)) if *n >= 0.0 && n.fract() == 0.0 => *n as u64,
        _ => return None,
    };
    let index_end = size - TRAILER as u64;
    if index_at > index_end {
        return None;
    }
    let index = read_block(f, &(index_at..index_end))?;
    let mut entries = HashMap::new();
    for (n, line) in index
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let (path, stamp, at) = parse_index_line(line)?;
        if at.block.end > index_at || at.block.start > at.block.end {
            return None;
        }
        let entry = Entry {
            stamp,
            value: Stored::At(at),
            used: false,
            order: n as u64,
        };
        entries.insert(path, entry);
    }
    Some(entries)
}

/// A record's checksum, kept in the index: the cache is written without fsync, and a record whose
/// bytes changed (a block lost in a crash, a stray edit) must not be served even when it still
/// parses and names the right file.
fn record_checksum(record: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::fxhash::FxHasher::default();
    h.write_usize(record.len());
    h.write(record);
    h.finish()
}

/// `{"p":path,"s":size,"m":"mtime ns","c":"ctime ns","i":inode,"b":block offset,"z":block
/// length,"o":offset in block,"n":length,"h":checksum}`
fn write_index_line(path: &str, stamp: Stamp, at: &RecordAt, out: &mut String) {
    write_key(path, stamp, out);
    out.push_str(&format!(
        ",\"b\":{},\"z\":{},\"o\":{},\"n\":{},\"h\":{}}}\n",
        at.block.start,
        at.block.end - at.block.start,
        at.record.start,
        at.record.end - at.record.start,
        at.checksum
    ));
}

fn parse_index_line(line: &[u8]) -> Option<(String, Stamp, RecordAt)> {
    let (path, stamp, rest) = parse_key_prefix(line)?;
    let mut rest = rest;
    let mut field = |name: &[u8]| -> Option<u64> {
        rest = rest
            .strip_prefix(b",")?
            .strip_prefix(name)?
            .strip_prefix(b":")?;
        let end = rest.iter().position(|c| !c.is_ascii_digit())?;
        let n = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
        rest = &rest[end..];
        Some(n)
    };
    let block = field(b"\"b\"")?;
    let block_len = field(b"\"z\"")?;
    let start = usize::try_from(field(b"\"o\"")?).ok()?;
    let len = usize::try_from(field(b"\"n\"")?).ok()?;
    let checksum = field(b"\"h\"")?;
    let at = RecordAt {
        block: block..block.checked_add(block_len)?,
        record: start..start.checked_add(len)?,
        checksum,
    };
    (rest == b"}").then_some((path, stamp, at))
}

fn write_key(path: &str, stamp: Stamp, out: &mut String) {
    out.push_str("{\"p\":");
    json::write_js_string(&JsStr::from_str(path), out);
    out.push_str(&format!(
        ",\"s\":{},\"m\":\"{}\",\"c\":\"{}\",\"i\":{}",
        stamp.size, stamp.mtime_ns, stamp.ctime_ns, stamp.ino
    ));
}

/// `{"p":path,"s":size,"m":"mtime ns","c":"ctime ns","i":inode,"v":meta|null,"f":"first","a":"all"}`
/// (path and stamp first: loading reads only those).
fn write_entry(path: &str, stamp: Stamp, summary: &Cached, out: &mut String) {
    write_key(path, stamp, out);
    out.push_str(",\"v\":");
    match summary {
        None => out.push_str("null"),
        Some(s) => {
            out.push_str(&s.meta);
            out.push_str(",\"f\":\"");
            out.push_str(&s.first_message);
            out.push_str("\",\"a\":\"");
            out.push_str(&s.all_text);
            out.push('"');
        }
    }
    out.push_str("}\n");
}

/// Path and stamp from the start of a cache line, as `write_entry` lays it out (anything else
/// is treated as damaged).
fn parse_key(line: &[u8]) -> Option<(String, Stamp)> {
    parse_key_prefix(line).map(|(p, s, _)| (p, s))
}

/// [`parse_key`] and the bytes after the key.
fn parse_key_prefix(line: &[u8]) -> Option<(String, Stamp, &[u8])> {
    let rest = line.strip_prefix(b"{\"p\":\"")?;
    // The path string: up to the first unescaped quote.
    let mut i = 0;
    loop {
        let k = memchr::memchr2(b'"', b'\\', &rest[i..])?;
        if rest[i + k] == b'\\' {
            i += k + 2;
        } else {
            i += k;
            break;
        }
    }
    let path = match json::parse(line.get(5..7 + i)?).ok()? {
        Value::String(ref p) => p.to_string_lossy(),
        _ => return None,
    };
    let mut rest = rest.get(i + 1..)?;
    let mut field = |name: &[u8], quoted: bool| -> Option<i128> {
        rest = rest
            .strip_prefix(b",")?
            .strip_prefix(name)?
            .strip_prefix(b":")?;
        if quoted {
            rest = rest.strip_prefix(b"\"")?;
        }
        let end = rest
            .iter()
            .position(|c| !(c.is_ascii_digit() || *c == b'-'))?;
        let n = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
        rest = &rest[end..];
        if quoted {
            rest = rest.strip_prefix(b"\"")?;
        }
        Some(n)
    };
    let stamp = Stamp {
        size: u64::try_from(field(b"\"s\"", false)?).ok()?,
        mtime_ns: field(b"\"m\"", true)?,
        ctime_ns: field(b"\"c\"", true)?,
        ino: u64::try_from(field(b"\"i\"", false)?).ok()?,
    };
    Some((path, stamp, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(n: u32) -> Cached {
        Some(Arc::new(FileSummary {
            meta: format!("{{\"path\":\"/s/{n}.jsonl\",\"messageCount\":{n}}}"),
            first_message: format!("first \\\"{n}\\\""),
            all_text: format!("all\\n{n} caf\u{e9} \\ud800"),
        }))
    }

    fn stamp(n: u64) -> Stamp {
        Stamp {
            size: n,
            mtime_ns: -5 - i128::from(n),
            ctime_ns: 1_700_000_000_123_456_789,
            ino: 42 + n,
        }
    }

    /// The summary a hit stands for (reading stored records the way the job does).
    fn resolve(
        hit: Hit,
        path: &str,
        stamp: &Stamp,
    ) -> Result<Option<(String, String, String)>, Damaged> {
        match hit {
            Hit::Fresh(c) => {
                Ok(c.map(|s| (s.meta.clone(), s.first_message.clone(), s.all_text.clone())))
            }
            Hit::Stored(blocks, at) => {
                let rec = Hit::read(&blocks, &at, path, stamp)?;
                let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("UTF-8");
                Hit::line(&rec).map(|o| o.map(|(m, f, a)| (m.to_owned(), text(f), text(a))))
            }
        }
    }

    fn owned(c: &Cached) -> Option<(String, String, String)> {
        c.as_ref()
            .map(|s| (s.meta.clone(), s.first_message.clone(), s.all_text.clone()))
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pi-list-cache-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn path(n: u32) -> String {
        format!("/s/\"q\"{n}.jsonl")
    }

    /// Where the index says record `p` is.
    fn record_at(c: &ListCache, p: &str) -> RecordAt {
        match &c.entries[p].value {
            Stored::At(at) => at.clone(),
            Stored::Fresh(_) => panic!("{p} was not loaded from the file"),
        }
    }

    #[test]
    fn saved_entries_hit_after_a_reload_and_a_changed_record_is_damaged() {
        let dir = temp_dir("reload");
        let file = dir.join(FILE_NAME);
        let mut c = ListCache::load(file.clone());
        assert!(c.is_empty());
        for n in 0..3u32 {
            c.put(&path(n), stamp(u64::from(n)), summary(n));
        }
        c.put("/s/not-a-session.jsonl", stamp(9), None);
        c.save().unwrap();

        let check = |c: &mut ListCache| {
            assert_eq!(c.len(), 4);
            for n in 0..3u32 {
                assert!(
                    c.get(&path(n), &stamp(u64::from(n) + 1)).is_none(),
                    "other stamp"
                );
                let hit = c.get(&path(n), &stamp(u64::from(n))).expect("hit");
                assert!(
                    matches!(hit, Hit::Stored(..)),
                    "loaded entries are read from the file"
                );
                assert_eq!(
                    resolve(hit, &path(n), &stamp(u64::from(n))),
                    Ok(owned(&summary(n)))
                );
            }
            let hit = c.get("/s/not-a-session.jsonl", &stamp(9)).expect("hit");
            assert_eq!(resolve(hit, "/s/not-a-session.jsonl", &stamp(9)), Ok(None));
        };
        let mut loaded = ListCache::load(file.clone());
        check(&mut loaded);
        // Saving copies the stored records into a new file that reads back the same.
        loaded.put("/s/extra.jsonl", stamp(7), summary(7));
        loaded.save().unwrap();
        let mut again = ListCache::load(file.clone());
        assert!(again.get("/s/extra.jsonl", &stamp(7)).is_some());
        again.entries.remove("/s/extra.jsonl");
        check(&mut again);

        // A record whose bytes are not the ones the index summed (here: the index names a
        // neighbour's bytes, which parse, with this record's checksum) is damaged, not served;
        // so is a record asked for under another file's name.
        let mut c = ListCache::load(file.clone());
        let (one, two) = (record_at(&c, &path(1)), record_at(&c, &path(2)));
        let blocks = c.data.clone().unwrap();
        let swapped = RecordAt {
            record: two.record.clone(),
            ..one.clone()
        };
        assert_eq!(
            Hit::read(&blocks, &swapped, &path(1), &stamp(1)).err(),
            Some(Damaged)
        );
        assert_eq!(
            Hit::read(&blocks, &one, &path(2), &stamp(1)).err(),
            Some(Damaged)
        );
        // Saving drops a damaged record (its file is read again) and keeps the others.
        if let Some(e) = c.entries.get_mut(&path(1)) {
            e.value = Stored::At(swapped);
        }
        for n in [0u32, 1, 2] {
            c.get(&path(n), &stamp(u64::from(n))).expect("hit");
        }
        c.put("/s/extra.jsonl", stamp(7), summary(7));
        c.save().unwrap();
        let mut c = ListCache::load(file.clone());
        assert!(c.get(&path(1), &stamp(1)).is_none(), "dropped on save");
        let hit = c.get(&path(2), &stamp(2)).expect("the others are kept");
        assert_eq!(resolve(hit, &path(2), &stamp(2)), Ok(owned(&summary(2))));

        // A torn file (no trailer) or a foreign one is ignored and marked for rewriting.
        let bytes = fs::read(&file).unwrap();
        fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
        let c = ListCache::load(file.clone());
        assert!(c.is_empty() && c.dirty);
        fs::write(&file, b"{\"format\":\"something else\"}\n").unwrap();
        assert!(ListCache::load(file.clone()).is_empty());
        fs::write(&file, b"{\"format\":\"pi-session-list-cache/4\"}\n").unwrap();
        assert!(ListCache::load(file.clone()).is_empty(), "the old format");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Texts as big as a few blocks, of words drawn from a small vocabulary (as sessions are).
    fn wordy(n: u32, len: usize) -> Cached {
        const WORDS: [&str; 12] = [
            "session", "entry", "the", "file", "parse", "error", "tool", "result", "of", "and",
            "write", "context",
        ];
        let mut x = n.wrapping_mul(2_654_435_761).wrapping_add(1);
        let mut all = String::with_capacity(len + 16);
        while all.len() < len {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            all.push_str(WORDS[(x % 12) as usize]);
            all.push(if x.is_multiple_of(9) { '\n' } else { ' ' });
        }
        let all = all.replace('\n', "\\n");
        Some(Arc::new(FileSummary {
            meta: format!("{{\"messageCount\":{n}}}"),
            first_message: all[..200].to_owned(),
            all_text: all,
        }))
    }

    #[test]
    fn records_are_compressed_in_blocks_and_a_damaged_block_is_read_again() {
        let dir = temp_dir("blocks");
        let file = dir.join(FILE_NAME);
        let mut c = ListCache::load(file.clone());
        let texts = (0..5u32).map(|n| wordy(n, 900_000)).collect::<Vec<_>>();
        for (n, t) in (0u32..).zip(&texts) {
            c.put(&path(n), stamp(u64::from(n)), t.clone());
        }
        c.save().unwrap();
        let text_bytes: usize = texts
            .iter()
            .flatten()
            .map(|s| s.all_text.len() + s.first_message.len())
            .sum();
        let size = fs::metadata(&file).unwrap().len() as usize;
        assert!(
            size * 4 < text_bytes,
            "cache {size} bytes for {text_bytes} bytes of text"
        );
        let c = ListCache::load(file.clone());
        let ats = (0..5u32)
            .map(|n| record_at(&c, &path(n)))
            .collect::<Vec<_>>();
        let blocks: Vec<_> = ats.iter().map(|a| a.block.clone()).collect();
        assert!(blocks[0] == blocks[1], "records share a block");
        assert!(blocks[0] != blocks[4], "and there is more than one block");
        // Records come back in the order they were put (the next run asks in that order).
        assert!(blocks.windows(2).all(|w| w[0].start <= w[1].start));

        // One byte of the first block's compressed data changed: its records are damaged (the
        // frame's checksum, else the records' own), the other block's are still served.
        let mut bytes = fs::read(&file).unwrap();
        let mid = (blocks[0].start + blocks[0].end) / 2;
        bytes[mid as usize] ^= 0x20;
        fs::write(&file, &bytes).unwrap();
        let mut c = ListCache::load(file.clone());
        for n in 0..5u32 {
            let hit = c
                .get(&path(n), &stamp(u64::from(n)))
                .expect("index names it");
            let got = resolve(hit, &path(n), &stamp(u64::from(n)));
            if blocks[n as usize] == blocks[0] {
                assert_eq!(got, Err(Damaged), "record {n}");
            } else {
                assert_eq!(got, Ok(owned(&texts[n as usize])), "record {n}");
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_first_save_makes_its_own_dir_only_in_an_agent_dir_and_removes_the_old_cache() {
        let dir = temp_dir("place");
        let agent = dir.join("agent");
        let file = file_in(&agent);
        assert!(file.starts_with(agent.join(DIR)));
        assert!(file.extension().is_none(), "not a *.jsonl file");
        // No agent dir: nothing is created.
        let mut c = ListCache::load(file.clone());
        c.put(&path(0), stamp(0), summary(0));
        c.save().unwrap();
        assert!(
            !agent.exists(),
            "the agent dir is never created for the cache"
        );
        // An agent dir with the old cache and other files: the cache's dir is made, the old
        // cache is deleted, nothing else is touched, and no *.jsonl appears in the root.
        fs::create_dir_all(agent.join("sessions")).unwrap();
        fs::write(
            agent.join(LEGACY_FILE),
            "{\"format\":\"pi-session-list-cache/4\"}\n",
        )
        .unwrap();
        fs::write(agent.join("settings.json"), "{}").unwrap();
        fs::write(agent.join("stray.jsonl"), "x\n").unwrap();
        let mut c = ListCache::load(file.clone());
        c.put(&path(0), stamp(0), summary(0));
        c.save().unwrap();
        assert!(file.is_file());
        let mut names: Vec<_> = fs::read_dir(&agent)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, [DIR, "sessions", "settings.json", "stray.jsonl"]);
        // An old version that wrote its file again: gone after the next listing, even one that
        // has nothing new to save.
        fs::write(
            agent.join(LEGACY_FILE),
            "{\"format\":\"pi-session-list-cache/4\"}\n",
        )
        .unwrap();
        let mut c = ListCache::load(file.clone());
        c.get(&path(0), &stamp(0)).expect("hit");
        c.save().unwrap();
        assert!(!c.dirty && !agent.join(LEGACY_FILE).exists());
        // A cache elsewhere (not laid out by file_in) deletes nothing beside it.
        fs::write(dir.join(LEGACY_FILE), "old").unwrap();
        let mut c = ListCache::load(dir.join("other-cache"));
        c.put(&path(0), stamp(0), summary(0));
        c.save().unwrap();
        assert!(dir.join(LEGACY_FILE).exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
