//! The in-memory session: records (raw lines + what we read from them), the id index, labels, the
//! leaf, and the persistence rules of the reference (lazy first write, append per entry, rollback on
//! a failed write, full rewrites).

use crate::fxhash::FxHashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode, Result};
use crate::fsio::{self, Durability};
use crate::ids;
use crate::json;
use crate::lock;
use crate::migrate;
use crate::record::{self, key_truthy, Key, Kind, Meta};
use crate::timefmt;

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

fn lazy_threshold() -> u64 {
    std::env::var("PI_SESSION_LAZY_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LAZY_FILE_BYTES)
}

/// Length and up to 16 bytes at each end, folded: cheap, and any rewrite in place changes it.
fn fingerprint(line: &[u8]) -> u32 {
    use std::hash::Hasher;
    let mut h = crate::fxhash::FxHasher::default();
    h.write_usize(line.len());
    h.write(&line[..line.len().min(16)]);
    h.write(&line[line.len().saturating_sub(16)..]);
    h.finish() as u32
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

/// A physical line: byte range in the text, and its meta when it is a record.
pub type Line = (usize, usize, Option<Meta>);

/// A file's lines as `loadEntriesFromFile` sees them.
pub struct LoadedFile {
    pub text: Vec<u8>,
    /// Every physical line (split on `\n`).
    pub lines: Vec<Line>,
}

impl LoadedFile {
    /// Split and read `text`. The final fragment after the last `\n` counts as a line.
    pub fn parse(text: Vec<u8>) -> LoadedFile {
        let mut lines = Vec::new();
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &text) {
            lines.push((start, nl, record::read_meta(&text[start..nl])));
            start = nl + 1;
        }
        if start < text.len() {
            lines.push((start, text.len(), record::read_meta(&text[start..])));
        }
        LoadedFile { text, lines }
    }

    /// `loadEntriesFromFile` accepts the file: its first record is a header with a string id.
    pub fn has_valid_header(&self) -> bool {
        match self.records().next() {
            Some((_, m)) => m.kind == Kind::Header && m.header_id_is_string,
            None => false,
        }
    }

    pub fn records(&self) -> impl Iterator<Item = (&[u8], &Meta)> {
        self.lines
            .iter()
            .filter_map(|(s, e, m)| m.as_ref().map(|m| (&self.text[*s..*e], m)))
    }

    pub fn ends_with_newline(&self) -> bool {
        self.text.is_empty() || self.text.last() == Some(&b'\n')
    }
}

/// Read a session file like `loadEntriesFromFile`: `None` when missing; when the header is valid and
/// the file does not end with a newline, one `\n` is appended to the file so later appends start on a
/// fresh line (nothing else is changed).
pub fn load_file(path: &Path) -> Result<Option<LoadedFile>> {
    let Some(text) = fsio::read_all(path)? else {
        return Ok(None);
    };
    let mut loaded = LoadedFile::parse(text);
    if loaded.has_valid_header() && !loaded.ends_with_newline() {
        fsio::append(path, b"\n", Durability::Buffered)?;
        loaded.text.push(b'\n');
    }
    Ok(Some(loaded))
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
    text: Vec<u8>,
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
    reader: Option<(PathBuf, std::fs::File)>,
    /// Exclusive mode and the lease it holds (see [`crate::lock`]).
    guard: lock::WriterGuard,
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
            text: Vec::new(),
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
            guard: lock::WriterGuard::from_env(),
        })
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
        self.text.capacity()
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
        crate::scan::read_exact_at(file, &mut buf, r.start as u64)
            .map_err(|e| Error::io(&e, "read", path))?;
        if fingerprint(&buf) != r.check {
            return Err(Error::new(
                ErrorCode::FileChanged,
                format!(
                    "Session file changed on disk since it was opened: {}",
                    path.display()
                ),
            ));
        }
        Ok(std::borrow::Cow::Owned(buf))
    }

    pub(crate) fn line_fingerprint(line: &[u8]) -> u32 {
        fingerprint(line)
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
            .filter(|&p| self.recs[p as usize].meta.kind != Kind::Header)
            .collect()
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
                        .rposition(|r| r.meta.kind != Kind::Header)
                        .map(|p| p as u32)
                })
            }
        };
        start.map(|p| self.path_to(p)).unwrap_or_default()
    }

    // ----- state changes ------------------------------------------------------------------------

    fn reset_state(&mut self) {
        self.text.clear();
        self.reader = None;
        self.recs.clear();
        self.parent_slot.clear();
        self.rec_slot.clear();
        self.index.clear();
        self.labels.clear();
        self.leaf = Leaf::Null;
        self.conversation = 0;
    }

    fn push_record(&mut self, line: &[u8], meta: Meta) -> u32 {
        let start = self.text.len();
        self.text.extend_from_slice(line);
        let pos = self.recs.len() as u32;
        if meta.is_conversation_message() {
            self.conversation += 1;
        }
        self.recs.push(Rec {
            start,
            end: self.text.len(),
            in_file: false,
            check: 0,
            meta,
        });
        self.parent_slot.push(NO_SLOT);
        self.rec_slot.push(NO_SLOT);
        pos
    }

    /// Rebuild index, leaf and labels from the records (the reference's `_buildIndex`).
    fn build_index(&mut self) {
        self.index.clear();
        self.labels.clear();
        self.leaf = Leaf::Null;
        for pos in 0..self.recs.len() as u32 {
            let meta = &self.recs[pos as usize].meta;
            if meta.kind == Kind::Header {
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
            self.file = Some(Path::new(&self.session_dir).join(format!(
                "{}_{}.jsonl",
                timefmt::file_timestamp(&timestamp),
                id
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
        self.set_session_file_with(path, None)
    }

    /// As [`Session::set_session_file`], reusing a file already read by the caller.
    pub fn set_session_file_with(
        &mut self,
        path: PathBuf,
        preloaded: Option<LoadedFile>,
    ) -> Result<LoadReport> {
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
        self.text = text;
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
        let Some(scan) = crate::scan::scan_file(path)? else {
            return Ok(None);
        };
        let header_ok = scan
            .recs
            .first()
            .is_some_and(|r| r.2.kind == Kind::Header && r.2.header_id_is_string);
        if !header_ok || scan.header_version < 3.0 {
            return Ok(None);
        }
        if !scan.ends_with_newline {
            fsio::append(path, b"\n", Durability::Buffered)?;
        }
        let reader = std::fs::File::open(path).map_err(|e| Error::io(&e, "open", path))?;
        self.reset_state();
        self.recs.reserve(scan.recs.len());
        for (start, end, meta, check) in scan.recs {
            if meta.is_conversation_message() {
                self.conversation += 1;
            }
            self.recs.push(Rec {
                start,
                end,
                in_file: true,
                check,
                meta,
            });
            self.parent_slot.push(NO_SLOT);
            self.rec_slot.push(NO_SLOT);
        }
        self.reader = Some((path.to_path_buf(), reader));
        self.session_id = scan.header_id;
        self.build_index();
        Ok(Some(LoadReport {
            loaded: true,
            ..LoadReport::default()
        }))
    }

    /// `inMemory(cwd, options, entries)` / the constructor with preloaded entries. `lines` are the
    /// JSON texts of the entries. With a header among them they become the state (migrated when old);
    /// without, a new session is started and they are appended after its header unmigrated.
    pub fn load_preloaded(&mut self, lines: Vec<String>) -> Result<LoadReport> {
        let loaded = LoadedFile::parse(join_lines(&lines));
        self.load_records(loaded)
    }

    /// Preloaded entries without a header: appended after the current (new) header unmigrated, then
    /// indexed; nothing is written.
    pub fn push_preloaded(&mut self, lines: Vec<String>) {
        let loaded = LoadedFile::parse(join_lines(&lines));
        for (line, meta) in loaded.records() {
            let meta = meta.clone();
            self.push_record(line, meta);
        }
        self.build_index();
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
        let meta = record::read_meta_trusted(line)
            .ok_or_else(|| Error::new(ErrorCode::InvalidArgument, "entry is not a JSON object"))?;
        // New entries must not shadow an existing id (callers pick a fresh one and retry).
        if self.index.slot_of.contains_key(&meta.id) {
            return Err(Error::new(
                ErrorCode::IdTaken,
                format!("Entry id {} is already in use", meta.id),
            ));
        }
        let id = meta.id.clone();
        let is_label = meta.kind == Kind::Label;
        let (target, label_truthy) = (meta.target.clone(), meta.label_truthy);
        let text_len = self.text.len();
        let pos = self.push_record(line, meta);
        let (slot, prev_index) = self.index.set(&id, pos);
        self.rec_slot[pos as usize] = slot;
        let prev_leaf = std::mem::replace(&mut self.leaf, Leaf::Slot(slot));
        if let Err(e) = self.persist_record(pos) {
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
        if is_label {
            if label_truthy {
                self.labels.set(&target, pos);
            } else {
                self.labels.delete(&target);
            }
        }
        Ok(pos)
    }

    /// Persist the record just appended at `pos` (see [`Session::persist_line`]).
    fn persist_record(&mut self, pos: u32) -> Result<()> {
        // Appended records live in memory; the copy frees `self` for the write.
        let line = self.line(pos)?.into_owned();
        self.persist_line(&line)
    }

    /// The reference's public `_persist(entry)` for an arbitrary entry JSON (not added to memory).
    pub fn persist_external(&mut self, line: &[u8]) -> Result<()> {
        self.persist_line(line)
    }

    /// `_persist`: before the first write nothing happens until the session holds a user or
    /// assistant message, then the whole session is written at once; afterwards `line` is appended.
    fn persist_line(&mut self, line: &[u8]) -> Result<()> {
        if !self.persist {
            return Ok(());
        }
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        if !self.flushed {
            if self.conversation == 0 {
                return Ok(());
            }
            self.guard.before_write(&file)?;
            fsio::create_new(&file, &self.all_lines()?, self.durability)?;
            self.flushed = true;
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
        self.guard.before_write(&file)?;
        self.appender.append(&file, &bytes, self.durability)
    }

    fn all_lines(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.text.len() + self.recs.len());
        for pos in 0..self.recs.len() as u32 {
            out.extend_from_slice(&self.line(pos)?);
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

    /// Force everything written so far to stable storage (no-op before the first write).
    pub fn flush(&self) -> Result<()> {
        match (&self.file, self.persist && self.flushed) {
            (Some(f), true) => fsio::fsync_file(f),
            _ => Ok(()),
        }
    }

    /// `branch(id)`.
    pub fn branch(&mut self, key: &str, display_id: &str) -> Result<()> {
        if self.index.get(key).is_none() {
            return Err(Error::entry_not_found(display_id));
        }
        self.leaf = Leaf::Slot(self.index.slot_of[key]);
        Ok(())
    }

    /// Set the leaf to an id key, or to null (used by `branchWithSummary` before its append).
    /// An id that is not in the index leaves a null leaf (callers check existence first).
    pub fn set_leaf_key(&mut self, key: Option<&str>) {
        self.leaf = match key.and_then(|k| self.index.slot_of.get(k)) {
            Some(&slot) => Leaf::Slot(slot),
            None => Leaf::Null,
        };
    }

    pub fn reset_leaf(&mut self) {
        self.leaf = Leaf::Null;
    }

    /// Replace the whole state by new records (used by `createBranchedSession`).
    fn replace_records(&mut self, lines: Vec<Vec<u8>>, session_id: String) {
        self.reset_state();
        // The lines were written by us (canonical JSON objects): no need to validate them again.
        for l in &lines {
            let meta = record::read_meta_trusted(l).expect("generated lines are JSON objects");
            self.push_record(l, meta);
        }
        self.session_id = session_id;
        self.build_index();
    }

    /// `createBranchedSession(leafId)`; `start` is the key of `leafId ?? current leaf`, `display`
    /// its text for the error. The new file is written (when it must be) before memory changes, so a
    /// failed write leaves the manager as it was.
    pub fn create_branched_session(
        &mut self,
        start: Option<&str>,
        display: &str,
    ) -> Result<Option<PathBuf>> {
        let path = self.branch_from(start);
        if path.is_empty() {
            return Err(Error::entry_not_found(display));
        }
        let plan = crate::tree::branched_lines(self, &path)?;
        let (timestamp, ms) = timefmt::now_iso();
        let new_id = ids::session_uuid_v7(ms);
        let parent_json = match (&self.file, self.persist) {
            (Some(f), true) => Some(to_js_string_json(&f.to_string_lossy())),
            _ => None,
        };
        let mut lines =
            vec![header_line(&new_id, &timestamp, &self.cwd, parent_json.as_deref()).into_bytes()];
        lines.extend(plan);
        if self.persist {
            let new_file = Path::new(&self.session_dir).join(format!(
                "{}_{}.jsonl",
                timefmt::file_timestamp(&timestamp),
                new_id
            ));
            let has_conversation = lines
                .iter()
                .skip(1)
                .any(|l| record::read_meta_trusted(l).is_some_and(|m| m.is_conversation_message()));
            if has_conversation {
                let mut bytes = Vec::new();
                for l in &lines {
                    bytes.extend_from_slice(l);
                    bytes.push(b'\n');
                }
                self.guard.before_write(&new_file)?;
                if let Err(e) = fsio::replace_atomic(&new_file, &bytes) {
                    self.guard.follow(self.file.as_deref());
                    return Err(e);
                }
            }
            self.replace_records(lines, new_id);
            self.file = Some(new_file.clone());
            self.guard.follow(self.file.as_deref());
            self.flushed = has_conversation;
            Ok(Some(new_file))
        } else {
            self.replace_records(lines, new_id);
            Ok(None)
        }
    }
}

fn join_lines(lines: &[String]) -> Vec<u8> {
    let mut text = Vec::new();
    for l in lines {
        text.extend_from_slice(l.as_bytes());
        text.push(b'\n');
    }
    text
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
    s.push_str(&to_js_string_json(id));
    s.push_str(",\"timestamp\":");
    s.push_str(&to_js_string_json(timestamp));
    s.push_str(",\"cwd\":");
    s.push_str(&to_js_string_json(cwd));
    if let Some(p) = parent_session_json {
        s.push_str(",\"parentSession\":");
        s.push_str(p);
    }
    s.push('}');
    s
}

/// `JSON.stringify(s)` for a Rust string.
pub fn to_js_string_json(s: &str) -> String {
    record::string_key(s).into()
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

/// `SessionManager.forkFrom` file work: copy every non-header record of `source` (migrated to v3
/// first, unlike the reference) under a new header into `dir`. The new file appears complete or
/// not at all (temp file, then an exclusive link), and an existing name fails with `EEXIST`.
pub fn fork_file(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    custom_id: Option<&str>,
) -> Result<PathBuf> {
    let loaded = load_file(source)?;
    let loaded = match loaded {
        Some(l) if l.has_valid_header() => l,
        _ => {
            return Err(Error::new(
                ErrorCode::ForkSourceInvalid,
                format!(
                    "Cannot fork: source session file is empty or invalid: {}",
                    source.display()
                ),
            ))
        }
    };
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
    let file = dir.join(format!(
        "{}_{}.jsonl",
        timefmt::file_timestamp(&timestamp),
        id
    ));
    let parent = to_js_string_json(&source.to_string_lossy());
    let mut out = header_line(&id, &timestamp, target_cwd, Some(&parent)).into_bytes();
    out.push(b'\n');
    match migrate::migrate_file(&loaded) {
        Some(m) => {
            for (s, e) in &m.records {
                let line = &m.text[*s..*e];
                if record::read_meta(line).is_some_and(|meta| meta.kind != Kind::Header) {
                    out.extend_from_slice(line);
                    out.push(b'\n');
                }
            }
        }
        None => {
            for (line, meta) in loaded.records() {
                if meta.kind == Kind::Header {
                    continue;
                }
                // Records are written as JSON.stringify(JSON.parse(line)) would; most lines already are.
                if json::is_canonical(line) {
                    out.extend_from_slice(line);
                } else if let Some(n) = json::normalize(line) {
                    out.extend_from_slice(n.as_bytes());
                }
                out.push(b'\n');
            }
        }
    }
    fsio::create_new_atomic(&file, &out)?;
    Ok(file)
}
