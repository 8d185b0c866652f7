//! The in-memory session: records (raw lines + what we read from them), the id index, labels, the
//! leaf, and the persistence rules of the reference (lazy first write, append per entry, rollback on
//! a failed write, full rewrites).

use crate::fxhash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};
use crate::file::scan::{self, ScannedRec};
use crate::file::{self, fingerprint, load_file, migrate, Line, LoadedFile};
use crate::fsio::{self, Durability};
use crate::ids;
use crate::json;
use crate::lock;
use crate::paths;
use crate::record::{self, key_truthy, Key, Kind, Meta};
use crate::reserve::Reservations;
use crate::text::Text;
use crate::timefmt;
use crate::tree::Piece;

mod prune;
pub use prune::Pruned;

/// One parsed record: its line (bytes in [`Session::text`]) and what we read from it.
#[derive(Debug, Clone)]
pub struct Rec {
    start: usize,
    end: usize,
    /// The line lives in the session file at `start..end` (big files are not held in memory),
    /// rather than in `Session::text`.
    in_file: bool,
    /// For file-backed lines: a fingerprint of the bytes, checked on every read so a file changed
    /// behind our back is reported instead of misread.
    check: u32,
    pub meta: Meta,
}

/// Files at least this big are read in a streaming pass and their lines left on disk until asked
/// for (`PI_SESSION_LAZY_BYTES` overrides it, e.g. for tests).
const LAZY_FILE_BYTES: u64 = 64 << 20;

/// Appended lines at least this long are not kept in memory once written: their records point
/// into the session file, as a big session's do, so a session that grows by megabytes of tool
/// output and images holds them once (as the caller's objects), not twice
/// (`PI_SESSION_BACKED_LINE_BYTES` overrides it, e.g. for tests). Shorter lines stay, so that
/// copying a branch does not read the file line by line.
const BACKED_LINE_BYTES: usize = 1024;

fn backed_line_min() -> usize {
    std::env::var("PI_SESSION_BACKED_LINE_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(BACKED_LINE_BYTES)
}

fn lazy_threshold() -> u64 {
    std::env::var("PI_SESSION_LAZY_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LAZY_FILE_BYTES)
}

/// The leaf pointer. The reference stores an id and resolves it through the index when used; an
/// id only ever becomes the leaf once it is in the index, so we keep its index slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf {
    /// Before the first entry (`resetLeaf()`, new session).
    Null,
    /// The index slot of the leaf id (possibly the [`crate::record::UNDEFINED`] key of id-less
    /// records, as the reference allows).
    Slot(u32),
}

const NO_SLOT: u32 = u32::MAX;

/// `Map<id, entry>` with JS Map semantics: iteration in first-insertion order of each id, a later
/// record with the same id replaces the value but not the position.
#[derive(Debug, Default, Clone)]
struct Index {
    slot_of: FxHashMap<Key, u32>,
    /// slot -> record position.
    slots: Vec<u32>,
}

impl Index {
    fn clear(&mut self) {
        self.slot_of.clear();
        self.slots.clear();
    }
    fn get(&self, key: &str) -> Option<u32> {
        self.slot_of.get(key).map(|&s| self.slots[s as usize])
    }
    /// Returns the key's slot and what to undo: `None` if the key was new, else the previous position.
    fn set(&mut self, key: &Key, pos: u32) -> (u32, Option<u32>) {
        if let Some(&slot) = self.slot_of.get(key) {
            let prev = self.slots[slot as usize];
            self.slots[slot as usize] = pos;
            (slot, Some(prev))
        } else {
            let slot = self.slots.len() as u32;
            self.slot_of.insert(key.clone(), slot);
            self.slots.push(pos);
            (slot, None)
        }
    }
    fn undo(&mut self, key: &str, prev: Option<u32>) {
        match prev {
            Some(p) => {
                if let Some(&slot) = self.slot_of.get(key) {
                    self.slots[slot as usize] = p;
                }
            }
            None => {
                self.slot_of.remove(key);
                self.slots.pop();
            }
        }
    }
    fn len(&self) -> usize {
        self.slots.len()
    }
}

/// Labels by target id, in JS Map order (first set; a clear then set moves to the end).
#[derive(Debug, Default, Clone)]
struct Labels {
    order: Vec<Option<(Key, u32)>>,
    at: FxHashMap<Key, usize>,
}

impl Labels {
    fn clear(&mut self) {
        self.order.clear();
        self.at.clear();
    }
    fn set(&mut self, target: &Key, label_pos: u32) {
        if let Some(&i) = self.at.get(target) {
            self.order[i] = Some((target.clone(), label_pos));
        } else {
            self.at.insert(target.clone(), self.order.len());
            self.order.push(Some((target.clone(), label_pos)));
        }
    }
    fn delete(&mut self, target: &str) {
        if let Some(i) = self.at.remove(target) {
            self.order[i] = None;
        }
    }
    fn get(&self, target: &str) -> Option<u32> {
        self.at
            .get(target)
            .and_then(|&i| self.order[i].as_ref().map(|(_, p)| *p))
    }
    fn iter(&self) -> impl Iterator<Item = (&Key, u32)> {
        self.order.iter().flatten().map(|(k, p)| (k, *p))
    }
}

/// What `newSession` produced.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: String,
    pub timestamp: String,
    pub file: Option<PathBuf>,
}

/// What happened when a file was loaded.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// The file had an old format version and was rewritten.
    pub migrated: bool,
    /// Where the original bytes were kept before that rewrite.
    pub backup: Option<PathBuf>,
    /// The file was empty and received a fresh header.
    pub initialized: bool,
    /// The file's records became the state (false: a fresh session was started for the path).
    pub loaded: bool,
}

/// `PI_SESSION_RESTORE_MISSING=1` (or `true`, `always`): restore mode for every manager.
fn restore_missing_from_env() -> bool {
    matches!(
        std::env::var("PI_SESSION_RESTORE_MISSING").as_deref(),
        Ok("1") | Ok("true") | Ok("always")
    )
}

/// How [`Session::append_with`] appends: naming a reserved id (consumed once the append
/// succeeded, kept if it fails), and durably (written at once, even before the first user or
/// assistant message, and fsynced, as `flush()` would make it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppendHow {
    pub reserved: bool,
    pub durable: bool,
}

/// The session store state behind one `SessionManager`.
#[derive(Debug)]
pub struct Session {
    cwd: String,
    session_dir: String,
    file: Option<PathBuf>,
    persist: bool,
    flushed: bool,
    session_id: String,
    text: Text,
    recs: Vec<Rec>,
    /// Per record: the index slot of its parent id, resolved once (NO_SLOT: look it up by key).
    parent_slot: Vec<u32>,
    /// Per record: the index slot of its own id (NO_SLOT for headers).
    rec_slot: Vec<u32>,
    index: Index,
    labels: Labels,
    leaf: Leaf,
    conversation: usize,
    durability: Durability,
    appender: fsio::Appender,
    /// The file that file-backed records are read from (kept open: the bytes stay reachable even
    /// if the path is replaced).
    reader: Option<(PathBuf, Arc<std::fs::File>)>,
    /// The appender's descriptor last checked (its `opened` number), and whether it writes the
    /// file `reader` reads: lines appended through it can then be read back from `reader`.
    /// Cleared with `reader` (`reset_state`).
    backed: Option<(u64, bool)>,
    /// Appended lines from this length on are read back from the file (see [`BACKED_LINE_BYTES`]).
    backed_min: usize,
    /// Exclusive mode and the lease it holds (see [`crate::lock`]).
    guard: lock::WriterGuard,
    /// Entry ids handed out for appends to come (see [`crate::reserve`]).
    reserved: Reservations,
    /// Restore a vanished directory or file at write time (see [`Session::set_restore_missing`]).
    restore_missing: bool,
    /// Changes with every call that may change the records, index, labels or leaf, so callers
    /// can keep what they derived from them until it changes (see [`Session::generation`]).
    generation: u64,
}

