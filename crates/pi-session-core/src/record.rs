//! What the store needs to know about one JSONL line, read without building the entry.
//!
//! Values that JS code compares with `===` or uses as Map keys (ids, parent ids, targets) are kept
//! as *keys*: the canonical JSON text of the value (`"abc"` with its quotes, `5`, `null`), or
//! [`UNDEFINED`] when the property is absent. Two JS primitives are `===` (and the same Map key)
//! exactly when their keys are byte-equal, which lets the index reproduce the reference's Map
//! semantics even for hand-edited files with numeric or missing ids.

use crate::json::{self, JsStr, Value};
use crate::timefmt;

/// The key of an absent property (`undefined` in JS). Not valid JSON, so it never collides.
pub const UNDEFINED: &str = "undefined";

pub type Key = Box<str>;

/// The `type` of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Header,
    Message,
    ThinkingLevelChange,
    ModelChange,
    Usage,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
    ContextEdit,
    /// An object with another (or no) `type`: kept and written back untouched.
    Other,
    /// A truthy JSON value that is not an object (`5`, `"s"`, `[]`, `true`): the reference keeps those.
    NonObject,
}

/// `message.role` of a message record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    System,
    /// Any other string role (`custom`, `bashExecution`, `hookMessage`, ...), canonical text.
    Other(Box<str>),
    /// `role` missing or not a string.
    Missing,
}

impl Role {
    pub fn is_conversation(&self) -> bool {
        matches!(self, Role::User | Role::Assistant)
    }
}

/// Everything the structural code reads from a record.
#[derive(Debug, Clone)]
pub struct Meta {
    pub kind: Kind,
    pub id: Key,
    pub parent: Key,
    /// For messages; `Role::Missing` for every other kind.
    pub role: Role,
    /// `message` is an object (readers of the reference throw on other values).
    pub message_is_object: bool,
    /// compaction: `firstKeptEntryId`.
    pub first_kept: Key,
    /// compaction: `retainedTail` is an array (the seed's self-contained checkpoint).
    pub retained_tail: bool,
    /// label / context_edit: `targetId`.
    pub target: Key,
    /// label: `label` is truthy (set) rather than falsy (clear).
    pub label_truthy: bool,
    /// header: `id` is a string (what makes a first record a valid header).
    pub header_id_is_string: bool,
    /// `timestamp` in ms when it is a strict ISO string, NaN otherwise (JS decides then).
    pub ts_ms: f64,
}

impl Meta {
    fn empty(kind: Kind) -> Meta {
        Meta {
            kind,
            id: UNDEFINED.into(),
            parent: UNDEFINED.into(),
            role: Role::Missing,
            message_is_object: false,
            first_kept: UNDEFINED.into(),
            retained_tail: false,
            target: UNDEFINED.into(),
            label_truthy: false,
            header_id_is_string: false,
            ts_ms: f64::NAN,
        }
    }

    pub fn is_conversation_message(&self) -> bool {
        self.kind == Kind::Message && self.role.is_conversation()
    }
}

/// Is this key a truthy JS value? (`undefined`, `null`, `false`, `0`, `""` are not.)
pub fn key_truthy(key: &str) -> bool {
    !matches!(key, UNDEFINED | "null" | "false" | "0" | "\"\"")
}

/// The key of a plain string value.
pub fn string_key(s: &str) -> Key {
    let mut out = String::with_capacity(s.len() + 2);
    json::write_js_string(&JsStr::from_str(s), &mut out);
    out.into()
}

fn key_of(raw: &[u8]) -> Key {
    match json::parse(raw) {
        Ok(v) => json::to_json(&v).into(),
        Err(_) => UNDEFINED.into(),
    }
}

fn kind_of(type_key: &str) -> Kind {
    match type_key {
        "\"session\"" => Kind::Header,
        "\"message\"" => Kind::Message,
        "\"thinking_level_change\"" => Kind::ThinkingLevelChange,
        "\"model_change\"" => Kind::ModelChange,
        "\"usage\"" => Kind::Usage,
        "\"compaction\"" => Kind::Compaction,
        "\"branch_summary\"" => Kind::BranchSummary,
        "\"custom\"" => Kind::Custom,
        "\"custom_message\"" => Kind::CustomMessage,
        "\"label\"" => Kind::Label,
        "\"session_info\"" => Kind::SessionInfo,
        "\"context_edit\"" => Kind::ContextEdit,
        _ => Kind::Other,
    }
}

