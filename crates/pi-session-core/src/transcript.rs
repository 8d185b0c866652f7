//! The transcript read model: what a person scrolls back through. It is the active branch, root
//! to leaf, each entry as the messages the reference's `sessionEntryToContextMessages` makes of
//! it (no compaction narrowing: a compaction adds its summary and erases nothing; no context
//! edits). Its items are those messages in order; a boundary between two items is named by an
//! entry of the branch and how many of that entry's items lie before it.
//!
//! Everything here is computed from record metadata ([`Meta::context_items`]), so a page costs
//! one walk of the branch in the index plus the page's own entries, whatever the session's size.
//!
//! [`Meta::context_items`]: crate::record::Meta::context_items

use std::ops::Range;

use crate::record::Kind;
use crate::store::View;

/// The active branch's items, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    /// The branch, root first (positions of records).
    path: Vec<u32>,
    /// `ends[i]`: how many items the entries `path[..=i]` make.
    ends: Vec<usize>,
    /// Items of the entries after the latest compaction of the branch (all when there is none).
    after_compaction: usize,
}

/// A branch's item counts: all of them, and those after its latest compaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub total: usize,
    pub after_compaction: usize,
}

impl Counts {
    /// The counts of the branch one entry (the record at `pos`) longer: its items are added, and
    /// a compaction starts the count after it anew (its own summary is not after it). The one
    /// rule of the counts, for a whole branch ([`Transcript::of`]) and for one append.
    pub fn then<'a>(self, s: impl Into<View<'a>>, pos: u32) -> Counts {
        let m = s.into().meta(pos);
        let items = m.context_items as usize;
        Counts {
            total: self.total + items,
            after_compaction: if m.kind == Kind::Compaction {
                0
            } else {
                self.after_compaction + items
            },
        }
    }
}

/// Why a boundary cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundaryError {
    /// Its entry is not on the active branch (or in no session).
    NotOnBranch,
    /// It names more items than its entry makes.
    PastEntry,
}

