//! The string values of one JSON line, each with its path (the keys and indexes that lead to
//! it) and its raw byte range, and their decoding with a map back to raw bytes: a secret found in
//! decoded text must be cut out of the file at the right bytes, escapes included.

use std::ops::Range;

use crate::json::{skip_valid_string, skip_valid_value, skip_ws};

/// One step of a path: an object key (raw bytes between its quotes) or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seg {
    Key(Range<usize>),
    Index(usize),
}

/// Call `visit(path, raw range of the string's content)` for every string value of `line`,
/// which must be valid JSON (keys are not visited: they are names, not content).
pub(super) fn strings(line: &[u8], mut visit: impl FnMut(&[Seg], Range<usize>)) {
    let mut path: Vec<Seg> = Vec::new();
    // The open containers: true for an object.
    let mut open: Vec<bool> = Vec::new();
    let mut i = skip_ws(line, 0);
    loop {
        match line.get(i) {
            Some(b'"') => {
                let end = skip_valid_string(line, i + 1);
                visit(&path, i + 1..end.saturating_sub(1).max(i + 1));
                i = end;
            }
            Some(b'{') => {
                i = skip_ws(line, i + 1);
                if line.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    open.push(true);
                    i = key(line, i, &mut path);
                    continue;
                }
            }
            Some(b'[') => {
                i = skip_ws(line, i + 1);
                if line.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    open.push(false);
                    path.push(Seg::Index(0));
                    continue;
                }
            }
            Some(_) => i = skip_valid_value(line, i).max(i + 1),
            None => return,
        }
        // After a value: close what ends here, then step to the next member or item.
        loop {
            i = skip_ws(line, i);
            match (open.last(), line.get(i)) {
                (Some(&is_object), Some(b',')) => {
                    i = skip_ws(line, i + 1);
                    if is_object {
                        path.pop();
                        i = key(line, i, &mut path);
                    } else if let Some(Seg::Index(n)) = path.last_mut() {
                        *n += 1;
                    }
                    break;
                }
                (Some(_), Some(b'}' | b']')) => {
                    open.pop();
                    path.pop();
                    i += 1;
                }
                _ => return,
            }
        }
    }
}

/// Read the key at `i` (a quote) into the path; the index of its value.
fn key(line: &[u8], i: usize, path: &mut Vec<Seg>) -> usize {
    let end = skip_valid_string(line, i + 1);
    path.push(Seg::Key(i + 1..end.saturating_sub(1).max(i + 1)));
    skip_ws(line, skip_ws(line, end) + 1)
}

/// One escape sequence: the decoded bytes it made and the raw bytes it was.
#[derive(Debug, Clone)]
struct Escape {
    decoded: Range<usize>,
    raw: Range<usize>,
}

/// A string's decoded bytes (UTF-8; a lone surrogate becomes U+FFFD) with the way back to its
/// raw bytes.
#[derive(Debug, Default)]
pub(super) struct Decoded {
    pub text: Vec<u8>,
    /// Where the raw content starts in the line.
    base: usize,
    escapes: Vec<Escape>,
}

impl Decoded {
    /// Decode the raw content `raw` (between the quotes) found at `base` in its line.
    pub(super) fn new(raw: &[u8], base: usize) -> Decoded {
        let mut d = Decoded {
            text: Vec::with_capacity(raw.len()),
            base,
            escapes: Vec::new(),
        };
        let mut i = 0;
        while i < raw.len() {
            let Some(k) = memchr::memchr(b'\\', &raw[i..]) else {
                d.text.extend_from_slice(&raw[i..]);
                break;
            };
            d.text.extend_from_slice(&raw[i..i + k]);
            i += k;
            let at = d.text.len();
            let used = d.escape(&raw[i..]);
            d.escapes.push(Escape {
                decoded: at..d.text.len(),
                raw: i..i + used,
            });
            i += used;
        }
        d
    }

