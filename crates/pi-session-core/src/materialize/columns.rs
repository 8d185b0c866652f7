//! Skeletons as columns: what JavaScript builds entry objects from without parsing each entry's
//! JSON.
//!
//! Making the objects of a resumed session is mostly `JSON.parse` of its skeletons (see
//! [`crate::lazy`]): thousands of entries of a few shapes, whose strings repeat (types, roles,
//! models, stop reasons) and whose objects all survive. Here each skeleton becomes a *signature*
//! (its JSON with every string and number replaced by the number of its slot, lazy members by
//! `-1`) and its slots (indexes into one JSON array of the batch's values, each short value once).
//! JavaScript parses the values in one go and builds each entry with one function per signature,
//! made once: object literals, so all entries of a signature share V8's layout, and the
//! skeleton's text is never parsed entry by entry.
//!
//! What a signature leaves as one value (parsed by `JSON.parse` with the others): arrays, objects
//! with many members or a member name that is not plain ASCII, and objects nested deeper than a
//! few levels. An item that is not valid JSON (its line changed in the file since the open) makes
//! the batch's values fail to parse: its text is not put in them (text such as `{…},{…}` would
//! parse there, as two values), a token no JSON array holds is.

use crate::fxhash::FxHashMap;
use crate::json;
use crate::lazy::{Holder, Shape};

/// Objects with more members than this are one value.
const MAX_MEMBERS: usize = 32;
/// Objects nested deeper than this (the entry is level 1) are one value.
const MAX_DEPTH: usize = 6;
/// Strings up to this long (as written) are put in the values once per batch...
const MAX_SHARED_BYTES: usize = 48;
/// ...except the values of these members, which differ from entry to entry (numbers are never
/// shared: they cost less to parse again than to look up).
const UNIQUE: &[&[u8]] = &[
    b"id",
    b"parentId",
    b"timestamp",
    b"responseId",
    b"toolCallId",
    b"firstKeptEntryId",
    b"targetId",
    b"fromId",
];

/// The columns of a batch being made.
pub(crate) struct Columns {
    /// The values: the text of a JSON array, without its closing bracket.
    values: Vec<u8>,
    count: u32,
    shared: FxHashMap<Box<[u8]>, u32>,
    /// The signatures met, each once, as JS gets them (`[slots, signature]`), and their ids.
    pub(crate) sigs: Vec<Box<[u8]>>,
    sig_ids: FxHashMap<Box<[u8]>, u32>,
    /// Per item: its signature's id, then its slots (indexes into the values).
    pub(crate) refs: Vec<u32>,
    sig: Vec<u8>,
    slots: Vec<u32>,
    /// Lazy members written to the signature of the item being added.
    lazy: usize,
    /// The `id` of the item before (as written, and its value's index) and of this one: an
    /// entry's `parentId` is mostly the id of the entry before it (a branch in path order, a file
    /// in file order), and is then given as that value instead of a string of its own (JS makes
    /// one string less, and V8 looks each such short string up in its string table).
    ids: [IdValue; 2],
}

/// The id of an item: its text as written (quotes included) and its value's index.
#[derive(Default)]
struct IdValue {
    text: Vec<u8>,
    at: Option<u32>,
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            values: vec![b'['],
            count: 0,
            shared: FxHashMap::default(),
            sigs: Vec::new(),
            sig_ids: FxHashMap::default(),
            refs: Vec::new(),
            sig: Vec::new(),
            slots: Vec::new(),
            lazy: 0,
            ids: Default::default(),
        }
    }
}

/// An object that is to be one value instead.
struct Whole;

impl Columns {
    /// Add a skeleton, whose lazy members are those of `shape` (if any) in its holder. `trusted`:
    /// the text is known to be valid JSON (held in memory since it was read and checked);
    /// otherwise it is checked here.
    pub(crate) fn push(&mut self, skeleton: &[u8], shape: Option<&Shape>, trusted: bool) {
        self.sig.clear();
        self.slots.clear();
        self.lazy = 0;
        self.ids.swap(0, 1);
        self.ids[1].at = None;
        if !trusted && !json::validate(skeleton) {
            // Not JSON: a token that fails the values' `JSON.parse`, as its text would have
            // failed the batch's.
            self.whole(b"!");
        } else if !self.built(skeleton, shape) {
            self.whole(skeleton);
        }
        self.intern();
    }

    /// Write the skeleton (valid JSON) as a signature and its slots; false when it is to be one
    /// value instead.
    fn built(&mut self, skeleton: &[u8], shape: Option<&Shape>) -> bool {
        skeleton.first() == Some(&b'{')
            && self
                .object(skeleton, 0, Level { depth: 1, holder: shape.filter(|s| s.holder == Holder::Entry), shape })
                .is_ok_and(|end| json::skip_ws(skeleton, end) == skeleton.len())
            // Every lazy member found where the shape has it (else its placeholder would be
            // taken for a value).
            && self.lazy == shape.map_or(0, |s| s.lazy.len())
    }

