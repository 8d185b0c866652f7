//! A health check of one session file's bytes: what a careful reader would complain about, with
//! line numbers. Nothing here changes a file; `pi-sessions verify` prints these findings and
//! `pi-sessions repair` fixes what can be fixed without losing a parsed record.
//!
//! Lines are counted from 1 and split on `\n` only, as `loadEntriesFromFile` splits them. Ids are
//! compared as record keys (the canonical JSON of the value), which is how the reference's `Map`
//! compares them.

use std::collections::HashMap;

use crate::json::{self, Value};
use crate::record::{self, Key, UNDEFINED};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Readers lose, hide or reject data, or loop.
    Error,
    /// Readers cope, but pi never writes this.
    Warning,
    /// Worth knowing, nothing wrong (an old format version is migrated on open).
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One thing found in a file. `code` is stable (scripts match on it), `message` is for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    pub code: &'static str,
    /// 1-based physical line, when the finding is about one line.
    pub line: Option<usize>,
    pub message: String,
}

/// Everything learned about a file.
#[derive(Debug, Clone, Default)]
pub struct Inspection {
    /// Sorted by line (file-level findings first), errors before warnings on one line.
    pub findings: Vec<Finding>,
    /// Physical lines (a final fragment without newline counts).
    pub lines: usize,
    /// Lines readers keep (parsed, truthy).
    pub records: usize,
    /// Records after the header that are objects.
    pub entries: usize,
    /// The header's `version` (1 when absent), if there is a header.
    pub version: Option<f64>,
}

impl Inspection {
    /// Errors and warnings (notes do not count).
    pub fn problems(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity != Severity::Note)
            .count()
    }
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
}

