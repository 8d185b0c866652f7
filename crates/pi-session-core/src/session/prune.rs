//! Deleting an abandoned side branch: `countSubtree(id)` and `pruneBranch(id)`.
//!
//! The entry and everything under it go, with the labels that name a removed entry. Survivors
//! whose parent was a dropped label are re-parented to the nearest surviving ancestor (labels can
//! be chained), a surviving compaction whose `firstKeptEntryId` named a dropped entry keeps from
//! the next surviving entry of its own path, and the leaf stays (a dropped label leaf gives way to
//! its surviving ancestor). The active path is never touched, so the context of the active leaf
//! is the same before and after. A session already on disk is rewritten atomically (temp file,
//! fsync, rename, fsync of the directory); one that is not yet written stays in memory only.

use super::{Leaf, Session};
use crate::error::{Error, ErrorCode, Result};
use crate::fsio;
use crate::json;
use crate::record::{self, Key, Kind, Meta};
use crate::store::records::Rec;
use crate::text::Text;
use crate::torn;
use std::path::Path;

/// What `pruneBranch` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Entries of the subtree removed (the entry itself included).
    pub removed: usize,
    /// Label entries elsewhere that named a removed entry, dropped with it.
    pub labels_dropped: usize,
    /// Survivors given a new `parentId` or `firstKeptEntryId`.
    pub rewired: usize,
    /// Size of the session's records before and after (one line each, with its newline).
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// The session file was rewritten (false: not yet on disk, or not persisting).
    pub written: bool,
    /// The ids (keys) of every entry deleted: the subtree, then the labels dropped with it.
    pub removed_ids: Vec<Key>,
    /// A compaction of the active path keeps from another entry now (its `firstKeptEntryId`
    /// named a deleted entry), which upstream's proposal reports as a changed context.
    pub context_changed: bool,
    /// The old positions of the records kept, in order (the new position is the index).
    pub kept: Vec<u32>,
    /// `(new position, member, JSON value)` of each member changed on a survivor, so a host that
    /// holds the entries as objects can change them alike.
    pub edits: Vec<(u32, &'static str, String)>,
}

/// The error for a branch on the active path (the wording of the upstream proposal).
fn on_active_path() -> Error {
    Error::new(
        ErrorCode::OnActiveBranch,
        "Cannot delete the branch you are currently on",
    )
}

impl Session {
    /// Per record: is it in the subtree of `root` (the entry and its descendants, cycle-safe)?
    fn subtree_mask(&self, root: u32) -> Vec<bool> {
        let n = self.records.recs.len();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        for p in 0..n as u32 {
            if !self.records.recs[p as usize].meta.kind.is_entry() || self.record_slot(p).is_none()
            {
                continue;
            }
            if let Some(q) = self.parent_of(p) {
                if q != p {
                    children[q as usize].push(p);
                }
            }
        }
        let mut mask = vec![false; n];
        let mut stack = vec![root];
        while let Some(p) = stack.pop() {
            if std::mem::replace(&mut mask[p as usize], true) {
                continue;
            }
            stack.extend(children[p as usize].iter().copied());
        }
        mask
    }

    /// `countSubtree(id)`: how many entries `pruneBranch(id)` would remove with the subtree
    /// (labels elsewhere that name them not counted); 0 for an unknown id, as upstream's proposal
    /// answers (`key` `None`: an id value that can be no key, so is in no session).
    pub fn count_subtree(&self, key: Option<&str>) -> usize {
        key.and_then(|k| self.lookup(k)).map_or(0, |pos| {
            self.subtree_mask(pos).iter().filter(|&&b| b).count()
        })
    }

    /// `pruneBranch(id)`: delete the entry `key` and its subtree (see the module docs). Refuses
    /// an entry on the active path (`ON_ACTIVE_BRANCH`, "Cannot delete the branch you are
    /// currently on") and unknown ids (`ENTRY_NOT_FOUND`; `key` as for [`Session::count_subtree`]).
    /// On a failed write nothing changes.
    pub fn prune_branch(&mut self, key: Option<&str>, display: &str) -> Result<Pruned> {
        let plan = self.plan_prune(key, display)?;
        self.apply_prune(plan)
    }