    /// The item is `v`, one value (signature `0`), whatever was written of it before.
    fn whole(&mut self, v: &[u8]) {
        self.sig.clear();
        self.slots.clear();
        self.sig.push(b'0');
        let at = self.value(v, false);
        self.slots.push(at);
    }

    /// Add the item whose signature and slots were just made.
    fn intern(&mut self) {
        let id = match self.sig_ids.get(&self.sig[..]) {
            Some(&id) => id,
            None => {
                // For JS: `[slots, signature]` (a repeated member name hides the earlier
                // value's slots from the parsed signature, so their number goes along).
                let mut text = vec![b'['];
                push_decimal(&mut text, self.slots.len());
                text.push(b',');
                text.extend_from_slice(&self.sig);
                text.push(b']');
                let id = self.sigs.len() as u32;
                self.sigs.push(text.into());
                self.sig_ids.insert(self.sig[..].into(), id);
                id
            }
        };
        self.refs.push(id);
        self.refs.extend_from_slice(&self.slots);
    }

    /// The values' JSON text.
    pub(crate) fn values_text(&mut self) -> Vec<u8> {
        let mut text = std::mem::replace(&mut self.values, vec![b'[']);
        text.push(b']');
        text
    }

    /// Add a value as written; returns its index. Short ones are added once (`share`).
    fn value(&mut self, v: &[u8], share: bool) -> u32 {
        let share = share && v.len() <= MAX_SHARED_BYTES;
        if share {
            if let Some(&at) = self.shared.get(v) {
                return at;
            }
        }
        if self.count > 0 {
            self.values.push(b',');
        }
        self.values.extend_from_slice(v);
        let at = self.count;
        self.count += 1;
        if share {
            self.shared.insert(v.into(), at);
        }
        at
    }

    /// A slot for the value `v`, written to the signature.
    fn slot(&mut self, v: &[u8], share: bool) {
        let at = self.value(v, share);
        self.slot_at(at);
    }

    /// A slot for the value at `at`, written to the signature.
    fn slot_at(&mut self, at: u32) {
        let k = self.slots.len();
        self.slots.push(at);
        push_decimal(&mut self.sig, k);
    }

    /// A slot for the entry's `id` (`parent` false) or `parentId` (true), the string `v`: a
    /// parentId that is the id of the item before takes its value.
    fn id_slot(&mut self, v: &[u8], parent: bool) {
        if parent {
            let before = &self.ids[0];
            if let Some(at) = before.at.filter(|_| before.text == v) {
                return self.slot_at(at);
            }
            return self.slot(v, false);
        }
        let at = self.value(v, false);
        let this = &mut self.ids[1];
        this.text.clear();
        this.text.extend_from_slice(v);
        this.at = Some(at);
        self.slot_at(at);
    }

    /// Write the object at `b[i]` (valid JSON) to the signature, its members' values as slots,
    /// in one pass; returns the index after it, or [`Whole`] when it is to be one value instead
    /// (nothing written then).
    fn object(&mut self, b: &[u8], i: usize, at: Level<'_>) -> Result<usize, Whole> {
        let (sig_len, slots_len, lazy) = (self.sig.len(), self.slots.len(), self.lazy);
        let r = self.members(b, i, at);
        if r.is_err() {
            // (Values it added stay in the batch's values, unused.)
            self.sig.truncate(sig_len);
            self.slots.truncate(slots_len);
            self.lazy = lazy;
        }
        r
    }

    fn members(&mut self, b: &[u8], i: usize, at: Level<'_>) -> Result<usize, Whole> {
        self.sig.push(b'{');
        let mut i = json::skip_ws(b, i + 1);
        let mut index = 0;
        while b.get(i) == Some(&b'"') {
            let key_end = json::skip_valid_string(b, i + 1);
            let key = b.get(i + 1..key_end - 1).ok_or(Whole)?;
            if index == MAX_MEMBERS || !plain_name(key) {
                return Err(Whole);
            }
            if index > 0 {
                self.sig.push(b',');
            }
            self.sig.push(b'"');
            self.sig.extend_from_slice(key);
            self.sig.extend_from_slice(b"\":");
            let v = json::skip_ws(b, json::skip_ws(b, key_end) + 1);
            let lazy = at.holder.is_some_and(|s| s.lazy.contains(&(index as u8)));
            let id = at.depth == 1 && b.get(v) == Some(&b'"') && matches!(key, b"id" | b"parentId");
            i = if id {
                let end = json::skip_valid_string(b, v + 1);
                self.id_slot(&b[v..end], key == b"parentId");
                end
            } else if lazy {
                if at
                    .holder
                    .and_then(|s| s.keys.get(index))
                    .is_none_or(|k| **k != *key)
                {
                    // Not the shape's member (never for a skeleton of it).
                    return Err(Whole);
                }
                self.sig.extend_from_slice(b"-1");
                self.lazy += 1;
                json::skip_valid_value(b, v)
            } else {
                // The entry's `message` holds the lazy members of a message entry.
                let message = at.depth == 1 && key == b"message";
                let inner = Level {
                    depth: at.depth + 1,
                    holder: at.shape.filter(|s| message && s.holder == Holder::Message),
                    shape: None,
                };
                self.member(b, v, inner, !UNIQUE.contains(&key))?
            };
            i = json::skip_ws(b, i);
            if b.get(i) == Some(&b',') {
                i = json::skip_ws(b, i + 1);
            }
            index += 1;
        }
        if b.get(i) != Some(&b'}') {
            return Err(Whole);
        }
        self.sig.push(b'}');
        Ok(i + 1)
    }

