//! Format migrations v1 → v2 → v3, applied to a file's records.
//!
//! v1→v2 gives every record an 8-hex `id` and links it to the previous record (`parentId`), turning
//! `firstKeptEntryIndex` into `firstKeptEntryId`; v2→v3 renames the `hookMessage` role to `custom`.
//! New keys go at the end of each object, as JS assignment puts them. Unlike the reference, lines
//! that do not parse are not dropped from the rewritten file: they stay where they were.

use super::LoadedFile;
use crate::ids;
use crate::json::{self, JsStr, Value};
use crate::record::Kind;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::read_meta;

    fn migrated(text: &str) -> (Vec<Value>, Vec<u8>) {
        let loaded = LoadedFile::parse(text.as_bytes().to_vec());
        let m = migrate_file(&loaded).expect("an old version migrates");
        let values = m
            .records
            .iter()
            .map(|&(s, e)| json::parse(&m.text[s..e]).unwrap())
            .collect();
        (values, m.file_bytes)
    }

    fn s(v: &Value, key: &str) -> Option<String> {
        match v.get(key) {
            Some(Value::String(x)) => Some(x.to_string_lossy()),
            _ => None,
        }
    }

    #[test]
    fn a_v1_file_gets_ids_chained_by_parent_id_and_becomes_v3() {
        let text = concat!(
            r#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","message":{"role":"user","content":"hi"}}"#,
            "\n",
            r#"{"type":"message","message":{"role":"hookMessage","content":"x"}}"#,
            "\n",
            r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":2}"#,
            "\n",
        );
        let (v, _) = migrated(text);
        assert!(matches!(v[0].get("version"), Some(Value::Number(n)) if *n == 3.0));
        let ids: Vec<String> = v[1..].iter().map(|e| s(e, "id").unwrap()).collect();
        assert!(ids.iter().all(|id| id.len() == 8), "{ids:?}");
        assert!(matches!(v[1].get("parentId"), Some(Value::Null)));
        assert_eq!(s(&v[2], "parentId").as_deref(), Some(&*ids[0]));
        assert_eq!(s(&v[3], "parentId").as_deref(), Some(&*ids[1]));
        // `firstKeptEntryIndex` 2 names the second message (the header is index 0).
        assert_eq!(s(&v[3], "firstKeptEntryId").as_deref(), Some(&*ids[1]));
        assert!(v[3].get("firstKeptEntryIndex").is_none());
        let role = v[2].get("message").and_then(|m| m.get("role"));
        assert!(matches!(role, Some(Value::String(r)) if r.eq_str("custom")));
    }

    #[test]
    fn a_v2_file_only_renames_the_hook_message_role() {
        let text = concat!(
            r#"{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"message":{"role":"hookMessage"}}"#,
            "\n",
        );
        let (v, file) = migrated(text);
        assert_eq!(s(&v[1], "id").as_deref(), Some("a1"));
        let expected = concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"message":{"role":"custom"}}"#,
            "\n",
        );
        assert_eq!(String::from_utf8(file).unwrap(), expected);
    }

    #[test]
    fn lines_that_do_not_parse_stay_where_they_were_in_the_rewritten_file() {
        let text = "{\"type\":\"session\",\"version\":2,\"id\":\"s\"}\n{broken\n{\"type\":\"custom\",\"id\":\"c\",\"parentId\":null}\n";
        let (_, file) = migrated(text);
        let lines: Vec<&str> = std::str::from_utf8(&file).unwrap().lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1], "{broken");
        assert!(read_meta(lines[2].as_bytes()).is_some());
    }

    #[test]
    fn a_current_file_needs_no_migration() {
        let text = "{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n{\"type\":\"custom\",\"id\":\"c\",\"parentId\":null}\n";
        assert!(migrate_file(&LoadedFile::parse(text.as_bytes().to_vec())).is_none());
        assert_eq!(
            header_version(b"{\"type\":\"session\",\"version\":\"2\"}"),
            2.0
        );
        assert!(header_version(b"{not json").is_nan());
    }
}
