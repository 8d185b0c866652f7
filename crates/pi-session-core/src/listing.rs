//! Discovery and listing without loading whole sessions: the bounded header scan, most-recent and
//! by-id lookups, and per-file summaries (`SessionInfo`) computed in one streaming pass.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::json::{self, Value};
use crate::paths;

/// At most this many bytes are read to find a header.
pub const MAX_HEADER_SCAN_BYTES: usize = 1024 * 1024;

/// A session header found by the bounded scan.
#[derive(Debug, Clone)]
pub struct Header {
    pub id: String,
    pub cwd: Option<String>,
    pub value: Value,
}

/// Why a header scan did not produce a header.
#[derive(Debug)]
pub enum ScanError {
    /// 1 MiB read without finding a parsed line.
    Limit,
    Io(std::io::Error),
}

/// Can this parsed record come before a header? (The listing side of `record::may_lead`.)
pub(crate) fn may_lead(v: &Value) -> bool {
    matches!(v, Value::Object(_))
        && !matches!(v.get("type"), Some(Value::String(t)) if crate::record::is_pi_type(&t.to_string_lossy()))
        && v.get("id").is_none()
        && v.get("parentId").is_none()
}

/// `None`: keep looking (blank, unparseable or falsy lines, and records that may lead a header);
/// `Some(None)`: not a session; `Some(Some(_))`: the header.
fn header_candidate(line: &[u8]) -> Option<Option<Header>> {
    let v = json::parse(line).ok()?;
    if !v.is_truthy() || may_lead(&v) {
        return None;
    }
    let is_header = matches!(v.get("type"), Some(Value::String(t)) if t.eq_str("session"));
    match (is_header, v.get("id")) {
        (true, Some(Value::String(id))) => {
            let id = id.to_string_lossy();
            let cwd = match v.get("cwd") {
                Some(Value::String(c)) => Some(c.to_string_lossy()),
                _ => None,
            };
            Some(Some(Header { id, cwd, value: v }))
        }
        _ => Some(None),
    }
}

/// Read a file's header looking at no more than 1 MiB: the first line that parses decides.
pub fn read_header(path: &Path) -> Result<Option<Header>, ScanError> {
    let f = File::open(path).map_err(ScanError::Io)?;
    let mut buf = Vec::with_capacity(64 * 1024);
    f.take(MAX_HEADER_SCAN_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(ScanError::Io)?;
    let over = buf.len() > MAX_HEADER_SCAN_BYTES;
    buf.truncate(MAX_HEADER_SCAN_BYTES);
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', &buf) {
        if let Some(decided) = header_candidate(&buf[start..nl]) {
            return Ok(decided);
        }
        start = nl + 1;
    }
    if over {
        return Err(ScanError::Limit);
    }
    Ok(header_candidate(&buf[start..]).flatten())
}

/// Discovery treats every scan failure as "not a session".
pub fn read_header_for_discovery(path: &Path) -> Option<Header> {
    read_header(path).ok().flatten()
}

fn cwd_matches(header: &Header, resolved_cwd: &str) -> bool {
    match &header.cwd {
        Some(c) if !c.is_empty() => paths::resolve(c) == resolved_cwd,
        _ => false,
    }
}

fn jsonl_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir)? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".jsonl") {
            out.push(name);
        }
    }
    Ok(out)
}

/// `findMostRecentSession(dir, cwd?)`: newest by mtime whose header is valid (and whose cwd
/// resolves to `resolved_cwd` when given). Any directory or stat error gives `None`.
pub fn find_most_recent(dir: &Path, resolved_cwd: Option<&str>) -> Option<PathBuf> {
    let names = jsonl_names(dir).ok()?;
    let mut files = Vec::with_capacity(names.len());
    for n in names {
        let p = paths::join_in(dir, &n);
        let mtime = fs::metadata(&p).ok()?.modified().ok()?;
        files.push((p, mtime));
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.1));
    files
        .into_iter()
        .map(|(p, _)| p)
        .find(|p| match read_header_for_discovery(p) {
            Some(h) => resolved_cwd.is_none_or(|c| cwd_matches(&h, c)),
            None => false,
        })
}