    /// Write the member value at `b[at]` to the signature, an object at level `inner`; returns
    /// the index after it. A holder (`inner.holder`) that cannot be built fails its parent too.
    fn member(
        &mut self,
        b: &[u8],
        at: usize,
        inner: Level<'_>,
        share: bool,
    ) -> Result<usize, Whole> {
        let end = match b.get(at) {
            Some(b'{') if inner.depth <= MAX_DEPTH => match self.object(b, at, inner) {
                Ok(end) => return Ok(end),
                Err(Whole) => json::skip_valid_value(b, at),
            },
            Some(b't' | b'f' | b'n') => {
                let end = json::skip_valid_value(b, at);
                self.sig.extend_from_slice(&b[at..end]);
                return Ok(end);
            }
            Some(b'"') => {
                let end = json::skip_valid_string(b, at + 1);
                self.slot(&b[at..end], share);
                return Ok(end);
            }
            _ => json::skip_valid_value(b, at),
        };
        if inner.holder.is_some() {
            // Only a holder must be built here, for its lazy members.
            return Err(Whole);
        }
        self.slot(&b[at..end], false);
        Ok(end)
    }
}

/// Where an object is: its nesting (the entry is 1), whether it is the holder of a shape's lazy
/// members, and (the entry only) the shape its `message` may hold.
#[derive(Clone, Copy)]
struct Level<'a> {
    depth: usize,
    holder: Option<&'a Shape>,
    shape: Option<&'a Shape>,
}