    /// Decode the escape at the start of `s`; how many raw bytes it took.
    fn escape(&mut self, s: &[u8]) -> usize {
        let simple = match s.get(1) {
            Some(b'n') => Some(b'\n'),
            Some(b't') => Some(b'\t'),
            Some(b'r') => Some(b'\r'),
            Some(b'b') => Some(8),
            Some(b'f') => Some(12),
            Some(b'u') => None,
            Some(&c) => Some(c),
            None => {
                self.text.push(b'\\');
                return 1;
            }
        };
        if let Some(c) = simple {
            self.text.push(c);
            return 2;
        }
        let unit = |at: usize| {
            s.get(at..at + 4)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u16::from_str_radix(h, 16).ok())
        };
        let Some(hi) = unit(2) else {
            self.text.push(b'\\');
            return 1;
        };
        let (c, used) = if (0xd800..0xdc00).contains(&hi) && s.get(6..8) == Some(b"\\u") {
            match unit(8).filter(|lo| (0xdc00..0xe000).contains(lo)) {
                Some(lo) => {
                    let cp = 0x10000 + ((u32::from(hi) - 0xd800) << 10) + (u32::from(lo) - 0xdc00);
                    (char::from_u32(cp), 12)
                }
                None => (None, 6),
            }
        } else {
            (char::from_u32(u32::from(hi)), 6)
        };
        let mut buf = [0u8; 4];
        let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
        self.text
            .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        used
    }

    /// The raw range (in the line) of the decoded range `r`: an escape cut by either end is
    /// taken whole.
    pub(super) fn raw_range(&self, r: Range<usize>) -> Range<usize> {
        self.base + self.raw_at(r.start, false)..self.base + self.raw_at(r.end, true)
    }

    /// The raw offset (in the content) of decoded offset `d`; `end` rounds into an escape up.
    fn raw_at(&self, d: usize, end: bool) -> usize {
        // The last escape that starts before `d` (or at it, for an end).
        let n = self.escapes.partition_point(|e| {
            if end {
                e.decoded.start < d
            } else {
                e.decoded.start <= d
            }
        });
        let Some(e) = n.checked_sub(1).map(|k| &self.escapes[k]) else {
            return d;
        };
        if d < e.decoded.end || (end && d == e.decoded.end) {
            if end {
                e.raw.end
            } else {
                e.raw.start
            }
        } else {
            e.raw.end + (d - e.decoded.end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(line: &str) -> Vec<(Vec<String>, String)> {
        let b = line.as_bytes();
        let mut out = Vec::new();
        strings(b, |path, r| {
            let p = path
                .iter()
                .map(|s| match s {
                    Seg::Key(k) => String::from_utf8_lossy(&b[k.clone()]).into_owned(),
                    Seg::Index(n) => n.to_string(),
                })
                .collect();
            out.push((p, String::from_utf8_lossy(&b[r]).into_owned()));
        });
        out
    }

    #[test]
    fn every_string_value_is_visited_with_its_path() {
        let got = collect(
            r#"{ "type":"message","n":1,"message":{"content":[{"type":"text","text":"a\"b"},[],{},"x"],"e":[1,"y"]}}"#,
        );
        let want = [
            (vec!["type"], "message"),
            (vec!["message", "content", "0", "type"], "text"),
            (vec!["message", "content", "0", "text"], "a\\\"b"),
            (vec!["message", "content", "3"], "x"),
            (vec!["message", "e", "1"], "y"),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((p, v), (wp, wv)) in got.iter().zip(want) {
            assert_eq!(
                (p.iter().map(String::as_str).collect::<Vec<_>>(), v.as_str()),
                (wp, wv)
            );
        }
        assert_eq!(collect(r#""top""#), [(vec![], "top".to_owned())]);
        assert!(collect("[1, 2, null]").is_empty());
    }

    #[test]
    fn decoded_ranges_map_back_to_the_raw_bytes_escapes_whole() {
        let raw = br#"ab\ncd\u0041\ud83d\ude00e\/f"#;
        let d = Decoded::new(raw, 10);
        assert_eq!(d.text, "ab\ncdA\u{1F600}e/f".as_bytes());
        // "cd" in decoded is 3..5, raw 4..6.
        assert_eq!(d.raw_range(3..5), 14..16);
        // The newline alone is the whole `\n`.
        assert_eq!(d.raw_range(2..3), 12..14);
        // "A" is the whole \u0041, the emoji the whole surrogate pair.
        assert_eq!(d.raw_range(5..6), 16..22);
        assert_eq!(d.raw_range(6..10), 22..34);
        // "e/f" after the pair.
        assert_eq!(d.raw_range(10..13), 34..38);
        assert_eq!(d.raw_range(0..d.text.len()), 10..10 + raw.len());
    }
}
