//! The walk that finds which string values of a line to cut out ([`strings_where`]): their paths
//! from the line's top-level value and their contents, in validated JSON text.

use std::ops::Range;

use crate::json::{skip_valid_string, skip_valid_value, skip_ws};

/// One step of the path from a line's top-level value to a value inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// A member name: plain ASCII without escapes, so its bytes are its JS name.
    Key(&'a [u8]),
    Index(u32),
}

/// The string values found by [`strings_where`], in text order: for each, the path to it and its
/// contents (the bytes between the quotes, still escaped). The paths are kept one after the other
/// in one vector, so that finding thousands of strings allocates next to nothing (allocating on
/// several threads at once made them wait for the allocator's lock).
#[derive(Debug, Default)]
pub struct FoundStrings<'a> {
    steps: Vec<Step<'a>>,
    found: Vec<(Range<usize>, Range<usize>)>,
}

impl<'a> FoundStrings<'a> {
    /// Each string's path and contents' range, in text order.
    pub fn iter(&self) -> impl Iterator<Item = (&[Step<'a>], Range<usize>)> + '_ {
        self.found
            .iter()
            .map(|(path, range)| (&self.steps[path.clone()], range.clone()))
    }

    pub fn len(&self) -> usize {
        self.found.len()
    }

    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// Forget the strings found from the `mark`th on.
    fn truncate(&mut self, mark: usize) {
        if let Some((path, _)) = self.found.get(mark) {
            self.steps.truncate(path.start);
        }
        self.found.truncate(mark);
    }
}

/// Past this nesting, strings are left in place (paths stay short, the walk stays shallow).
const MAX_LONG_STRING_DEPTH: usize = 32;

/// The string values of at least `min_len` bytes inside the object or array `b` (validated JSON
/// text) whose contents (as written: between the quotes, still escaped) `wanted` accepts, in
/// text order. Only strings that can be put back by path into `JSON.parse`'s result of the text
/// with each string replaced by another value are given: none in an object that repeats a member
/// name (JSON.parse keeps the last one) or has a name that is escaped or not ASCII (its JS name
/// would need decoding). Text that turns out not to be valid JSON gives none.
/// `scratch` lends the walk the vectors of an earlier one (see [`WalkScratch::keep`]): walking
/// line after line then allocates nothing, where four allocations per line made threads
/// preparing batches at once wait for the allocator's lock.
pub fn strings_where<'a>(
    b: &'a [u8],
    min_len: usize,
    wanted: impl Fn(&[u8]) -> bool,
    scratch: &mut WalkScratch,
) -> FoundStrings<'a> {
    let mut walk = Walk {
        b,
        min_len,
        wanted: &wanted,
        path: recycle(std::mem::take(&mut scratch.path)),
        names: recycle(std::mem::take(&mut scratch.names)),
        out: FoundStrings {
            steps: recycle(std::mem::take(&mut scratch.steps)),
            found: std::mem::take(&mut scratch.found),
        },
    };
    if b.len() >= min_len.saturating_add(2) {
        let i = skip_ws(b, 0);
        if matches!(b.get(i), Some(b'{' | b'[')) && walk.value(i).is_none() {
            walk.out.truncate(0);
        }
    }
    scratch.path = recycle(walk.path);
    scratch.names = recycle(walk.names);
    walk.out
}

/// The vectors of a walk, empty, kept for the next one (their element types borrow nothing
/// while kept).
#[derive(Default)]
pub struct WalkScratch {
    path: Vec<Step<'static>>,
    names: Vec<&'static [u8]>,
    steps: Vec<Step<'static>>,
    found: Vec<(Range<usize>, Range<usize>)>,
}

impl WalkScratch {
    /// Take back the vectors of `found` once it is no longer needed.
    pub fn keep(&mut self, found: FoundStrings<'_>) {
        self.steps = recycle(found.steps);
        let mut f = found.found;
        f.clear();
        self.found = f;
    }
}

/// `v` emptied, as a vector of another type of the same layout: its allocation is kept (collecting
/// an emptied vector's iterator into one of the same layout reuses it in place).
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter()
        .map(|_| unreachable!("the vector is empty"))
        .collect()
}

