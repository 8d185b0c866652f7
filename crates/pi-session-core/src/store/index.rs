//! The id index of the reference (`byId`, labels by target, the leaf), and per record the slots
//! of its own id and of its parent id, resolved once.

use crate::fxhash::FxHashMap;
use crate::record::{key_truthy, Key, Kind};

use super::records::Rec;

/// The leaf pointer. The reference stores an id and resolves it through the index when used; an
/// id only ever becomes the leaf once it is in the index, so we keep its index slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Leaf {
    #[default]
    /// Before the first entry (`resetLeaf()`, new session).
    Null,
    /// The index slot of the leaf id (possibly the [`crate::record::UNDEFINED`] key of id-less
    /// records, as the reference allows).
    Slot(u32),
}

pub(crate) const NO_SLOT: u32 = u32::MAX;

/// `Map<id, entry>` with JS Map semantics: iteration in first-insertion order of each id, a later
/// record with the same id replaces the value but not the position.
#[derive(Debug, Default, Clone)]
pub(crate) struct Index {
    pub(crate) slot_of: FxHashMap<Key, u32>,
    /// slot -> record position.
    pub(crate) slots: Vec<u32>,
}

impl Index {
    pub(crate) fn clear(&mut self) {
        self.slot_of.clear();
        self.slots.clear();
    }
    pub(crate) fn get(&self, key: &str) -> Option<u32> {
        self.slot_of.get(key).map(|&s| self.slots[s as usize])
    }
    /// Returns the key's slot and what to undo: `None` if the key was new, else the previous position.
    pub(crate) fn set(&mut self, key: &Key, pos: u32) -> (u32, Option<u32>) {
        // One hash lookup for both answers (the key is copied for it: a few bytes inline, a heap
        // copy only for an id longer than 15 bytes).
        match self.slot_of.entry(key.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let slot = *e.get();
                let prev = std::mem::replace(&mut self.slots[slot as usize], pos);
                (slot, Some(prev))
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                let slot = self.slots.len() as u32;
                e.insert(slot);
                self.slots.push(pos);
                (slot, None)
            }
        }
    }
    pub(crate) fn undo(&mut self, key: &str, prev: Option<u32>) {
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
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }
}

/// Labels by target id, in JS Map order (first set; a clear then set moves to the end).
#[derive(Debug, Default, Clone)]
pub(crate) struct Labels {
    order: Vec<Option<(Key, u32)>>,
    at: FxHashMap<Key, usize>,
}

impl Labels {
    pub(crate) fn clear(&mut self) {
        self.order.clear();
        self.at.clear();
    }
    pub(crate) fn set(&mut self, target: &Key, label_pos: u32) {
        if let Some(&i) = self.at.get(target) {
            self.order[i] = Some((target.clone(), label_pos));
        } else {
            self.at.insert(target.clone(), self.order.len());
            self.order.push(Some((target.clone(), label_pos)));
        }
    }
    pub(crate) fn delete(&mut self, target: &str) {
        if let Some(i) = self.at.remove(target) {
            self.order[i] = None;
        }
    }
    pub(crate) fn get(&self, target: &str) -> Option<u32> {
        self.at
            .get(target)
            .and_then(|&i| self.order[i].as_ref().map(|(_, p)| *p))
    }
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Key, u32)> {
        self.order.iter().flatten().map(|(k, p)| (k, *p))
    }
}

/// The index state of a session: the id index, the labels, the leaf, and per record the slots
/// of its id and its parent id.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    pub(crate) index: Index,
    pub(crate) labels: Labels,
    pub(crate) leaf: Leaf,
    /// Per record: the index slot of its parent id, resolved once (NO_SLOT: look it up by key).
    pub(crate) parent_slot: Vec<u32>,
    /// Per record: the index slot of its own id (NO_SLOT for headers).
    pub(crate) rec_slot: Vec<u32>,
}