impl Transcript {
    /// The transcript of a root-first branch.
    pub fn of<'a>(s: impl Into<View<'a>>, path: Vec<u32>) -> Transcript {
        let s: View<'a> = s.into();
        let mut ends = Vec::with_capacity(path.len());
        let mut counts = Counts::default();
        for &p in &path {
            counts = counts.then(s, p);
            ends.push(counts.total);
        }
        Transcript {
            path,
            ends,
            after_compaction: counts.after_compaction,
        }
    }

    /// How many items the whole branch makes.
    pub fn total(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Items of the entries after the branch's latest compaction (its own summary not counted).
    pub fn items_after_latest_compaction(&self) -> usize {
        self.after_compaction
    }

    /// The item index of the boundary after the first `within` items of the entry at `pos`.
    pub fn boundary(&self, pos: Option<u32>, within: usize) -> Result<usize, BoundaryError> {
        let i = pos
            .and_then(|pos| self.path.iter().position(|&p| p == pos))
            .ok_or(BoundaryError::NotOnBranch)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        if start + within > self.ends[i] {
            return Err(BoundaryError::PastEntry);
        }
        Ok(start + within)
    }

    /// The items of a page: up to `limit` items before the boundary `anchor` when `backward`,
    /// else from it on; with no anchor, the last `limit` items.
    pub fn page(&self, anchor: Option<usize>, limit: usize, backward: bool) -> Range<usize> {
        let total = self.total();
        match anchor.map(|a| a.min(total)) {
            None => total.saturating_sub(limit)..total,
            Some(a) if backward => a.saturating_sub(limit)..a,
            Some(a) => a..a.saturating_add(limit).min(total),
        }
    }

    /// The entry that makes item `item` (its position) and the item's index among its own.
    pub fn locate(&self, item: usize) -> (u32, usize) {
        let i = self.ends.partition_point(|&end| end <= item);
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        (self.path[i], item - start)
    }

    /// The branch's last entry and how many items it makes (None for an empty branch): the
    /// boundary after everything, where appends will come.
    pub fn leaf(&self) -> Option<(u32, usize)> {
        let n = self.path.len();
        let &pos = self.path.last()?;
        let before = if n < 2 { 0 } else { self.ends[n - 2] };
        Some((pos, self.ends[n - 1] - before))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::fixture::Fixture;

    const H: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    fn line(id: &str, parent: Option<&str>, body: &str) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
        format!(r#"{{"id":"{id}","parentId":{parent},{body}}}"#)
    }

    fn user(id: &str, parent: Option<&str>) -> String {
        line(
            id,
            parent,
            r#""type":"message","message":{"role":"user","content":"x"}"#,
        )
    }

    /// u1 → label → c (compaction with a system message) → b (empty branch summary) → u2
    fn fixture() -> Fixture {
        let lines = [
            H.to_owned(),
            user("u1", None),
            line(
                "l",
                Some("u1"),
                r#""type":"label","targetId":"u1","label":"x""#,
            ),
            line(
                "c",
                Some("l"),
                r#""type":"compaction","summary":"s","firstKeptEntryId":"u1","tokensBefore":1,"systemMessage":{"role":"system","content":"p"}"#,
            ),
            line(
                "b",
                Some("c"),
                r#""type":"branch_summary","fromId":"u1","summary":"""#,
            ),
            user("u2", Some("b")),
        ];
        Fixture::new(&lines.iter().map(String::as_str).collect::<Vec<_>>())
    }

    #[test]
    fn each_entry_counts_the_messages_the_reference_makes_of_it() {
        let f = fixture();
        let t = Transcript::of(f.view(), vec![1, 2, 3, 4, 5]);
        assert_eq!(t.total(), 4);
        assert_eq!(t.items_after_latest_compaction(), 1);
        assert_eq!(t.locate(0), (1, 0));
        assert_eq!(t.locate(1), (3, 0));
        assert_eq!(t.locate(2), (3, 1));
        assert_eq!(t.locate(3), (5, 0));
        assert_eq!(t.leaf(), Some((5, 1)));
    }

    #[test]
    fn a_retained_tail_adds_its_messages_and_one_append_counts_as_the_whole_branch() {
        let lines = [
            H.to_owned(),
            user("u1", None),
            line(
                "c",
                Some("u1"),
                r#""type":"compaction","summary":"s","firstKeptEntryId":"c","tokensBefore":1,"retainedTail":[{"role":"user","content":"a"},{"role":"assistant","content":[]}]"#,
            ),
            user("u2", Some("c")),
        ];
        let f = Fixture::new(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let t = Transcript::of(f.view(), vec![1, 2, 3]);
        assert_eq!((t.total(), t.items_after_latest_compaction()), (5, 1));
        let mut counts = Counts::default();
        for pos in [1, 2, 3] {
            counts = counts.then(f.view(), pos);
        }
        assert_eq!(
            counts,
            Counts {
                total: 5,
                after_compaction: 1
            }
        );
    }

    #[test]
    fn a_boundary_is_an_entry_and_how_many_of_its_items_come_before() {
        let f = fixture();
        let t = Transcript::of(f.view(), vec![1, 2, 3, 4, 5]);
        assert_eq!(t.boundary(Some(3), 0), Ok(1));
        assert_eq!(t.boundary(Some(3), 1), Ok(2));
        assert_eq!(t.boundary(Some(2), 0), Ok(1));
        assert_eq!(t.boundary(Some(3), 3), Err(BoundaryError::PastEntry));
        assert_eq!(t.boundary(Some(9), 0), Err(BoundaryError::NotOnBranch));
        assert_eq!(t.boundary(None, 0), Err(BoundaryError::NotOnBranch));
    }

    #[test]
    fn pages_take_the_items_next_to_their_boundary() {
        let f = fixture();
        let t = Transcript::of(f.view(), vec![1, 2, 3, 4, 5]);
        assert_eq!(t.page(None, 2, true), 2..4);
        assert_eq!(t.page(Some(2), 5, true), 0..2);
        assert_eq!(t.page(Some(1), 2, false), 1..3);
        assert_eq!(t.page(Some(4), 2, false), 4..4);
        assert_eq!(Transcript::default().page(None, 3, true), 0..0);
        assert_eq!(Transcript::default().leaf(), None);
    }
}
