//! The checks of the parsed records: the session header (where it is, its id, timestamp, cwd and
//! version) and the shape of each entry (type, message, role, content).

use super::links::check_links;
use super::{kind_name, Finding, Inspection, Rec};
use crate::json::Value;

pub(super) fn is_header(v: &Value) -> bool {
    matches!(v.get("type"), Some(Value::String(t)) if t.eq_str("session"))
}

pub(super) fn check_records(recs: &[Rec], f: &mut Vec<Finding>, out: &mut Inspection) {
    let Some(h) = find_header(recs, f) else {
        return;
    };
    let leading = recs[..h].iter().all(|r| crate::listing::may_lead(&r.value));
    let header = &recs[h];
    check_header_fields(header, f);
    let version = header_version(header, f);
    out.version = Some(version);
    for r in &recs[h + 1..] {
        if is_header(&r.value) {
            f.push(Finding::warning(
                "extra-header",
                r.line,
                "another session header: readers ignore it",
            ));
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

/// Where the header is, with a finding when it is missing or not first.
fn find_header(recs: &[Rec], f: &mut Vec<Finding>) -> Option<usize> {
    let Some(first) = recs.first() else {
        f.push(Finding::error(
            "no-header",
            None,
            "no session header: the file holds no records, readers reject it",
        ));
        return None;
    };
    let header_at = recs.iter().position(|r| is_header(&r.value));
    match header_at {
        None => f.push(Finding::error(
            "no-header",
            first.line,
            "no session header anywhere: readers reject the file",
        )),
        Some(h) if h > 0 && recs[..h].iter().all(|r| crate::listing::may_lead(&r.value)) => {
            f.push(Finding::warning(
                "records-before-header",
                first.line,
                format!(
                    "{h} record(s) without id or parentId before the session header (line {}), as oh-my-pi writes its title: this library reads the session, the reference rejects the file",
                    recs[h].line
                ),
            ))
        }
        Some(h) if h > 0 => f.push(Finding::error(
            "header-not-first",
            first.line,
            format!(
                "the first record is not the session header (that is on line {}): readers reject the file",
                recs[h].line
            ),
        )),
        Some(_) => {}
    }
    header_at
}

/// The header's id, timestamp and cwd.
fn check_header_fields(header: &Rec, f: &mut Vec<Finding>) {
    if !matches!(header.value.get("id"), Some(Value::String(_))) {
        f.push(Finding::error(
            "header-id",
            header.line,
            format!(
                "the header id is {}, not a string: readers reject the file",
                header.value.get("id").map(kind_name).unwrap_or("missing")
            ),
        ));
    }
    match header.value.get("timestamp") {
        Some(Value::String(t)) if !t.is_empty() => {}
        _ => f.push(Finding::warning(
            "header-timestamp",
            header.line,
            "the header has no timestamp string",
        )),
    }
    if !matches!(header.value.get("cwd"), Some(Value::String(_))) {
        f.push(Finding::warning(
            "header-cwd",
            header.line,
            "the header has no cwd string (per-project listings cannot place it)",
        ));
    }
}

/// The header's format version (1 when absent, NaN when not a number), with a note when it is
/// not the current one.
fn header_version(header: &Rec, f: &mut Vec<Finding>) -> f64 {
    let version = match header.value.get("version") {
        Some(Value::Number(v)) => *v,
        None => 1.0,
        Some(_) => f64::NAN,
    };
    if version.is_nan() {
        f.push(Finding::warning(
            "header-version",
            header.line,
            "the header version is not a number",
        ));
    } else if version < 3.0 {
        f.push(Finding::note(
            "old-version",
            header.line,
            format!("format version {version}: pi migrates the file to v3 when it opens it"),
        ));
    } else if version > 3.0 {
        f.push(Finding::note(
            "future-version",
            header.line,
            format!("format version {version} is newer than this tool knows (3)"),
        ));
    }
    version
}

fn check_entry_shape(r: &Rec, f: &mut Vec<Finding>) {
    let ty = match r.value.get("type") {
        Some(Value::String(t)) => t.to_string_lossy(),
        _ => {
            f.push(Finding::warning(
                "missing-type",
                r.line,
                "the entry has no type string",
            ));
            return;
        }
    };
    if ty != "message" {
        return;
    }
    let Some(msg) = r.value.get("message") else {
        f.push(Finding::error(
            "bad-message",
            r.line,
            "a message entry without `message`: readers throw on it (pi's session list skips the file)",
        ));
        return;
    };
    let Value::Object(m) = msg else {
        if msg.is_null() {
            f.push(Finding::error(
                "bad-message",
                r.line,
                "`message` is null: readers throw on it (pi's session list skips the file)",
            ));
        } else {
            f.push(Finding::warning(
                "bad-message",
                r.line,
                format!("`message` is {}, not an object", kind_name(msg)),
            ));
        }
        return;
    };
    let role = match m.get("role") {
        Some(Value::String(s)) => s.to_string_lossy(),
        _ => {
            f.push(Finding::warning(
                "missing-role",
                r.line,
                "the message has no role string",
            ));
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
        f.push(Finding::error(
            "bad-content",
            r.line,
            format!(
                "{role} message content is neither a string nor an array of blocks: pi's session list skips the whole file"
            ),
        ));
    }
}