impl Session {
    /// A manager with no state yet; callers follow with `new_session`, `set_session_file` or
    /// `load_preloaded` as the reference's constructor does.
    pub fn blank(cwd: String, session_dir: String, persist: bool) -> Result<Session> {
        if persist && !session_dir.is_empty() {
            fsio::ensure_dir(Path::new(&session_dir))?;
        }
        Ok(Session {
            cwd,
            session_dir,
            file: None,
            persist,
            flushed: false,
            session_id: String::new(),
            text: Text::default(),
            recs: Vec::new(),
            parent_slot: Vec::new(),
            rec_slot: Vec::new(),
            index: Index::default(),
            labels: Labels::default(),
            leaf: Leaf::Null,
            conversation: 0,
            durability: Durability::from_env(),
            appender: fsio::Appender::default(),
            reader: None,
            backed: None,
            backed_min: backed_line_min(),
            guard: lock::WriterGuard::from_env(),
            reserved: Reservations::default(),
            restore_missing: restore_missing_from_env(),
            generation: 0,
        })
    }

    /// A number that differs after any change to records, index, labels or leaf.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn changed(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    // ----- simple accessors -------------------------------------------------------------------

    pub fn cwd(&self) -> &str {
        &self.cwd
    }
    pub fn session_dir(&self) -> &str {
        &self.session_dir
    }
    pub fn session_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }
    pub fn is_persisted(&self) -> bool {
        self.persist
    }
    pub fn is_flushed(&self) -> bool {
        self.flushed
    }
    pub fn session_id(&self) -> &str {
        &self.session_id
    }
    pub fn durability(&self) -> Durability {
        self.durability
    }
    pub fn set_durability(&mut self, d: Durability) {
        self.durability = d;
    }
    pub fn leaf(&self) -> Leaf {
        self.leaf
    }
    /// The leaf id as a key (`None` for a null leaf).
    pub fn leaf_key(&self) -> Option<&str> {
        match self.leaf {
            Leaf::Null => None,
            Leaf::Slot(slot) => Some(&self.recs[self.index.slots[slot as usize] as usize].meta.id),
        }
    }
    pub fn record_count(&self) -> usize {
        self.recs.len()
    }
    /// Approximate heap bytes held (lines, records, index), for telling a garbage-collected host
    /// how much memory a session keeps alive.
    pub fn memory_bytes(&self) -> usize {
        self.text.held_bytes()
            + self.recs.capacity() * (std::mem::size_of::<Rec>() + 8)
            + self.index.len() * 48
    }
    pub fn meta(&self, pos: u32) -> &Meta {
        &self.recs[pos as usize].meta
    }
    /// The raw bytes of a record's line (without its newline).
    pub fn line(&self, pos: u32) -> Result<std::borrow::Cow<'_, [u8]>> {
        let r = &self.recs[pos as usize];
        if !r.in_file {
            return Ok(std::borrow::Cow::Borrowed(&self.text[r.start..r.end]));
        }
        let (path, file) = self
            .reader
            .as_ref()
            .expect("file-backed records have a reader");
        let mut buf = vec![0u8; r.end - r.start];
        scan::read_exact_at(file, &mut buf, r.start as u64)
            .map_err(|e| Error::io(&e, "read", path))?;
        if fingerprint(&buf) != r.check {
            return Err(file_changed(path));
        }
        Ok(std::borrow::Cow::Owned(buf))
    }

    /// [`Session::line`] where the line stands for the entry itself (handed out or written): a
    /// skeleton does not, and is refused.
    pub fn full_line(&self, pos: u32) -> Result<std::borrow::Cow<'_, [u8]>> {
        if self.recs[pos as usize].meta.skeleton {
            return Err(Error::new(
                ErrorCode::Internal,
                format!("record {pos} is held by JavaScript only and has no JSON text"),
            ));
        }
        self.line(pos)
    }

    /// `getEntryCount()`: size of the id index.
    pub fn entry_count(&self) -> usize {
        self.index.len()
    }
    /// Position of the first header record (`getHeader()`).
    pub fn header_pos(&self) -> Option<u32> {
        self.recs
            .iter()
            .position(|r| r.meta.kind == Kind::Header)
            .map(|p| p as u32)
    }
    /// Positions of all non-header records in order (`getEntries()`).
    pub fn entry_positions(&self) -> Vec<u32> {
        (0..self.recs.len() as u32)
            .filter(|&p| self.recs[p as usize].meta.kind.is_entry())
            .collect()
    }
    /// `getEntriesSince(count)`: positions of the non-header records after the first `count`
    /// (the tail of [`Session::entry_positions`]); `None` when there are fewer than `count`.
    pub fn entry_positions_since(&self, count: usize) -> Option<Vec<u32>> {
        let mut skipped = 0;
        let mut out = Vec::new();
        for (p, r) in self.recs.iter().enumerate() {
            if r.meta.kind == Kind::Header {
                continue;
            }
            if skipped < count {
                skipped += 1;
            } else {
                out.push(p as u32);
            }
        }
        (skipped == count).then_some(out)
    }
    /// `byId.get(key)`.
    pub fn lookup(&self, key: &str) -> Option<u32> {
        self.index.get(key)
    }
    /// The record the leaf points at (`getLeafEntry()`): `None` for a null or falsy leaf id.
    pub fn leaf_pos(&self) -> Option<u32> {
        match self.leaf {
            Leaf::Slot(slot) => {
                let pos = self.index.slots[slot as usize];
                if key_truthy(&self.recs[pos as usize].meta.id) {
                    Some(pos)
                } else {
                    None
                }
            }
            _ => None,
        }
    }
    /// Label record position for a target (`getLabel`), the label text/timestamp live in that record.
    pub fn label_pos(&self, target: &str) -> Option<u32> {
        self.labels.get(target)
    }
    /// All labels in Map order: (target key, label record position).
    pub fn labels(&self) -> impl Iterator<Item = (&Key, u32)> {
        self.labels.iter()
    }
    /// The latest `session_info` record in file order (`getSessionName()` reads its `name`).
    pub fn session_name_pos(&self) -> Option<u32> {
        self.recs
            .iter()
            .rposition(|r| r.meta.kind == Kind::SessionInfo)
            .map(|p| p as u32)
    }
    /// `getChildren(parentId)`: indexed entries whose `parentId` key equals `parent`, in index order.
    pub fn children(&self, parent: &str) -> Vec<u32> {
        self.index
            .slots
            .iter()
            .copied()
            .filter(|&p| &*self.recs[p as usize].meta.parent == parent)
            .collect()
    }

    /// Number of index slots (distinct ids).
    pub fn slot_count(&self) -> usize {
        self.index.len()
    }
    /// The record currently holding an index slot.
    pub fn slot_pos(&self, slot: u32) -> u32 {
        self.index.slots[slot as usize]
    }
    /// The index slot of a record's own id (`None` for headers).
    pub fn record_slot(&self, pos: u32) -> Option<u32> {
        Some(self.rec_slot[pos as usize]).filter(|&s| s != NO_SLOT)
    }
    /// The slot of any key, including falsy ones (JS `Map.get` semantics).
    pub fn slot_of_key(&self, key: &str) -> Option<u32> {
        self.index.slot_of.get(key).copied()
    }
    /// The cached parent slot of a record, if its parent id is truthy and was known.
    pub fn cached_parent_slot(&self, pos: u32) -> Option<u32> {
        Some(self.parent_slot[pos as usize]).filter(|&s| s != NO_SLOT)
    }

    // ----- paths --------------------------------------------------------------------------------

    /// The parent record of `pos` through the index, if its `parentId` is truthy and known.
    pub fn parent_of(&self, pos: u32) -> Option<u32> {
        let slot = self.parent_slot[pos as usize];
        if slot != NO_SLOT {
            return Some(self.index.slots[slot as usize]);
        }
        let parent = &self.recs[pos as usize].meta.parent;
        if key_truthy(parent) {
            self.index.get(parent)
        } else {
            None
        }
    }

    /// Root-first path ending at `pos`. Stops at a missing parent and, unlike the reference (which
    /// loops forever), at the first record already on the path when `parentId` links form a cycle.
    pub fn path_to(&self, pos: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut seen = vec![false; self.recs.len()];
        let mut cur = Some(pos);
        while let Some(p) = cur {
            if std::mem::replace(&mut seen[p as usize], true) {
                break;
            }
            path.push(p);
            cur = self.parent_of(p);
        }
        path.reverse();
        path
    }

    /// `getBranch(fromId)`, with `start` = the key of `fromId ?? leafId` (None for null).
    pub fn branch_from(&self, start: Option<&str>) -> Vec<u32> {
        match start {
            Some(k) if key_truthy(k) => match self.index.get(k) {
                Some(p) => self.path_to(p),
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// The path the context functions use for the current leaf: a null leaf gives nothing; an
    /// unknown or falsy id falls back to the last non-header record.
    pub fn context_path(&self) -> Vec<u32> {
        let start = match self.leaf {
            Leaf::Null => return Vec::new(),
            Leaf::Slot(slot) => {
                let pos = self.index.slots[slot as usize];
                let found = if key_truthy(&self.recs[pos as usize].meta.id) {
                    Some(pos)
                } else {
                    None
                };
                found.or_else(|| {
                    self.recs
                        .iter()
                        .rposition(|r| r.meta.kind.is_entry())
                        .map(|p| p as u32)
                })
            }
        };
        start.map(|p| self.path_to(p)).unwrap_or_default()
    }

    // ----- state changes ------------------------------------------------------------------------

    fn reset_state(&mut self) {
        self.reserved.clear();
        self.text.clear();
        self.reader = None;
        self.backed = None;
        self.recs.clear();
        self.parent_slot.clear();
        self.rec_slot.clear();
        self.index.clear();
        self.labels.clear();
        self.leaf = Leaf::Null;
        self.conversation = 0;
    }

    fn push_record(&mut self, line: &[u8], meta: Meta) -> u32 {
        let pos = self.push_meta(meta);
        self.keep_in_text(pos, line);
        pos
    }

    /// A record whose line is not placed yet ([`Session::keep_in_text`] or in the file).
    fn push_meta(&mut self, meta: Meta) -> u32 {
        let pos = self.recs.len() as u32;
        if meta.is_conversation_message() {
            self.conversation += 1;
        }
        self.recs.push(Rec {
            start: 0,
            end: 0,
            in_file: false,
            check: 0,
            meta,
        });
        self.parent_slot.push(NO_SLOT);
        self.rec_slot.push(NO_SLOT);
        pos
    }

    fn keep_in_text(&mut self, pos: u32, line: &[u8]) {
        let start = self.text.len();
        self.text.extend_from_slice(line);
        let r = &mut self.recs[pos as usize];
        (r.start, r.end, r.in_file, r.check) = (start, self.text.len(), false, 0);
    }

    /// Point the record at `pos` to `line`, just appended by the appender, in the session file.
    /// Without a `reader`, the appender's descriptor becomes it (no descriptor of our own). False
    /// when that cannot be done safely (the appender's file is not the one `reader` reads, or its
    /// descriptor is write-only): the caller keeps the line in memory then.
    fn back_by_file(&mut self, pos: u32, line: &[u8]) -> bool {
        let Some((opened, written, end)) = self.appender.last_write_end() else {
            return false;
        };
        let same = match self.backed {
            Some((checked, same)) if checked == opened => same,
            _ => {
                let same = match (&self.reader, written, &self.file) {
                    (Some((_, r)), Some(w), _) => fsio::same_file(r, &w),
                    // The descriptor written through becomes the one read from.
                    (None, Some(w), Some(path)) => {
                        self.reader = Some((path.clone(), w));
                        true
                    }
                    _ => false,
                };
                self.backed = Some((opened, same));
                same
            }
        };
        if !same {
            return false;
        }
        let Some(start) = end.checked_sub(line.len() as u64 + 1) else {
            return false;
        };
        let r = &mut self.recs[pos as usize];
        (r.start, r.end, r.in_file, r.check) = (
            start as usize,
            start as usize + line.len(),
            true,
            fingerprint(line),
        );
        true
    }

    /// Rebuild index, leaf and labels from the records (the reference's `_buildIndex`).
    fn build_index(&mut self) {
        self.index.clear();
        self.labels.clear();
        self.leaf = Leaf::Null;
        for pos in 0..self.recs.len() as u32 {
            let meta = &self.recs[pos as usize].meta;
            if !meta.kind.is_entry() {
                continue;
            }
            let id = meta.id.clone();
            let slot = self.index.set(&id, pos).0;
            self.rec_slot[pos as usize] = slot;
            self.leaf = Leaf::Slot(slot);
            if meta.kind == Kind::Label {
                let target = meta.target.clone();
                if meta.label_truthy {
                    self.labels.set(&target, pos);
                } else {
                    self.labels.delete(&target);
                }
            }
        }
        self.resolve_parents(0);
    }

    /// Cache parent slots for records from `from` on (ids only ever gain slots, so a slot stays valid).
    fn resolve_parents(&mut self, from: usize) {
        for pos in from..self.recs.len() {
            let parent = &self.recs[pos].meta.parent;
            self.parent_slot[pos] = if key_truthy(parent) {
                self.index.slot_of.get(parent).copied().unwrap_or(NO_SLOT)
            } else {
                NO_SLOT
            };
        }
    }

    /// `newSession(options)`: `custom_id` is validated first; `parent_session_json` is the JSON of
    /// `options.parentSession` (omitted when undefined). Never touches disk.
    pub fn new_session(
        &mut self,
        custom_id: Option<&str>,
        parent_session_json: Option<&str>,
    ) -> Result<NewSession> {
        self.changed();
        if let Some(id) = custom_id {
            if !ids::is_valid_session_id(id) {
                return Err(Error::new(
                    ErrorCode::InvalidSessionId,
                    ids::INVALID_SESSION_ID_MESSAGE,
                ));
            }
        }
        let (timestamp, ms) = timefmt::now_iso();
        let id = custom_id
            .map(str::to_owned)
            .unwrap_or_else(|| ids::session_uuid_v7(ms));
        let line = header_line(&id, &timestamp, &self.cwd, parent_session_json);
        self.reset_state();
        let meta = record::read_meta(line.as_bytes()).expect("header line is valid JSON");
        self.push_record(line.as_bytes(), meta);
        self.session_id = id.clone();
        self.flushed = false;
        if self.persist {
            self.file = Some(PathBuf::from(paths::join(
                &self.session_dir,
                &session_file_name(&timestamp, &id),
            )));
        }
        self.guard.follow(self.file.as_deref());
        Ok(NewSession {
            id,
            timestamp,
            file: self.file.clone(),
        })
    }

    /// `setSessionFile(path)` with an already resolved path.
    pub fn set_session_file(&mut self, path: PathBuf) -> Result<LoadReport> {
        self.changed();
        self.set_session_file_with(path, None)
    }

    /// As [`Session::set_session_file`], reusing a file already read by the caller.
    pub fn set_session_file_with(
        &mut self,
        path: PathBuf,
        preloaded: Option<LoadedFile>,
    ) -> Result<LoadReport> {
        self.changed();
        if self.persist {
            self.guard.before_open(&path)?;
        }
        // The reference records the path before reading, so it stays set even when loading throws.
        self.file = Some(path.clone());
        self.guard.follow(Some(&path));
        let big =
            std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() >= lazy_threshold());
        if preloaded.is_none() && big {
            if let Some(report) = self.load_streaming(&path)? {
                self.file = Some(path);
                self.flushed = true;
                return Ok(report);
            }
        }
        let loaded = match preloaded {
            Some(l) => Some(l),
            None => load_file(&path)?,
        };
        match loaded {
            None => {
                self.new_session(None, None)?;
                self.file = Some(path);
                Ok(LoadReport::default())
            }
            Some(loaded) if !loaded.has_valid_header() => {
                if !loaded.text.is_empty() {
                    return Err(Error::new(
                        ErrorCode::InvalidSessionFile,
                        format!("Session file is not a valid pi session: {}", path.display()),
                    ));
                }
                self.new_session(None, None)?;
                self.file = Some(path);
                self.rewrite_file()?;
                self.flushed = true;
                Ok(LoadReport {
                    initialized: true,
                    ..LoadReport::default()
                })
            }
            Some(loaded) => {
                self.file = Some(path);
                let report = self.load_records(loaded)?;
                self.flushed = true;
                Ok(LoadReport {
                    loaded: true,
                    ..report
                })
            }
        }
    }

    /// Take a file's records as the state (`_loadEntries` with a header present), migrating old
    /// versions and rewriting the file when persisting.
    fn load_records(&mut self, loaded: LoadedFile) -> Result<LoadReport> {
        let mut report = LoadReport::default();
        let leading = loaded.leading();
        let migration = migrate::migrate_file(&loaded);
        if let (Some(m), true, Some(file)) = (&migration, self.persist, self.file.clone()) {
            self.guard.before_write(&file)?;
            report.backup = Some(fsio::backup(&file, &loaded.text)?);
            fsio::replace_atomic(&file, &m.file_bytes)?;
            report.migrated = true;
        }
        // Records keep pointing into the file's bytes (no copy); a migration brings its own text.
        let (text, lines): (Vec<u8>, Vec<Line>) = match migration {
            Some(m) => (
                m.text,
                m.records.into_iter().map(|(s, e)| (s, e, None)).collect(),
            ),
            None => (
                loaded.text,
                loaded
                    .lines
                    .into_iter()
                    .filter(|(_, _, m)| m.is_some())
                    .collect(),
            ),
        };
        self.reset_state();
        self.text = Text::loaded(text);
        self.recs.reserve(lines.len());
        for (s, e, meta) in lines {
            let Some(meta) = meta.or_else(|| record::read_meta(&self.text[s..e])) else {
                continue;
            };
            if meta.is_conversation_message() {
                self.conversation += 1;
            }
            self.recs.push(Rec {
                start: s,
                end: e,
                in_file: false,
                check: 0,
                meta,
            });
            self.parent_slot.push(NO_SLOT);
            self.rec_slot.push(NO_SLOT);
        }
        // A migration's records were read again: they lead the header as they did in the file.
        for r in &mut self.recs[..leading] {
            r.meta.kind = Kind::Leading;
        }
        self.session_id = match self.header_pos() {
            Some(p) => header_id_string(&self.line(p)?),
            None => String::new(),
        };
        self.build_index();
        Ok(report)
    }

    /// Load a big file in one streaming pass: only what we read from each line is kept; the
    /// lines stay in the file and are read back when an entry is asked for. Returns `Ok(None)`
    /// when the file needs the in-memory path (not a valid session, or an old version to migrate).
    fn load_streaming(&mut self, path: &Path) -> Result<Option<LoadReport>> {
        let Some(scan) = scan::scan_file(path)? else {
            return Ok(None);
        };
        let header_ok = scan
            .recs
            .iter()
            .find(|r| r.2.kind != Kind::Leading)
            .is_some_and(|r| r.2.kind == Kind::Header && r.2.header_id_is_string);
        if !header_ok || scan.header_version < 3.0 {
            return Ok(None);
        }
        file::end_torn_tail(path, scan.ends_with_newline)?;
        let reader = std::fs::File::open(path).map_err(|e| Error::io(&e, "open", path))?;
        self.adopt_scan(path, scan.recs, scan.header_id, reader);
        Ok(Some(LoadReport {
            loaded: true,
            ..LoadReport::default()
        }))
    }

    /// Take the records of a scanned file as the state; their lines stay in the file (`reader`).
    fn adopt_scan(
        &mut self,
        path: &Path,
        recs: Vec<ScannedRec>,
        session_id: String,
        reader: std::fs::File,
    ) {
        self.reset_state();
        self.reader = Some((path.to_path_buf(), Arc::new(reader)));
        let recs = recs.into_iter().map(|(start, end, meta, check)| Rec {
            start,
            end,
            in_file: true,
            check,
            meta,
        });
        self.adopt_recs(recs, session_id);
    }

    /// The shared tail of [`Session::adopt_scan`] and [`Session::adopt_text`]: take `recs` (on a
    /// reset state) and index them.
    fn adopt_recs(&mut self, recs: impl ExactSizeIterator<Item = Rec>, session_id: String) {
        self.recs.reserve(recs.len());
        for rec in recs {
            if rec.meta.is_conversation_message() {
                self.conversation += 1;
            }
            self.recs.push(rec);
        }
        self.parent_slot = vec![NO_SLOT; self.recs.len()];
        self.rec_slot = vec![NO_SLOT; self.recs.len()];
        self.session_id = session_id;
        self.build_index();
    }

    /// Open the file `forkFrom` just wrote, as [`Session::set_session_file`] would, reusing what
    /// the fork learned about its lines instead of reading the file again when it is big enough
    /// to be read lazily anyway (a smaller one is simply read).
    pub fn set_session_file_forked(&mut self, forked: Forked) -> Result<LoadReport> {
        self.changed();
        let Forked {
            file,
            scan,
            reader,
            bytes,
        } = forked;
        let (Some((recs, header_id)), true) = (scan, bytes >= lazy_threshold()) else {
            drop(reader);
            return self.set_session_file(file);
        };
        if self.persist {
            self.guard.before_open(&file)?;
        }
        self.guard.follow(Some(&file));
        self.adopt_scan(&file, recs, header_id, reader);
        self.file = Some(file);
        self.flushed = true;
        Ok(LoadReport {
            loaded: true,
            ..LoadReport::default()
        })
    }

    /// `inMemory(cwd, options, entries)` / the constructor with preloaded entries. `lines` are the
    /// JSON texts of the entries. With a header among them they become the state (migrated when old);
    /// without, a new session is started and they are appended after its header unmigrated.
    ///
    /// With `skeletons`, the lines of all but headers and labels are skeletons of objects JS keeps
    /// (see [`Session::append_skeleton`]); they must be current already (JS migrates the objects).
    pub fn load_preloaded(&mut self, lines: Vec<String>, skeletons: bool) -> Result<LoadReport> {
        self.changed();
        self.check_skeletons(skeletons)?;
        let loaded = LoadedFile::parse(join_lines(&lines));
        if skeletons && migrate::migrate_file(&loaded).is_some() {
            return Err(Error::new(
                ErrorCode::Internal,
                "skeleton entries of an old version cannot be migrated",
            ));
        }
        let report = self.load_records(loaded)?;
        if skeletons {
            self.mark_skeletons(0);
        }
        Ok(report)
    }

    /// Skeletons only ever live in a session that never writes: this is what keeps them out of
    /// every file (writing paths read lines without asking whether they are skeletons).
    fn check_skeletons(&self, skeletons: bool) -> Result<()> {
        if skeletons && self.persist {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "skeleton entries in a session that writes",
            ));
        }
        Ok(())
    }

    /// Records from `from` on, but headers and labels, are skeletons.
    fn mark_skeletons(&mut self, from: usize) {
        for r in &mut self.recs[from..] {
            r.meta.skeleton = !matches!(r.meta.kind, Kind::Header | Kind::Label);
        }
    }

    /// `inMemory(cwd, options, entries)` where every entry is an object made from a record of
    /// `source` (JS keeps track of that): the records at `positions` are taken from `source`, with
    /// their metas, instead of the entries being serialized and parsed again. No line is copied:
    /// lines held in memory are shared with `source` (see [`Text::sharing`]), lines of a big
    /// session stay in its file, read through a descriptor of our own. The first record must be a
    /// header. Nothing is written, nothing migrated (the source's records are current already).
    pub fn load_records_of(&mut self, source: &mut Session, positions: &[u32]) -> Result<()> {
        self.changed();
        let recs: Vec<Rec> = positions
            .iter()
            .map(|&p| source.recs.get(p as usize).cloned())
            .collect::<Option<_>>()
            .ok_or_else(|| {
                Error::new(ErrorCode::InvalidArgument, "record position out of range")
            })?;
        self.check_skeletons(recs.iter().any(|r| r.meta.skeleton))?;
        if recs.first().is_none_or(|r| r.meta.kind != Kind::Header) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the first record is not a header",
            ));
        }
        let session_id = header_id_string(&source.line(positions[0])?);
        // The copy reads through the same descriptor (its file stays open as long as either does).
        let reader = match (&source.reader, recs.iter().any(|r| r.in_file)) {
            (Some((path, file)), true) => Some((path.clone(), Arc::clone(file))),
            _ => None,
        };
        // The records keep their offsets into the shared bytes.
        let text = Text::sharing(&mut source.text);
        self.reset_state();
        self.text = text;
        self.reader = reader;
        self.adopt_recs(recs.into_iter(), session_id);
        Ok(())
    }

    /// Preloaded entries without a header: appended after the current (new) header unmigrated, then
    /// indexed; nothing is written.
    /// `skeletons` as for [`Session::load_preloaded`].
    pub fn push_preloaded(&mut self, lines: Vec<String>, skeletons: bool) -> Result<()> {
        self.changed();
        self.check_skeletons(skeletons)?;
        let loaded = LoadedFile::parse(join_lines(&lines));
        let first = self.recs.len();
        for (line, meta) in loaded.records() {
            let meta = meta.clone();
            self.push_record(line, meta);
        }
        if skeletons {
            self.mark_skeletons(first);
        }
        self.build_index();
        Ok(())
    }

    /// A fresh entry id that is not in the index.
    pub fn next_entry_id(&self) -> String {
        ids::entry_id(|id| self.index.slot_of.contains_key(&*record::string_key(id)))
    }

    /// Append one entry line (compact JSON text of an object, as `JSON.stringify` writes it, without
    /// newline) as the new leaf, persisting it per the
    /// lazy-write rules. On a failed write, memory is restored exactly (entry, index, leaf) and the
    /// error is returned.
    pub fn append(&mut self, line: &[u8]) -> Result<u32> {
        self.append_record(line, false, AppendHow::default())
    }

    /// [`Session::append`] (or [`Session::append_skeleton`]) of an entry that names a reserved
    /// id, or that must be durable at once (see [`AppendHow`]).
    pub fn append_with(&mut self, line: &[u8], skeleton: bool, how: AppendHow) -> Result<u32> {
        if skeleton {
            self.check_skeletons(true)?;
        }
        self.append_record(line, skeleton, how)
    }

    /// `reserveEntryId()`: a new id that no entry has and that is not reserved yet, now reserved
    /// for an append that names it (see [`crate::reserve`]).
    pub fn reserve_entry_id(&mut self) -> String {
        let index = &self.index;
        self.reserved.reserve(|key| index.slot_of.contains_key(key))
    }

    /// `releaseEntryId(id)` by key; false when the id was not reserved.
    pub fn release_entry_id(&mut self, key: &str) -> bool {
        self.reserved.release(key)
    }

    /// [`Session::append`] for a session that never writes (`inMemory`), given only a skeleton of
    /// the entry: a JSON object with the members the structure reads (see `record::Meta`), while
    /// JavaScript keeps the entry itself. The reference never serializes such an entry, so it
    /// accepts values `JSON.stringify` refuses (BigInt, cycles), and so does this. The skeleton
    /// is never handed out as the entry, nor written: both are refused as internal errors.
    pub fn append_skeleton(&mut self, line: &[u8]) -> Result<u32> {
        self.check_skeletons(true)?;
        self.append_record(line, true, AppendHow::default())
    }

    fn append_record(&mut self, line: &[u8], skeleton: bool, how: AppendHow) -> Result<u32> {
        self.changed();
        let mut meta = record::read_meta_trusted(line)
            .ok_or_else(|| Error::new(ErrorCode::InvalidArgument, "entry is not a JSON object"))?;
        meta.skeleton = skeleton;
        // New entries must not shadow an existing id (callers pick a fresh one and retry), nor
        // take a reserved one unless they name it.
        let in_session = self.index.slot_of.contains_key(&meta.id);
        if how.reserved {
            self.reserved.check(&meta.id, in_session)?;
        } else if in_session || self.reserved.contains(&meta.id) {
            return Err(Error::new(
                ErrorCode::IdTaken,
                format!("Entry id {} is already in use", meta.id),
            ));
        }
        let id = meta.id.clone();
        let is_label = meta.kind == Kind::Label;
        let (target, label_truthy) = (meta.target.clone(), meta.label_truthy);
        let text_len = self.text.len();
        // A long line appended to the file (flushed already) is read back from there when needed.
        let to_file = self.persist
            && self.flushed
            && self.file.is_some()
            && line.len() >= self.backed_min
            && cfg!(unix);
        let pos = if to_file {
            self.push_meta(meta)
        } else {
            self.push_record(line, meta)
        };
        let (slot, prev_index) = self.index.set(&id, pos);
        self.rec_slot[pos as usize] = slot;
        let prev_leaf = std::mem::replace(&mut self.leaf, Leaf::Slot(slot));
        // `line` is what was just pushed: written from the caller's bytes, not copied back out.
        let persisted = self.persist_line(line, how.durable, true);
        if persisted.is_ok() && to_file && !self.back_by_file(pos, line) {
            self.keep_in_text(pos, line);
        }
        if let Err(e) = persisted {
            let rec = self.recs.pop().expect("just pushed");
            self.parent_slot.pop();
            self.rec_slot.pop();
            if rec.meta.is_conversation_message() {
                self.conversation -= 1;
            }
            self.text.truncate(text_len);
            self.index.undo(&id, prev_index);
            self.leaf = prev_leaf;
            return Err(e);
        }
        self.resolve_parents(pos as usize);
        if how.reserved {
            self.reserved.release(&id);
        }
        if is_label {
            if label_truthy {
                self.labels.set(&target, pos);
            } else {
                self.labels.delete(&target);
            }
        }
        Ok(pos)
    }

    /// The reference's public `_persist(entry)` for an arbitrary entry JSON (not added to memory).
    pub fn persist_external(&mut self, line: &[u8]) -> Result<()> {
        self.persist_line(line, false, false)
    }

    /// Restore mode (off by default, as the reference: `PI_SESSION_RESTORE_MISSING=1` turns it on
    /// for every manager). On, a write that finds the session file's directory gone (an
    /// `rm -rf` of the sessions dir between two turns, a file opened in a directory never made)
    /// makes it again instead of failing with `ENOENT`; and an append that finds the file itself
    /// gone writes the whole session back, every record held and the new line, rather than a
    /// file of that one line. The file written back is complete or absent (temp file, linked into
    /// place; fsynced with fsync per write) and follows the same lease rules.
    pub fn set_restore_missing(&mut self, on: bool) {
        self.restore_missing = on;
    }

    pub fn restores_missing(&self) -> bool {
        self.restore_missing
    }

    /// `_persist`: before the first write nothing happens until the session holds a user or
    /// assistant message, then the whole session is written at once; afterwards `line` is appended.
    /// `durable` (an append with `flush`): written now even before such a message, and fsynced.
    /// `held`: `line` is the last record's (an append), not one written without being held.
    fn persist_line(&mut self, line: &[u8], durable: bool, held: bool) -> Result<()> {
        if !self.persist {
            return Ok(());
        }
        let durability = if durable {
            Durability::Fsync
        } else {
            self.durability
        };
        if !self.flushed {
            let Some(file) = self.file.clone() else {
                return Ok(());
            };
            if self.conversation == 0 && !durable {
                return Ok(());
            }
            self.guard.before_write(&file)?;
            if self.restore_missing && fsio::ensure_parent(&file, durability)? {
                self.guard.renew(&file)?;
            }
            fsio::create_new(&file, &self.all_lines()?, durability)?;
            self.flushed = true;
            return Ok(());
        }
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        self.guard.before_write(&file)?;
        if self.restore_missing && self.appender.reopens(&file) && !fsio::exists(&file) {
            return self.write_back(&file, Some(line), held, durability);
        }
        self.appender.append_line(&file, line, durability)
    }

    /// Restore mode: the session file is gone. Write it again whole (every record held, then
    /// `line` unless it is the last record's), making its directory first if that went too.
    fn write_back(
        &mut self,
        file: &Path,
        line: Option<&[u8]>,
        held: bool,
        durability: Durability,
    ) -> Result<()> {
        if fsio::ensure_parent(file, durability)? {
            self.guard.renew(file)?;
        }
        // The appender's descriptor is of the old file: the next append opens the new one, and
        // no record may be pointed into the old one by this write.
        self.appender.close();
        let count = self.recs.len() - usize::from(held);
        let extra = line.map_or(0, |l| l.len() + 1);
        let mut bytes = Vec::with_capacity(self.text.len() + extra + count);
        for pos in 0..count as u32 {
            bytes.extend_from_slice(&self.full_line(pos)?);
            bytes.push(b'\n');
        }
        if let Some(line) = line {
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
        let mut tmp = fsio::TempFile::create(file)?;
        tmp.write_all(&bytes)?;
        tmp.link_new(file, durability).map(drop)
    }

    fn all_lines(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.text.len() + self.recs.len());
        for pos in 0..self.recs.len() as u32 {
            out.extend_from_slice(&self.full_line(pos)?);
            out.push(b'\n');
        }
        Ok(out)
    }

    /// Full rewrite of the session file with every in-memory record (atomic replace).
    fn rewrite_file(&mut self) -> Result<()> {
        if !self.persist {
            return Ok(());
        }
        match self.file.clone() {
            Some(f) => {
                self.guard.before_write(&f)?;
                fsio::replace_atomic(&f, &self.all_lines()?)
            }
            None => Ok(()),
        }
    }

    /// Exclusive mode (see [`crate::lock`]). On: the lease of the session file is taken at once if
    /// the file exists, else before the first write (`SESSION_LOCKED` if another process holds it;
    /// the mode stays on). Off: the lease is released.
    pub fn set_exclusive(&mut self, on: bool) -> Result<()> {
        let existing = self
            .file
            .as_deref()
            .filter(|f| self.persist && fsio::exists(f));
        self.guard.set_exclusive(on, existing)
    }

    pub fn is_exclusive(&self) -> bool {
        self.guard.is_exclusive()
    }

    /// Make the session durable now: a session not written yet (no user or assistant message
    /// so far) gets its file at once, header and every entry held, as its first write would
    /// write them; then the file is fsynced (a new file's directory too). Later appends add their
    /// line to that file, so it ends up as the lazy first write would have left it. Returns
    /// whether the session persists (false: in-memory, nothing to do). Idempotent: a second call
    /// only fsyncs again.
    pub fn flush(&mut self) -> Result<bool> {
        if !self.persist {
            return Ok(false);
        }
        let Some(file) = self.file.clone() else {
            return Ok(false);
        };
        if self.flushed && self.restore_missing && !fsio::exists(&file) {
            self.guard.before_write(&file)?;
            self.write_back(&file, None, false, Durability::Fsync)?;
        } else if self.flushed {
            fsio::fsync_file(&file)?;
        } else {
            self.guard.before_write(&file)?;
            if self.restore_missing && fsio::ensure_parent(&file, Durability::Fsync)? {
                self.guard.renew(&file)?;
            }
            fsio::create_new(&file, &self.all_lines()?, Durability::Fsync)?;
            self.flushed = true;
        }
        Ok(true)
    }

    /// `branch(id)`.
    pub fn branch(&mut self, key: &str, display_id: &str) -> Result<()> {
        self.changed();
        if self.index.get(key).is_none() {
            return Err(Error::entry_not_found(display_id));
        }
        self.leaf = Leaf::Slot(self.index.slot_of[key]);
        Ok(())
    }

    /// Set the leaf to an id key, or to null (used by `branchWithSummary` before its append).
    /// An id that is not in the index leaves a null leaf (callers check existence first).
    pub fn set_leaf_key(&mut self, key: Option<&str>) {
        self.changed();
        self.leaf = match key.and_then(|k| self.index.slot_of.get(k)) {
            Some(&slot) => Leaf::Slot(slot),
            None => Leaf::Null,
        };
    }

    pub fn reset_leaf(&mut self) {
        self.changed();
        self.leaf = Leaf::Null;
    }

    /// Replace the whole state by records held in `text` (used by `createBranchedSession`).
    fn adopt_text(&mut self, text: Vec<u8>, recs: Vec<(usize, usize, Meta)>, session_id: String) {
        self.reset_state();
        self.text = Text::loaded(text);
        let recs = recs.into_iter().map(|(start, end, meta)| Rec {
            start,
            end,
            in_file: false,
            check: 0,
            meta,
        });
        self.adopt_recs(recs, session_id);
    }

    fn piece_len(&self, piece: &Piece) -> usize {
        match piece {
            Piece::Same(pos) => {
                let r = &self.recs[*pos as usize];
                r.end - r.start
            }
            Piece::New { line, .. } => line.len(),
        }
    }

    /// `createBranchedSession(leafId)`; `start` is the key of `leafId ?? current leaf`, `display`
    /// its text for the error. The new file is written (when it must be) before memory changes, so a
    /// failed write leaves the manager as it was.
    ///
    /// Lines that stay as they were ([`Piece::Same`]) are copied without being parsed. A new file
    /// big enough to be read lazily is written by streaming (runs of lines that follow each other
    /// in the old file in one read and one write), and the new session's records are left in it,
    /// as opening it would; a smaller one is built in memory and written at once.
    pub fn create_branched_session(
        &mut self,
        start: Option<&str>,
        display: &str,
    ) -> Result<Option<PathBuf>> {
        self.changed();
        let path = self.branch_from(start);
        if path.is_empty() {
            return Err(Error::entry_not_found(display));
        }
        let plan = crate::tree::branched_lines(self, &path)?;
        let (timestamp, ms) = timefmt::now_iso();
        let new_id = ids::session_uuid_v7(ms);
        let parent_json = match (&self.file, self.persist) {
            (Some(f), true) => Some(json::string_to_json(&f.to_string_lossy())),
            _ => None,
        };
        let header =
            header_line(&new_id, &timestamp, &self.cwd, parent_json.as_deref()).into_bytes();
        // The new records' metas (the lines were written by us or are unchanged).
        let mut metas = Vec::with_capacity(plan.len() + 1);
        metas.push(record::read_meta_trusted(&header).expect("header line is a JSON object"));
        for piece in &plan {
            metas.push(match piece {
                Piece::Same(pos) => self.meta(*pos).clone(),
                Piece::New { line, from } => {
                    let mut meta =
                        record::read_meta_trusted(line).expect("generated lines are JSON objects");
                    // A line made from a skeleton is one too.
                    meta.skeleton = self.meta(*from).skeleton;
                    meta
                }
            });
        }
        let has_conversation = metas.iter().any(|m| m.is_conversation_message());
        let new_file = self.persist.then(|| {
            PathBuf::from(paths::join(
                &self.session_dir,
                &session_file_name(&timestamp, &new_id),
            ))
        });
        let write_to = new_file.as_deref().filter(|_| has_conversation);
        let total: usize =
            header.len() + 1 + plan.iter().map(|p| self.piece_len(p) + 1).sum::<usize>();
        if let Some(target) = write_to.filter(|_| total as u64 >= lazy_threshold()) {
            self.guard.before_write(target)?;
            let (recs, reader) = match self.write_branched_file(target, &header, &plan, metas) {
                Ok(done) => done,
                Err(e) => {
                    self.guard.follow(self.file.as_deref());
                    return Err(e);
                }
            };
            self.adopt_scan(target, recs, new_id, reader);
        } else {
            let mut text = Vec::with_capacity(total);
            let mut recs = Vec::with_capacity(metas.len());
            let mut metas = metas.into_iter();
            for line in std::iter::once(Ok(std::borrow::Cow::Borrowed(&header[..]))).chain(
                plan.iter().map(|piece| match piece {
                    Piece::Same(pos) => self.line(*pos),
                    Piece::New { line, .. } => Ok(std::borrow::Cow::Borrowed(&line[..])),
                }),
            ) {
                let line = line?;
                let start = text.len();
                text.extend_from_slice(&line);
                recs.push((start, text.len(), metas.next().expect("one meta per line")));
                text.push(b'\n');
            }
            if let Some(target) = write_to {
                self.guard.before_write(target)?;
                let written = fsio::TempFile::create(target).and_then(|mut tmp| {
                    tmp.write_all(&text)?;
                    tmp.rename_over(target, self.durability)
                });
                if let Err(e) = written {
                    self.guard.follow(self.file.as_deref());
                    return Err(e);
                }
            }
            self.adopt_text(text, recs, new_id);
        }
        if self.persist {
            self.file = new_file.clone();
            self.guard.follow(self.file.as_deref());
            self.flushed = has_conversation;
        }
        Ok(new_file)
    }

    /// Stream a branched session into `target`: the header, then each piece. Returns the records
    /// `(start, end, meta, fingerprint)` in the new file and the file, open.
    fn write_branched_file(
        &self,
        target: &Path,
        header: &[u8],
        plan: &[Piece],
        metas: Vec<Meta>,
    ) -> Result<(Vec<ScannedRec>, std::fs::File)> {
        /// The new file so far and its records.
        struct Sink {
            tmp: fsio::TempFile,
            recs: Vec<ScannedRec>,
            at: usize,
        }
        impl Sink {
            fn put(&mut self, line: &[u8], meta: Meta, check: u32) -> Result<()> {
                self.tmp.write_all(line)?;
                self.tmp.write_all(b"\n")?;
                self.recs.push((self.at, self.at + line.len(), meta, check));
                self.at += line.len() + 1;
                Ok(())
            }
        }
        let mut out = Sink {
            tmp: fsio::TempFile::create(target)?,
            recs: Vec::with_capacity(metas.len()),
            at: 0,
        };
        let mut metas = metas.into_iter();
        let mut meta = || metas.next().expect("one meta per line");
        out.put(header, meta(), fingerprint(header))?;
        let mut buf: Vec<u8> = Vec::new();
        let mut i = 0;
        while i < plan.len() {
            let pos = match &plan[i] {
                Piece::New { line, .. } => {
                    out.put(line, meta(), fingerprint(line))?;
                    i += 1;
                    continue;
                }
                Piece::Same(pos) => *pos as usize,
            };
            let first = &self.recs[pos];
            if !first.in_file {
                let line = &self.text[first.start..first.end];
                out.put(line, meta(), fingerprint(line))?;
                i += 1;
                continue;
            }
            // A run of lines that follow each other in the session file, up to a buffer's worth:
            // one read, checked line by line, one write.
            let base = first.start;
            let mut end = first.end;
            let mut j = i + 1;
            while let Some(Piece::Same(q)) = plan.get(j) {
                let r = &self.recs[*q as usize];
                if !r.in_file || r.start != end + 1 || r.end + 1 - base > scan::CHUNK_BYTES {
                    break;
                }
                end = r.end;
                j += 1;
            }
            let (path, file) = self
                .reader
                .as_ref()
                .expect("file-backed records have a reader");
            buf.resize(end + 1 - base, 0);
            scan::read_exact_at(file, &mut buf, base as u64)
                .map_err(|e| Error::io(&e, "read", path))?;
            for piece in &plan[i..j] {
                let Piece::Same(q) = piece else {
                    unreachable!("runs hold unchanged lines only")
                };
                let r = &self.recs[*q as usize];
                let line = &buf[r.start - base..r.end - base];
                if fingerprint(line) != r.check || buf[r.end - base] != b'\n' {
                    return Err(file_changed(path));
                }
                let at = out.at + r.start - base;
                out.recs.push((at, at + line.len(), meta(), r.check));
            }
            out.tmp.write_all(&buf)?;
            out.at += buf.len();
            i = j;
        }
        let file = out.tmp.rename_over(target, self.durability)?;
        Ok((out.recs, file))
    }
}

