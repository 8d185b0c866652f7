//! `JsStr`: a JavaScript string held in its canonical `JSON.stringify` form.
//!
//! JS strings are UTF-16 and may hold lone surrogates, which a Rust `String` cannot. Keeping the
//! escaped form instead of a decoded one makes every JS string representable, makes equality a
//! byte comparison, and lets the serializer copy strings verbatim.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A JS string kept in its canonical JSON.stringify-escaped form, without the surrounding quotes.
/// Canonical form = what JSON.stringify would emit between the quotes: escape `"` as \", `\` as \\,
/// \b \f \n \r \t, other chars < 0x20 as \u00XX (lowercase hex), lone UTF-16 surrogates as \udXXX
/// (lowercase hex); every other char (including U+2028/U+2029, '/', non-ASCII, emoji) raw UTF-8.
/// Two JS strings are equal iff their canonical forms are byte-equal.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Default)]
pub struct JsStr(String);

impl JsStr {
    /// Escapes a Rust string (which never holds lone surrogates) into canonical form.
    // The name is part of the module's agreed API; `FromStr` is implemented as well.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(s: &str) -> JsStr {
        if !needs_escape(s.as_bytes()) {
            return JsStr(s.to_owned());
        }
        let mut out = String::with_capacity(s.len() + 8);
        escape_into(s, &mut out);
        JsStr(out)
    }

    /// The canonical escaped form, without quotes.
    pub fn as_escaped(&self) -> &str {
        &self.0
    }

    /// Wraps text that the caller guarantees is already canonical (e.g. copied out of a
    /// canonical JSON document); nothing is checked, so a wrong input only breaks equality and
    /// byte-exact output, never memory safety.
    pub fn from_escaped_unchecked(s: String) -> JsStr {
        JsStr(s)
    }

    /// Unwraps the canonical escaped form.
    pub fn into_escaped(self) -> String {
        self.0
    }

    /// The decoded string; lone surrogates become U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        let s = self.0.as_bytes();
        if memchr::memchr(b'\\', s).is_none() {
            return self.0.clone();
        }
        let mut out = String::with_capacity(s.len());
        let mut i = 0;
        let mut pending_high: Option<u16> = None;
        while i < s.len() {
            let Some(off) = memchr::memchr(b'\\', &s[i..]) else {
                flush_lossy(&mut pending_high, &mut out);
                out.push_str(&self.0[i..]);
                break;
            };
            if off > 0 {
                flush_lossy(&mut pending_high, &mut out);
                out.push_str(&self.0[i..i + off]);
            }
            i += off;
            let esc = s.get(i + 1).copied().unwrap_or(b'\\');
            if esc == b'u' {
                if let Some(unit) = s.get(i + 2..i + 6).and_then(parse_hex4) {
                    i += 6;
                    if let Some(high) = pending_high.take() {
                        if is_low(unit) {
                            out.push(combine(high, unit));
                            continue;
                        }
                        out.push(char::REPLACEMENT_CHARACTER);
                    }
                    if is_high(unit) {
                        pending_high = Some(unit);
                    } else {
                        out.push(char::from_u32(u32::from(unit)).unwrap_or('\u{fffd}'));
                    }
                    continue;
                }
            }
            flush_lossy(&mut pending_high, &mut out);
            out.push(match esc {
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'"' => '"',
                b'/' => '/',
                _ => '\\',
            });
            // Unknown escapes cannot occur in canonical text; skipping only the backslash keeps
            // the decoder total for `from_escaped_unchecked` input.
            i += if matches!(esc, b'b' | b'f' | b'n' | b'r' | b't' | b'"' | b'/' | b'\\') {
                2
            } else {
                1
            };
        }
        flush_lossy(&mut pending_high, &mut out);
        out
    }

    /// Compares with a plain Rust string without allocating in the common case.
    pub fn eq_str(&self, s: &str) -> bool {
        // Without a backslash the canonical form is the string itself; a Rust string that would
        // need escaping cannot match it because its canonical form contains a backslash.
        if memchr::memchr(b'\\', self.0.as_bytes()).is_none() {
            return self.0 == s;
        }
        needs_escape(s.as_bytes()) && JsStr::from_str(s) == *self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Length of the canonical form in bytes.
    pub fn escaped_len(&self) -> usize {
        self.0.len()
    }
}

