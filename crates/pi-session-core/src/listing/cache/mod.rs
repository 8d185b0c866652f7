//! The listing cache: per-file `SessionInfo` summaries kept between runs, keyed by path and
//! validated by size, modification time (ns), change time and inode. A file whose stat differs in
//! any of these is read again, so an entry can never be stale; a deleted file simply stops being
//! asked for and is pruned on save. The cache file is disposable: missing, unreadable or damaged,
//! it is treated as empty (a damaged line only loses its own entry: each record has a checksum in
//! the index); deleting it is always safe.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fsio;
use crate::listing::{FileSummary, SummaryInfo};

mod blocks;
mod format;
#[cfg(test)]
mod tests;

use blocks::{record_checksum, stored_record, BlockWriter, BLOCK, LEVEL};
pub use blocks::{Blocks, Record, RecordAt};
#[cfg(test)]
pub(crate) use format::write_info;
use format::{parse_key, read_index, write_entry, write_index_line, FORMAT, TRAILER};

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

/// A hit: a summary computed in this run, or a record of the cache file, which is only read,
/// validated and decoded when used (on the worker that asked, see [`Hit::read`]).
#[derive(Debug, Clone)]
pub enum Hit {
    Fresh(Cached),
    /// The cache file's blocks and where the record is in them.
    Stored(Arc<Blocks>, RecordAt),
}

/// A stored summary as read: its fields, and the two texts' escaped bytes.
pub type StoredSummary<'a> = (SummaryInfo, &'a [u8], &'a [u8]);

/// A cache line that does not hold a summary (torn or edited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damaged;

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

impl ListCache {
    /// Read the cache at `file` (anything unreadable is ignored). Only the index at its end is
    /// read here; a summary is read and checked when it is used.
    pub fn load(file: PathBuf) -> ListCache {
        let mut cache = ListCache {
            file: Some(file.clone()),
            ..ListCache::default()
        };
        let Ok(f) = fsio::open_read(&file) else {
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
        if !make_cache_dir(&file)? {
            return Ok(());
        }
        let tmp = fsio::TempFile::create_private(&file)?;
        let io = |e: std::io::Error| crate::Error::io(&e, "write", &file);
        self.write_to(
            &mut std::io::BufWriter::with_capacity(1 << 20, tmp.file()),
            &io,
        )?;
        tmp.rename_over(&file, fsio::Durability::Buffered)?;
        self.dirty = false;
        remove_legacy(Some(&file));
        Ok(())
    }

    /// The cache file: its format line, the entries in zstd blocks (most recently asked first),
    /// the compressed index, and the fixed-size trailer that says where the index starts.
    fn write_to(
        &self,
        w: &mut impl Write,
        io: &impl Fn(std::io::Error) -> crate::Error,
    ) -> crate::Result<()> {
        let header = format!("{{\"format\":\"{FORMAT}\"}}\n");
        w.write_all(header.as_bytes()).map_err(io)?;
        let mut entries: Vec<(&String, &Entry)> = self.entries.iter().collect();
        entries.sort_unstable_by_key(|(_, e)| (!e.used, e.order));
        let mut block = BlockWriter {
            raw: Vec::with_capacity(BLOCK + (BLOCK >> 2)),
            pending: Vec::new(),
            wave: Vec::new(),
            threads: crate::cores::available().map_or(1, |n| n.min(4)),
            at: header.len() as u64,
            placed: Vec::with_capacity(entries.len()),
        };
        let mut line = String::new();
        for (i, (path, e)) in entries.iter().enumerate() {
            let start = block.raw.len();
            match &e.value {
                Stored::At(at) => {
                    // Unchanged records are copied from the old file (which stays readable
                    // through our descriptor until the rename over it replaces its name); a
                    // damaged one is dropped (its file is read again when next listed).
                    let Some(record) = self.data.as_ref().and_then(|d| stored_record(d, at)) else {
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
                block.seal(false, w, io)?;
            }
        }
        block.seal(true, w, io)?;
        let index_at = block.at;
        let mut text = String::with_capacity(block.placed.len() * 220);
        for (i, at) in &block.placed {
            let (path, e) = entries[*i];
            write_index_line(path, e.stamp, at, &mut text);
        }
        let index = zstd::bulk::compress(text.as_bytes(), LEVEL).map_err(io)?;
        w.write_all(&index).map_err(io)?;
        let mut trailer = format!("{{\"index\":{index_at}}}");
        while trailer.len() < TRAILER - 1 {
            trailer.push(' ');
        }
        trailer.push('\n');
        w.write_all(trailer.as_bytes()).map_err(io)?;
        w.flush().map_err(io)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Make the cache file's directory if it is missing; `false` when the cache is not to be written.
/// The cache never creates the agent dir: listing must not leave traces where the reference would
/// not (an agent dir that does not exist yet stays absent). Its own directory is made, inside an
/// agent dir that exists.
fn make_cache_dir(file: &Path) -> crate::Result<bool> {
    let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(true);
    };
    if dir.is_dir() {
        // Ours: made private by an older version's umask mode is narrowed now.
        fsio::narrow(dir, 0o700)?;
        return Ok(true);
    }
    let parent_exists = dir
        .parent()
        .is_none_or(|p| p.as_os_str().is_empty() || p.is_dir());
    if !parent_exists {
        return Ok(false);
    }
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut made = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut made, fsio::PRIVATE_DIR_MODE);
    if let Err(e) = made.create(dir) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(crate::Error::io(&e, "mkdir", dir));
        }
    }
    Ok(true)
}
