//! Entries whose big values stay in the session's lines until JavaScript reads them.
//!
//! pi reads little of a resumed session: the type, ids and timestamps of every entry, a message's
//! role, usage, provider and model, a custom entry's type, and the content of the messages after
//! the last compaction. Turning every entry into a whole JS object costs what the file holds
//! (a 128 MB session: hundreds of ms and its size in memory). So the store hands out *skeletons*:
//! each entry with its big members ("lazy values") replaced, which JavaScript turns into the
//! reference's objects with those members as own accessors that read the value from here, once,
//! when code first reads them (see lib/lazy.js).
//!
//! Which members are lazy is decided per record when its line is read at load (in the same
//! validating pass, see `record::read_meta_lazy`): the members of its *holder* — the `message`
//! object of a message entry, else the entry itself — whose value is at least
//! [`MIN_LAZY_BYTES`] long, except the ones callers test and walk ([`EAGER`]). A holder whose
//! member names JavaScript could not rebuild as they are (repeated, escaped, `__proto__`, array
//! indexes) keeps everything.
//!
//! A holder's *shape* is its member names in order with the lazy ones marked: JavaScript builds
//! one constructor per shape, so that every skeleton object of a shape has V8's same fast
//! layout. Shapes are interned per load ([`Shapes`]).

pub mod reader;

use std::ops::Range;

use crate::fxhash::FxHashMap;

pub use reader::LazyReader;

/// Values at least this long (in bytes, as written) are lazy. Shorter ones cost more to put
/// behind an accessor (and to fetch one by one) than to parse with the entry.
pub const MIN_LAZY_BYTES: usize = 256;

/// At most this many members of one holder are lazy (the first ones in order); the rest stay.
pub const MAX_LAZY_SLOTS: usize = 4;

/// Records whose JSON nests deeper than this (the entry object is level 1) keep all their values.
/// V8 from Node 26 on serializes plain objects without recursion, so `JSON.stringify` of the
/// reference's entry takes any depth; an object with an accessor takes the recursive path, which
/// ends in a RangeError a few thousand levels down. Real entries nest a few dozen levels.
pub const MAX_LAZY_DEPTH: usize = 512;

/// Holders with more members than this keep them all (their shape would be unwieldy).
const MAX_SHAPE_KEYS: usize = 48;

/// Members that are never lazy, whatever their size: what pi and the tools built on the store
/// test and walk over every entry (identity, tree links, kinds, a message's role and accounting,
/// compaction bookkeeping, labels, names), and `message`, which holds the lazy members itself.
pub const EAGER: &[&[u8]] = &[
    b"type",
    b"id",
    b"parentId",
    b"timestamp",
    b"message",
    b"role",
    b"usage",
    b"api",
    b"provider",
    b"model",
    b"modelId",
    b"stopReason",
    b"errorMessage",
    b"responseId",
    b"durationMs",
    b"customType",
    b"toolCallId",
    b"toolName",
    b"isError",
    b"display",
    b"firstKeptEntryId",
    b"tokensBefore",
    b"fromHook",
    b"fromId",
    b"targetId",
    b"label",
    b"name",
    b"thinkingLevel",
    b"kind",
    b"version",
    b"cwd",
    b"parentSession",
];

/// Which object of an entry holds its lazy members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Holder {
    /// The entry itself (a compaction's summary, a custom entry's data, ...).
    Entry = 0,
    /// The `message` object of a message entry (its content, a tool result's details).
    Message = 1,
}

/// Where a record's lazy values are: its holder's shape and, for each lazy member in the shape's
/// order, the value's byte range within the line (start, length).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LazyMeta {
    pub shape: u32,
    pub count: u8,
    pub slots: [(u32, u32); MAX_LAZY_SLOTS],
}

impl LazyMeta {
    /// The value ranges within the line, in the shape's order of lazy members.
    pub fn ranges(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.slots[..self.count as usize]
            .iter()
            .map(|&(s, n)| s as usize..(s + n) as usize)
    }
}

/// One holder shape: whose members they are, their names in order, and which are lazy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub holder: Holder,
    pub keys: Vec<Box<[u8]>>,
    /// Indexes into `keys` of the lazy members, in order.
    pub lazy: Vec<u8>,
    /// What identified it when it was interned (see [`signature`]).
    sig: Box<[u8]>,
}

