//! `Object`: a JS plain object with V8's property enumeration order.

use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use super::string::{escape_into, needs_escape, JsStr};
use super::Value;

/// Above this many non-index keys, lookups go through a hash index; below it a linear scan of
/// short keys is faster than hashing.
const INDEX_THRESHOLD: usize = 16;

/// A JS plain object: property order = integer-like keys ("0", or [1-9][0-9]* with value < 2^32 - 1,
/// i.e. canonical array indices) first in ascending numeric order, then the other keys in insertion
/// order. Setting an existing key replaces the value and keeps its position (this is also what
/// JSON.parse does with duplicate keys: last value wins, first position).
#[derive(Clone, Default)]
pub struct Object {
    /// Enumeration order: `entries[..n_indexed]` are array-index keys sorted numerically, the rest
    /// are named keys in insertion order.
    entries: Vec<(JsStr, Value)>,
    n_indexed: usize,
    /// Hash index over the named part, present once it is large.
    index: Option<Box<KeyIndex>>,
}

impl Object {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        let pos = self.position(&canonical_key(key))?;
        Some(&self.entries[pos].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        let pos = self.position(&canonical_key(key))?;
        Some(&mut self.entries[pos].1)
    }

    /// Lookup by an already canonical key.
    pub fn get_js(&self, key: &JsStr) -> Option<&Value> {
        let pos = self.position(key.as_escaped())?;
        Some(&self.entries[pos].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(&canonical_key(key)).is_some()
    }

    /// JS assignment semantics: an existing key keeps its position and gets the new value.
    pub fn insert(&mut self, key: JsStr, value: Value) {
        let k = key.as_escaped();
        if is_array_index(k.as_bytes()) {
            match self.entries[..self.n_indexed].binary_search_by(|(e, _)| index_cmp(e, &key)) {
                Ok(pos) => self.entries[pos].1 = value,
                Err(pos) => {
                    self.entries.insert(pos, (key, value));
                    self.n_indexed += 1;
                }
            }
            return;
        }
        match self.named_position(k) {
            Some(pos) => self.entries[self.n_indexed + pos].1 = value,
            None => self.push_named(key, value),
        }
    }

    /// JS `delete` semantics: the remaining keys keep their relative order.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.position(&canonical_key(key))?;
        let (_, value) = self.entries.remove(pos);
        if pos < self.n_indexed {
            self.n_indexed -= 1;
        } else if self.index.is_some() {
            // Positions after the removed entry shifted; rebuilding is O(n) like the removal.
            self.index = KeyIndex::build(&self.entries[self.n_indexed..]);
        }
        Some(value)
    }

    /// Properties in JS enumeration order.
    pub fn iter(&self) -> impl Iterator<Item = (&JsStr, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Values in JS enumeration order, mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&JsStr, &mut Value)> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &JsStr> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn entries(&self) -> &[(JsStr, Value)] {
        &self.entries
    }

    /// Moves all entries out (used by the iterative drop).
    pub(crate) fn take_entries(&mut self) -> Vec<(JsStr, Value)> {
        self.n_indexed = 0;
        self.index = None;
        std::mem::take(&mut self.entries)
    }

    /// Same shape as `self`, with `entries` (which must have the same keys in the same order).
    pub(crate) fn with_entries_like(&self, entries: Vec<(JsStr, Value)>) -> Object {
        Object {
            entries,
            n_indexed: self.n_indexed,
            index: self.index.clone(),
        }
    }

    fn position(&self, key: &str) -> Option<usize> {
        if is_array_index(key.as_bytes()) {
            self.entries[..self.n_indexed]
                .binary_search_by(|(e, _)| index_cmp_bytes(e.as_escaped(), key))
                .ok()
        } else {
            self.named_position(key).map(|p| p + self.n_indexed)
        }
    }

    /// Position within the named part.
    fn named_position(&self, key: &str) -> Option<usize> {
        let named = &self.entries[self.n_indexed..];
        match &self.index {
            Some(index) => index.find(named, key.as_bytes()),
            None => named.iter().position(|(k, _)| k.as_escaped() == key),
        }
    }

    /// Appends a named key known to be absent.
    fn push_named(&mut self, key: JsStr, value: Value) {
        self.entries.push((key, value));
        let named = &self.entries[self.n_indexed..];
        match &mut self.index {
            Some(index) => index.add(named, named.len() - 1),
            None if named.len() > INDEX_THRESHOLD => self.index = KeyIndex::build(named),
            None => {}
        }
    }
}

/// Builds an object from parsed members without quadratic behaviour on hostile input (many
/// array-index keys in descending order, or many duplicates).
#[derive(Default)]
pub(crate) struct ObjectBuilder {
    indexed: Vec<(JsStr, Value)>,
    named: Object,
}