/// `SessionManager.findById`: first `.jsonl` in directory order whose header id equals `id`.
pub fn find_by_id(dir: &Path, id: &str, resolved_cwd: Option<&str>) -> Option<PathBuf> {
    let names = jsonl_names(dir).ok()?;
    names
        .into_iter()
        .map(|n| paths::join_in(dir, &n))
        .find(|p| match read_header_for_discovery(p) {
            Some(h) => h.id == id && resolved_cwd.is_none_or(|c| cwd_matches(&h, c)),
            None => false,
        })
}

/// Descending order of file names close to `localeCompare`: case-insensitive first, punctuation
/// before digits before letters; for generated names this is plain descending byte order.
pub fn sort_names_desc(names: &mut [String]) {
    fn class(c: char) -> u8 {
        if c.is_alphabetic() {
            2
        } else if c.is_numeric() {
            1
        } else {
            0
        }
    }
    // Keys are built once per name (thousands of names, each compared ~log n times).
    type Key = (Vec<(u8, char)>, Vec<bool>);
    let key = |a: &String| -> Key {
        (
            a.chars()
                .map(|c| (class(c), c.to_lowercase().next().unwrap_or(c)))
                .collect(),
            a.chars().map(char::is_uppercase).collect(),
        )
    };
    // Descending: case-insensitive first; at equal letters lower case sorts before upper case
    // (ICU tertiary order), i.e. `false` (lower) after `true` in the reversed comparison.
    names.sort_by_cached_key(|a| std::cmp::Reverse(key(a)));
}

/// `.jsonl` files of one directory, name-descending (the order `list` summarizes them in).
pub fn list_dir_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut names = jsonl_names(dir)?;
    sort_names_desc(&mut names);
    Ok(names.into_iter().map(|n| paths::join_in(dir, &n)).collect())
}

/// Candidates of `listAll()` under the sessions root: every `.jsonl` in every subdirectory (or
/// symlink), with its mtime (ms) when stat works; newest first, then base name descending.
pub fn list_all_candidates(root: &Path) -> Vec<(PathBuf, Option<f64>)> {
    let Ok(rd) = fs::read_dir(root) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if !(ft.is_dir() || ft.is_symlink()) {
            continue;
        }
        let dir = paths::join_in(root, &e.file_name().to_string_lossy());
        if let Ok(names) = jsonl_names(&dir) {
            files.extend(names.into_iter().map(|n| paths::join_in(&dir, &n)));
        }
    }
    let mut c: Vec<(PathBuf, Option<f64>)> = files
        .into_iter()
        .map(|p| {
            let m = fs::metadata(&p)
                .ok()
                .and_then(|m| m.modified().ok())
                .map(mtime_ms);
            (p, m)
        })
        .collect();
    c.sort_by(|a, b| {
        let ma = a.1.unwrap_or(f64::NEG_INFINITY);
        let mb = b.1.unwrap_or(f64::NEG_INFINITY);
        mb.total_cmp(&ma).then_with(|| {
            let mut v = [base(&a.0), base(&b.0)];
            let (na, nb) = (v[0].clone(), v[1].clone());
            sort_names_desc(&mut v);
            if na == nb {
                std::cmp::Ordering::Equal
            } else if v[0] == na {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        })
    });
    c
}

fn base(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn mtime_ms(t: std::time::SystemTime) -> f64 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64() * 1000.0,
        Err(e) => -(e.duration().as_secs_f64() * 1000.0),
    }
}

/// JS `String.prototype.trim` whitespace.
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// Trim a canonical (escaped) JS string like `String.prototype.trim`. Escaped control characters
/// (`\t`, `\n`, `\u000b`, ...) count as whitespace too.
fn js_trim_escaped(s: &str) -> &str {
    const ESCAPED_WS: [&str; 5] = ["\\t", "\\n", "\\u000b", "\\f", "\\r"];
    let mut t = s;
    loop {
        let before = t.len();
        t = t.trim_start_matches(is_js_space);
        for e in ESCAPED_WS {
            if let Some(r) = t.strip_prefix(e) {
                t = r;
            }
        }
        if t.len() == before {
            break;
        }
    }
    loop {
        let before = t.len();
        t = t.trim_end_matches(is_js_space);
        for e in ESCAPED_WS {
            // A trailing `\\t` (escaped backslash + t) is not whitespace: count the backslashes.
            if let Some(r) = t.strip_suffix(e) {
                let bs = r.bytes().rev().take_while(|&b| b == b'\\').count();
                if bs % 2 == 0 {
                    t = r;
                }
            }
        }
        if t.len() == before {
            break;
        }
    }
    t
}