/// The state of [`strings_where`]'s walk: which strings it wants (at least `min_len` bytes, and
/// accepted by `wanted`), the path to the value at hand, the member names of the objects being
/// walked (a stack: each object's names follow its parent's), and what was found.
struct Walk<'a, 'w> {
    b: &'a [u8],
    min_len: usize,
    wanted: &'w dyn Fn(&[u8]) -> bool,
    path: Vec<Step<'a>>,
    names: Vec<&'a [u8]>,
    out: FoundStrings<'a>,
}

impl<'a> Walk<'a, '_> {
    /// Walks the value at `i`; the index after it, or None when the text is not what it should
    /// be.
    fn value(&mut self, i: usize) -> Option<usize> {
        let b = self.b;
        match *b.get(i)? {
            b'"' => {
                let end = skip_valid_string(b, i + 1);
                if end < i + 2 || b.get(end - 1) != Some(&b'"') {
                    return None;
                }
                let contents = i + 1..end - 1;
                if contents.len() >= self.min_len && (self.wanted)(&b[contents.clone()]) {
                    let start = self.out.steps.len();
                    self.out.steps.extend_from_slice(&self.path);
                    self.out.found.push((start..self.out.steps.len(), contents));
                }
                Some(end)
            }
            b'{' if self.path.len() < MAX_LONG_STRING_DEPTH => {
                let mark = self.out.len();
                let names_mark = self.names.len();
                let mut j = skip_ws(b, i + 1);
                if b.get(j) == Some(&b'}') {
                    return Some(j + 1);
                }
                loop {
                    if b.get(j) != Some(&b'"') {
                        return None;
                    }
                    let name_end = skip_valid_string(b, j + 1);
                    let name = b.get(j + 1..name_end.checked_sub(1)?)?;
                    self.names.push(name);
                    j = skip_ws(b, name_end);
                    if b.get(j) != Some(&b':') {
                        return None;
                    }
                    let (next, more) = self.step(skip_ws(b, j + 1), Step::Key(name), b'}')?;
                    j = next;
                    if !more {
                        break;
                    }
                }
                if self.out.len() > mark && !plain_unique_names(&mut self.names[names_mark..]) {
                    self.out.truncate(mark);
                }
                self.names.truncate(names_mark);
                Some(j + 1)
            }
            b'[' if self.path.len() < MAX_LONG_STRING_DEPTH => {
                let mut j = skip_ws(b, i + 1);
                if b.get(j) == Some(&b']') {
                    return Some(j + 1);
                }
                let mut k = 0u32;
                loop {
                    let (next, more) = self.step(j, Step::Index(k), b']')?;
                    j = next;
                    if !more {
                        break;
                    }
                    k = k.checked_add(1)?;
                }
                Some(j + 1)
            }
            _ => Some(skip_valid_value(b, i).max(i + 1)),
        }
    }

    /// Walks the value at `i` as `step` of its container, then steps over the `,` after it: the
    /// start of the next value and true, or the index of `close` and false at the container's
    /// end.
    fn step(&mut self, i: usize, step: Step<'a>, close: u8) -> Option<(usize, bool)> {
        self.path.push(step);
        let end = self.value(i);
        self.path.pop();
        let b = self.b;
        let j = skip_ws(b, end?);
        match b.get(j) {
            Some(b',') => Some((skip_ws(b, j + 1), true)),
            Some(&c) if c == close => Some((j, false)),
            _ => None,
        }
    }
}