/// Read a line the way `loadEntriesFromFile` does: `None` for lines JSON.parse rejects and for
/// parsed falsy values (`null`, `false`, `0`, `""`), which the reference skips.
pub fn read_meta(line: &[u8]) -> Option<Meta> {
    let members = match json::top_level_members(line) {
        Err(_) => return None,
        Ok(Some(m)) => m,
        Ok(None) => {
            let v = json::parse(line).ok()?;
            return if v.is_truthy() {
                Some(Meta::empty(Kind::NonObject))
            } else {
                None
            };
        }
    };
    // JSON.parse keeps the last of duplicate keys, so later members overwrite earlier ones here.
    let mut type_raw = None;
    let mut id_raw = None;
    let mut parent_raw = None;
    let mut ts_raw = None;
    let mut message_raw = None;
    let mut first_kept_raw = None;
    let mut tail_raw = None;
    let mut target_raw = None;
    let mut label_raw = None;
    for (key, range) in &members {
        let slot = match key.as_escaped() {
            "type" => &mut type_raw,
            "id" => &mut id_raw,
            "parentId" => &mut parent_raw,
            "timestamp" => &mut ts_raw,
            "message" => &mut message_raw,
            "firstKeptEntryId" => &mut first_kept_raw,
            "retainedTail" => &mut tail_raw,
            "targetId" => &mut target_raw,
            "label" => &mut label_raw,
            _ => continue,
        };
        *slot = Some(&line[range.clone()]);
    }
    let kind = type_raw.map(|r| kind_of(&key_of(r))).unwrap_or(Kind::Other);
    let mut meta = Meta::empty(kind);
    if let Some(r) = id_raw {
        meta.id = key_of(r);
        meta.header_id_is_string = meta.id.starts_with('"');
    }
    if let Some(r) = parent_raw {
        meta.parent = key_of(r);
    }
    if let Some(r) = ts_raw {
        if let Some(s) = json::parse(r).ok().and_then(Value::into_string) {
            meta.ts_ms = timefmt::parse_iso_strict(s.as_escaped()).unwrap_or(f64::NAN);
        }
    }
    match kind {
        Kind::Message => {
            if let Some(r) = message_raw {
                if let Ok(Some(inner)) = json::top_level_members(r) {
                    meta.message_is_object = true;
                    let role = inner.iter().rev().find(|(k, _)| k.as_escaped() == "role");
                    meta.role = match role.map(|(_, rr)| key_of(&r[rr.clone()])) {
                        Some(k) => match &*k {
                            "\"user\"" => Role::User,
                            "\"assistant\"" => Role::Assistant,
                            "\"toolResult\"" => Role::ToolResult,
                            "\"system\"" => Role::System,
                            s if s.starts_with('"') => Role::Other(k),
                            _ => Role::Missing,
                        },
                        None => Role::Missing,
                    };
                }
            }
        }
        Kind::Compaction => {
            if let Some(r) = first_kept_raw {
                meta.first_kept = key_of(r);
            }
            meta.retained_tail = tail_raw
                .is_some_and(|r| r.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'['));
        }
        Kind::Label => {
            if let Some(r) = target_raw {
                meta.target = key_of(r);
            }
            meta.label_truthy =
                label_raw.is_some_and(|r| json::parse(r).map(|v| v.is_truthy()).unwrap_or(false));
        }
        Kind::ContextEdit => {
            if let Some(r) = target_raw {
                meta.target = key_of(r);
            }
        }
        _ => {}
    }
    Some(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_keys_that_compare_like_js_values() {
        let m = read_meta(br#"{"type":"message","id":"ab\u0063","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}"#).unwrap();
        assert_eq!(m.kind, Kind::Message);
        assert_eq!(&*m.id, "\"abc\"");
        assert_eq!(&*m.parent, "null");
        assert_eq!(m.role, Role::User);
        assert_eq!(m.ts_ms, 1_704_067_200_000.0);
        let n = read_meta(br#"{"type":"label","id":5,"targetId":"x","label":""}"#).unwrap();
        assert_eq!(&*n.id, "5");
        assert_eq!(&*n.parent, UNDEFINED);
        assert!(!n.label_truthy);
    }

    #[test]
    fn falsy_and_malformed_lines_are_skipped_but_truthy_scalars_kept() {
        for skip in [&b"null"[..], b"0", b"false", b"\"\"", b"{", b"", b"  "] {
            assert!(read_meta(skip).is_none());
        }
        assert_eq!(read_meta(b"5").unwrap().kind, Kind::NonObject);
        assert_eq!(read_meta(b"[]").unwrap().kind, Kind::NonObject);
    }

    #[test]
    fn duplicate_keys_keep_the_last_value() {
        let m = read_meta(br#"{"type":"custom","type":"session","id":"a","id":"b"}"#).unwrap();
        assert_eq!(m.kind, Kind::Header);
        assert_eq!(&*m.id, "\"b\"");
    }
}
