//! One iterative JSON grammar driver with pluggable event handlers: validation (no-op
//! handler), `Value` building, and streaming canonical output (for `normalize`, and for
//! `is_canonical` by comparing that output with the input instead of storing it).

use std::collections::HashSet;
use std::fmt;
use std::ops::Range;

use super::object::{index_cmp_bytes, is_array_index, ObjectBuilder};
use super::ser::format_number;
use super::string::{parse_hex4, Canon, JsStr, Out, Source};
use super::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// Byte offset of the offending input (the input length for a premature end).
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// JSON.parse semantics on UTF-8 bytes. Invalid UTF-8 sequences are read as U+FFFD (like Node's
/// utf8 decoding of a file before JSON.parse); grammar exactly ECMA-404 as V8 accepts it: whitespace
/// only space/\t/\n/\r; no trailing commas, no comments, no leading '+', no leading zeros, no raw
/// control characters (< 0x20) inside strings, escapes only \" \\ \/ \b \f \n \r \t \uXXXX (hex any
/// case); surrogate pairs combine, lone surrogates are kept (as canonical \udxxx escapes in JsStr).
/// Numbers parse to f64 exactly as JS (correct rounding; overflow -> +-Infinity, e.g. 1e400).
/// Nesting depth is limited only by memory.
pub fn parse(bytes: &[u8]) -> Result<Value, ParseError> {
    let mut b = Builder::new(Source::checked(bytes));
    parse_document(bytes, &mut b)?;
    Ok(b.result.unwrap_or_default())
}

/// True iff `parse` would succeed, without building values.
pub fn validate(bytes: &[u8]) -> bool {
    parse_document(bytes, &mut NoOp).is_ok()
}

/// Top-level object members: canonical key and the byte range of the raw value.
pub type Members = Vec<(JsStr, Range<usize>)>;

/// For a line whose top-level value is an object: the members in source order as (canonical key,
/// byte range of the raw value within `bytes`), validating the whole document like `validate`.
/// `Ok(None)` when the document is valid JSON but not an object. Duplicate keys are reported as
/// they occur (the last occurrence is what JSON.parse keeps).
pub fn top_level_members(bytes: &[u8]) -> Result<Option<Members>, ParseError> {
    let mut members = Vec::new();
    let is_object = visit_top_level_members(bytes, |key, range| {
        members.push((JsStr::from_escaped_unchecked(key.to_owned()), range));
    })?;
    Ok(is_object.then_some(members))
}

/// Like [`top_level_members`] without allocating per member: `visit` gets each canonical key
/// (borrowed) and the raw value's byte range, in source order. Returns `Ok(false)` when the
/// document is valid JSON but not an object; the whole document is validated either way.
pub fn visit_top_level_members(
    bytes: &[u8],
    mut visit: impl FnMut(&str, Range<usize>),
) -> Result<bool, ParseError> {
    visit_two_levels(bytes, |_| false, |_, key, r| visit(key, r))
}

/// [`visit_top_level_members`] that also reports the members of the object values of top-level
/// keys chosen by `descend` (depth 1), still validating every byte exactly once. `visit` gets
/// `(depth, canonical key, value range)`; nested members come before their parent member.
pub fn visit_two_levels(
    bytes: &[u8],
    descend: impl Fn(&str) -> bool,
    mut visit: impl FnMut(u8, &str, Range<usize>),
) -> Result<bool, ParseError> {
    let i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        parse_document(bytes, &mut NoOp)?;
        return Ok(false);
    }
    let mut key = KeyReader::new(Source::per_run(bytes));
    let mut inner = KeyReader::new(Source::per_run(bytes));
    let i = visit_object_at(bytes, i, &mut key, |key, start| {
        let end = if descend(key) && bytes.get(start) == Some(&b'{') {
            visit_object_at(bytes, start, &mut inner, |k, s| {
                let end = parse_value(bytes, s, &mut NoOp)?;
                visit(1, k, s..end);
                Ok(end)
            })?
        } else {
            parse_value(bytes, start, &mut NoOp)?
        };
        visit(0, key, start..end);
        Ok(end)
    })?;
    expect_end(bytes, i)?;
    Ok(true)
}