impl Shape {
    /// The shape as JSON for JavaScript: `{"holder":0|1,"keys":[...],"lazy":[...]}`.
    pub fn to_json(&self) -> String {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|k| crate::json::string_to_json(&String::from_utf8_lossy(k)))
            .collect();
        let lazy: Vec<String> = self.lazy.iter().map(u8::to_string).collect();
        format!(
            r#"{{"holder":{},"keys":[{}],"lazy":[{}]}}"#,
            self.holder as u8,
            keys.join(","),
            lazy.join(",")
        )
    }

    /// A shape of these members, for tests.
    #[cfg(test)]
    pub(crate) fn for_tests(holder: Holder, keys: &[&str], lazy: &[u8]) -> Shape {
        let keys: Vec<Box<[u8]>> = keys.iter().map(|k| k.as_bytes().into()).collect();
        let mut sig = Vec::new();
        let marked = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (lazy.contains(&(i as u8)), k));
        signature(holder, marked, &mut sig);
        Shape {
            holder,
            keys,
            lazy: lazy.to_vec(),
            sig: sig.into(),
        }
    }

    /// The slot (index among the lazy members) of the member named `key`.
    pub fn slot_of(&self, key: &[u8]) -> Option<usize> {
        self.lazy
            .iter()
            .position(|&i| &*self.keys[i as usize] == key)
    }
}

/// The shapes of one load, each once, by id (ids count from 0 in the order first seen).
#[derive(Debug, Default, Clone)]
pub struct Shapes {
    list: Vec<Shape>,
    /// By signature (see [`signature`]).
    by: FxHashMap<Box<[u8]>, u32>,
}

/// What identifies a shape, as bytes: the holder, then per member a byte saying whether it is
/// lazy, its name and a 0 (names hold no control bytes, see [`plain_name`]).
fn signature(
    holder: Holder,
    keys: impl Iterator<Item = (bool, impl AsRef<[u8]>)>,
    out: &mut Vec<u8>,
) {
    out.clear();
    out.push(holder as u8);
    for (lazy, name) in keys {
        out.push(u8::from(lazy));
        out.extend_from_slice(name.as_ref());
        out.push(0);
    }
}

impl Shapes {
    pub fn get(&self, id: u32) -> Option<&Shape> {
        self.list.get(id as usize)
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Shape> {
        self.list.iter()
    }

    /// The id of the shape of signature `sig`, if it was met.
    fn id_of(&self, sig: &[u8]) -> Option<u32> {
        self.by.get(sig).copied()
    }

    /// The id of the shape of signature `sig`, made by `shape` when it is new.
    fn intern(&mut self, sig: &[u8], shape: impl FnOnce() -> Shape) -> u32 {
        if let Some(&id) = self.by.get(sig) {
            return id;
        }
        let id = self.list.len() as u32;
        self.list.push(shape());
        self.by.insert(sig.into(), id);
        id
    }

    /// Take in `other`'s shapes; returns the id each of `other`'s ids has here.
    pub fn absorb(&mut self, other: &Shapes) -> Vec<u32> {
        other
            .list
            .iter()
            .map(|s| self.intern(&s.sig, || s.clone()))
            .collect()
    }
}

/// The members of one line collected while it is validated, for [`LazyScratch::decide`]: names
/// as written (not decoded: a name with an escape is no plain name, and keeps everything), copied
/// one after the other; values are ranges of the line.
#[derive(Debug, Default)]
pub struct LazyScratch {
    names: Vec<u8>,
    top: Vec<(Range<usize>, Range<usize>)>,
    nested: Vec<(Range<usize>, Range<usize>)>,
    sig: Vec<u8>,
    /// The shapes met so far (per thread; merged by [`Shapes::absorb`]).
    pub shapes: Shapes,
}

impl LazyScratch {
    /// How many members of the `message` object were collected for the line.
    pub fn nested_len(&self) -> usize {
        self.nested.len()
    }

    /// Start on a new line.
    pub fn clear(&mut self) {
        self.names.clear();
        self.top.clear();
        self.nested.clear();
    }

