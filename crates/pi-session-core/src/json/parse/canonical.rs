//! The handler that writes canonical JSON (`JSON.stringify(JSON.parse(..))`) while parsing, into
//! a `String` (`normalize`) or compared byte by byte against the input (`is_canonical`).

use std::collections::HashSet;
use std::ops::Range;

use super::grammar::{number_value, short_integer};
use super::Handler;
use crate::json::object::{index_cmp_bytes, is_array_index};
use crate::json::ser::format_number;
use crate::json::string::{Canon, Out, Source};

/// Up to this many keys per object, duplicates are found by a linear scan; above it by hashing.
const LINEAR_KEY_SCAN: usize = 32;

/// Writes canonical JSON while parsing. Gives up (`fallback`) when an object would need its keys
/// reordered or deduplicated, which only a built `Object` can do.
pub(super) struct Writer<'a, O: Out + Tracked> {
    src: Source<'a>,
    pub(super) out: O,
    canon: Canon,
    frames: Vec<WFrame>,
    /// Byte ranges (in output coordinates) of the keys of all open objects.
    keys: Vec<Range<usize>>,
    key_start: usize,
    pub(super) fallback: bool,
    /// When set: the top-level object's members as (key range, value range) in output coordinates
    /// (which are input coordinates for `Compare` while it matches).
    pub(super) top: Option<&'a mut Vec<(Range<usize>, Range<usize>)>>,
}

/// An open container.
struct WFrame {
    object: bool,
    nonempty: bool,
    /// Where this object's keys start in `Writer::keys`.
    keys_from: usize,
    /// A key that is not an array index was seen (array indices must all come before it).
    named_seen: bool,
    /// The keys so far, once there are too many to scan.
    key_set: Option<HashSet<Box<[u8]>>>,
}

impl WFrame {
    fn new(object: bool, keys_from: usize) -> Self {
        WFrame {
            object,
            nonempty: false,
            keys_from,
            named_seen: false,
            key_set: None,
        }
    }
}

/// Output that can show back what was written (to compare keys).
pub(super) trait Tracked {
    fn pos(&self) -> usize;
    fn written(&self, r: Range<usize>) -> &[u8];
    fn failed(&self) -> bool {
        false
    }
}

impl Tracked for String {
    fn pos(&self) -> usize {
        self.len()
    }
    fn written(&self, r: Range<usize>) -> &[u8] {
        &self.as_bytes()[r]
    }
}

/// An `Out` that checks the canonical text against the input instead of storing it.
pub(super) struct Compare<'a> {
    pub(super) input: &'a [u8],
    pub(super) pos: usize,
    pub(super) ok: bool,
}

impl Out for Compare<'_> {
    #[inline]
    fn put_str(&mut self, s: &str) {
        let end = self.pos + s.len();
        // Mostly one to six bytes (punctuation, escapes): an inline loop beats a memcmp call.
        let same = self
            .input
            .get(self.pos..end)
            .is_some_and(|have| have.iter().zip(s.as_bytes()).all(|(a, b)| a == b));
        if same {
            self.pos = end;
        } else {
            self.ok = false;
        }
    }

    /// Source text at the current position is canonical as is (the whole input's UTF-8 was
    /// checked before the parse: see `check_canonical`).
    #[inline]
    fn put_run(&mut self, _src: &Source<'_>, r: Range<usize>) {
        if r.start == self.pos {
            self.pos = r.end;
        } else {
            self.ok = false;
        }
    }
}

impl Tracked for Compare<'_> {
    fn pos(&self) -> usize {
        self.pos
    }
    fn written(&self, r: Range<usize>) -> &[u8] {
        &self.input[r]
    }
    fn failed(&self) -> bool {
        !self.ok
    }
}

impl<'a, O: Out + Tracked> Writer<'a, O> {
    pub(super) fn new(out: O, src: Source<'a>) -> Self {
        Writer {
            src,
            out,
            canon: Canon::default(),
            frames: Vec::new(),
            keys: Vec::new(),
            key_start: 0,
            fallback: false,
            top: None,
        }
    }

    /// A top-level member's value ends at the current output position.
    #[inline]
    fn close_top_value(&mut self) {
        if let (Some(top), 1) = (&mut self.top, self.frames.len()) {
            if let Some((_, v)) = top.last_mut() {
                v.end = self.out.pos();
            }
        }
    }

