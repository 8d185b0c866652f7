//! A health check of one session file's bytes: what a careful reader would complain about, with
//! line numbers. Nothing here changes a file; `pi-sessions verify` prints these findings and
//! `pi-sessions repair` fixes what can be fixed without losing a parsed record.
//!
//! Lines are counted from 1 and split on `\n` only, as `loadEntriesFromFile` splits them. Ids are
//! compared as record keys (the canonical JSON of the value), which is how the reference's `Map`
//! compares them.
//!
//! [`inspect`] here reads the lines (blank, torn, malformed, BOM, CRLF, a torn record with an entry
//! glued after it: see [`crate::torn`]); `records` checks the header and the shape of each entry,
//! `links` the id index, the parent links and their cycles.

use crate::json::{self, Value};

mod links;
mod records;

pub use links::find_cycles;
use records::check_records;

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

impl Finding {
    /// A finding about `line` (1-based), or about the whole file (`None`).
    pub fn new(
        severity: Severity,
        code: &'static str,
        line: impl Into<Option<usize>>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity,
            code,
            line: line.into(),
            message: message.into(),
        }
    }

    /// A [`Severity::Error`] finding (see [`Finding::new`]).
    pub fn error(
        code: &'static str,
        line: impl Into<Option<usize>>,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(Severity::Error, code, line, message)
    }

    /// A [`Severity::Warning`] finding (see [`Finding::new`]).
    pub fn warning(
        code: &'static str,
        line: impl Into<Option<usize>>,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(Severity::Warning, code, line, message)
    }

    /// A [`Severity::Note`] finding (see [`Finding::new`]).
    pub fn note(
        code: &'static str,
        line: impl Into<Option<usize>>,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(Severity::Note, code, line, message)
    }
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

/// Inspect a file's bytes.
pub fn inspect(bytes: &[u8]) -> Inspection {
    let mut out = Inspection::default();
    if bytes.is_empty() {
        out.findings = vec![Finding::warning(
            "empty-file",
            None,
            "empty file: no session header (pi writes one when it opens the file)",
        )];
        return out;
    }
    let ranges = split_lines(bytes);
    out.lines = ranges.len();
    let unterminated = bytes.last() != Some(&b'\n');
    let mut read = Read::default();
    for (i, &(s, e)) in ranges.iter().enumerate() {
        let n = i + 1;
        read.line(n, &bytes[s..e], n == ranges.len() && unterminated);
    }
    let Read {
        mut findings,
        recs,
        crlf,
        ..
    } = read;
    if !crlf.is_empty() {
        findings.push(Finding::warning(
            "crlf",
            crlf[0],
            format!(
                "{} line(s) end with CRLF (pi writes LF; the CR is harmless JSON whitespace)",
                crlf.len()
            ),
        ));
    }
    out.records = recs.len();
    check_records(&recs, &mut findings, &mut out);
    findings.sort_by_key(|x| (x.line.unwrap_or(0), x.severity));
    out.findings = findings;
    out
}

/// The line pass: what each line is to a reader, and the records they keep.
#[derive(Default)]
struct Read {
    findings: Vec<Finding>,
    recs: Vec<Rec>,
    /// Lines ending in CRLF, reported once for the file.
    crlf: Vec<usize>,
    /// A header was kept: from here on, an entry glued after a torn record is read.
    after_header: bool,
}

impl Read {
    /// Line `n`; `torn_tail` when it is the last and has no newline after it.
    fn line(&mut self, n: usize, mut line: &[u8], torn_tail: bool) {
        let f = &mut self.findings;
        if n == 1 && line.starts_with(BOM) {
            line = &line[BOM.len()..];
            let parses = json::parse(line).is_ok();
            f.push(Finding::error(
                "bom",
                1,
                if parses {
                    "the line starts with a UTF-8 byte order mark: readers cannot parse it, so they reject the file"
                } else {
                    "the line starts with a UTF-8 byte order mark"
                },
            ));
            if parses {
                // Analyse the rest as if the mark were gone, so one defect gives one finding.
                if let Ok(v) = json::parse(line) {
                    self.after_header |= records::is_header(&v);
                    self.recs.push(Rec { line: n, value: v });
                }
                return;
            }
        }
        if line.iter().all(|c| c.is_ascii_whitespace()) {
            f.push(Finding::warning(
                "blank-line",
                n,
                "blank line (readers skip it)",
            ));
            return;
        }
        if self.after_header && !json::validate(line) {
            // The checks below look at the entry alone: the torn bytes are reported as such.
            if let Some((at, _)) = crate::torn::glued_entry(line, crate::record::read_meta) {
                f.push(torn_record(n, &line[..at]));
                line = &line[at..];
            }
        }
        if line.last() == Some(&b'\r') {
            self.crlf.push(n);
        }
        if std::str::from_utf8(line).is_err() {
            f.push(Finding::warning(
                "invalid-utf8",
                n,
                "invalid UTF-8 (readers see U+FFFD in its place)",
            ));
        }
        match json::parse(line) {
            Err(err) => f.push(unparsed(n, line, &err.message, torn_tail)),
            Ok(v) if !v.is_truthy() => f.push(Finding::warning(
                "falsy-value",
                n,
                format!("the line is `{}` (readers skip it)", preview(line, 20)),
            )),
            Ok(v) => {
                if !matches!(v, Value::Object(_)) {
                    f.push(Finding::warning(
                        "non-object",
                        n,
                        format!(
                            "{} (`{}`), not an entry object: readers keep it as an entry without id or type",
                            kind_name(&v),
                            preview(line, 30)
                        ),
                    ));
                }
                if torn_tail {
                    f.push(no_trailing_newline(n));
                }
                self.after_header |= records::is_header(&v);
                self.recs.push(Rec { line: n, value: v });
            }
        }
    }
}

fn no_trailing_newline(n: usize) -> Finding {
    Finding::warning(
        "no-trailing-newline",
        n,
        "the last line has no newline (pi appends one when it opens the file)",
    )
}

/// The torn bytes before an entry glued after them.
fn torn_record(n: usize, torn: &[u8]) -> Finding {
    Finding::error(
        "torn-record",
        n,
        format!(
            "a torn record ({} bytes of an interrupted write, not JSON) with a whole entry glued after it on the same line: this library reads the entry, the reference skips the whole line (`repair` splits it): {}",
            torn.len(),
            preview(torn, 40)
        ),
    )
}

/// A line that is not JSON: torn when it is the last one without a newline, else malformed.
fn unparsed(n: usize, line: &[u8], err: &str, torn_tail: bool) -> Finding {
    if torn_tail {
        return Finding::error(
            "torn-last-line",
            n,
            format!(
                "torn last line (an interrupted write: no newline and not valid JSON, readers skip it): {}",
                preview(line, 60)
            ),
        );
    }
    Finding::error(
        "malformed-line",
        n,
        if line.contains(&0) {
            format!(
                "NUL bytes, not JSON (readers skip the line): {}",
                preview(line, 40)
            )
        } else {
            format!(
                "not valid JSON ({}; readers skip the line): {}",
                err,
                preview(line, 60)
            )
        },
    )
}
