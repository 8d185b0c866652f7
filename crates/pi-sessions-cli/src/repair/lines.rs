//! The file's lines as repair sees them: read as readers read them (or dropped, with the reason),
//! and written back, changed lines as `JSON.stringify` writes them and the rest byte for byte.

use pi_session_core::inspect::{self, split_lines, BOM};
use pi_session_core::json::{self, JsStr, Value};
use pi_session_core::record::{self, Key, UNDEFINED};
use pi_session_core::torn::glued_entry;

pub(super) struct Line {
    /// Line number in the original file (0 for an added header).
    pub orig: usize,
    pub raw: Vec<u8>,
    pub value: Value,
    pub changed: bool,
}

impl Line {
    pub fn set(&mut self, key: &str, v: Value) {
        if let Some(o) = self.value.as_object_mut() {
            o.insert(JsStr::from_str(key), v);
            self.changed = true;
        }
    }
}

pub(super) fn is_header(v: &Value) -> bool {
    matches!(v.get("type"), Some(Value::String(t)) if t.eq_str("session"))
}

pub(super) fn key_of(v: Option<&Value>) -> Key {
    match v {
        None => UNDEFINED.into(),
        Some(v) => json::to_json(v).into(),
    }
}

/// The first pass over a file: the records kept, and what was dropped or made plain.
pub(super) struct Read {
    pub lines: Vec<Line>,
    pub dropped: usize,
    pub crlf: usize,
    /// The last line's number, when it is kept and had no newline after it.
    pub missing_newline: Option<usize>,
    /// A header was kept: from here on, an entry glued after a torn record is split off.
    after_header: bool,
}

pub(super) fn read_lines(bytes: &[u8], act: &mut impl FnMut(Option<usize>, String)) -> Read {
    let mut read = Read {
        lines: Vec::new(),
        dropped: 0,
        crlf: 0,
        missing_newline: None,
        after_header: false,
    };
    let ranges = split_lines(bytes);
    let unterminated = !bytes.is_empty() && bytes.last() != Some(&b'\n');
    for (i, &(s, e)) in ranges.iter().enumerate() {
        let n = i + 1;
        let torn = n == ranges.len() && unterminated;
        read_line(&mut read, n, bytes[s..e].to_vec(), torn, act);
    }
    if unterminated && read.lines.iter().any(|l| l.orig == ranges.len()) {
        read.missing_newline = Some(ranges.len());
    }
    read
}

/// Line `n`: kept (made what readers see), or dropped when readers skip it.
fn read_line(
    read: &mut Read,
    n: usize,
    mut raw: Vec<u8>,
    torn: bool,
    act: &mut impl FnMut(Option<usize>, String),
) {
    let mut changed = false;
    if n == 1 && raw.starts_with(BOM) {
        raw.drain(..BOM.len());
        changed = true;
        act(Some(n), "removed the UTF-8 byte order mark".into());
    }
    if raw.iter().all(u8::is_ascii_whitespace) {
        read.dropped += 1;
        act(Some(n), "dropped a blank line".into());
        return;
    }
    if read.after_header {
        // Before the checks below, so that they look at the entry alone (a write cut inside a
        // character leaves invalid UTF-8 in the torn bytes only).
        split_glued(read, n, &mut raw, act);
    }
    if raw.last() == Some(&b'\r') {
        raw.pop();
        read.crlf += 1;
    }
    if std::str::from_utf8(&raw).is_err() {
        raw = String::from_utf8_lossy(&raw).into_owned().into_bytes();
        changed = true;
        act(
            Some(n),
            "replaced invalid UTF-8 with U+FFFD (what readers see)".into(),
        );
    }
    match json::parse(&raw) {
        Err(err) => {
            read.dropped += 1;
            act(
                Some(n),
                if torn {
                    format!(
                        "dropped the torn last line (not valid JSON): {}",
                        inspect::preview(&raw, 60)
                    )
                } else {
                    format!(
                        "dropped a line that is not JSON ({}): {}",
                        err.message,
                        inspect::preview(&raw, 60)
                    )
                },
            );
        }
        Ok(v) if !v.is_truthy() => {
            read.dropped += 1;
            act(
                Some(n),
                format!("dropped `{}` (readers skip it)", inspect::preview(&raw, 20)),
            );
        }
        Ok(v) => {
            read.after_header |= is_header(&v);
            read.lines.push(Line {
                orig: n,
                raw,
                value: v,
                changed,
            })
        }
    }
}

/// A line of torn bytes with a whole entry glued after them: the torn bytes go, as a line that is
/// not JSON goes, and `raw` keeps the entry, its bytes as they are. Both are reported.
fn split_glued(
    read: &mut Read,
    n: usize,
    raw: &mut Vec<u8>,
    act: &mut impl FnMut(Option<usize>, String),
) {
    if json::validate(raw) {
        return;
    }
    let Some((at, _)) = glued_entry(raw, record::read_meta) else {
        return;
    };
    read.dropped += 1;
    act(
        Some(n),
        format!(
            "split a torn record from the entry glued after it: dropped its {at} bytes (not JSON): {}",
            inspect::preview(&raw[..at], 60)
        ),
    );
    act(Some(n), "kept the entry glued after the torn record".into());
    raw.drain(..at);
}

/// The repaired file, and how many of its records were written changed.
pub(super) fn write_lines(lines: &[Line], capacity: usize) -> (Vec<u8>, usize) {
    let mut out = Vec::with_capacity(capacity);
    let mut changed = 0;
    for l in lines {
        if l.changed {
            changed += 1;
            out.extend_from_slice(json::to_json(&l.value).as_bytes());
        } else {
            out.extend_from_slice(&l.raw);
        }
        out.push(b'\n');
    }
    (out, changed)
}