fn file_changed(path: &Path) -> Error {
    Error::new(
        ErrorCode::FileChanged,
        format!(
            "Session file changed on disk since it was opened: {}",
            path.display()
        ),
    )
}

fn join_lines(lines: &[String]) -> Vec<u8> {
    let mut text = Vec::new();
    for l in lines {
        text.extend_from_slice(l.as_bytes());
        text.push(b'\n');
    }
    text
}

/// A new session's file name: `<timestamp with : and . as ->_<id>.jsonl`, the name that is
/// joined onto the session dir (see [`paths::join`]).
fn session_file_name(timestamp: &str, id: &str) -> String {
    format!("{}_{}.jsonl", timefmt::file_timestamp(timestamp), id)
}

/// The header line exactly as the reference serializes it: `type, version, id, timestamp, cwd,
/// parentSession` (the last omitted when undefined).
pub fn header_line(
    id: &str,
    timestamp: &str,
    cwd: &str,
    parent_session_json: Option<&str>,
) -> String {
    let mut s = String::with_capacity(96 + cwd.len());
    s.push_str("{\"type\":\"session\",\"version\":3,\"id\":");
    s.push_str(&json::string_to_json(id));
    s.push_str(",\"timestamp\":");
    s.push_str(&json::string_to_json(timestamp));
    s.push_str(",\"cwd\":");
    s.push_str(&json::string_to_json(cwd));
    if let Some(p) = parent_session_json {
        s.push_str(",\"parentSession\":");
        s.push_str(p);
    }
    s.push('}');
    s
}