impl Ids {
    pub(crate) fn clear(&mut self) {
        self.parent_slot.clear();
        self.rec_slot.clear();
        self.index.clear();
        self.labels.clear();
        self.leaf = Leaf::Null;
    }

    /// Room for one more record (its slots unknown yet).
    pub(crate) fn grow(&mut self) {
        self.parent_slot.push(NO_SLOT);
        self.rec_slot.push(NO_SLOT);
    }

    /// The undo of [`Ids::grow`].
    pub(crate) fn shrink(&mut self) {
        self.parent_slot.pop();
        self.rec_slot.pop();
    }

    /// Room for `n` records, none resolved.
    pub(crate) fn unresolved(&mut self, n: usize) {
        self.parent_slot = vec![NO_SLOT; n];
        self.rec_slot = vec![NO_SLOT; n];
    }

    /// A label record at `pos` sets (truthy label) or clears the label of `target`.
    pub(crate) fn apply_label(&mut self, target: &Key, truthy: bool, pos: u32) {
        if truthy {
            self.labels.set(target, pos);
        } else {
            self.labels.delete(target);
        }
    }

    /// Rebuild index, leaf and labels from the records (the reference's `_buildIndex`).
    pub(crate) fn build(&mut self, recs: &[Rec]) {
        self.index.clear();
        // Sized once for every record (most are entries with ids of their own), not grown and
        // rehashed as the ids come.
        self.index.slot_of.reserve(recs.len());
        self.index.slots.reserve(recs.len());
        self.labels.clear();
        self.leaf = Leaf::Null;
        for (pos, rec) in recs.iter().enumerate() {
            let meta = &rec.meta;
            if !meta.kind.is_entry() {
                continue;
            }
            let slot = self.index.set(&meta.id, pos as u32).0;
            self.rec_slot[pos] = slot;
            self.leaf = Leaf::Slot(slot);
            if meta.kind == Kind::Label {
                self.apply_label(&meta.target, meta.label_truthy, pos as u32);
            }
        }
        self.resolve_parents(recs, 0);
    }

    /// Cache parent slots for records from `from` on (ids only ever gain slots, so a slot stays valid).
    pub(crate) fn resolve_parents(&mut self, recs: &[Rec], from: usize) {
        for (pos, rec) in recs.iter().enumerate().skip(from) {
            let parent = &rec.meta.parent;
            self.parent_slot[pos] = if key_truthy(parent) {
                self.index.slot_of.get(parent).copied().unwrap_or(NO_SLOT)
            } else {
                NO_SLOT
            };
        }
    }

    /// Whether any entry has the id `key`.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.index.slot_of.contains_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undoing_a_set_restores_the_index_as_it_was() {
        let mut index = Index::default();
        let a: Key = "\"a\"".into();
        let b: Key = "\"b\"".into();
        index.set(&a, 1);
        let (slot, prev) = index.set(&a, 5);
        assert_eq!((slot, prev), (0, Some(1)));
        index.undo(&a, prev);
        assert_eq!(index.get(&a), Some(1));
        let (_, prev) = index.set(&b, 2);
        assert_eq!(prev, None);
        index.undo(&b, prev);
        assert_eq!((index.get(&b), index.len()), (None, 1));
    }

    #[test]
    fn a_label_cleared_then_set_again_moves_to_the_end() {
        let mut labels = Labels::default();
        let (x, y): (Key, Key) = ("\"x\"".into(), "\"y\"".into());
        labels.set(&x, 1);
        labels.set(&y, 2);
        labels.set(&x, 3);
        let order: Vec<_> = labels.iter().map(|(k, p)| (k.to_string(), p)).collect();
        assert_eq!(order, [("\"x\"".to_owned(), 3), ("\"y\"".to_owned(), 2)]);
        labels.delete(&x);
        labels.set(&x, 4);
        let order: Vec<_> = labels.iter().map(|(k, p)| (k.to_string(), p)).collect();
        assert_eq!(order, [("\"y\"".to_owned(), 2), ("\"x\"".to_owned(), 4)]);
    }
}