/// Validate the object at `i` (which is `{`) member by member: `value(canonical key, start)`
/// parses (and reports) each member's value from its start and returns its end. Returns the index
/// after the closing brace.
fn visit_object_at(
    bytes: &[u8],
    i: usize,
    key: &mut KeyReader<'_>,
    mut value: impl FnMut(&str, usize) -> Result<usize, ParseError>,
) -> Result<usize, ParseError> {
    let mut i = skip_ws(bytes, i + 1);
    if bytes.get(i) == Some(&b'}') {
        return Ok(i + 1);
    }
    loop {
        expect(bytes, i, b'"')?;
        key.buf.clear();
        i = scan_string(bytes, i + 1, key)?;
        i = skip_ws(bytes, i);
        expect(bytes, i, b':')?;
        let start = skip_ws(bytes, i + 1);
        i = value(&key.buf, start)?;
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            Some(b',') => i = skip_ws(bytes, i + 1),
            Some(b'}') => return Ok(i + 1),
            _ => return Err(unexpected(bytes, i)),
        }
    }
}

/// `JSON.stringify(JSON.parse(bytes))` in one pass, or `None` if the bytes do not parse.
pub fn normalize(bytes: &[u8]) -> Option<String> {
    let mut w = Writer::new(String::with_capacity(bytes.len()), Source::checked(bytes));
    parse_document(bytes, &mut w).ok()?;
    if !w.fallback {
        return Some(w.out);
    }
    // Reordered or duplicate keys: build the value so that `Object` applies JS semantics.
    parse(bytes).ok().map(|v| super::to_json(&v))
}

/// Fast check: are these bytes already exactly what `normalize` would return?
pub fn is_canonical(bytes: &[u8]) -> bool {
    check_canonical(bytes, None)
}

/// [`is_canonical`] for the text of an object, also reporting its top-level members as (raw key
/// bytes between the quotes, which in canonical text are the canonical key; byte range of the
/// value), in source order. Returns false when the text is not canonical JSON of an object; then
/// `visit` has not been called.
pub fn visit_canonical_object(bytes: &[u8], mut visit: impl FnMut(&[u8], Range<usize>)) -> bool {
    if bytes.first() != Some(&b'{') {
        return false;
    }
    let mut members = Vec::new();
    if !check_canonical(bytes, Some(&mut members)) {
        return false;
    }
    for (k, v) in members {
        visit(&bytes[k], v);
    }
    true
}

fn check_canonical(bytes: &[u8], top: Option<&mut Vec<(Range<usize>, Range<usize>)>>) -> bool {
    // Canonical text is always valid UTF-8. Outside strings the grammar only admits ASCII, and
    // string content is checked run by run as it is scanned (`Compare::CHECK_UTF8`), so string
    // content that is valid can be accepted by position alone.
    let compare = Compare {
        input: bytes,
        pos: 0,
        ok: true,
    };
    let mut w = Writer::new(compare, Source::per_run(bytes));
    w.top = top;
    parse_document(bytes, &mut w).is_ok() && !w.fallback && w.out.ok && w.out.pos == bytes.len()
}

/// Receives the parse as a stream of events. Every method defaults to doing nothing, so the
/// validating handler compiles down to the bare grammar check.
trait Handler {
    /// Whether `stopped` can ever return true (lets the driver skip the check entirely).
    const CAN_STOP: bool = false;
    /// String content must be valid UTF-8: runs with non-ASCII bytes are checked while scanning,
    /// and an invalid one is reported through `str_bad_utf8`.
    const CHECK_UTF8: bool = false;
    fn str_bad_utf8(&mut self) {}
    /// The handler has seen enough; the driver returns early (result then meaningless).
    fn stopped(&self) -> bool {
        false
    }
    fn null(&mut self) {}
    fn boolean(&mut self, _b: bool) {}
    /// `raw` is a grammatically valid JSON number.
    fn number(&mut self, _raw: &[u8]) {}
    fn str_begin(&mut self, _key: bool) {}
    /// Byte range of string content between escapes (no `"`, `\` or control characters).
    fn str_raw(&mut self, _run: Range<usize>) {}
    /// `c` is the character after the backslash: one of `"\/bfnrt`.
    fn str_escape(&mut self, _c: u8) {}
    fn str_unicode(&mut self, _unit: u16) {}
    fn str_end(&mut self, _key: bool) {}
    fn begin_array(&mut self) {}
    fn end_array(&mut self) {}
    fn begin_object(&mut self) {}
    fn end_object(&mut self) {}
}