impl std::str::FromStr for JsStr {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(JsStr::from_str(s))
    }
}

impl From<&str> for JsStr {
    fn from(s: &str) -> Self {
        JsStr::from_str(s)
    }
}

impl From<String> for JsStr {
    fn from(s: String) -> Self {
        if needs_escape(s.as_bytes()) {
            JsStr::from_str(&s)
        } else {
            JsStr(s)
        }
    }
}

impl fmt::Display for JsStr {
    /// Displays the decoded (lossy) string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

fn flush_lossy(pending_high: &mut Option<u16>, out: &mut String) {
    if pending_high.take().is_some() {
        out.push(char::REPLACEMENT_CHARACTER);
    }
}

/// True if any byte must be escaped in canonical form (quote, backslash, control character).
pub(crate) fn needs_escape(s: &[u8]) -> bool {
    s.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Appends the canonical escape of a Rust string.
pub(crate) fn escape_into(s: &str, out: &mut String) {
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b < 0x20 || b == b'"' || b == b'\\' {
            out.push_str(&s[start..i]);
            push_escaped_ascii(b, out);
            start = i + 1;
        }
    }
    out.push_str(&s[start..]);
}

/// Appends the canonical form of an ASCII character that `needs_escape`.
fn push_escaped_ascii(b: u8, out: &mut String) {
    out.push_str(escaped_ascii(b, &mut [0; 6]));
}

/// The canonical escape of an ASCII character that `needs_escape`; `buf` backs `\u00XX`.
fn escaped_ascii(b: u8, buf: &mut [u8; 6]) -> &str {
    match b {
        b'"' => "\\\"",
        b'\\' => "\\\\",
        0x08 => "\\b",
        0x0c => "\\f",
        b'\n' => "\\n",
        b'\r' => "\\r",
        b'\t' => "\\t",
        _ => u_escape(u16::from(b), buf),
    }
}

/// `\uXXXX` with lowercase hex, as V8 writes control characters and lone surrogates.
fn u_escape(unit: u16, buf: &mut [u8; 6]) -> &str {
    *buf = [
        b'\\',
        b'u',
        HEX[usize::from(unit >> 12)],
        HEX[usize::from((unit >> 8) & 0xf)],
        HEX[usize::from((unit >> 4) & 0xf)],
        HEX[usize::from(unit & 0xf)],
    ];
    // Always ASCII.
    std::str::from_utf8(buf).unwrap_or_default()
}

pub(crate) fn is_high(unit: u16) -> bool {
    (0xd800..0xdc00).contains(&unit)
}

pub(crate) fn is_low(unit: u16) -> bool {
    (0xdc00..0xe000).contains(&unit)
}

fn combine(high: u16, low: u16) -> char {
    let c = 0x10000 + ((u32::from(high) - 0xd800) << 10) + (u32::from(low) - 0xdc00);
    char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// Parses exactly four hex digits (any case).
pub(crate) fn parse_hex4(h: &[u8]) -> Option<u16> {
    let mut v: u16 = 0;
    for &c in h.get(..4)? {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u16::from(d);
    }
    Some(v)
}

/// The document being parsed, plus the same bytes as text when they are valid UTF-8. Checking
/// the whole document once is much cheaper than checking each run between escapes.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    bytes: &'a [u8],
    text: Option<&'a str>,
}

impl<'a> Source<'a> {
    /// Checks UTF-8 validity of the whole document up front.
    pub(crate) fn checked(bytes: &'a [u8]) -> Self {
        Source {
            bytes,
            text: std::str::from_utf8(bytes).ok(),
        }
    }