fn header_id_string(line: &[u8]) -> String {
    match json::parse(line) {
        Ok(v) => match v.get("id") {
            Some(json::Value::String(s)) => s.to_string_lossy(),
            _ => String::new(),
        },
        Err(_) => String::new(),
    }
}

/// What `forkFrom` wrote: the new file, and (unless the source needed a migration) its records as
/// a scan of the new file would find them, so the session opened on it need not read it again.
pub struct Forked {
    /// The new file, resolved against the process cwd.
    pub file: PathBuf,
    /// Records `(start, end, meta, fingerprint)` in the new file, and the new session id.
    scan: Option<(Vec<ScannedRec>, String)>,
    /// The new file, open for reading.
    reader: std::fs::File,
    bytes: u64,
}

fn fork_source_invalid(source: &Path) -> Error {
    Error::new(
        ErrorCode::ForkSourceInvalid,
        format!(
            "Cannot fork: source session file is empty or invalid: {}",
            source.display()
        ),
    )
}

/// `SessionManager.forkFrom` file work: copy every non-header record of `source` (migrated to v3
/// first, unlike the reference) under a new header into `dir`. The new file appears complete or
/// not at all (temp file, then an exclusive link), and an existing name fails with `EEXIST`.
/// Returns the new file's resolved path.
pub fn fork_file(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    custom_id: Option<&str>,
) -> Result<PathBuf> {
    fork(source, target_cwd, dir, custom_id, Durability::from_env()).map(|f| f.file)
}