    /// A member of the line's top-level object (`nested`: of its `message` object).
    pub fn member(&mut self, nested: bool, name: &[u8], value: Range<usize>) {
        let at = self.names.len();
        self.names.extend_from_slice(name);
        let m = (at..self.names.len(), value);
        if nested {
            self.nested.push(m);
        } else {
            self.top.push(m);
        }
    }

    /// The lazy values of the line whose members were collected, for a record of `holder`
    /// (None: no holder, e.g. a header). Nothing is allocated once the line's shape is known.
    pub fn decide(&mut self, holder: Option<Holder>) -> Option<LazyMeta> {
        let holder = holder?;
        let members = match holder {
            Holder::Entry => &self.top,
            Holder::Message => &self.nested,
        };
        let names = &self.names;
        let name = |m: &(Range<usize>, Range<usize>)| &names[m.0.clone()];
        let wanted = |m: &(Range<usize>, Range<usize>)| {
            m.1.len() >= MIN_LAZY_BYTES && !EAGER.contains(&name(m))
        };
        if members.len() > MAX_SHAPE_KEYS || !members.iter().any(wanted) {
            return None;
        }
        let mut meta = LazyMeta {
            shape: 0,
            count: 0,
            slots: [(0, 0); MAX_LAZY_SLOTS],
        };
        let mut lazy = [false; MAX_SHAPE_KEYS];
        for (i, m) in members.iter().enumerate() {
            if wanted(m) && (meta.count as usize) < MAX_LAZY_SLOTS {
                meta.slots[meta.count as usize] = (m.1.start as u32, m.1.len() as u32);
                meta.count += 1;
                lazy[i] = true;
            }
        }
        // The signature holds the top-level names too for a message's holder, so that a line
        // with the signature of a shape met before needs none of the checks below again (a
        // shape is interned only once they passed): most lines repeat a shape met earlier.
        let keys = members.iter().enumerate().map(|(i, m)| (lazy[i], name(m)));
        let top = (holder == Holder::Message).then_some(&self.top);
        signature(
            holder,
            top.into_iter()
                .flatten()
                .map(|m| (false, name(m)))
                .chain(keys),
            &mut self.sig,
        );
        if let Some(id) = self.shapes.id_of(&self.sig) {
            meta.shape = id;
            return Some(meta);
        }
        if !members.iter().all(|m| plain_name(name(m))) || repeats(members.iter().map(name)) {
            return None;
        }
        // A repeated top-level name (`message` twice, say, or spelled with an escape) and
        // JSON.parse keeps another object than the members collected.
        if holder == Holder::Message
            && (!self.top.iter().all(|m| plain_name(name(m))) || repeats(self.top.iter().map(name)))
        {
            return None;
        }
        let sig = &self.sig;
        meta.shape = self.shapes.intern(sig, || Shape {
            holder,
            keys: members.iter().map(|m| Box::from(name(m))).collect(),
            lazy: (0..members.len() as u8)
                .filter(|&i| lazy[i as usize])
                .collect(),
            sig: sig.as_slice().into(),
        });
        Some(meta)
    }
}

/// Can JavaScript rebuild an object with this member name by adding it? It must be plain
/// (printable ASCII: its bytes are then its JS name), not `__proto__` (assigning it sets the
/// prototype) and not an array index (objects order those first).
fn plain_name(k: &[u8]) -> bool {
    k.iter()
        .all(|&c| (0x20..0x7f).contains(&c) && c != b'\\' && c != b'"')
        && k != b"__proto__"
        && !(k.first().is_some_and(u8::is_ascii_digit))
}

/// Does a name repeat? (JSON.parse keeps a repeated name at its first place with its last value,
/// so such an object cannot be rebuilt member by member.) Holders have few members: compared
/// pairwise, without allocating.
fn repeats<'a>(names: impl Iterator<Item = &'a [u8]> + Clone) -> bool {
    names
        .clone()
        .enumerate()
        .any(|(i, a)| names.clone().skip(i + 1).any(|b| a == b))
}