/// Write `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Whether a member name (as written) can be put in a signature as it is: printable ASCII (a
/// signature is a Latin-1 string for JS).
fn plain_name(key: &[u8]) -> bool {
    key.iter().all(|&c| (0x20..0x80).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(holder: Holder, keys: &[&str], lazy: &[u8]) -> Shape {
        Shape::for_tests(holder, keys, lazy)
    }

    fn parts(c: &mut Columns) -> (Vec<String>, String, Vec<u32>) {
        let sigs = c
            .sigs
            .iter()
            .map(|s| String::from_utf8(s.to_vec()).unwrap())
            .collect();
        let values = String::from_utf8(c.values_text()).unwrap();
        (sigs, values, c.refs.clone())
    }

    #[test]
    fn entries_become_signatures_and_slots_with_short_values_shared() {
        let mut c = Columns::default();
        let m = shape(Holder::Message, &["role", "content", "usage"], &[1]);
        c.push(
            br#"{"type":"message","id":"a","parentId":null,"message":{"role":"assistant","content":0,"usage":{"input":1,"cost":{"total":0.5}}}}"#,
            Some(&m),
            false,
        );
        c.push(
            br#"{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","content":0,"usage":{"input":1,"cost":{"total":0.25}}}}"#,
            Some(&m),
            false,
        );
        let (sigs, values, refs) = parts(&mut c);
        assert_eq!(
            sigs,
            [
                r#"[5,{"type":0,"id":1,"parentId":null,"message":{"role":2,"content":-1,"usage":{"input":3,"cost":{"total":4}}}}]"#,
                r#"[6,{"type":0,"id":1,"parentId":2,"message":{"role":3,"content":-1,"usage":{"input":4,"cost":{"total":5}}}}]"#,
            ]
        );
        assert_eq!(
            values, r#"["message","a","assistant",1,0.5,"b",1,0.25]"#,
            "short strings once, except ids and times (a parentId that is the id before is its \
             value); numbers each time"
        );
        assert_eq!(refs, [0, 0, 1, 2, 3, 4, 1, 0, 5, 1, 2, 6, 7]);
    }

    #[test]
    fn a_parent_id_is_the_value_of_the_id_before_it_only_when_it_is_that_text() {
        let mut c = Columns::default();
        for item in [
            &br#"{"id":"a","parentId":null}"#[..],
            br#"{"id":"b","parentId":"a"}"#,
            // Not the id of the item just before (a branch in file order), an id deeper in the
            // entry, the same id spelled otherwise, and an item that is one value.
            br#"{"id":"c","parentId":"a","m":{"id":"b","parentId":"c"}}"#,
            br#"{"id":"d","parentId":"\u0063"}"#,
            b"[1]",
            br#"{"parentId":"d"}"#,
        ] {
            c.push(item, None, false);
        }
        let (_, values, refs) = parts(&mut c);
        assert_eq!(values, r#"["a","b","c","a","b","c","d","\u0063",[1],"d"]"#);
        // Each item's slots (its refs after its signature), by the slot counts of the items.
        let mut rest = &refs[..];
        let items: Vec<&[u32]> = [1, 2, 4, 2, 1, 1]
            .iter()
            .map(|&n| {
                let (item, after) = rest.split_at(1 + n);
                rest = after;
                &item[1..]
            })
            .collect();
        assert_eq!(
            items,
            [&[0][..], &[1, 0], &[2, 3, 4, 5], &[6, 7], &[8], &[9]]
        );
    }

    #[test]
    fn arrays_big_objects_odd_names_and_deep_objects_are_one_value() {
        let mut c = Columns::default();
        let many: Vec<String> = (0..=MAX_MEMBERS).map(|i| format!("\"k{i}\":{i}")).collect();
        let item = format!(
            r#"{{"a":[1,{{"x":2}}],"b":{{{}}},"c":{{"é":1}},"d":{{"e":{{"f":{{"g":{{"h":{{"i":{{"j":1}}}}}}}}}}}},"t":true}}"#,
            many.join(",")
        );
        c.push(item.as_bytes(), None, false);
        let (sigs, values, refs) = parts(&mut c);
        assert_eq!(
            sigs,
            [r#"[4,{"a":0,"b":1,"c":2,"d":{"e":{"f":{"g":{"h":{"i":3}}}}},"t":true}]"#]
        );
        let parsed = json::parse(values.as_bytes()).unwrap();
        let values = parsed.as_array().unwrap();
        let slot = |k: usize| json::to_json(&values[refs[1 + k] as usize]);
        assert_eq!(slot(0), r#"[1,{"x":2}]"#);
        assert!(slot(1).starts_with(r#"{"k0":0,"#));
        assert_eq!(slot(2), r#"{"é":1}"#);
        assert_eq!(slot(3), r#"{"j":1}"#);
    }

    #[test]
    fn a_repeated_name_keeps_the_slots_of_both_values() {
        let mut c = Columns::default();
        c.push(br#"{"a":{"x":"1","y":"2"},"a":true}"#, None, false);
        let (sigs, _, refs) = parts(&mut c);
        assert_eq!(sigs, [r#"[2,{"a":{"x":0,"y":1},"a":true}]"#]);
        assert_eq!(refs, [0, 0, 1]);
    }

    #[test]
    fn what_is_no_object_is_its_own_one_value_and_what_is_no_json_fails_the_values() {
        let mut c = Columns::default();
        c.push(b"[1,2]", None, false);
        c.push(b"7", None, false);
        let (sigs, values, refs) = parts(&mut c);
        assert_eq!(sigs, ["[1,0]"]);
        assert_eq!(values, "[[1,2],7]");
        assert_eq!(refs, [0, 0, 0, 1]);
        // Not JSON, also where its text would parse as values of their own.
        for bad in [&br#"{"a":1,"b":"#[..], br#"{"a":1},{"b":2}"#, b"1,2", b""] {
            let mut c = Columns::default();
            c.push(br#"{"a":"1"}"#, None, false);
            c.push(bad, None, false);
            c.push(br#"{"b":"2"}"#, None, false);
            let (_, values, _) = parts(&mut c);
            assert!(!json::validate(values.as_bytes()), "{values}");
        }
    }

    #[test]
    fn an_entry_whose_holder_cannot_be_built_is_one_value() {
        let mut c = Columns::default();
        // A holder at the nesting limit cannot be left as one value: its member is lazy.
        let m = shape(Holder::Entry, &["type", "data"], &[1]);
        c.push(br#"{"type":"custom","data":0}"#, Some(&m), true);
        let nested = shape(Holder::Message, &["role", "content"], &[1]);
        c.push(br#"{"type":"message","message":[0]}"#, Some(&nested), true);
        // A holder not found where the shape says (never for a skeleton of it).
        c.push(
            br#"{"type":"message","m\u0065ssage":{"role":"user","content":0}}"#,
            Some(&nested),
            true,
        );
        let (sigs, _, refs) = parts(&mut c);
        assert_eq!(sigs, [r#"[1,{"type":0,"data":-1}]"#, "[1,0]"]);
        assert_eq!(refs[refs.len() - 2], 1, "the last item is one value");
    }
}