    /// Checks each run when it is read (for reading only a few short strings, like keys).
    pub(crate) fn per_run(bytes: &'a [u8]) -> Self {
        Source { bytes, text: None }
    }

    /// A run of string content between escapes. Invalid UTF-8 becomes U+FFFD, which is what
    /// Node's utf8 decoding does before `JSON.parse`; runs end at ASCII delimiters, so decoding
    /// them separately gives the same result as decoding the whole document.
    pub(crate) fn run(&self, r: Range<usize>) -> Cow<'a, str> {
        match self.text {
            Some(t) => Cow::Borrowed(&t[r]),
            // `from_utf8` first: its ASCII fast path beats the lossy decoder's chunking on the
            // member names and short values this mostly sees.
            None => match std::str::from_utf8(&self.bytes[r.clone()]) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => String::from_utf8_lossy(&self.bytes[r]),
            },
        }
    }
}

/// Destination for canonical JSON text. Implemented by `String` (normal output) and by a
/// comparator that checks the text against the source document instead of storing it.
pub(crate) trait Out {
    fn put_str(&mut self, s: &str);
    /// A run of string content taken verbatim from the source.
    fn put_run(&mut self, src: &Source<'_>, r: Range<usize>) {
        self.put_str(&src.run(r));
    }
}

impl Out for String {
    #[inline]
    fn put_str(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// Turns the pieces of a JSON string literal (raw runs and escapes) into canonical form.
/// The only state is a `\uD8xx` escape waiting to see whether a low surrogate escape follows.
#[derive(Default)]
pub(crate) struct Canon {
    pending_high: Option<u16>,
}

impl Canon {
    /// No escape is waiting for its partner.
    pub(crate) fn is_idle(&self) -> bool {
        self.pending_high.is_none()
    }

    #[inline]
    fn flush<O: Out>(&mut self, out: &mut O) {
        if let Some(high) = self.pending_high.take() {
            put_u_escape(high, out);
        }
    }

    #[inline]
    pub(crate) fn raw<O: Out>(&mut self, src: &Source<'_>, r: Range<usize>, out: &mut O) {
        self.flush(out);
        out.put_run(src, r);
    }

    /// A two-character escape; `c` is the character after the backslash.
    #[inline]
    pub(crate) fn simple_escape<O: Out>(&mut self, c: u8, out: &mut O) {
        self.flush(out);
        out.put_str(match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'/' => "/",
            b'b' => "\\b",
            b'f' => "\\f",
            b'n' => "\\n",
            b'r' => "\\r",
            _ => "\\t",
        });
    }

    pub(crate) fn unicode_escape<O: Out>(&mut self, unit: u16, out: &mut O) {
        if let Some(high) = self.pending_high.take() {
            if is_low(unit) {
                let mut buf = [0u8; 4];
                out.put_str(combine(high, unit).encode_utf8(&mut buf));
                return;
            }
            put_u_escape(high, out);
        }
        if is_high(unit) {
            self.pending_high = Some(unit);
        } else if is_low(unit) {
            put_u_escape(unit, out);
        } else if unit < 0x80 {
            let b = unit as u8;
            if b < 0x20 || b == b'"' || b == b'\\' {
                out.put_str(escaped_ascii(b, &mut [0; 6]));
            } else {
                out.put_str(char::from(b).encode_utf8(&mut [0u8; 4]));
            }
        } else {
            // Not a surrogate, so always a valid scalar value.
            let c = char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER);
            out.put_str(c.encode_utf8(&mut [0u8; 4]));
        }
    }

    #[inline]
    pub(crate) fn end<O: Out>(&mut self, out: &mut O) {
        self.flush(out);
    }
}

fn put_u_escape<O: Out>(unit: u16, out: &mut O) {
    out.put_str(u_escape(unit, &mut [0; 6]));
}