/// The new file's name and header line (after the checks the reference makes before writing).
fn fork_target(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    custom_id: Option<&str>,
) -> Result<(PathBuf, String, String)> {
    fsio::ensure_dir(dir)?;
    if let Some(id) = custom_id {
        if !ids::is_valid_session_id(id) {
            return Err(Error::new(
                ErrorCode::InvalidSessionId,
                ids::INVALID_SESSION_ID_MESSAGE,
            ));
        }
    }
    let (timestamp, ms) = timefmt::now_iso();
    let id = custom_id
        .map(str::to_owned)
        .unwrap_or_else(|| ids::session_uuid_v7(ms));
    let file = paths::join_in(dir, &session_file_name(&timestamp, &id));
    let parent = json::string_to_json(&source.to_string_lossy());
    let header = header_line(&id, &timestamp, target_cwd, Some(&parent));
    Ok((file, header, id))
}

/// [`fork_file`], keeping what the new session needs to open the new file without reading it.
///
/// The source is read once, in chunks: each line is validated, read and checked for canonical
/// form in one pass, and runs of canonical records are written straight from the read buffer
/// (the reference writes `JSON.stringify(JSON.parse(line))`, which for them is the line itself).
/// A source that needs a migration (v1/v2) takes the in-memory path.
pub fn fork(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    custom_id: Option<&str>,
    durability: Durability,
) -> Result<Forked> {
    use scan::{chunk_lines, LineChunks, CHUNK_BYTES};
    let src = match std::fs::File::open(source) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(fork_source_invalid(source))
        }
        Err(e) => return Err(Error::io(&e, "open", source)),
    };
    let read_err = |e: std::io::Error| Error::io(&e, "read", source);
    let mut chunks = LineChunks::new(&src, CHUNK_BYTES);
    // Set once the first record turned out to be a valid v3 header.
    struct Out {
        file: PathBuf,
        tmp: fsio::TempFile,
        id: String,
        recs: Vec<ScannedRec>,
        /// Bytes written to `tmp`.
        written: usize,
    }
    let mut out: Option<Out> = None;
    while let Some((_, chunk)) = chunks.next_chunk().map_err(read_err)? {
        // Canonical records waiting to be written: a range of `chunk`.
        let mut run = 0..0;
        for (at, line, has_nl) in chunk_lines(chunk) {
            let Some(meta) = record::read_meta_canonical(line) else {
                continue;
            };
            let Some(o) = out.as_mut() else {
                // Records leading the header stay with the source (a fork is a file of its own);
                // a run of them not followed by a header fails on the record after it, or at
                // the end as a file without records does.
                if record::may_lead(&meta) {
                    continue;
                }
                // The first record decides: a valid header, and which path.
                if meta.kind != Kind::Header || !meta.header_id_is_string {
                    return Err(fork_source_invalid(source));
                }
                let version = migrate::header_version(line);
                let needs_migration = version.is_nan() || version < 3.0;
                // As `loadEntriesFromFile`: a final line without newline gets one.
                let len = src
                    .metadata()
                    .map_err(|e| Error::io(&e, "stat", source))?
                    .len();
                let mut last = [b'\n'; 1];
                if len > 0 {
                    scan::read_exact_at(&src, &mut last, len - 1).map_err(read_err)?;
                }
                file::end_torn_tail(source, last[0] == b'\n')?;
                if needs_migration {
                    return fork_migrated(source, target_cwd, dir, custom_id, durability);
                }
                let (file, header, id) = fork_target(source, target_cwd, dir, custom_id)?;
                let mut tmp = fsio::TempFile::create(&file)?;
                tmp.write_all(header.as_bytes())?;
                tmp.write_all(b"\n")?;
                let header_meta =
                    record::read_meta_trusted(header.as_bytes()).expect("header line is JSON");
                let recs = vec![(0, header.len(), header_meta, fingerprint(header.as_bytes()))];
                out = Some(Out {
                    file,
                    tmp,
                    id,
                    recs,
                    written: header.len() + 1,
                });
                continue;
            };
            if meta.kind == Kind::Header {
                continue;
            }
            if meta.canonical && has_nl {
                if run.end != at {
                    o.tmp.write_all(&chunk[run.clone()])?;
                    o.written += run.len();
                    run = at..at;
                }
                let start = o.written + run.len();
                run.end = at + line.len() + 1;
                o.recs
                    .push((start, start + line.len(), meta, fingerprint(line)));
                continue;
            }
            o.tmp.write_all(&chunk[run.clone()])?;
            o.written += run.len();
            run = 0..0;
            let (text, meta) = if meta.canonical {
                (std::borrow::Cow::Borrowed(line), meta)
            } else {
                // Records are written as JSON.stringify(JSON.parse(line)) would (a record
                // always parses: `read_meta` took it).
                let Some(n) = json::normalize(line) else {
                    continue;
                };
                let n = n.into_bytes();
                let meta = record::read_meta_trusted(&n).unwrap_or(meta);
                (std::borrow::Cow::Owned(n), meta)
            };
            o.tmp.write_all(&text)?;
            o.tmp.write_all(b"\n")?;
            o.recs
                .push((o.written, o.written + text.len(), meta, fingerprint(&text)));
            o.written += text.len() + 1;
        }
        if let Some(o) = out.as_mut() {
            o.tmp.write_all(&chunk[run.clone()])?;
            o.written += run.len();
        }
    }
    let Some(o) = out else {
        return Err(fork_source_invalid(source));
    };
    let reader = o.tmp.link_new(&o.file, durability)?;
    Ok(Forked {
        file: opened_as(&o.file),
        scan: Some((o.recs, o.id)),
        reader,
        bytes: o.written as u64,
    })
}