/// Appends the skeleton of `line` to `out`: the line with each lazy value of `meta` replaced by
/// `0` (the placeholder JavaScript replaces by an accessor).
pub fn push_skeleton(line: &[u8], meta: &LazyMeta, out: &mut Vec<u8>) {
    let mut prev = 0;
    for r in meta.ranges() {
        out.extend_from_slice(&line[prev..r.start]);
        out.push(b'0');
        prev = r.end;
    }
    out.extend_from_slice(&line[prev..]);
}

/// How long the skeleton of a line of `line_len` bytes is.
pub fn skeleton_len(line_len: usize, meta: &LazyMeta) -> usize {
    line_len - meta.ranges().map(|r| r.len()).sum::<usize>() + meta.count as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_of(top: &[(&str, usize)], nested: &[(&str, usize)]) -> LazyScratch {
        let mut s = LazyScratch::default();
        let mut at = 0;
        for (n, len) in nested {
            s.member(true, n.as_bytes(), at..at + len);
            at += len;
        }
        for (n, len) in top {
            s.member(false, n.as_bytes(), at..at + len);
            at += len;
        }
        s
    }

    #[test]
    fn big_members_are_lazy_except_the_ones_callers_test() {
        let mut s = scratch_of(
            &[],
            &[
                ("role", 10),
                ("content", 300),
                ("usage", 900),
                ("details", 256),
            ],
        );
        let meta = s.decide(Some(Holder::Message)).unwrap();
        assert_eq!(meta.count, 2);
        let shape = s.shapes.get(meta.shape).unwrap();
        assert_eq!(shape.lazy, [1, 3]);
        assert_eq!(shape.slot_of(b"details"), Some(1));
        assert_eq!(shape.slot_of(b"usage"), None);
        assert_eq!(
            shape.to_json(),
            r#"{"holder":1,"keys":["role","content","usage","details"],"lazy":[1,3]}"#
        );
        assert_eq!(meta.ranges().collect::<Vec<_>>(), [10..310, 1210..1466]);
    }

    #[test]
    fn small_values_and_entries_without_a_holder_stay_whole() {
        let mut s = scratch_of(&[("type", 9), ("summary", 255)], &[]);
        assert_eq!(s.decide(Some(Holder::Entry)), None);
        assert_eq!(s.decide(None), None);
    }

    #[test]
    fn names_javascript_could_not_rebuild_keep_everything() {
        for names in [
            ["data", "data"],
            ["__proto__", "data"],
            ["0", "data"],
            ["d\\u0061ta", "x"],
        ] {
            let mut s = scratch_of(&[(names[0], 300), (names[1], 300)], &[]);
            assert_eq!(s.decide(Some(Holder::Entry)), None, "{names:?}");
        }
    }

    #[test]
    fn shapes_are_interned_and_merged_by_their_names() {
        let mut a = scratch_of(&[("type", 9), ("data", 300)], &[]);
        let mut b = scratch_of(&[("type", 9), ("data", 400)], &[]);
        let ma = a.decide(Some(Holder::Entry)).unwrap();
        let mb = b.decide(Some(Holder::Entry)).unwrap();
        assert_eq!((ma.shape, mb.shape), (0, 0));
        let mut c = scratch_of(&[("type", 9), ("other", 300), ("data", 300)], &[]);
        c.decide(Some(Holder::Entry)).unwrap();
        let mut all = Shapes::default();
        assert_eq!(all.absorb(&c.shapes), [0]);
        assert_eq!(all.absorb(&a.shapes), [1]);
        assert_eq!(all.absorb(&b.shapes), [1]);
    }

    #[test]
    fn a_skeleton_is_the_line_with_its_lazy_values_as_zero() {
        let line = br#"{"type":"custom","data":{"big":"value"},"x":"long string"}"#;
        let data = line.windows(6).position(|w| w == b"{\"big\"").unwrap();
        let x = line
            .windows(13)
            .position(|w| w == b"\"long string\"")
            .unwrap();
        let meta = LazyMeta {
            shape: 0,
            count: 2,
            slots: [(data as u32, 15), (x as u32, 13), (0, 0), (0, 0)],
        };
        let mut out = Vec::new();
        push_skeleton(line, &meta, &mut out);
        assert_eq!(out, br#"{"type":"custom","data":0,"x":0}"#);
        assert_eq!(skeleton_len(line.len(), &meta), out.len());
    }
}