struct NoOp;
impl Handler for NoOp {}

fn parse_document<H: Handler>(b: &[u8], h: &mut H) -> Result<(), ParseError> {
    let i = parse_value(b, 0, h)?;
    if H::CAN_STOP && h.stopped() {
        return Ok(());
    }
    expect_end(b, i)
}

fn expect_end(b: &[u8], i: usize) -> Result<(), ParseError> {
    let i = skip_ws(b, i);
    if i == b.len() {
        Ok(())
    } else {
        Err(ParseError {
            offset: i,
            message: "Unexpected non-whitespace character after JSON".to_owned(),
        })
    }
}

#[inline]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

fn expect(b: &[u8], i: usize, c: u8) -> Result<(), ParseError> {
    if b.get(i) == Some(&c) {
        Ok(())
    } else {
        Err(unexpected(b, i))
    }
}

fn unexpected(b: &[u8], i: usize) -> ParseError {
    let message = match b.get(i) {
        None => "Unexpected end of JSON input".to_owned(),
        Some(&c) if c.is_ascii_graphic() => format!("Unexpected token '{}'", c as char),
        Some(&c) => format!("Unexpected byte 0x{c:02x}"),
    };
    ParseError { offset: i, message }
}

/// Parses one value starting at `i` (leading whitespace allowed) and returns the offset just past
/// it. Nesting is tracked on a heap stack, so depth costs one byte of memory per level.
fn parse_value<H: Handler>(b: &[u8], mut i: usize, h: &mut H) -> Result<usize, ParseError> {
    // true = inside an object.
    let mut stack: Vec<bool> = Vec::new();
    'value: loop {
        if H::CAN_STOP && h.stopped() {
            return Ok(i);
        }
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b'"') => i = scan_string(b, i + 1, &mut HandlerStr::begin(h, false))?,
            Some(b'{') => {
                h.begin_object();
                i = skip_ws(b, i + 1);
                if b.get(i) == Some(&b'}') {
                    i += 1;
                    h.end_object();
                } else {
                    stack.push(true);
                    i = parse_key(b, i, h)?;
                    continue 'value;
                }
            }
            Some(b'[') => {
                h.begin_array();
                i = skip_ws(b, i + 1);
                if b.get(i) == Some(&b']') {
                    i += 1;
                    h.end_array();
                } else {
                    stack.push(false);
                    continue 'value;
                }
            }
            Some(b't') => {
                i = literal(b, i, b"true")?;
                h.boolean(true);
            }
            Some(b'f') => {
                i = literal(b, i, b"false")?;
                h.boolean(false);
            }
            Some(b'n') => {
                i = literal(b, i, b"null")?;
                h.null();
            }
            Some(b'-' | b'0'..=b'9') => {
                let end = scan_number(b, i)?;
                h.number(&b[i..end]);
                i = end;
            }
            _ => return Err(unexpected(b, i)),
        }
        // A value just ended: continue the enclosing containers.
        loop {
            let Some(&in_object) = stack.last() else {
                return Ok(i);
            };
            i = skip_ws(b, i);
            match b.get(i) {
                Some(b',') if in_object => {
                    i = parse_key(b, skip_ws(b, i + 1), h)?;
                    continue 'value;
                }
                Some(b',') => {
                    i += 1;
                    continue 'value;
                }
                Some(b'}') if in_object => h.end_object(),
                Some(b']') if !in_object => h.end_array(),
                _ => return Err(unexpected(b, i)),
            }
            i += 1;
            stack.pop();
        }
    }
}

/// `"key"` and the colon after it; `i` is at the opening quote.
fn parse_key<H: Handler>(b: &[u8], i: usize, h: &mut H) -> Result<usize, ParseError> {
    expect(b, i, b'"')?;
    let i = skip_ws(b, scan_string(b, i + 1, &mut HandlerStr::begin(h, true))?);
    expect(b, i, b':')?;
    Ok(i + 1)
}

