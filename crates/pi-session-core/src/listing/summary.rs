//! The per-file summary of a listing (`FileSummary`, the ingredients of one `SessionInfo`),
//! computed in one streaming pass over the file without building the entries.

use std::path::Path;

use super::discover::{file_mtime_ms, may_lead};
use super::js::{js_join_item, js_trim_escaped};
use super::lines::for_each_line;
use crate::json::{self, JsStr, Value};
use crate::{record, torn};

/// One file's `SessionInfo` ingredients: [`SummaryInfo`] and the two texts, kept apart as escaped
/// JSON string contents because they are most of the bytes and cross to JS without a JSON round
/// trip.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSummary {
    pub info: SummaryInfo,
    /// The first user message's text (empty: none).
    pub first_message: String,
    /// Every message text, joined by spaces.
    pub all_text: String,
}

/// The fields of one `SessionInfo` apart from the texts, as the file states them (the binding and
/// the CLI make them into dates; see [`SummaryInfo::modified`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryInfo {
    /// The file's path, as text.
    pub path: String,
    /// The header's `id`, as it is (`None`: no such member).
    pub id: Option<Value>,
    /// The header's `cwd` when it is a string, else empty.
    pub cwd: JsStr,
    /// The latest `session_info` name, trimmed (`None`: none, or blank).
    pub name: Option<JsStr>,
    /// The header's `parentSession`, as it is.
    pub parent_session_path: Option<Value>,
    /// The header's `timestamp`, as it is.
    pub created: Option<Value>,
    /// The latest activity time (ms) of the user and assistant messages with content that the
    /// core could read: a numeric message timestamp, else a strict ISO or plain entry timestamp.
    pub activity: Option<f64>,
    /// Entry timestamps of such messages that only JavaScript's `Date` reads exactly (strings
    /// that are not strict ISO, objects, arrays): each may raise the activity.
    pub pending_times: Vec<Value>,
    /// The file's mtime (ms).
    pub mtime_ms: f64,
    pub message_count: u64,
}

/// A date only JavaScript's `Date` decides (see [`SummaryInfo::modified_by`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeedsJsDate;

impl SummaryInfo {
    /// The JSON members `"path":…,"id":…,"cwd":…,"name":…,"parentSessionPath":…,"created":…`
    /// (absent fields left out), values as the file states them: the head of both texts a summary
    /// becomes, the list cache's record and the binding's wire text.
    pub fn write_head_members(&self, out: &mut String) {
        out.push_str("\"path\":");
        json::write_js_string(&JsStr::from_str(&self.path), out);
        if let Some(id) = &self.id {
            out.push_str(",\"id\":");
            json::write_json(id, out);
        }
        out.push_str(",\"cwd\":");
        json::write_js_string(&self.cwd, out);
        if let Some(n) = &self.name {
            out.push_str(",\"name\":");
            json::write_js_string(n, out);
        }
        if let Some(p) = &self.parent_session_path {
            out.push_str(",\"parentSessionPath\":");
            json::write_json(p, out);
        }
        if let Some(t) = &self.created {
            out.push_str(",\"created\":");
            json::write_json(t, out);
        }
    }

    /// The ingredients of the "modified" rule as JSON members, each after a comma:
    /// `,"act":…,"actPending":[…],"mtimeMs":…` (`act` left out when there is none).
    pub fn write_activity_members(&self, out: &mut String) {
        if let Some(a) = self.activity {
            out.push_str(",\"act\":");
            json::write_number(a, out);
        }
        out.push_str(",\"actPending\":[");
        for (i, p) in self.pending_times.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json::write_json(p, out);
        }
        out.push_str("],\"mtimeMs\":");
        json::write_number(self.mtime_ms, out);
    }

    /// `SessionInfo.modified` (ms) where it needs no date that only JavaScript reads exactly:
    /// `None` when it does (then the binding leaves the rule to `lib/listing.js`, which has
    /// `Date`; the CLI uses [`SummaryInfo::modified_by`] with its own reading of dates).
    pub fn modified(&self) -> Option<f64> {
        self.modified_by(|_| Err(NeedsJsDate)).ok()
    }

    /// `SessionInfo.modified` (ms), the reference's rule: the latest activity when positive, else
    /// the header's `timestamp` when it is a string holding a valid date, else the mtime rounded
    /// as `Math.round` does. `date` is `new Date(value).getTime()` for the values the core cannot
    /// read itself (pending entry timestamps, a header timestamp that is not strict ISO):
    /// `Ok(None)` for an invalid date.
    pub fn modified_by<E>(
        &self,
        mut date: impl FnMut(&Value) -> Result<Option<f64>, E>,
    ) -> Result<f64, E> {
        let mut activity = self.activity;
        for v in &self.pending_times {
            if let Some(t) = date(v)?.filter(|t| !t.is_nan()) {
                activity = Some(activity.unwrap_or(0.0).max(t));
            }
        }
        if let Some(a) = activity.filter(|&a| a > 0.0) {
            return Ok(a);
        }
        if let Some(created @ Value::String(c)) = &self.created {
            let t = match crate::timefmt::parse_iso_strict(c.as_escaped()) {
                Some(ms) => Some(ms),
                None => date(created)?,
            };
            if let Some(t) = t.filter(|t| !t.is_nan()) {
                return Ok(t);
            }
        }
        Ok(js_round(self.mtime_ms))
    }
}