fn plain_unique_names(names: &mut [&[u8]]) -> bool {
    if names
        .iter()
        .any(|n| n.iter().any(|&c| c == b'\\' || c >= 0x80))
    {
        return false;
    }
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuts(doc: &str, min: usize) -> Vec<(String, String)> {
        let b = doc.as_bytes();
        strings_where(b, min, |_| true, &mut WalkScratch::default())
            .iter()
            .map(|(path, range)| {
                let path: Vec<String> = path
                    .iter()
                    .map(|s| match s {
                        Step::Key(k) => String::from_utf8_lossy(k).into_owned(),
                        Step::Index(i) => format!("[{i}]"),
                    })
                    .collect();
                (path.join("."), doc[range].to_owned())
            })
            .collect()
    }

    #[test]
    fn long_strings_give_paths_and_contents() {
        let doc = r#"{"type":"message","message":{"content":[{"type":"text","text":"0123456789"},{"type":"image","data":"abcdefghijkl","n":[1,{"x":"short"}]}]},"e":"esc\n\"aped!!"}"#;
        assert_eq!(
            cuts(doc, 10),
            [
                (
                    "message.content.[0].text".to_owned(),
                    "0123456789".to_owned()
                ),
                (
                    "message.content.[1].data".to_owned(),
                    "abcdefghijkl".to_owned()
                ),
                ("e".to_owned(), r#"esc\n\"aped!!"#.to_owned()),
            ]
        );
        // Whitespace anywhere, arrays at the top, empty containers.
        assert_eq!(
            cuts(
                r#" [ {} , [ ] , "0123456789" , { "k" : "0123456789" } ] "#,
                10
            ),
            [
                ("[2]".to_owned(), "0123456789".to_owned()),
                ("[3].k".to_owned(), "0123456789".to_owned())
            ]
        );
        // Names are never cut; a top-level string is not a container.
        assert!(cuts(r#"{"0123456789":1}"#, 10).is_empty());
        assert!(cuts(r#""0123456789abc""#, 10).is_empty());
    }

    #[test]
    fn a_walk_reuses_the_vectors_of_the_one_before() {
        let doc = br#"{"a":{"b":["0123456789","0123456789"]},"c":"0123456789"}"#;
        let mut scratch = WalkScratch::default();
        let found = strings_where(doc, 10, |_| true, &mut scratch);
        assert_eq!(found.len(), 3);
        let (steps, ranges) = (found.steps.as_ptr() as usize, found.found.as_ptr() as usize);
        scratch.keep(found);
        let again = strings_where(doc, 10, |_| true, &mut scratch);
        assert_eq!(
            (again.steps.as_ptr() as usize, again.found.as_ptr() as usize),
            (steps, ranges)
        );
        let paths: Vec<usize> = again.iter().map(|(p, _)| p.len()).collect();
        assert_eq!(paths, [3, 3, 1]);
    }

    #[test]
    fn only_the_strings_the_predicate_wants_are_given() {
        let doc = r#"{"a":"0123456789","b":"wanted 0123","c":["xwanted","wanted"]}"#;
        let found: Vec<_> = strings_where(
            doc.as_bytes(),
            7,
            |s| s.starts_with(b"wanted"),
            &mut WalkScratch::default(),
        )
        .iter()
        .map(|(_, range)| &doc[range])
        .collect();
        // "xwanted" is not accepted; "wanted" is accepted but shorter than 7.
        assert_eq!(found, ["wanted 0123"]);
    }

    #[test]
    fn long_strings_skip_objects_with_unsafe_names() {
        // A repeated name: JSON.parse keeps the last value, so nothing in that object is cut.
        assert!(cuts(r#"{"a":"0123456789","a":"x"}"#, 10).is_empty());
        assert!(cuts(r#"{"o":{"a":"0123456789"},"o":1}"#, 10).is_empty());
        // Escaped or non-ASCII names anywhere in the object.
        assert!(cuts(r#"{"a":"0123456789","\u0062":1}"#, 10).is_empty());
        assert!(cuts("{\"a\":\"0123456789\",\"\u{e9}\":1}", 10).is_empty());
        // ... but a sibling object is not affected.
        assert_eq!(
            cuts(r#"[{"a":"0123456789","a":1},{"b":"0123456789"}]"#, 10),
            [("[1].b".to_owned(), "0123456789".to_owned())]
        );
        // Deep nesting stops the walk, never the program.
        let deep = format!("{}\"0123456789\"{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(cuts(&deep, 10).is_empty());
        let shallow = format!("{}\"0123456789\"{}", "[".repeat(5), "]".repeat(5));
        assert_eq!(cuts(&shallow, 10).len(), 1);
    }

    #[test]
    fn long_strings_never_panic_on_damage() {
        let good = r#"{"a":[{"b":"0123456789"},"0123456789"],"c":{"d":"0123456789"}}"#;
        for cut in 0..good.len() {
            let _ = strings_where(
                &good.as_bytes()[..cut],
                3,
                |_| true,
                &mut WalkScratch::default(),
            );
            let mut bent = good.as_bytes().to_vec();
            bent[cut] = b'"';
            let _ = strings_where(&bent, 3, |_| true, &mut WalkScratch::default());
        }
        assert!(strings_where(
            br#"{"a":"0123456789""#,
            3,
            |_| true,
            &mut WalkScratch::default()
        )
        .is_empty());
        assert!(strings_where(
            br#"{"a" "0123456789"}"#,
            3,
            |_| true,
            &mut WalkScratch::default()
        )
        .is_empty());
    }
}