fn literal(b: &[u8], i: usize, word: &[u8]) -> Result<usize, ParseError> {
    for (k, &c) in word.iter().enumerate() {
        if b.get(i + k) != Some(&c) {
            return Err(unexpected(b, i + k));
        }
    }
    Ok(i + word.len())
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`; returns the end offset.
fn scan_number(b: &[u8], mut i: usize) -> Result<usize, ParseError> {
    let digits = |b: &[u8], i: usize| -> Result<usize, ParseError> {
        let n = b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if n == 0 {
            Err(unexpected(b, i))
        } else {
            Ok(i + n)
        }
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    i = if b.get(i) == Some(&b'0') {
        i + 1
    } else {
        digits(b, i)?
    };
    if b.get(i) == Some(&b'.') {
        i = digits(b, i + 1)?;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(b, i)?;
    }
    Ok(i)
}

/// The f64 JS gets for a valid JSON number literal.
fn number_value(raw: &[u8]) -> f64 {
    // Up to 15 digits an integer is exact in f64, so skip the general algorithm.
    if let Some(n) = short_integer(raw) {
        return n;
    }
    // The JSON number grammar is a subset of what Rust's correctly rounding parser accepts.
    std::str::from_utf8(raw)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(f64::NAN)
}

/// `-?[0-9]{1,15}` as f64, or None for anything longer or with a fraction/exponent.
fn short_integer(raw: &[u8]) -> Option<f64> {
    let (neg, digits) = match raw {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(d - b'0');
    }
    let n = n as f64;
    Some(if neg { -n } else { n })
}

/// Receives the pieces of one string literal.
trait StrSink {
    /// See [`Handler::CHECK_UTF8`].
    const CHECK_UTF8: bool = false;
    fn bad_utf8(&mut self) {}
    /// Source bytes between escapes (no quote, backslash or control characters).
    fn raw(&mut self, run: Range<usize>);
    fn escape(&mut self, c: u8);
    fn unicode(&mut self, unit: u16);
    fn end(&mut self);
}

/// Routes one string literal's pieces to a handler.
struct HandlerStr<'h, H> {
    h: &'h mut H,
    key: bool,
}

impl<'h, H: Handler> HandlerStr<'h, H> {
    #[inline]
    fn begin(h: &'h mut H, key: bool) -> Self {
        h.str_begin(key);
        HandlerStr { h, key }
    }
}

impl<H: Handler> StrSink for HandlerStr<'_, H> {
    const CHECK_UTF8: bool = H::CHECK_UTF8;
    #[inline]
    fn bad_utf8(&mut self) {
        self.h.str_bad_utf8();
    }
    #[inline]
    fn raw(&mut self, run: Range<usize>) {
        self.h.str_raw(run);
    }
    #[inline]
    fn escape(&mut self, c: u8) {
        self.h.str_escape(c);
    }
    #[inline]
    fn unicode(&mut self, unit: u16) {
        self.h.str_unicode(unit);
    }
    #[inline]
    fn end(&mut self) {
        self.h.str_end(self.key);
    }
}

/// Scans a string literal whose opening quote is at `i - 1`; returns the offset past the closing
/// quote. `str_begin` is the caller's business (it knows key vs value); the sink sees the rest.
fn scan_string<S: StrSink>(b: &[u8], mut i: usize, sink: &mut S) -> Result<usize, ParseError> {
    loop {
        let (stop, high) = find_string_special::<S>(b, i);
        if stop > i {
            if S::CHECK_UTF8 && high && std::str::from_utf8(&b[i..stop]).is_err() {
                sink.bad_utf8();
            }
            sink.raw(i..stop);
        }
        i = stop;
        match b.get(i) {
            Some(b'"') => {
                sink.end();
                return Ok(i + 1);
            }
            Some(b'\\') => match b.get(i + 1) {
                Some(&c @ (b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')) => {
                    sink.escape(c);
                    i += 2;
                }
                Some(b'u') => {
                    let Some(unit) = b.get(i + 2..i + 6).and_then(parse_hex4) else {
                        let bad = (i + 2..i + 6)
                            .find(|&k| !b.get(k).is_some_and(u8::is_ascii_hexdigit))
                            .unwrap_or(i + 2);
                        return Err(ParseError {
                            offset: bad,
                            message: "Bad Unicode escape in JSON".to_owned(),
                        });
                    };
                    sink.unicode(unit);
                    i += 6;
                }
                None => return Err(unexpected(b, i + 1)),
                Some(_) => {
                    return Err(ParseError {
                        offset: i + 1,
                        message: "Bad escaped character in JSON".to_owned(),
                    })
                }
            },
            None => {
                return Err(ParseError {
                    offset: i,
                    message: "Unterminated string in JSON".to_owned(),
                })
            }
            Some(_) => {
                return Err(ParseError {
                    offset: i,
                    message: "Bad control character in string literal in JSON".to_owned(),
                })
            }
        }
    }
}

/// Offset of the first `"`, `\` or control character at or after `i` (or `b.len()`).
///
/// This is the hot loop of every mode. Escapes in session text (`\n`, `\"`) are typically a few
/// dozen bytes apart, so short gaps are checked a word at a time (SWAR); longer runs (tool output,
/// base64 images) go through SSE2 compares, 64 bytes per step. (A `memchr2` for the quote and
/// backslash plus a separate control-character pass measured 2-3x slower here, mostly from
/// per-call overhead at short gaps.)
///
/// The second result is true when the run before that offset may hold a byte >= 0x80 (never false
/// when it does); it is only computed for sinks that check UTF-8 (`S::CHECK_UTF8`), by OR-ing the
/// data already loaded, so ASCII runs need no second pass.
#[inline]
fn find_string_special<S: StrSink>(b: &[u8], i: usize) -> (usize, bool) {
    if S::CHECK_UTF8 {
        find_special::<true>(b, i)
    } else {
        find_special::<false>(b, i)
    }
}

/// [`find_string_special`] without the UTF-8 hint (for scanners of already validated text).
#[inline]
pub(crate) fn find_string_special_plain(b: &[u8], i: usize) -> usize {
    find_special::<false>(b, i).0
}

#[inline]
fn find_special<const HIGH_BITS: bool>(b: &[u8], mut i: usize) -> (usize, bool) {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut high = 0u64;
    for _ in 0..2 {
        let Some(w) = word_at(b, i) else { break };
        if HIGH_BITS {
            high |= w;
        }
        let m = special_mask(w);
        if m != 0 {
            let stop = i + (m.trailing_zeros() / 8) as usize;
            // Bytes of the word at and after the stop may be counted: "may hold" stays true.
            return (stop, high & HIGH != 0);
        }
        i += 8;
    }
    let (mut i, long_high) = find_special_long::<HIGH_BITS>(b, i);
    while i < b.len() && !is_special(b[i]) {
        if HIGH_BITS {
            high |= u64::from(b[i]);
        }
        i += 1;
    }
    (i, long_high || high & HIGH != 0)
}

/// The long-run part of [`find_special`]: SSE2 (baseline on x86_64) 64 bytes per step. Returns
/// the offset of the first special byte, or where fewer than 16 bytes remain, and whether any byte
/// looked at may be >= 0x80 (when `HIGH_BITS`).
#[cfg(target_arch = "x86_64")]
#[inline]
fn find_special_long<const HIGH_BITS: bool>(b: &[u8], mut i: usize) -> (usize, bool) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_setzero_si128,
    };
    // SAFETY: SSE2 is part of the x86_64 baseline; every load reads 16 bytes that the bounds
    // checks before it keep inside `b`.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let ctl = _mm_set1_epi8(0x1f);
        let mut seen = _mm_setzero_si128();
        let special = |v: __m128i| {
            // max(v, 0x1f) == 0x1f exactly for the bytes below 0x20.
            let c = _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl);
            _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                c,
            )
        };
        let load = |k: usize| _mm_loadu_si128(b.as_ptr().add(k).cast::<__m128i>());
        while i + 64 <= b.len() {
            let (v0, v1, v2, v3) = (load(i), load(i + 16), load(i + 32), load(i + 48));
            if HIGH_BITS {
                seen = _mm_or_si128(
                    seen,
                    _mm_or_si128(_mm_or_si128(v0, v1), _mm_or_si128(v2, v3)),
                );
            }
            let (m0, m1, m2, m3) = (special(v0), special(v1), special(v2), special(v3));
            let any = _mm_or_si128(_mm_or_si128(m0, m1), _mm_or_si128(m2, m3));
            if _mm_movemask_epi8(any) != 0 {
                let mask = (_mm_movemask_epi8(m0) as u32 as u64)
                    | ((_mm_movemask_epi8(m1) as u32 as u64) << 16)
                    | ((_mm_movemask_epi8(m2) as u32 as u64) << 32)
                    | ((_mm_movemask_epi8(m3) as u32 as u64) << 48);
                return (
                    i + mask.trailing_zeros() as usize,
                    _mm_movemask_epi8(seen) != 0,
                );
            }
            i += 64;
        }
        while i + 16 <= b.len() {
            let v = load(i);
            if HIGH_BITS {
                seen = _mm_or_si128(seen, v);
            }
            let m = _mm_movemask_epi8(special(v));
            if m != 0 {
                return (
                    i + m.trailing_zeros() as usize,
                    _mm_movemask_epi8(seen) != 0,
                );
            }
            i += 16;
        }
        (i, _mm_movemask_epi8(seen) != 0)
    }
}