impl ObjectBuilder {
    pub(crate) fn insert(&mut self, key: JsStr, value: Value) {
        if is_array_index(key.as_escaped().as_bytes()) {
            self.indexed.push((key, value));
        } else {
            self.named.insert(key, value);
        }
    }

    pub(crate) fn finish(self) -> Object {
        let ObjectBuilder { mut indexed, named } = self;
        if indexed.is_empty() {
            return named;
        }
        // Stable sort keeps duplicates in source order, so the last of each run is the value
        // JSON.parse keeps.
        if !indexed
            .windows(2)
            .all(|w| index_cmp(&w[0].0, &w[1].0).is_lt())
        {
            indexed.sort_by(|a, b| index_cmp(&a.0, &b.0));
            let mut deduped: Vec<(JsStr, Value)> = Vec::with_capacity(indexed.len());
            for (k, v) in indexed {
                match deduped.last_mut() {
                    Some(last) if last.0 == k => last.1 = v,
                    _ => deduped.push((k, v)),
                }
            }
            indexed = deduped;
        }
        let n_indexed = indexed.len();
        let Object {
            entries: named_entries,
            index,
            ..
        } = named;
        indexed.extend(named_entries);
        Object {
            entries: indexed,
            n_indexed,
            index,
        }
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl FromIterator<(JsStr, Value)> for Object {
    fn from_iter<I: IntoIterator<Item = (JsStr, Value)>>(iter: I) -> Self {
        let mut b = ObjectBuilder::default();
        for (k, v) in iter {
            b.insert(k, v);
        }
        b.finish()
    }
}

/// The canonical form of a lookup key, borrowed when no escaping is needed.
fn canonical_key(key: &str) -> Cow<'_, str> {
    if needs_escape(key.as_bytes()) {
        let mut s = String::with_capacity(key.len() + 8);
        escape_into(key, &mut s);
        Cow::Owned(s)
    } else {
        Cow::Borrowed(key)
    }
}

/// "0" or [1-9][0-9]* below 2^32 - 1: the keys V8 stores as elements and enumerates first.
pub(crate) fn is_array_index(k: &[u8]) -> bool {
    match k {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] if rest.len() <= 9 && rest.iter().all(u8::is_ascii_digit) => {
            k.len() < 10 || k.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')) < 0xffff_ffff
        }
        _ => false,
    }
}

/// Numeric order of two array-index keys: without leading zeros, shorter means smaller.
fn index_cmp(a: &JsStr, b: &JsStr) -> std::cmp::Ordering {
    index_cmp_bytes(a.as_escaped(), b.as_escaped())
}

pub(crate) fn index_cmp_bytes(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Open-addressing table of positions into the named entries (position + 1; 0 = empty).
#[derive(Clone)]
struct KeyIndex {
    slots: Vec<u32>,
    hasher: RandomState,
}

impl KeyIndex {
    fn build(named: &[(JsStr, Value)]) -> Option<Box<KeyIndex>> {
        if named.len() <= INDEX_THRESHOLD {
            return None;
        }
        let mut index = KeyIndex {
            slots: Vec::new(),
            hasher: RandomState::new(),
        };
        index.rehash(named, (named.len() * 2).next_power_of_two());
        Some(Box::new(index))
    }

    fn rehash(&mut self, named: &[(JsStr, Value)], capacity: usize) {
        self.slots = vec![0; capacity];
        for pos in 0..named.len() {
            self.place(named, pos);
        }
    }

    fn hash(&self, key: &[u8]) -> usize {
        self.hasher.hash_one(key) as usize
    }

    fn place(&mut self, named: &[(JsStr, Value)], pos: usize) {
        let mask = self.slots.len() - 1;
        let mut slot = self.hash(named[pos].0.as_escaped().as_bytes()) & mask;
        while self.slots[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        self.slots[slot] = pos as u32 + 1;
    }

    fn add(&mut self, named: &[(JsStr, Value)], pos: usize) {
        // Keep the load factor at most one half so probe sequences stay short.
        if named.len() * 2 > self.slots.len() {
            self.rehash(named, self.slots.len() * 2);
        } else {
            self.place(named, pos);
        }
    }

    fn find(&self, named: &[(JsStr, Value)], key: &[u8]) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut slot = self.hash(key) & mask;
        loop {
            let p = self.slots[slot];
            if p == 0 {
                return None;
            }
            let pos = p as usize - 1;
            if named[pos].0.as_escaped().as_bytes() == key {
                return Some(pos);
            }
            slot = (slot + 1) & mask;
        }
    }
}