/// `Math.round`: to the nearest integer, halves toward +∞.
fn js_round(x: f64) -> f64 {
    let f = x.floor();
    if x - f >= 0.5 {
        f + 1.0
    } else {
        f
    }
}

/// One file's summary, computed in one streaming pass; `None` when the reference would skip it.
pub fn summarize_file_parts(path: &Path, mtime: Option<f64>) -> Option<FileSummary> {
    let mtime = match mtime {
        Some(m) => m,
        None => file_mtime_ms(path)?,
    };
    let mut file = crate::fsio::open_read(path).ok()?;
    let mut s = Summary::default();
    let mut failed = false;
    let res = for_each_line(&mut file, |line| match s.feed(line) {
        Feed::Continue => true,
        Feed::Stop => false,
        Feed::Fail => {
            failed = true;
            false
        }
    });
    if res.is_err() || failed {
        return None;
    }
    let header = s.header.as_ref()?;
    let info = SummaryInfo {
        path: path.to_string_lossy().into_owned(),
        id: header.get("id").cloned(),
        cwd: match header.get("cwd") {
            Some(Value::String(c)) => c.clone(),
            _ => JsStr::default(),
        },
        name: s.name,
        parent_session_path: header.get("parentSession").cloned(),
        created: header.get("timestamp").cloned(),
        activity: s.activity,
        pending_times: s.pending,
        mtime_ms: mtime,
        message_count: s.message_count,
    };
    Some(FileSummary {
        info,
        first_message: s.first_message.unwrap_or_default(),
        all_text: s.all_text,
    })
}

#[derive(Default)]
struct Summary {
    header: Option<Value>,
    name: Option<JsStr>,
    message_count: u64,
    activity: Option<f64>,
    pending: Vec<Value>,
    first_message: Option<String>,
    all_text: String,
    any_text: bool,
}

enum Feed {
    Continue,
    Stop,
    Fail,
}

/// Does a raw key (the bytes between the quotes) name `name`? Escaped spellings are decoded.
fn key_is(raw: &[u8], name: &str) -> bool {
    if !raw.contains(&b'\\') {
        return raw == name.as_bytes();
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    matches!(json::parse(&quoted), Ok(Value::String(ref s)) if s.eq_str(name))
}

/// Whether a raw value is the JSON string `want`.
fn raw_is_string(raw: &[u8], want: &str) -> bool {
    // The common spelling first; anything else (escapes, whitespace) goes through the parser.
    if raw.len() == want.len() + 2 && raw[0] == b'"' && &raw[1..raw.len() - 1] == want.as_bytes() {
        return true;
    }
    raw.first() == Some(&b'"')
        && matches!(json::parse(raw), Ok(Value::String(ref s)) if s.eq_str(want))
}

/// The members `feed` looks at: value ranges of the last occurrence of each name (what
/// JSON.parse keeps), found without allocating.
struct Picked<const N: usize> {
    ranges: [Option<std::ops::Range<usize>>; N],
}

impl<const N: usize> Default for Picked<N> {
    fn default() -> Self {
        Picked {
            ranges: std::array::from_fn(|_| None),
        }
    }
}

impl<const N: usize> Picked<N> {
    fn record(&mut self, names: &[&str; N], key: &[u8], r: std::ops::Range<usize>) {
        for (slot, name) in self.ranges.iter_mut().zip(names) {
            if key_is(key, name) {
                *slot = Some(r);
                return;
            }
        }
    }

    fn get<'a>(&self, src: &'a [u8], k: usize) -> Option<&'a [u8]> {
        self.ranges[k].clone().and_then(|r| src.get(r))
    }
}