/// Portable long-run scan: 32-byte blocks whose branch-free test LLVM vectorizes.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn find_special_long<const HIGH_BITS: bool>(b: &[u8], mut i: usize) -> (usize, bool) {
    let mut high = false;
    while let Some(block) = b.get(i..i + 32) {
        let hit = block.iter().fold(false, |acc, &c| {
            acc | (c == b'"') | (c == b'\\') | (c < 0x20)
        });
        if HIGH_BITS {
            high |= block.iter().fold(0u8, |acc, &c| acc | c) >= 0x80;
        }
        if hit {
            for k in (0..32).step_by(8) {
                let m = word_at(b, i + k).map_or(0, special_mask);
                if m != 0 {
                    return (i + k + (m.trailing_zeros() / 8) as usize, high);
                }
            }
        }
        i += 32;
    }
    (i, high)
}

#[inline]
fn is_special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

#[inline]
fn word_at(b: &[u8], i: usize) -> Option<u64> {
    let bytes: [u8; 8] = b.get(i..i + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// The high bit of each byte of `w` that is `"`, `\` or below 0x20 is set, possibly along with
/// some bytes above (more significant than) the first such byte; so the lowest set bit is exact.
#[inline]
fn special_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The classic "has a zero byte" test, applied to w ^ pattern; `below(w, n)` flags bytes < n.
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    (below(quote, 1) | below(backslash, 1) | below(w, 0x20)) & HIGH
}

/// Builds the canonical form of one key for `top_level_members`.
struct KeyReader<'a> {
    src: Source<'a>,
    buf: String,
    canon: Canon,
}