    /// Separator before an array element (object members get theirs before the key).
    #[inline]
    fn before_value(&mut self) {
        if let Some(f) = self.frames.last_mut() {
            if !f.object {
                if f.nonempty {
                    self.out.put_str(",");
                }
                f.nonempty = true;
            }
        }
    }

    /// Checks that the key just written keeps the object in JS order without duplicates.
    fn check_key(&mut self, key: Range<usize>) {
        let Some(f) = self.frames.last_mut() else {
            return;
        };
        let open = &self.keys[f.keys_from..];
        let k = self.out.written(key.clone());
        if is_array_index(k) {
            // Array indices must come first, strictly ascending (so also without duplicates).
            let ascending = match open.last() {
                None => true,
                Some(last) => {
                    let prev = self.out.written(last.clone());
                    index_cmp_bytes(as_str(prev), as_str(k)).is_lt()
                }
            };
            if f.named_seen || !ascending {
                self.fallback = true;
            }
        } else {
            f.named_seen = true;
            let duplicate = match &mut f.key_set {
                Some(set) => !set.insert(k.into()),
                None if open.len() < LINEAR_KEY_SCAN => {
                    open.iter().any(|r| self.out.written(r.clone()) == k)
                }
                None => {
                    let mut set: HashSet<Box<[u8]>> = open
                        .iter()
                        .map(|r| self.out.written(r.clone()).into())
                        .collect();
                    let duplicate = !set.insert(k.into());
                    f.key_set = Some(set);
                    duplicate
                }
            };
            if duplicate {
                self.fallback = true;
            }
        }
        self.keys.push(key);
    }
}

/// Keys are compared as text only after they were produced from `&str` pieces.
fn as_str(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or_default()
}

impl<O: Out + Tracked> Handler for Writer<'_, O> {
    const CAN_STOP: bool = true;
    fn stopped(&self) -> bool {
        self.fallback || self.out.failed()
    }
    fn null(&mut self) {
        self.before_value();
        self.out.put_str("null");
    }
    fn boolean(&mut self, b: bool) {
        self.before_value();
        self.out.put_str(if b { "true" } else { "false" });
    }
    fn number(&mut self, raw: &[u8]) {
        self.before_value();
        // Integers of up to 15 digits without a leading zero or "-0" print as written.
        let plain = match raw {
            [b'-', b'0', ..] | [b'0', _, ..] => false,
            _ => short_integer(raw).is_some(),
        };
        if plain {
            self.out.put_str(as_str(raw));
        } else {
            let mut buf = ryu_js::Buffer::new();
            self.out.put_str(format_number(number_value(raw), &mut buf));
        }
    }
    fn str_begin(&mut self, key: bool) {
        if key {
            self.close_top_value();
            if let Some(f) = self.frames.last_mut() {
                if f.nonempty {
                    self.out.put_str(",");
                }
                f.nonempty = true;
            }
        } else {
            self.before_value();
        }
        self.out.put_str("\"");
        self.key_start = self.out.pos();
    }
    fn str_raw(&mut self, run: Range<usize>) {
        self.canon.raw(&self.src, run, &mut self.out);
    }
    fn str_escape(&mut self, c: u8) {
        self.canon.simple_escape(c, &mut self.out);
    }
    fn str_unicode(&mut self, unit: u16) {
        self.canon.unicode_escape(unit, &mut self.out);
    }
    fn str_end(&mut self, key: bool) {
        self.canon.end(&mut self.out);
        if key {
            let r = self.key_start..self.out.pos();
            self.out.put_str("\":");
            if let (Some(top), 1) = (&mut self.top, self.frames.len()) {
                let at = self.out.pos();
                top.push((r.clone(), at..at));
            }
            if !self.out.failed() {
                self.check_key(r);
            }
        } else {
            self.out.put_str("\"");
        }
    }
    fn begin_array(&mut self) {
        self.before_value();
        self.out.put_str("[");
        self.frames.push(WFrame::new(false, self.keys.len()));
    }
    fn end_array(&mut self) {
        self.frames.pop();
        self.out.put_str("]");
    }
    fn begin_object(&mut self) {
        self.before_value();
        self.out.put_str("{");
        self.frames.push(WFrame::new(true, self.keys.len()));
    }
    fn end_object(&mut self) {
        self.close_top_value();
        if let Some(f) = self.frames.pop() {
            self.keys.truncate(f.keys_from);
        }
        self.out.put_str("}");
    }
}