    /// What `pruneBranch` would do, reading the session only: which records go and which
    /// members of the survivors change.
    fn plan_prune(&self, key: Option<&str>, display: &str) -> Result<PrunePlan> {
        let root = key
            .and_then(|k| self.lookup(k))
            .ok_or_else(|| Error::entry_not_found(display))?;
        let active = self.leaf_pos().map(|l| self.path_to(l)).unwrap_or_default();
        if active.contains(&root) {
            return Err(on_active_path());
        }
        let removed = self.subtree_mask(root);
        let (dropped, labels_dropped) = self.with_labels_of(&removed);
        let mut edits: Vec<(u32, Vec<(&'static str, json::Value)>)> = Vec::new();
        let mut context_changed = false;
        let mut removed_ids: Vec<Key> = Vec::new();
        let mut dropped_label_ids: Vec<Key> = Vec::new();
        for p in 0..self.records.recs.len() as u32 {
            let m = &self.records.recs[p as usize].meta;
            if dropped[p as usize] {
                if removed[p as usize] {
                    removed_ids.push(m.id.clone());
                } else {
                    dropped_label_ids.push(m.id.clone());
                }
                continue;
            }
            if !m.kind.is_entry() {
                continue;
            }
            let (members, first_kept_moved) = self.survivor_edits(p, &dropped);
            context_changed |= first_kept_moved && active.contains(&p);
            if !members.is_empty() {
                edits.push((p, members));
            }
        }
        removed_ids.append(&mut dropped_label_ids);
        let leaf_key = self
            .leaf_pos()
            .and_then(|l| {
                if dropped[l as usize] {
                    self.surviving_parent(l, &dropped)
                } else {
                    Some(l)
                }
            })
            .map(|l| self.records.recs[l as usize].meta.id.clone());
        Ok(PrunePlan {
            removed: removed.iter().filter(|&&b| b).count(),
            dropped,
            labels_dropped,
            edits,
            context_changed,
            removed_ids,
            leaf_key,
        })
    }

    /// The records that go: the subtree `removed`, and the labels that name an entry of it (how
    /// many of those, too). The leaf is never dropped, even a label naming a deleted entry: it
    /// keeps the leaf and the branch where they were (a label makes no messages, so it harms
    /// nothing).
    fn with_labels_of(&self, removed: &[bool]) -> (Vec<bool>, usize) {
        let mut dropped = removed.to_vec();
        let mut labels_dropped = 0;
        let leaf = self.leaf_pos();
        for (p, (rec, gone)) in self.records.recs.iter().zip(dropped.iter_mut()).enumerate() {
            let m = &rec.meta;
            if !*gone && m.kind == Kind::Label && leaf != Some(p as u32) {
                if let Some(t) = self.ids.index.get(&m.target) {
                    if removed[t as usize] {
                        *gone = true;
                        labels_dropped += 1;
                    }
                }
            }
        }
        (dropped, labels_dropped)
    }

    /// The nearest surviving ancestor of a record (None: a root), past dropped labels.
    fn surviving_parent(&self, p: u32, dropped: &[bool]) -> Option<u32> {
        let mut q = self.parent_of(p);
        let mut steps = 0;
        while let Some(x) = q {
            if !dropped[x as usize] || steps > self.records.recs.len() {
                break;
            }
            q = self.parent_of(x);
            steps += 1;
        }
        q.filter(|x| !dropped[*x as usize])
    }

    /// The members a surviving entry `p` gets: a `parentId` past a dropped parent, and for a
    /// compaction whose first kept entry goes, the next survivor of its path (then the `bool` is
    /// true).
    fn survivor_edits(&self, p: u32, dropped: &[bool]) -> (Vec<(&'static str, json::Value)>, bool) {
        let m = &self.records.recs[p as usize].meta;
        let mut members: Vec<(&'static str, json::Value)> = Vec::new();
        let mut first_kept_moved = false;
        if self.parent_of(p).is_some_and(|q| dropped[q as usize]) {
            let value = match self.surviving_parent(p, dropped) {
                Some(q) => self.records.recs[q as usize].meta.id.clone(),
                None => Key::from("null"),
            };
            members.push(("parentId", parse_key(&value)));
        }
        if m.kind == Kind::Compaction {
            if let Some(t) = self.lookup(&m.first_kept).filter(|t| dropped[*t as usize]) {
                let path = self.path_to(p);
                let next = path
                    .iter()
                    .skip_while(|&&x| x != t)
                    .find(|&&x| !dropped[x as usize]);
                if let Some(&x) = next {
                    let id = self.records.recs[x as usize].meta.id.clone();
                    members.push(("firstKeptEntryId", parse_key(&id)));
                    first_kept_moved = true;
                }
            }
        }
        (members, first_kept_moved)
    }

    /// Carry out a [`PrunePlan`]: the kept records with their members edited become the new
    /// text, written in place of the file when the session is on disk, then adopted.
    fn apply_prune(&mut self, plan: PrunePlan) -> Result<Pruned> {
        let PrunePlan {
            removed,
            dropped,
            labels_dropped,
            edits,
            context_changed,
            removed_ids,
            leaf_key,
        } = plan;
        let rewired = edits.len();
        let (kept, written) = match (&self.file, self.persist && self.flushed) {
            (Some(f), true) => {
                let f = f.clone();
                self.guard.before_write(&f)?;
                // The file as it is now: its lines that hold no record of ours stay where they
                // are (lines that are not JSON, torn bytes), and lines another writer added since
                // this manager read it make the prune refuse instead of dropping them.
                let now = match std::fs::read(&f) {
                    Ok(bytes) => Some(bytes),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => return Err(Error::io(&e, "read", &f)),
                };
                let lines = now.as_deref().map(|bytes| FileLines::new(bytes, &f));
                let kept = self.kept_text(&dropped, edits, lines)?;
                let read_len = now.as_ref().map(|b| b.len() as u64);
                fsio::replace_atomic_with_hook(&f, &kept.text, |_| {
                    crate::fault::hit(crate::fault::Point::BeforeRename, &f)?;
                    // Written between the read and now: refused as above (the temp file goes).
                    let len = std::fs::metadata(&f).ok().map(|m| m.len());
                    if read_len.is_some() && len != read_len {
                        return Err(changed_since_read(&f));
                    }
                    Ok(())
                })?;
                (kept, true)
            }
            _ => (self.kept_text(&dropped, edits, None)?, false),
        };
        let (before, after) = (kept.before, kept.after);
        let (positions, changes) = self.adopt_kept(kept, leaf_key);
        Ok(Pruned {
            removed,
            labels_dropped,
            rewired,
            bytes_before: before,
            bytes_after: after,
            written,
            removed_ids,
            context_changed,
            kept: positions,
            edits: changes,
        })
    }

    /// The records that stay, with their members edited, as one text: the new file, when
    /// `file` walks the lines of the one it replaces (every line that holds no record of ours
    /// stays where it was), else the kept records alone.
    fn kept_text(
        &self,
        dropped: &[bool],
        edits: Vec<(u32, Vec<(&'static str, json::Value)>)>,
        mut file: Option<FileLines<'_>>,
    ) -> Result<Kept> {
        let mut edits = edits.into_iter().peekable();
        let mut out = Kept::default();
        for p in 0..self.records.recs.len() as u32 {
            // A skeleton (an in-memory session's entry held by JavaScript) has every member
            // edited here; such a session never writes, so it is never written either.
            // From the file as read for the walk, when there is one: not read a second time.
            let line = match &file {
                Some(lines) => self.records.line_in(p, lines.bytes)?,
                None => self.line(p)?,
            };
            out.before += line.len() as u64 + 1;
            let m = &self.records.recs[p as usize].meta;
            // The bytes before the record on its line in the file: torn bytes it was glued
            // after, which stay (on a line of their own when the record goes).
            let torn = match &mut file {
                Some(lines) => lines.through(&line, m.kind == Kind::Header, &mut out.text)?,
                None => &[],
            };
            out.text.extend_from_slice(torn);
            if dropped[p as usize] {
                if !torn.is_empty() {
                    out.text.push(b'\n');
                }
                continue;
            }
            let (line, meta) = match edits.next_if(|(q, _)| *q == p) {
                None => (line, m.clone()),
                Some((_, members)) => {
                    let at = out.kept.len() as u32;
                    let (text, meta) = edited(&line, m, members, at, &mut out.changes)
                        .ok_or_else(|| self.records.unparsable(p))?;
                    (std::borrow::Cow::Owned(text), meta)
                }
            };
            out.after += line.len() as u64 + 1;
            out.kept.push(p);
            let start = out.text.len();
            out.text.extend_from_slice(&line);
            out.ranges.push((start, out.text.len()));
            out.text.push(b'\n');
            out.metas.push(meta);
        }
        if let Some(lines) = file {
            lines.rest(&mut out.text)?;
        }
        Ok(out)
    }

    /// The kept records become the session (its leaf the planned one, unless it had none); the
    /// kept records' old positions and the members changed are handed back.
    fn adopt_kept(
        &mut self,
        kept: Kept,
        leaf_key: Option<Key>,
    ) -> (Vec<u32>, Vec<(u32, &'static str, String)>) {
        let null_leaf = matches!(self.ids.leaf, Leaf::Null);
        // The kept lines that were not edited keep their lazy values, described by these shapes.
        let shapes = std::mem::take(&mut self.records.shapes);
        self.reset_state();
        self.records.shapes = shapes;
        self.appender = fsio::Appender::default();
        let session_id = std::mem::take(&mut self.session_id);
        self.records.text = Text::loaded(kept.text);
        let recs: Vec<Rec> = kept
            .ranges
            .into_iter()
            .zip(kept.metas)
            .map(|((start, end), meta)| Rec::in_text(start, end, meta))
            .collect();
        self.adopt_recs(recs.into_iter(), session_id);
        self.ids.leaf = match (null_leaf, leaf_key) {
            (false, Some(k)) => self
                .ids
                .index
                .slot_of
                .get(&k)
                .map_or(Leaf::Null, |&s| Leaf::Slot(s)),
            _ => Leaf::Null,
        };
        (kept.kept, kept.changes)
    }
}

/// A record's line with `members` set, and its meta (kind and skeleton carried over); each
/// change is noted as `(new position, member, JSON value)` in `changes`. None when the line
/// does not parse (see [`crate::store::View::parsed`]).
fn edited(
    line: &[u8],
    m: &Meta,
    members: Vec<(&'static str, json::Value)>,
    at: u32,
    changes: &mut Vec<(u32, &'static str, String)>,
) -> Option<(Vec<u8>, Meta)> {
    let mut v = json::parse(line).ok()?;
    if let json::Value::Object(o) = &mut v {
        for (k, val) in members {
            changes.push((at, k, json::to_json(&val)));
            o.insert(json::JsStr::from_str(k), val);
        }
    }
    let text = json::to_json(&v).into_bytes();
    let mut meta = record::read_meta_trusted(&text)?;
    meta.kind = m.kind;
    meta.skeleton = m.skeleton;
    Some((text, meta))
}

/// The lines of the session file a prune replaces, as it is now, walked alongside the records
/// (which are in file order): the lines between records are copied as they are, and a line that
/// holds a record none of ours is (another writer's) refuses the prune.
struct FileLines<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
    /// A header record was passed (before it, the open reads no entry glued after torn bytes).
    after_header: bool,
}

impl<'a> FileLines<'a> {
    fn new(bytes: &'a [u8], path: &'a Path) -> Self {
        FileLines {
            bytes,
            at: 0,
            path,
            after_header: false,
        }
    }

    /// The next line (without its newline) and whether a newline ends it.
    fn next_line(&mut self) -> Option<(&'a [u8], bool)> {
        let rest = self.bytes.get(self.at..).filter(|r| !r.is_empty())?;
        let (line, nl) = match memchr::memchr(b'\n', rest) {
            Some(k) => (&rest[..k], true),
            None => (rest, false),
        };
        self.at += line.len() + usize::from(nl);
        Some((line, nl))
    }

    /// Copies into `out` the lines before the one that holds `record` (a record's line as the
    /// open read it, `header` if it is a header), and returns the bytes before the record on
    /// that line (torn bytes it was glued after; mostly none). A file without it changed since.
    fn through(&mut self, record: &[u8], header: bool, out: &mut Vec<u8>) -> Result<&'a [u8]> {
        while let Some((line, nl)) = self.next_line() {
            if let Some(torn) = self.holding(line, record) {
                self.after_header |= header;
                return Ok(torn);
            }
            self.keep(line, nl, out)?;
        }
        Err(changed_since_read(self.path))
    }

    /// The bytes before `record` on `line` when `line` holds it (whole, or glued after torn
    /// bytes as the open finds such an entry).
    fn holding(&self, line: &'a [u8], record: &[u8]) -> Option<&'a [u8]> {
        let torn = line.strip_suffix(record)?;
        if torn.is_empty() {
            return Some(torn);
        }
        let glued = self.after_header
            && torn::glued_entry(line, record::read_meta).is_some_and(|(at, _)| at == torn.len());
        glued.then_some(torn)
    }

    /// Keeps a line that holds no record of ours, unless it holds one by the open's rule.
    fn keep(&self, line: &[u8], nl: bool, out: &mut Vec<u8>) -> Result<()> {
        if torn::read_line(line, self.after_header).is_some() {
            return Err(changed_since_read(self.path));
        }
        out.extend_from_slice(line);
        if nl {
            out.push(b'\n');
        }
        Ok(())
    }

    /// Copies the lines after the last record.
    fn rest(mut self, out: &mut Vec<u8>) -> Result<()> {
        while let Some((line, nl)) = self.next_line() {
            self.keep(line, nl, out)?;
        }
        Ok(())
    }
}

/// A prune refused because the file is not the one this manager read (plus its own appends).
fn changed_since_read(path: &Path) -> Error {
    Error::new(
        ErrorCode::FileChanged,
        format!(
            "Session file changed on disk since it was opened (another writer added or changed lines); open it again to prune: {}",
            path.display()
        ),
    )
}

/// The records a prune keeps, as the new session's text.
#[derive(Default)]
struct Kept {
    text: Vec<u8>,
    /// Each kept record's line in `text`.
    ranges: Vec<(usize, usize)>,
    metas: Vec<Meta>,
    /// Their old positions.
    kept: Vec<u32>,
    /// `(new position, member, JSON value)` of each member set.
    changes: Vec<(u32, &'static str, String)>,
    /// Bytes of all records before, and of the kept ones.
    before: u64,
    after: u64,
}

/// What `pruneBranch` is to do, worked out before anything changes.
struct PrunePlan {
    /// Entries of the subtree.
    removed: usize,
    /// Per record: does it go (the subtree, and the labels that name an entry of it)?
    dropped: Vec<bool>,
    labels_dropped: usize,
    /// The members to set on a survivor, by its position, in order of position.
    edits: Vec<(u32, Vec<(&'static str, json::Value)>)>,
    context_changed: bool,
    /// The subtree's ids, then the dropped labels'.
    removed_ids: Vec<Key>,
    /// The entry that is the leaf afterwards (None: no leaf).
    leaf_key: Option<Key>,
}

/// A key (canonical JSON text of a primitive) as a JSON value.
fn parse_key(key: &Key) -> json::Value {
    json::parse(key.as_bytes()).unwrap_or(json::Value::Null)
}
