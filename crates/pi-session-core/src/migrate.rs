//! Format migrations v1 → v2 → v3, applied to a file's records.
//!
//! v1→v2 gives every record an 8-hex `id` and links it to the previous record (`parentId`), turning
//! `firstKeptEntryIndex` into `firstKeptEntryId`; v2→v3 renames the `hookMessage` role to `custom`.
//! New keys go at the end of each object, as JS assignment puts them. Unlike the reference, lines
//! that do not parse are not dropped from the rewritten file: they stay where they were.

use crate::ids;
use crate::json::{self, JsStr, Value};
use crate::record::Kind;
use crate::session::LoadedFile;

/// The result of migrating a file.
pub struct Migration {
    /// The migrated records' lines, back to back (each followed by `\n`).
    pub text: Vec<u8>,
    /// Ranges of the records in `text` (without newline).
    pub records: Vec<(usize, usize)>,
    /// The whole file to write: migrated records, other lines unchanged, in their original order.
    pub file_bytes: Vec<u8>,
}

/// The header's `version` as the reference reads it (`header?.version ?? 1`), as a JS number
/// comparison would see it.
fn version_of(header: Option<&Value>) -> f64 {
    match header.and_then(|h| h.get("version")) {
        None | Some(Value::Null) => 1.0,
        Some(Value::Number(n)) => *n,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::String(s)) => {
            let t = s.to_string_lossy();
            let t = t.trim();
            if t.is_empty() {
                0.0
            } else {
                t.parse::<f64>().unwrap_or(f64::NAN)
            }
        }
        Some(_) => f64::NAN,
    }
}

/// The `version` of a header line as [`migrate_file`] sees it (NaN when it does not parse, which
/// is never `>= 3`).
pub fn header_version(line: &[u8]) -> f64 {
    match json::parse(line) {
        Ok(v) => version_of(Some(&v)),
        Err(_) => f64::NAN,
    }
}

/// Migrate a list of parsed record values in place; returns whether the reference would consider
/// anything migrated (and so rewrite the file).
pub fn migrate_values(values: &mut [Value]) -> bool {
    let header_idx = values.iter().position(|v| is_type(v, "session"));
    let version = version_of(header_idx.map(|i| &values[i]));
    if version >= 3.0 {
        return false;
    }
    if version < 2.0 {
        v1_to_v2(values);
    }
    if version < 3.0 {
        v2_to_v3(values);
    }
    true
}

fn is_type(v: &Value, t: &str) -> bool {
    matches!(v.get("type"), Some(Value::String(s)) if s.eq_str(t))
}

fn v1_to_v2(values: &mut [Value]) {
    let mut prev: Value = Value::Null;
    for i in 0..values.len() {
        if is_type(&values[i], "session") {
            if let Value::Object(o) = &mut values[i] {
                o.insert(JsStr::from_str("version"), Value::Number(2.0));
            }
            continue;
        }
        let id = Value::String(JsStr::from_str(&ids::entry_id(|_| false)));
        let kept_index = match values[i].get("firstKeptEntryIndex") {
            Some(Value::Number(n)) if is_type(&values[i], "compaction") => Some(*n),
            _ => None,
        };
        // `entries[index]`: only a non-negative integer in range names an element.
        let kept_id = kept_index.and_then(|n| {
            if n >= 0.0 && n.fract() == 0.0 && (n as usize) < values.len() {
                let target = &values[n as usize];
                if matches!(target, Value::Object(_)) && !is_type(target, "session") {
                    return Some(target.get("id").cloned());
                }
            }
            None
        });
        if let Value::Object(o) = &mut values[i] {
            o.insert(JsStr::from_str("id"), id.clone());
            o.insert(JsStr::from_str("parentId"), prev.clone());
            if kept_index.is_some() {
                // `firstKeptEntryId = target.id`: an undefined id leaves no key in the JSON.
                if let Some(Some(kid)) = kept_id {
                    o.insert(JsStr::from_str("firstKeptEntryId"), kid);
                }
                o.remove("firstKeptEntryIndex");
            }
            // Only a record that keeps its id can be a parent: scalar and array records (the
            // reference throws on scalars) must not leave the next entry pointing at nothing.
            prev = id;
        }
    }
}

fn v2_to_v3(values: &mut [Value]) {
    for v in values.iter_mut() {
        if is_type(v, "session") {
            if let Value::Object(o) = v {
                o.insert(JsStr::from_str("version"), Value::Number(3.0));
            }
            continue;
        }
        if is_type(v, "message") {
            if let Value::Object(o) = v {
                if let Some(Value::Object(m)) = o.get_mut("message") {
                    if matches!(m.get("role"), Some(Value::String(r)) if r.eq_str("hookMessage")) {
                        m.insert(
                            JsStr::from_str("role"),
                            Value::String(JsStr::from_str("custom")),
                        );
                    }
                }
            }
        }
    }
}

/// Migrate a loaded file if its version is old. `None` when nothing needs migrating.
pub fn migrate_file(loaded: &LoadedFile) -> Option<Migration> {
    // Only objects can be migrated; the reference would throw on scalar records, we keep them as is.
    let header = loaded
        .records()
        .find(|(_, m)| m.kind == Kind::Header)
        .and_then(|(l, _)| json::parse(l).ok());
    if version_of(header.as_ref()) >= 3.0 {
        return None;
    }
    let mut values: Vec<Value> = loaded
        .records()
        .map(|(l, _)| json::parse(l).unwrap_or(Value::Null))
        .collect();
    // Records leading the header are not the session's: they get no ids, count for no
    // `firstKeptEntryIndex` (the header is index 0 as its writer meant) and keep their bytes.
    let leading = loaded.leading();
    if !migrate_values(&mut values[leading..]) {
        return None;
    }
    let mut text = Vec::new();
    let mut records = Vec::with_capacity(values.len());
    let mut file_bytes = Vec::with_capacity(loaded.text.len() + values.len() * 40);
    let mut next = values.iter();
    for (s, e, meta) in &loaded.lines {
        if let Some(meta) = meta {
            let v = next.next().expect("one value per record");
            let line: std::borrow::Cow<[u8]> = if meta.kind == Kind::Leading {
                std::borrow::Cow::Borrowed(&loaded.text[*s..*e])
            } else {
                std::borrow::Cow::Owned(json::to_json(v).into_bytes())
            };
            let start = text.len();
            text.extend_from_slice(&line);
            records.push((start, text.len()));
            text.push(b'\n');
            file_bytes.extend_from_slice(&line);
        } else {
            file_bytes.extend_from_slice(&loaded.text[*s..*e]);
        }
        file_bytes.push(b'\n');
    }
    Some(Migration {
        text,
        records,
        file_bytes,
    })
}