/// The UTF-8 byte order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A short, printable preview of raw line bytes.
pub fn preview(bytes: &[u8], max_chars: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == max_chars {
            out.push('…');
            break;
        }
        match c {
            '\0' => out.push_str("\\0"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Physical lines as (start, end) byte ranges, without their `\n`.
pub fn split_lines(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', bytes) {
        out.push((start, nl));
        start = nl + 1;
    }
    if start < bytes.len() {
        out.push((start, bytes.len()));
    }
    out
}

struct Rec {
    line: usize,
    value: Value,
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn key_of(v: Option<&Value>) -> Key {
    match v {
        None => UNDEFINED.into(),
        Some(v) => json::to_json(v).into(),
    }
}

fn shown(key: &str) -> String {
    if key == UNDEFINED {
        "undefined".into()
    } else {
        key.to_owned()
    }
}

/// Inspect a file's bytes.
pub fn inspect(bytes: &[u8]) -> Inspection {
    let mut out = Inspection::default();
    let mut f = Vec::new();
    if bytes.is_empty() {
        f.push(Finding {
            severity: Severity::Warning,
            code: "empty-file",
            line: None,
            message: "empty file: no session header (pi writes one when it opens the file)".into(),
        });
        out.findings = f;
        return out;
    }
    let ranges = split_lines(bytes);
    out.lines = ranges.len();
    let unterminated = bytes.last() != Some(&b'\n');
    let mut recs: Vec<Rec> = Vec::new();
    let mut crlf = Vec::new();
    for (i, &(s, e)) in ranges.iter().enumerate() {
        let n = i + 1;
        let mut line = &bytes[s..e];
        if n == 1 && line.starts_with(BOM) {
            line = &line[BOM.len()..];
            let parses = json::parse(line).is_ok();
            f.push(Finding {
                severity: Severity::Error,
                code: "bom",
                line: Some(1),
                message: if parses {
                    "the line starts with a UTF-8 byte order mark: readers cannot parse it, so they reject the file".into()
                } else {
                    "the line starts with a UTF-8 byte order mark".into()
                },
            });
            if parses {
                // Analyse the rest as if the mark were gone, so one defect gives one finding.
                if let Ok(v) = json::parse(line) {
                    recs.push(Rec { line: n, value: v });
                }
                continue;
            }
        }
        if line.iter().all(|c| c.is_ascii_whitespace()) {
            f.push(Finding {
                severity: Severity::Warning,
                code: "blank-line",
                line: Some(n),
                message: "blank line (readers skip it)".into(),
            });
            continue;
        }
        if line.last() == Some(&b'\r') {
            crlf.push(n);
        }
        if std::str::from_utf8(line).is_err() {
            f.push(Finding {
                severity: Severity::Warning,
                code: "invalid-utf8",
                line: Some(n),
                message: "invalid UTF-8 (readers see U+FFFD in its place)".into(),
            });
        }
        match json::parse(line) {
            Err(err) => {
                let last = n == ranges.len() && unterminated;
                let nul = line.contains(&0);
                f.push(if last {
                    Finding {
                        severity: Severity::Error,
                        code: "torn-last-line",
                        line: Some(n),
                        message: format!(
                            "torn last line (an interrupted write: no newline and not valid JSON, readers skip it): {}",
                            preview(line, 60)
                        ),
                    }
                } else {
                    Finding {
                        severity: Severity::Error,
                        code: "malformed-line",
                        line: Some(n),
                        message: if nul {
                            format!("NUL bytes, not JSON (readers skip the line): {}", preview(line, 40))
                        } else {
                            format!(
                                "not valid JSON ({}; readers skip the line): {}",
                                err.message,
                                preview(line, 60)
                            )
                        },
                    }
                });
            }
            Ok(v) if !v.is_truthy() => f.push(Finding {
                severity: Severity::Warning,
                code: "falsy-value",
                line: Some(n),
                message: format!("the line is `{}` (readers skip it)", preview(line, 20)),
            }),
            Ok(v) => {
                if !matches!(v, Value::Object(_)) {
                    f.push(Finding {
                        severity: Severity::Warning,
                        code: "non-object",
                        line: Some(n),
                        message: format!(
                            "{} (`{}`), not an entry object: readers keep it as an entry without id or type",
                            kind_name(&v),
                            preview(line, 30)
                        ),
                    });
                }
                if n == ranges.len() && unterminated {
                    f.push(Finding {
                        severity: Severity::Warning,
                        code: "no-trailing-newline",
                        line: Some(n),
                        message:
                            "the last line has no newline (pi appends one when it opens the file)"
                                .into(),
                    });
                }
                recs.push(Rec { line: n, value: v });
            }
        }
    }
    if !crlf.is_empty() {
        f.push(Finding {
            severity: Severity::Warning,
            code: "crlf",
            line: Some(crlf[0]),
            message: format!(
                "{} line(s) end with CRLF (pi writes LF; the CR is harmless JSON whitespace)",
                crlf.len()
            ),
        });
    }
    out.records = recs.len();
    check_records(&recs, &mut f, &mut out);
    f.sort_by_key(|x| (x.line.unwrap_or(0), x.severity));
    out.findings = f;
    out
}

fn is_header(v: &Value) -> bool {
    matches!(v.get("type"), Some(Value::String(t)) if t.eq_str("session"))
}

fn check_records(recs: &[Rec], f: &mut Vec<Finding>, out: &mut Inspection) {
    let Some(first) = recs.first() else {
        f.push(Finding {
            severity: Severity::Error,
            code: "no-header",
            line: None,
            message: "no session header: the file holds no records, readers reject it".into(),
        });
        return;
    };
    let header_at = recs.iter().position(|r| is_header(&r.value));
    match header_at {
        None => f.push(Finding {
            severity: Severity::Error,
            code: "no-header",
            line: Some(first.line),
            message: "no session header anywhere: readers reject the file".into(),
        }),
        Some(h) if h > 0 && recs[..h].iter().all(|r| crate::listing::may_lead(&r.value)) => {
            f.push(Finding {
                severity: Severity::Warning,
                code: "records-before-header",
                line: Some(first.line),
                message: format!(
                    "{h} record(s) without id or parentId before the session header (line {}), as oh-my-pi writes its title: this library reads the session, the reference rejects the file",
                    recs[h].line
                ),
            })
        }
        Some(h) if h > 0 => f.push(Finding {
            severity: Severity::Error,
            code: "header-not-first",
            line: Some(first.line),
            message: format!(
                "the first record is not the session header (that is on line {}): readers reject the file",
                recs[h].line
            ),
        }),
        Some(_) => {}
    }
    let Some(h) = header_at else { return };
    let leading = recs[..h].iter().all(|r| crate::listing::may_lead(&r.value));
    let header = &recs[h];
    if !matches!(header.value.get("id"), Some(Value::String(_))) {
        f.push(Finding {
            severity: Severity::Error,
            code: "header-id",
            line: Some(header.line),
            message: format!(
                "the header id is {}, not a string: readers reject the file",
                header.value.get("id").map(kind_name).unwrap_or("missing")
            ),
        });
    }
    match header.value.get("timestamp") {
        Some(Value::String(t)) if !t.is_empty() => {}
        _ => f.push(Finding {
            severity: Severity::Warning,
            code: "header-timestamp",
            line: Some(header.line),
            message: "the header has no timestamp string".into(),
        }),
    }
    if !matches!(header.value.get("cwd"), Some(Value::String(_))) {
        f.push(Finding {
            severity: Severity::Warning,
            code: "header-cwd",
            line: Some(header.line),
            message: "the header has no cwd string (per-project listings cannot place it)".into(),
        });
    }
    let version = match header.value.get("version") {
        Some(Value::Number(v)) => *v,
        None => 1.0,
        Some(_) => f64::NAN,
    };
    out.version = Some(version);
    if version.is_nan() {
        f.push(Finding {
            severity: Severity::Warning,
            code: "header-version",
            line: Some(header.line),
            message: "the header version is not a number".into(),
        });
    } else if version < 3.0 {
        f.push(Finding {
            severity: Severity::Note,
            code: "old-version",
            line: Some(header.line),
            message: format!(
                "format version {version}: pi migrates the file to v3 when it opens it"
            ),
        });
    } else if version > 3.0 {
        f.push(Finding {
            severity: Severity::Note,
            code: "future-version",
            line: Some(header.line),
            message: format!("format version {version} is newer than this tool knows (3)"),
        });
    }
    for r in &recs[h + 1..] {
        if is_header(&r.value) {
            f.push(Finding {
                severity: Severity::Warning,
                code: "extra-header",
                line: Some(r.line),
                message: "another session header: readers ignore it".into(),
            });
        }
    }
    let entries: Vec<&Rec> = recs
        .iter()
        .enumerate()
        // Records leading the header are no entries.
        .filter(|(i, r)| {
            *i != h
                && !(leading && *i < h)
                && matches!(r.value, Value::Object(_))
                && !is_header(&r.value)
        })
        .map(|(_, r)| r)
        .collect();
    out.entries = entries.len();
    for r in &entries {
        check_entry_shape(r, f);
    }
    // v1 files have no ids yet: migration assigns them, so links are checked from v2 on.
    if version >= 2.0 || version.is_nan() {
        check_links(&entries, f);
    }
}

fn check_entry_shape(r: &Rec, f: &mut Vec<Finding>) {
    let ty = match r.value.get("type") {
        Some(Value::String(t)) => t.to_string_lossy(),
        _ => {
            f.push(Finding {
                severity: Severity::Warning,
                code: "missing-type",
                line: Some(r.line),
                message: "the entry has no type string".into(),
            });
            return;
        }
    };
    if ty != "message" {
        return;
    }
    let Some(msg) = r.value.get("message") else {
        f.push(Finding {
            severity: Severity::Error,
            code: "bad-message",
            line: Some(r.line),
            message: "a message entry without `message`: readers throw on it (pi's session list skips the file)".into(),
        });
        return;
    };
    let Value::Object(m) = msg else {
        if msg.is_null() {
            f.push(Finding {
                severity: Severity::Error,
                code: "bad-message",
                line: Some(r.line),
                message:
                    "`message` is null: readers throw on it (pi's session list skips the file)"
                        .into(),
            });
        } else {
            f.push(Finding {
                severity: Severity::Warning,
                code: "bad-message",
                line: Some(r.line),
                message: format!("`message` is {}, not an object", kind_name(msg)),
            });
        }
        return;
    };
    let role = match m.get("role") {
        Some(Value::String(s)) => s.to_string_lossy(),
        _ => {
            f.push(Finding {
                severity: Severity::Warning,
                code: "missing-role",
                line: Some(r.line),
                message: "the message has no role string".into(),
            });
            return;
        }
    };
    if role != "user" && role != "assistant" {
        return;
    }
    let bad = match m.get("content") {
        None | Some(Value::String(_)) => false,
        Some(Value::Array(blocks)) => blocks.iter().any(Value::is_null),
        Some(_) => true,
    };
    if bad {
        f.push(Finding {
            severity: Severity::Error,
            code: "bad-content",
            line: Some(r.line),
            message: format!(
                "{role} message content is neither a string nor an array of blocks: pi's session list skips the whole file"
            ),
        });
    }
}

fn check_links(entries: &[&Rec], f: &mut Vec<Finding>) {
    // The id index as the reference's Map builds it: the last record with an id wins.
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut first_line: HashMap<Key, usize> = HashMap::new();
    let ids: Vec<Key> = entries.iter().map(|r| key_of(r.value.get("id"))).collect();
    for (i, (r, id)) in entries.iter().zip(&ids).enumerate() {
        if !matches!(r.value.get("id"), Some(Value::String(_))) {
            f.push(Finding {
                severity: Severity::Error,
                code: "missing-id",
                line: Some(r.line),
                message: format!("the entry id is {}, not a string", shown(id)),
            });
        }
        if let Some(&prev) = first_line.get(id) {
            f.push(Finding {
                severity: Severity::Error,
                code: "duplicate-id",
                line: Some(r.line),
                message: format!(
                    "duplicate id {} (first on line {prev}): readers index only the last record with it",
                    shown(id)
                ),
            });
        } else {
            first_line.insert(id.clone(), r.line);
        }
        index.insert(id.clone(), i);
    }
    let exists = |k: &str| index.contains_key(k);
    let mut parent_of: Vec<Option<usize>> = vec![None; entries.len()];
    for (i, r) in entries.iter().enumerate() {
        let parent = key_of(r.value.get("parentId"));
        if &*parent == UNDEFINED {
            f.push(Finding {
                severity: Severity::Warning,
                code: "missing-parent-id",
                line: Some(r.line),
                message: "the entry has no parentId (readers make it a root)".into(),
            });
        } else if &*parent != "null" {
            if !record::key_truthy(&parent) {
                // A falsy parentId ends the walk like null does.
            } else if let Some(&p) = index.get(&parent) {
                parent_of[i] = Some(p);
            } else {
                f.push(Finding {
                    severity: Severity::Error,
                    code: "dangling-parent",
                    line: Some(r.line),
                    message: format!(
                        "parentId {parent} is not an entry of this file: readers start a separate tree here"
                    ),
                });
            }
        }
        let ty = r.value.get("type");
        let is = |t: &str| matches!(ty, Some(Value::String(s)) if s.eq_str(t));
        if is("compaction") {
            let fk = key_of(r.value.get("firstKeptEntryId"));
            if record::key_truthy(&fk) && fk != ids[i] && !exists(&fk) {
                f.push(Finding {
                    severity: Severity::Warning,
                    code: "dangling-first-kept",
                    line: Some(r.line),
                    message: format!(
                        "firstKeptEntryId {fk} is not an entry of this file: nothing before this compaction stays in context"
                    ),
                });
            }
        }
        if is("label") || is("context_edit") {
            let t = key_of(r.value.get("targetId"));
            if !exists(&t) {
                f.push(Finding {
                    severity: Severity::Warning,
                    code: "dangling-target",
                    line: Some(r.line),
                    message: format!("targetId {} is not an entry of this file", shown(&t)),
                });
            }
        }
        if is("branch_summary") {
            let from = key_of(r.value.get("fromId"));
            if record::key_truthy(&from) && &*from != "\"root\"" && !exists(&from) {
                f.push(Finding {
                    severity: Severity::Warning,
                    code: "dangling-from",
                    line: Some(r.line),
                    message: format!("fromId {from} is not an entry of this file"),
                });
            }
        }
    }
    for cycle in find_cycles(&parent_of, &index, &ids) {
        let first = *cycle.iter().min().expect("cycles are non-empty");
        let names: Vec<String> = cycle.iter().map(|&i| shown(&ids[i])).collect();
        f.push(Finding {
            severity: Severity::Error,
            code: "cycle",
            line: Some(entries[first].line),
            message: if cycle.len() == 1 {
                format!("entry {} is its own parent: a parentId cycle", names[0])
            } else {
                format!(
                    "parentId cycle {} -> {}: walks to the root never end (pi-session-native stops at the repeat)",
                    names.join(" -> "),
                    names[0]
                )
            },
        });
    }
}

/// Cycles among the indexed entries (the ones the id index resolves to), each listed once in walk
/// order starting from its first member in file order. `parent_of[i]` is the index position of
/// entry `i`'s parent.
pub fn find_cycles(
    parent_of: &[Option<usize>],
    index: &HashMap<Key, usize>,
    ids: &[Key],
) -> Vec<Vec<usize>> {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let n = parent_of.len();
    let indexed = |i: usize| index.get(&ids[i]) == Some(&i);
    let mut state = vec![NEW; n];
    let mut cycles = Vec::new();
    for start in 0..n {
        if state[start] != NEW || !indexed(start) {
            continue;
        }
        let mut path = Vec::new();
        let mut cur = Some(start);
        while let Some(c) = cur {
            match state[c] {
                NEW => {
                    state[c] = ON_PATH;
                    path.push(c);
                    cur = parent_of[c];
                }
                ON_PATH => {
                    let at = path.iter().position(|&p| p == c).expect("on the path");
                    let mut cycle: Vec<usize> = path[at..].to_vec();
                    let min_at = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, &v)| v)
                        .map(|(k, _)| k)
                        .unwrap_or(0);
                    cycle.rotate_left(min_at);
                    cycles.push(cycle);
                    break;
                }
                _ => break,
            }
        }
        for p in path {
            state[p] = DONE;
        }
    }
    cycles.sort();
    cycles
}