const LINE_KEYS: [&str; 4] = ["type", "name", "message", "timestamp"];
const L_TYPE: usize = 0;
const L_NAME: usize = 1;
const L_MESSAGE: usize = 2;
const L_TIMESTAMP: usize = 3;
const MESSAGE_KEYS: [&str; 3] = ["role", "content", "timestamp"];
const M_ROLE: usize = 0;
const M_CONTENT: usize = 1;
const M_TIMESTAMP: usize = 2;
const BLOCK_KEYS: [&str; 2] = ["type", "text"];

impl Summary {
    fn feed(&mut self, line: &[u8]) -> Feed {
        // One validating pass over the line that also picks the message's members; nested
        // values are then walked without validating again.
        let mut top = Picked::<4>::default();
        let mut msg = Picked::<3>::default();
        let mut pending = Picked::<3>::default();
        let is_object = json::visit_two_levels(
            line,
            |key| key == "message",
            |depth, key, r| {
                if depth == 1 {
                    pending.record(&MESSAGE_KEYS, key.as_bytes(), r);
                } else {
                    if key_is(key.as_bytes(), "message") {
                        // The last `message` member is the one JSON.parse keeps.
                        msg = std::mem::take(&mut pending);
                    }
                    top.record(&LINE_KEYS, key.as_bytes(), r);
                }
            },
        );
        match is_object {
            Ok(true) => {}
            Ok(false) => return self.feed_non_object(line),
            // Unparseable: after the header, an entry glued after a torn record in it counts,
            // as the open reads it ([`crate::torn`]).
            Err(_) if self.header.is_some() => {
                return match torn::glued_entry(line, record::read_meta) {
                    Some((at, _)) => self.feed(&line[at..]),
                    None => Feed::Continue,
                };
            }
            Err(_) => return Feed::Continue,
        }
        let ty = top.get(line, L_TYPE);
        let is = |t: &str| ty.is_some_and(|raw| raw_is_string(raw, t));
        if self.header.is_none() {
            return self.feed_before_header(line, is("session"));
        }
        if is("session_info") {
            if let Feed::Fail = self.feed_session_info(top.get(line, L_NAME)) {
                return Feed::Fail;
            }
        }
        if !is("message") {
            return Feed::Continue;
        }
        self.feed_message(line, &top, &msg)
    }

    /// A line that is a scalar or an array: a header must be an object, so a truthy one before
    /// the header ends the file's chances.
    fn feed_non_object(&self, line: &[u8]) -> Feed {
        if self.header.is_none() {
            if let Ok(v) = json::parse(line) {
                if v.is_truthy() {
                    return Feed::Stop;
                }
            }
        }
        Feed::Continue
    }

    /// An object record before the header: the header itself (`session`) or one that may lead it.
    fn feed_before_header(&mut self, line: &[u8], session: bool) -> Feed {
        if !session {
            // Records leading the header are skipped (if no header follows, the file was
            // no session: `header` stays unset).
            return match json::parse(line) {
                Ok(v) if may_lead(&v) => Feed::Continue,
                _ => Feed::Stop,
            };
        }
        match json::parse(line) {
            Ok(v) => self.header = Some(v),
            Err(_) => return Feed::Fail,
        }
        Feed::Continue
    }

    /// A `session_info` record's raw `name`: the latest one, trimmed, names the session.
    fn feed_session_info(&mut self, name: Option<&[u8]>) -> Feed {
        match name.map(json::parse).as_ref() {
            None | Some(Ok(Value::Null)) => self.name = None,
            Some(Ok(Value::String(n))) => {
                let t = js_trim_escaped(n.as_escaped());
                self.name = if t.is_empty() {
                    None
                } else {
                    Some(JsStr::from_escaped_unchecked(t.to_owned()))
                };
            }
            _ => return Feed::Fail,
        }
        Feed::Continue
    }