impl<'a> KeyReader<'a> {
    fn new(src: Source<'a>) -> Self {
        KeyReader {
            src,
            buf: String::new(),
            canon: Canon::default(),
        }
    }
}

impl StrSink for KeyReader<'_> {
    fn raw(&mut self, run: Range<usize>) {
        self.canon.raw(&self.src, run, &mut self.buf);
    }
    fn escape(&mut self, c: u8) {
        self.canon.simple_escape(c, &mut self.buf);
    }
    fn unicode(&mut self, unit: u16) {
        self.canon.unicode_escape(unit, &mut self.buf);
    }
    fn end(&mut self) {
        self.canon.end(&mut self.buf);
    }
}

/// Builds a `Value` tree.
struct Builder<'a> {
    src: Source<'a>,
    stack: Vec<Frame>,
    result: Option<Value>,
    /// Canonical text of the string being read (reused between strings).
    buf: String,
    canon: Canon,
    /// The string read so far is this one run of source text (not yet copied into `buf`):
    /// strings without escapes are then copied once, straight into their final allocation.
    run: Option<Range<usize>>,
}

enum Frame {
    Array(Vec<Value>),
    /// The key waiting for its value.
    Object(ObjectBuilder, JsStr),
}

impl<'a> Builder<'a> {
    fn new(src: Source<'a>) -> Self {
        Builder {
            src,
            stack: Vec::new(),
            result: None,
            buf: String::new(),
            canon: Canon::default(),
            run: None,
        }
    }

    fn push(&mut self, v: Value) {
        match self.stack.last_mut() {
            Some(Frame::Array(a)) => a.push(v),
            Some(Frame::Object(o, key)) => o.insert(std::mem::take(key), v),
            None => self.result = Some(v),
        }
    }