/// The fork is written to `join(dir, name)` (relative when the dir is), but the manager the
/// reference opens on it holds the resolved path (its constructor resolves the file it is given).
fn opened_as(written: &Path) -> PathBuf {
    PathBuf::from(paths::resolve(&written.to_string_lossy()))
}

/// [`fork`] of a source that needs a migration first (v1/v2 files: small and rare), in memory.
fn fork_migrated(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    custom_id: Option<&str>,
    durability: Durability,
) -> Result<Forked> {
    let loaded = match load_file(source)? {
        Some(l) if l.has_valid_header() => l,
        _ => return Err(fork_source_invalid(source)),
    };
    let (file, header, _) = fork_target(source, target_cwd, dir, custom_id)?;
    let mut out = header.into_bytes();
    out.push(b'\n');
    match migrate::migrate_file(&loaded) {
        Some(m) => {
            // Records leading the header stay with the source, as in the streaming fork.
            for (s, e) in m.records.iter().skip(loaded.leading()) {
                let line = &m.text[*s..*e];
                if record::read_meta(line).is_some_and(|meta| meta.kind != Kind::Header) {
                    out.extend_from_slice(line);
                    out.push(b'\n');
                }
            }
        }
        None => {
            for (line, meta) in loaded.records() {
                if !meta.kind.is_entry() {
                    continue;
                }
                // Records are written as JSON.stringify(JSON.parse(line)) would.
                if json::is_canonical(line) {
                    out.extend_from_slice(line);
                } else if let Some(n) = json::normalize(line) {
                    out.extend_from_slice(n.as_bytes());
                }
                out.push(b'\n');
            }
        }
    }
    let mut tmp = fsio::TempFile::create(&file)?;
    tmp.write_all(&out)?;
    let reader = tmp.link_new(&file, durability)?;
    Ok(Forked {
        file: opened_as(&file),
        scan: None,
        reader,
        bytes: out.len() as u64,
    })
}