    /// A `message` record: counted, and a user or assistant message with content gives its
    /// activity time and its text.
    fn feed_message(&mut self, line: &[u8], top: &Picked<4>, msg: &Picked<3>) -> Feed {
        self.message_count += 1;
        let Some(msg_raw) = top.get(line, L_MESSAGE) else {
            return Feed::Fail;
        };
        if msg_raw.first() != Some(&b'{') {
            // `message.role` on a scalar or array is undefined (no throw); on null it throws.
            return if msg_raw.starts_with(b"null") {
                Feed::Fail
            } else {
                Feed::Continue
            };
        }
        let is_user = match msg.get(line, M_ROLE) {
            Some(r) if raw_is_string(r, "user") => true,
            Some(r) if raw_is_string(r, "assistant") => false,
            _ => return Feed::Continue,
        };
        let Some(content_raw) = msg.get(line, M_CONTENT) else {
            return Feed::Continue;
        };
        // Activity time: a numeric message timestamp, else the entry's own timestamp.
        match msg.get(line, M_TIMESTAMP).and_then(|r| json::parse(r).ok()) {
            Some(Value::Number(n)) => self.bump(n),
            _ => match top.get(line, L_TIMESTAMP).map(json::parse) {
                None => {}
                Some(Ok(v)) => self.entry_time(&v),
                Some(Err(_)) => {}
            },
        }
        let Some(text) = content_text(content_raw) else {
            return Feed::Fail;
        };
        self.add_text(text, is_user);
        Feed::Continue
    }

    /// A message's text joins the session's text; the first user message's is kept apart too.
    fn add_text(&mut self, text: String, is_user: bool) {
        if text.is_empty() {
            return;
        }
        if self.any_text {
            self.all_text.push(' ');
        }
        self.any_text = true;
        self.all_text.push_str(&text);
        if is_user && self.first_message.is_none() {
            self.first_message = Some(text);
        }
    }

    fn bump(&mut self, t: f64) {
        if t.is_nan() {
            return;
        }
        self.activity = Some(self.activity.unwrap_or(0.0).max(t));
    }

    /// `new Date(entry.timestamp).getTime()`: strict ISO strings and plain values here, anything
    /// else is left to JavaScript's `Date`.
    fn entry_time(&mut self, v: &Value) {
        match v {
            Value::String(s) => match crate::timefmt::parse_iso_strict(s.as_escaped()) {
                Some(ms) => self.bump(ms),
                None => self.pending.push(v.clone()),
            },
            Value::Null => self.bump(0.0),
            Value::Bool(b) => self.bump(f64::from(u8::from(*b))),
            Value::Number(n) => {
                if n.abs() <= 8.64e15 {
                    self.bump(n.trunc() + 0.0);
                }
            }
            _ => self.pending.push(v.clone()),
        }
    }
}

/// A message's raw `content` as text (escaped JSON string contents): a string as it is, the
/// `text` blocks of an array joined by spaces; `None` where the reference throws (a null block,
/// content neither string nor array).
fn content_text(content_raw: &[u8]) -> Option<String> {
    let mut text = String::new();
    match content_raw.first() {
        Some(b'"') => match json::parse(content_raw) {
            Ok(Value::String(ref s)) => text.push_str(s.as_escaped()),
            _ => return None,
        },
        Some(b'[') => {
            let mut first = true;
            let mut failed = false;
            json::visit_items_valid(content_raw, |r| {
                if failed {
                    return;
                }
                let item = &content_raw[r];
                match item.first() {
                    Some(b'n') => failed = true, // null: `block.type` throws
                    Some(b'{') => {
                        let mut block = Picked::<2>::default();
                        json::visit_members_valid(item, |key, r| block.record(&BLOCK_KEYS, key, r));
                        if !block.get(item, 0).is_some_and(|t| raw_is_string(t, "text")) {
                            return;
                        }
                        if !first {
                            text.push(' ');
                        }
                        first = false;
                        if let Some(t) = block.get(item, 1) {
                            if let Ok(v) = json::parse(t) {
                                js_join_item(&v, &mut text, 0);
                            }
                        }
                    }
                    _ => {}
                }
            });
            if failed {
                return None;
            }
        }
        _ => return None,
    }
    Some(text)
}

#[cfg(test)]
mod tests;