    fn flush_run(&mut self) {
        if let Some(r) = self.run.take() {
            self.canon.raw(&self.src, r, &mut self.buf);
        }
    }
}

impl Handler for Builder<'_> {
    fn null(&mut self) {
        self.push(Value::Null);
    }
    fn boolean(&mut self, b: bool) {
        self.push(Value::Bool(b));
    }
    fn number(&mut self, raw: &[u8]) {
        self.push(Value::Number(number_value(raw)));
    }
    fn str_raw(&mut self, run: Range<usize>) {
        if self.buf.is_empty() && self.run.is_none() && self.canon.is_idle() {
            self.run = Some(run);
        } else {
            self.flush_run();
            self.canon.raw(&self.src, run, &mut self.buf);
        }
    }
    fn str_escape(&mut self, c: u8) {
        self.flush_run();
        self.canon.simple_escape(c, &mut self.buf);
    }
    fn str_unicode(&mut self, unit: u16) {
        self.flush_run();
        self.canon.unicode_escape(unit, &mut self.buf);
    }
    fn str_end(&mut self, key: bool) {
        let s = match self.run.take() {
            Some(r) => self.src.run(r).into_owned(),
            None => {
                self.canon.end(&mut self.buf);
                // Copy out at exact size and keep the buffer's capacity for the next string.
                let s = self.buf.as_str().to_owned();
                self.buf.clear();
                s
            }
        };
        let s = JsStr::from_escaped_unchecked(s);
        if key {
            if let Some(Frame::Object(_, k)) = self.stack.last_mut() {
                *k = s;
            }
        } else {
            self.push(Value::String(s));
        }
    }
    fn begin_array(&mut self) {
        self.stack.push(Frame::Array(Vec::new()));
    }
    fn end_array(&mut self) {
        if let Some(Frame::Array(a)) = self.stack.pop() {
            self.push(Value::Array(a));
        }
    }
    fn begin_object(&mut self) {
        self.stack
            .push(Frame::Object(ObjectBuilder::default(), JsStr::default()));
    }
    fn end_object(&mut self) {
        if let Some(Frame::Object(o, _)) = self.stack.pop() {
            self.push(Value::Object(o.finish()));
        }
    }
}

/// Up to this many keys per object, duplicates are found by a linear scan; above it by hashing.
const LINEAR_KEY_SCAN: usize = 32;

/// Writes canonical JSON while parsing. Gives up (`fallback`) when an object would need its keys
/// reordered or deduplicated, which only a built `Object` can do.
struct Writer<'a, O: Out + Tracked> {
    src: Source<'a>,
    out: O,
    canon: Canon,
    frames: Vec<WFrame>,
    /// Byte ranges (in output coordinates) of the keys of all open objects.
    keys: Vec<Range<usize>>,
    key_start: usize,
    fallback: bool,
    /// When set: the top-level object's members as (key range, value range) in output coordinates
    /// (which are input coordinates for `Compare` while it matches).
    top: Option<&'a mut Vec<(Range<usize>, Range<usize>)>>,
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
trait Tracked {
    /// This output accepts source runs by position, so their UTF-8 must be checked as they are
    /// scanned (see [`Handler::CHECK_UTF8`]).
    const CHECK_UTF8: bool = false;
    fn pos(&self) -> usize;
    fn written(&self, r: Range<usize>) -> &[u8];
    fn failed(&self) -> bool {
        false
    }
    /// The output can no longer match (only outputs that compare can fail).
    fn fail(&mut self) {}
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
struct Compare<'a> {
    input: &'a [u8],
    pos: usize,
    ok: bool,
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

    /// Source text at the current position is canonical as is (its UTF-8 is checked while it
    /// is scanned: `CHECK_UTF8`).
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
    const CHECK_UTF8: bool = true;
    fn fail(&mut self) {
        self.ok = false;
    }
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
    fn new(out: O, src: Source<'a>) -> Self {
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
    const CHECK_UTF8: bool = O::CHECK_UTF8;
    fn stopped(&self) -> bool {
        self.fallback || self.out.failed()
    }
    fn str_bad_utf8(&mut self) {
        self.out.fail();
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