/// `String(value)` as `Array.prototype.join` applies it (null/undefined -> ""), escaped.
fn js_join_item(v: &Value, out: &mut String, depth: usize) {
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => json::write_number(*n, out),
        Value::String(s) => out.push_str(s.as_escaped()),
        Value::Array(items) => {
            if depth > 64 {
                return;
            }
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                js_join_item(it, out, depth + 1);
            }
        }
        Value::Object(_) => out.push_str("[object Object]"),
    }
}

/// Lines as Node's `readline` yields them: split on `\n`, `\r\n` and a lone `\r`. Lines are
/// handed out of one read buffer (only a line cut by the buffer's end is moved), which grows only
/// to hold the longest line.
fn for_each_line(reader: &mut impl Read, mut f: impl FnMut(&[u8]) -> bool) -> std::io::Result<()> {
    const CHUNK: usize = 1 << 20;
    thread_local! {
        // Reused across the files one worker summarizes (zeroing 1 MiB per small file cost more
        // than reading it).
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut buf = BUF.with(|b| std::mem::take(&mut *b.borrow_mut()));
    if buf.len() < CHUNK {
        buf.resize(CHUNK, 0);
    }
    let result = lines_from(reader, &mut buf, CHUNK, &mut f);
    if buf.len() <= 8 * CHUNK {
        // Keep it for the next file unless one huge line grew it.
        BUF.with(|b| *b.borrow_mut() = buf);
    }
    result
}

fn lines_from(
    reader: &mut impl Read,
    buf: &mut Vec<u8>,
    chunk: usize,
    f: &mut impl FnMut(&[u8]) -> bool,
) -> std::io::Result<()> {
    // buf[start..end] is read but not yet handed out; buf[start..scanned] has no newline.
    let (mut start, mut end, mut scanned) = (0usize, 0usize, 0usize);
    let mut eof = false;
    let mut emit = |line: &[u8]| -> bool {
        let mut rest = line;
        loop {
            match memchr::memchr(b'\r', rest) {
                Some(i) => {
                    if !f(&rest[..i]) {
                        return false;
                    }
                    rest = &rest[i + 1..];
                    if rest.is_empty() {
                        return true;
                    }
                }
                None => return f(rest),
            }
        }
    };
    loop {
        while let Some(k) = memchr::memchr(b'\n', &buf[scanned..end]) {
            let nl = scanned + k;
            if !emit(&buf[start..nl]) {
                return Ok(());
            }
            start = nl + 1;
            scanned = start;
        }
        scanned = end;
        if eof {
            if start < end {
                emit(&buf[start..end]);
            }
            return Ok(());
        }
        // Make room: move the partial line to the front, grow when it fills the buffer.
        if start > 0 {
            buf.copy_within(start..end, 0);
            end -= start;
            scanned -= start;
            start = 0;
        }
        if buf.len() - end < chunk / 4 {
            buf.resize(buf.len() * 2, 0);
        }
        let n = loop {
            match reader.read(&mut buf[end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            eof = true;
        }
        end += n;
    }
}

/// One file's `SessionInfo` ingredients. `meta` is a JSON object the binding finishes (Dates need
/// JS): `{path, id?, cwd, name?, parentSessionPath?, created?, act?, actPending, mtimeMs,
/// messageCount}`; the two texts are kept apart, as escaped JSON string contents, because they are
/// most of the bytes and cross to JS without a JSON round trip.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSummary {
    pub meta: String,
    pub first_message: String,
    pub all_text: String,
}

/// One file's summary, computed in one streaming pass; `None` when the reference would skip it.
pub fn summarize_file_parts(path: &Path, mtime: Option<f64>) -> Option<FileSummary> {
    let mtime = match mtime {
        Some(m) => m,
        None => mtime_ms(fs::metadata(path).ok()?.modified().ok()?),
    };
    let mut file = File::open(path).ok()?;
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
    let mut out = String::with_capacity(256);
    out.push_str("{\"path\":");
    json::write_js_string(&json::JsStr::from_str(&path.to_string_lossy()), &mut out);
    if let Some(id) = header.get("id") {
        out.push_str(",\"id\":");
        json::write_json(id, &mut out);
    }
    out.push_str(",\"cwd\":");
    match header.get("cwd") {
        Some(Value::String(c)) => json::write_js_string(c, &mut out),
        _ => out.push_str("\"\""),
    }
    if let Some(n) = &s.name {
        out.push_str(",\"name\":\"");
        out.push_str(n);
        out.push('"');
    }
    if let Some(p) = header.get("parentSession") {
        out.push_str(",\"parentSessionPath\":");
        json::write_json(p, &mut out);
    }
    if let Some(t) = header.get("timestamp") {
        out.push_str(",\"created\":");
        json::write_json(t, &mut out);
    }
    if let Some(a) = s.activity {
        out.push_str(",\"act\":");
        json::write_number(a, &mut out);
    }
    out.push_str(",\"actPending\":[");
    for (i, p) in s.pending.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(p);
    }
    out.push_str("],\"mtimeMs\":");
    json::write_number(mtime, &mut out);
    out.push_str(",\"messageCount\":");
    out.push_str(&s.message_count.to_string());
    out.push('}');
    Some(FileSummary {
        meta: out,
        first_message: s.first_message.unwrap_or_default(),
        all_text: s.all_text,
    })
}

#[derive(Default)]
struct Summary {
    header: Option<Value>,
    name: Option<String>,
    message_count: u64,
    activity: Option<f64>,
    pending: Vec<String>,
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
            Ok(false) | Err(_) => {
                // Unparseable, or a scalar/array: a header must be an object.
                if self.header.is_none() && matches!(is_object, Ok(false)) {
                    if let Ok(v) = json::parse(line) {
                        if v.is_truthy() {
                            return Feed::Stop;
                        }
                    }
                }
                return Feed::Continue;
            }
        }
        let ty = top.get(line, L_TYPE);
        let is = |t: &str| ty.is_some_and(|raw| raw_is_string(raw, t));
        if self.header.is_none() {
            if !is("session") {
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
            return Feed::Continue;
        }
        if is("session_info") {
            match top.get(line, L_NAME).map(json::parse).as_ref() {
                None | Some(Ok(Value::Null)) => self.name = None,
                Some(Ok(Value::String(n))) => {
                    let t = js_trim_escaped(n.as_escaped());
                    self.name = if t.is_empty() {
                        None
                    } else {
                        Some(t.to_owned())
                    };
                }
                _ => return Feed::Fail,
            }
        }
        if !is("message") {
            return Feed::Continue;
        }
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
        let mut text = String::new();
        match content_raw.first() {
            Some(b'"') => match json::parse(content_raw) {
                Ok(Value::String(ref s)) => text.push_str(s.as_escaped()),
                _ => return Feed::Fail,
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
                            json::visit_members_valid(item, |key, r| {
                                block.record(&BLOCK_KEYS, key, r)
                            });
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
                    return Feed::Fail;
                }
            }
            _ => return Feed::Fail,
        }
        if text.is_empty() {
            return Feed::Continue;
        }
        if self.any_text {
            self.all_text.push(' ');
        }
        self.any_text = true;
        self.all_text.push_str(&text);
        if is_user && self.first_message.is_none() {
            self.first_message = Some(text);
        }
        Feed::Continue
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
                None => self.pending.push(json::to_json(v)),
            },
            Value::Null => self.bump(0.0),
            Value::Bool(b) => self.bump(f64::from(u8::from(*b))),
            Value::Number(n) => {
                if n.abs() <= 8.64e15 {
                    self.bump(n.trunc() + 0.0);
                }
            }
            _ => self.pending.push(json::to_json(v)),
        }
    }
}
