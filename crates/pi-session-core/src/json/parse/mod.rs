//! One iterative JSON grammar driver with pluggable event handlers: validation (no-op
//! handler), `Value` building, and streaming canonical output (for `normalize`, and for
//! `is_canonical` by comparing that output with the input instead of storing it).
//!
//! Here: the public entry points and the two event interfaces (`Handler` for a whole document,
//! `StrSink` for one string literal). `grammar` is the driver (values, numbers, strings),
//! `special` its hot loop (finding the next quote, backslash or control byte), `build` the
//! handlers that build values and keys, `canonical` the handler that writes (or compares against)
//! canonical output.

use std::fmt;
use std::ops::Range;

use super::string::{JsStr, Source};
use super::Value;

mod build;
mod canonical;
mod grammar;
mod special;

use build::{Builder, KeyReader};
use canonical::{Compare, Writer};
use grammar::{expect, expect_end, parse_document, parse_value, scan_string, skip_ws, unexpected};
pub(crate) use special::find_string_special;

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

/// [`validate`] that says where the text stops being JSON when it is not: the [`ParseError`] of
/// the first offending byte (its offset is the input length when the text ends too soon).
pub fn check(bytes: &[u8]) -> Result<(), ParseError> {
    parse_document(bytes, &mut NoOp)
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

/// The members of an object and of its top-level `message` object, by their names as written:
/// `visit(nested, raw name, value range)`, with `nested` true for the members of `message` (given
/// before the member `message` itself). A raw name is the bytes between its quotes, not decoded:
/// a name with an escape comes as written (the caller decodes the few it needs), and `message`
/// is descended into only when spelled plainly. Validates every byte once, as
/// [`visit_two_levels`] does; decoding names was most of what a member visit cost.
///
/// Returns `None` when the document is valid JSON but not an object, else how deeply its
/// containers nest (the object itself is 1).
pub fn visit_message_members(
    bytes: &[u8],
    mut visit: impl FnMut(bool, &[u8], Range<usize>),
) -> Result<Option<usize>, ParseError> {
    let i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        parse_document(bytes, &mut NoOp)?;
        return Ok(None);
    }
    // Below the object: its values, and the values of `message` one level further down.
    let mut gauge = Depth::default();
    let mut message_depth = 0;
    let i = visit_object_raw_at(bytes, i, |name, start| {
        let name = &bytes[name];
        let end = if name == b"message" && bytes.get(start) == Some(&b'{') {
            message_depth = 1;
            visit_object_raw_at(bytes, start, |inner, s| {
                let mut inner_gauge = Depth::default();
                let end = parse_value(bytes, s, &mut inner_gauge)?;
                message_depth = message_depth.max(1 + inner_gauge.max);
                visit(true, &bytes[inner], s..end);
                Ok(end)
            })?
        } else {
            parse_value(bytes, start, &mut gauge)?
        };
        visit(false, name, start..end);
        Ok(end)
    })?;
    expect_end(bytes, i)?;
    Ok(Some(1 + gauge.max.max(message_depth)))
}

/// Measures how deeply the containers of the values it is given nest (a scalar is 0, `[]` 1).
#[derive(Default)]
struct Depth {
    now: usize,
    max: usize,
}

impl Depth {
    fn open(&mut self) {
        self.now += 1;
        self.max = self.max.max(self.now);
    }
}

impl Handler for Depth {
    fn begin_array(&mut self) {
        self.open();
    }
    fn end_array(&mut self) {
        self.now -= 1;
    }
    fn begin_object(&mut self) {
        self.open();
    }
    fn end_object(&mut self) {
        self.now -= 1;
    }
}

/// Validates the pieces of a string and keeps nothing of them (a member name taken as written).
struct Ignore;
impl StrSink for Ignore {
    fn raw(&mut self, _: Range<usize>) {}
    fn escape(&mut self, _: u8) {}
    fn unicode(&mut self, _: u16) {}
    fn end(&mut self) {}
}

/// [`visit_object_at`] giving each member's name as the byte range between its quotes, undecoded.
fn visit_object_raw_at(
    bytes: &[u8],
    i: usize,
    mut value: impl FnMut(Range<usize>, usize) -> Result<usize, ParseError>,
) -> Result<usize, ParseError> {
    visit_members(bytes, i, &mut Ignore, |_, name, start| value(name, start))
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
    visit_members(bytes, i, key, |key, _, start| value(&key.buf, start))
}

/// The walk of [`visit_object_at`] and [`visit_object_raw_at`]: each member's name is read into
/// `name` (after its `begin`), and `value(name, range between the quotes, start)` parses the
/// value from its start and returns its end.
fn visit_members<S: StrSink>(
    bytes: &[u8],
    i: usize,
    name: &mut S,
    mut value: impl FnMut(&S, Range<usize>, usize) -> Result<usize, ParseError>,
) -> Result<usize, ParseError> {
    let mut i = skip_ws(bytes, i + 1);
    if bytes.get(i) == Some(&b'}') {
        return Ok(i + 1);
    }
    loop {
        expect(bytes, i, b'"')?;
        let name_start = i + 1;
        name.begin();
        i = scan_string(bytes, name_start, name)?;
        let raw = name_start..i - 1;
        i = skip_ws(bytes, i);
        expect(bytes, i, b':')?;
        let start = skip_ws(bytes, i + 1);
        i = value(name, raw, start)?;
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
    // Canonical text is always valid UTF-8. Checked once for the whole input, which is several
    // times cheaper than a check per run of string content between escapes (prose has many
    // escapes and non-ASCII text); valid string content can then be accepted by position alone.
    if std::str::from_utf8(bytes).is_err() {
        return false;
    }
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

/// Receives the pieces of one string literal.
trait StrSink {
    /// Called before a string is scanned into a sink that is used again (a member name).
    fn begin(&mut self) {}
    /// Source bytes between escapes (no quote, backslash or control characters).
    fn raw(&mut self, run: Range<usize>);
    fn escape(&mut self, c: u8);
    fn unicode(&mut self, unit: u16);
    fn end(&mut self);
}
