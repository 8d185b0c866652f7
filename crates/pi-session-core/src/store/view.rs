//! A read-only view of a session's records and id index: what the queries (`context`, `tree`,
//! branching) read, and the walks along `parentId` links.

use std::borrow::Cow;

use crate::error::Result;
use crate::record::{key_truthy, Key, Kind, Meta};

use super::index::{Ids, Leaf, NO_SLOT};
use super::records::Records;

/// Records and id index, borrowed together (a session hands one out; see `Session::view`).
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub(crate) records: &'a Records,
    pub(crate) ids: &'a Ids,
}

impl<'a> View<'a> {
    pub(crate) fn new(records: &'a Records, ids: &'a Ids) -> View<'a> {
        View { records, ids }
    }

    // ----- records ------------------------------------------------------------------------------

    pub fn record_count(self) -> usize {
        self.records.len()
    }
    pub fn meta(self, pos: u32) -> &'a Meta {
        self.records.meta(pos)
    }
    /// The raw bytes of a record's line (without its newline).
    pub fn line(self, pos: u32) -> Result<Cow<'a, [u8]>> {
        self.records.line(pos)
    }
    /// The record at `pos` parsed (its line read as [`View::line`] reads it); a line that no
    /// longer parses is an error (see [`Records::unparsable`]).
    pub fn parsed(self, pos: u32) -> Result<crate::json::Value> {
        self.parse_line(pos, &self.line(pos)?)
    }
    /// `line`, the line of the record at `pos`, parsed (see [`View::parsed`]).
    pub fn parse_line(self, pos: u32, line: &[u8]) -> Result<crate::json::Value> {
        crate::json::parse(line).map_err(|_| self.records.unparsable(pos))
    }
    /// Whether the line of each of `positions` passes `test` (see [`Records::test_lines`]: runs
    /// of the file read at once, tested on several threads).
    pub fn test_lines(
        self,
        positions: &[u32],
        test: impl Fn(&[u8]) -> bool + Sync,
    ) -> Result<Vec<bool>> {
        self.records.test_lines(positions, test)
    }
    /// [`View::line`] where the line stands for the entry itself (handed out or written): a
    /// skeleton does not, and is refused.
    pub fn full_line(self, pos: u32) -> Result<Cow<'a, [u8]>> {
        self.records.full_line(pos)
    }
    /// Position of the first header record (`getHeader()`).
    pub fn header_pos(self) -> Option<u32> {
        self.records
            .recs
            .iter()
            .position(|r| r.meta.kind == Kind::Header)
            .map(|p| p as u32)
    }
    /// Positions of all non-header records in order (`getEntries()`).
    pub fn entry_positions(self) -> Vec<u32> {
        (0..self.records.len() as u32)
            .filter(|&p| self.meta(p).kind.is_entry())
            .collect()
    }
    /// `getEntriesSince(count)`: positions of the non-header records after the first `count`
    /// (the tail of [`View::entry_positions`]); `None` when there are fewer than `count`.
    pub fn entry_positions_since(self, count: usize) -> Option<Vec<u32>> {
        let mut skipped = 0;
        let mut out = Vec::new();
        for (p, r) in self.records.recs.iter().enumerate() {
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
    /// The latest `session_info` record in file order (`getSessionName()` reads its `name`).
    pub fn session_name_pos(self) -> Option<u32> {
        self.records
            .recs
            .iter()
            .rposition(|r| r.meta.kind == Kind::SessionInfo)
            .map(|p| p as u32)
    }

    // ----- id index -----------------------------------------------------------------------------

    /// `getEntryCount()`: size of the id index.
    pub fn entry_count(self) -> usize {
        self.ids.index.len()
    }
    /// `byId.get(key)`.
    pub fn lookup(self, key: &str) -> Option<u32> {
        self.ids.index.get(key)
    }
    pub fn leaf(self) -> Leaf {
        self.ids.leaf
    }
    /// The leaf id as a key (`None` for a null leaf).
    pub fn leaf_key(self) -> Option<&'a str> {
        match self.ids.leaf {
            Leaf::Null => None,
            Leaf::Slot(slot) => Some(&self.meta(self.slot_pos(slot)).id),
        }
    }
    /// The record the leaf points at (`getLeafEntry()`): `None` for a null or falsy leaf id.
    pub fn leaf_pos(self) -> Option<u32> {
        match self.ids.leaf {
            Leaf::Slot(slot) => {
                let pos = self.slot_pos(slot);
                if key_truthy(&self.meta(pos).id) {
                    Some(pos)
                } else {
                    None
                }
            }
            _ => None,
        }
    }
    /// Label record position for a target (`getLabel`), the label text/timestamp live in that record.
    pub fn label_pos(self, target: &str) -> Option<u32> {
        self.ids.labels.get(target)
    }
    /// All labels in Map order: (target key, label record position).
    pub fn labels(self) -> impl Iterator<Item = (&'a Key, u32)> + 'a {
        self.ids.labels.iter()
    }
    /// Number of index slots (distinct ids).
    pub fn slot_count(self) -> usize {
        self.ids.index.len()
    }
    /// The record currently holding an index slot.
    pub fn slot_pos(self, slot: u32) -> u32 {
        self.ids.index.slots[slot as usize]
    }
    /// The index slot of a record's own id (`None` for headers).
    pub fn record_slot(self, pos: u32) -> Option<u32> {
        Some(self.ids.rec_slot[pos as usize]).filter(|&s| s != NO_SLOT)
    }
    /// The slot of any key, including falsy ones (JS `Map.get` semantics).
    pub fn slot_of_key(self, key: &str) -> Option<u32> {
        self.ids.index.slot_of.get(key).copied()
    }
    /// The cached parent slot of a record, if its parent id is truthy and was known.
    pub fn cached_parent_slot(self, pos: u32) -> Option<u32> {
        Some(self.ids.parent_slot[pos as usize]).filter(|&s| s != NO_SLOT)
    }

    // ----- walks --------------------------------------------------------------------------------

    /// `getChildren(parentId)`: indexed entries whose `parentId` key equals `parent`, in index order.
    pub fn children(self, parent: &str) -> Vec<u32> {
        self.ids
            .index
            .slots
            .iter()
            .copied()
            .filter(|&p| &*self.meta(p).parent == parent)
            .collect()
    }

    /// The parent record of `pos` through the index, if its `parentId` is truthy and known.
    pub fn parent_of(self, pos: u32) -> Option<u32> {
        let slot = self.ids.parent_slot[pos as usize];
        if slot != NO_SLOT {
            return Some(self.slot_pos(slot));
        }
        let parent = &self.meta(pos).parent;
        if key_truthy(parent) {
            self.ids.index.get(parent)
        } else {
            None
        }
    }

    /// Root-first path ending at `pos`. Stops at a missing parent and, unlike the reference (which
    /// loops forever), at the first record already on the path when `parentId` links form a cycle.
    pub fn path_to(self, pos: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut seen = vec![false; self.records.len()];
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
    pub fn branch_from(self, start: Option<&str>) -> Vec<u32> {
        match start {
            Some(k) if key_truthy(k) => match self.ids.index.get(k) {
                Some(p) => self.path_to(p),
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// The path the context functions use for the current leaf: a null leaf gives nothing (also
    /// the leaf of an entry whose id is `null`: the reference's `leafId === null`); another falsy
    /// id falls back to the last non-header record.
    pub fn context_path(self) -> Vec<u32> {
        let start = match self.ids.leaf {
            Leaf::Null => return Vec::new(),
            Leaf::Slot(slot) => {
                let pos = self.slot_pos(slot);
                if &*self.meta(pos).id == "null" {
                    return Vec::new();
                }
                let found = if key_truthy(&self.meta(pos).id) {
                    Some(pos)
                } else {
                    None
                };
                found.or_else(|| {
                    self.records
                        .recs
                        .iter()
                        .rposition(|r| r.meta.kind.is_entry())
                        .map(|p| p as u32)
                })
            }
        };
        start.map(|p| self.path_to(p)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use crate::store::fixture::Fixture;

    const H: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    fn entry(id: &str, parent: Option<&str>) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
        format!(r#"{{"type":"custom","id":"{id}","parentId":{parent},"customType":"t"}}"#)
    }

    #[test]
    fn a_path_runs_from_the_root_to_the_entry() {
        let lines = [
            H.to_owned(),
            entry("a", None),
            entry("b", Some("a")),
            entry("c", Some("b")),
        ];
        let f = Fixture::new(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let v = f.view();
        assert_eq!(v.path_to(f.pos("c")), [f.pos("a"), f.pos("b"), f.pos("c")]);
        assert_eq!(
            v.context_path(),
            v.path_to(f.pos("c")),
            "the leaf is the last entry"
        );
        assert_eq!(v.children("\"a\""), [f.pos("b")]);
    }

    #[test]
    fn a_parent_id_cycle_ends_the_path_at_the_first_repeated_record() {
        let lines = [H.to_owned(), entry("a", Some("b")), entry("b", Some("a"))];
        let f = Fixture::new(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(f.view().path_to(f.pos("b")), [f.pos("a"), f.pos("b")]);
    }

    #[test]
    fn a_missing_or_falsy_start_gives_no_branch() {
        let lines = [H.to_owned(), entry("a", None)];
        let f = Fixture::new(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let v = f.view();
        assert!(v.branch_from(Some("\"nope\"")).is_empty());
        assert!(v.branch_from(Some("null")).is_empty());
        assert!(v.branch_from(None).is_empty());
        assert_eq!(v.branch_from(Some("\"a\"")), [f.pos("a")]);
    }

    #[test]
    fn entries_since_a_count_are_the_tail_after_the_header() {
        let lines = [H.to_owned(), entry("a", None), entry("b", Some("a"))];
        let f = Fixture::new(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let v = f.view();
        assert_eq!(v.entry_positions(), [1, 2]);
        assert_eq!(v.entry_positions_since(1), Some(vec![2]));
        assert_eq!(v.entry_positions_since(2), Some(vec![]));
        assert_eq!(v.entry_positions_since(3), None);
        assert_eq!(v.header_pos(), Some(0));
    }
}
