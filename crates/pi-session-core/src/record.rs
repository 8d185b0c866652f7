//! What the store needs to know about one JSONL line, read without building the entry.
//!
//! Values that JS code compares with `===` or uses as Map keys (ids, parent ids, targets) are kept
//! as *keys*: the canonical JSON text of the value (`"abc"` with its quotes, `5`, `null`), or
//! [`UNDEFINED`] when the property is absent. Two JS primitives are `===` (and the same Map key)
//! exactly when their keys are byte-equal, which lets the index reproduce the reference's Map
//! semantics even for hand-edited files with numeric or missing ids.

use crate::json;
use crate::lazy::{self, Holder, LazyMeta, LazyScratch};
use crate::timefmt;

/// The key of an absent property (`undefined` in JS). No JSON text is empty, so it never collides.
pub const UNDEFINED: &str = "";

pub use crate::key::Key;

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
    /// A record of a session file that comes before its header (oh-my-pi's `title` slot): kept
    /// and written back where it was, but no entry (see [`leading_count`]). Only loading a file
    /// gives this kind; [`read_meta`] never does.
    Leading,
}

impl Kind {
    /// Records of this kind are entries (`getEntries`, the index, the leaf): all but headers and
    /// the records leading a header.
    pub fn is_entry(self) -> bool {
        !matches!(self, Kind::Header | Kind::Leading)
    }
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
    /// How many messages the reference's `sessionEntryToContextMessages` makes of this entry,
    /// without a context edit: 1 for a message or a custom message, 1 for a branch summary with a
    /// truthy `summary`, 1 or 2 for a compaction (its truthy `systemMessage` comes first) and one
    /// more per message of its `retainedTail`, else 0. The transcript read model counts and pages
    /// by it without parsing the entries.
    pub context_items: u32,
    /// header: `id` is a string (what makes a first record a valid header).
    pub header_id_is_string: bool,
    /// `timestamp` in ms when it is a strict ISO string, NaN otherwise (JS decides then).
    pub ts_ms: f64,
    /// The line is known to be canonical (`JSON.stringify(JSON.parse(line))` gives it back), so it
    /// can be copied as is wherever the reference would re-serialize the entry. False means
    /// unknown: check with [`json::is_canonical`].
    pub canonical: bool,
    /// The line is a skeleton: only the members read above, of an entry that JavaScript holds as an
    /// object in a session that never writes (see [`crate::session::Session::append_skeleton`]).
    /// Such a line is never handed out nor written.
    pub skeleton: bool,
    /// Where the line's lazy values are (see [`crate::lazy`]): read at load, for the records
    /// JavaScript gets as skeletons; None for every other record.
    pub lazy: Option<LazyMeta>,
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
            context_items: 0,
            header_id_is_string: false,
            ts_ms: f64::NAN,
            canonical: false,
            skeleton: false,
            lazy: None,
        }
    }

    pub fn is_conversation_message(&self) -> bool {
        self.kind == Kind::Message && self.role.is_conversation()
    }
}

/// Can this record come before a session header? Objects that pi would not read as entries: a
/// `type` that is none of pi's (or none at all), and no place in the tree (neither an `id` nor a
/// `parentId` member, whatever their value). A v1 message, which has no id yet, cannot.
pub fn may_lead(meta: &Meta) -> bool {
    meta.kind == Kind::Other && &*meta.id == UNDEFINED && &*meta.parent == UNDEFINED
}

/// Is `t` the `type` of a pi record (a header or an entry kind the store knows)?
pub fn is_pi_type(t: &str) -> bool {
    kind_of(&string_key(t)) != Kind::Other
}

/// How many records at the start of a file lead its header: the run of [`may_lead`] records
/// directly followed by a `type:"session"` record. 0 when the first record is the header, and
/// when no header follows the run (such a file stays what it was: no session).
pub fn leading_count<'a>(metas: impl IntoIterator<Item = &'a Meta>) -> usize {
    for (n, m) in metas.into_iter().enumerate() {
        if m.kind == Kind::Header {
            return n;
        }
        if !may_lead(m) {
            return 0;
        }
    }
    0
}

/// Is this key a truthy JS value? (`undefined`, `null`, `false`, `0`, `""` are not.)
pub fn key_truthy(key: &str) -> bool {
    !matches!(key, UNDEFINED | "null" | "false" | "0" | "\"\"")
}

/// The key of a plain string value.
pub fn string_key(s: &str) -> Key {
    json::string_to_json(s).into()
}

fn key_of(raw: &[u8]) -> Key {
    // Fast path: plain ASCII strings and literals are already in canonical form.
    if let [b'"', body @ .., b'"'] = raw {
        if body
            .iter()
            .all(|&c| (0x20..0x7f).contains(&c) && c != b'\\' && c != b'"')
        {
            // SAFETY-free: printable ASCII is valid UTF-8.
            return String::from_utf8_lossy(raw).into();
        }
    }
    if matches!(raw, b"null" | b"true" | b"false") {
        return String::from_utf8_lossy(raw).into();
    }
    match json::parse(raw) {
        Ok(v) => json::to_json(&v).into(),
        Err(_) => UNDEFINED.into(),
    }
}

/// The role of a message object: a fast look at a leading `"role"` key, else a member scan.
fn role_of(message: &[u8]) -> Option<Role> {
    const PREFIX: &[u8] = b"{\"role\":\"";
    if let Some(rest) = message.strip_prefix(PREFIX) {
        if let Some(end) = rest.iter().position(|&c| c == b'"' || c == b'\\') {
            if rest[end] == b'"' {
                return Some(role_from_key(&key_of(
                    &message[PREFIX.len() - 1..PREFIX.len() + end + 1],
                )));
            }
        }
    }
    let mut role = None;
    let is_object = json::visit_top_level_members(message, |k, r| {
        if k == "role" {
            role = Some(r);
        }
    })
    .ok()?;
    if !is_object {
        return None;
    }
    Some(match role {
        Some(r) => role_from_key(&key_of(&message[r])),
        None => Role::Missing,
    })
}

fn role_from_key(k: &str) -> Role {
    match k {
        "\"user\"" => Role::User,
        "\"assistant\"" => Role::Assistant,
        "\"toolResult\"" => Role::ToolResult,
        "\"system\"" => Role::System,
        s if s.starts_with('"') => Role::Other(s.into()),
        _ => Role::Missing,
    }
}

/// The kind from the raw `type` value: plain spellings are matched without allocating.
fn kind_of_raw(raw: &[u8]) -> Kind {
    if raw.contains(&b'\\') || raw.first() != Some(&b'"') {
        return kind_of(&key_of(raw));
    }
    std::str::from_utf8(raw).map(kind_of).unwrap_or(Kind::Other)
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
    let mut raw: [Option<std::ops::Range<usize>>; 11] = Default::default();
    let is_object = json::visit_top_level_members(line, |key, range| {
        note_member(&mut raw, key.as_bytes(), range)
    })
    .ok()?;
    if !is_object {
        let v = json::parse(line).ok()?;
        return if v.is_truthy() {
            Some(Meta::empty(Kind::NonObject))
        } else {
            None
        };
    }
    Some(meta_from(line, &raw))
}

/// [`read_meta`] that also finds out whether the line is canonical ([`Meta::canonical`]), in the
/// same pass for the common case of a canonical object (about as fast as validating alone).
pub fn read_meta_canonical(line: &[u8]) -> Option<Meta> {
    let mut raw: [Option<std::ops::Range<usize>>; 11] = Default::default();
    if json::visit_canonical_object(line, |key, range| note_member(&mut raw, key, range)) {
        let mut meta = meta_from(line, &raw);
        meta.canonical = true;
        return Some(meta);
    }
    read_meta(line)
}

/// [`read_meta`] that also finds the line's lazy values ([`Meta::lazy`], see [`crate::lazy`]) in
/// the same validating pass; `scratch` lends the pass its vectors and keeps the shapes met.
pub fn read_meta_lazy(line: &[u8], scratch: &mut LazyScratch) -> Option<Meta> {
    let mut raw: [Option<std::ops::Range<usize>>; 11] = Default::default();
    scratch.clear();
    let depth = json::visit_message_members(line, |nested, name, range| {
        if !nested {
            if name.contains(&b'\\') {
                // Rare: the name as JSON.parse reads it decides which member it is.
                let key = json::decode_escaped_bytes(name).to_string_lossy();
                note_member(&mut raw, key.as_bytes(), range.clone());
            } else {
                note_member(&mut raw, name, range.clone());
            }
        }
        scratch.member(nested, name, range);
    })
    .ok()?;
    let Some(depth) = depth else {
        return read_meta(line);
    };
    let mut meta = meta_from(line, &raw);
    // A record nested too deeply keeps its values (see `lazy::MAX_LAZY_DEPTH`).
    let holder = holder_of(&meta).filter(|_| depth <= lazy::MAX_LAZY_DEPTH);
    meta.lazy = scratch.decide(holder);
    Some(meta)
}

/// Which object of a record holds its lazy values: the message object of a message, the entry
/// itself for the other entries; none for headers and lines that are no object.
fn holder_of(meta: &Meta) -> Option<Holder> {
    match meta.kind {
        Kind::Header | Kind::Leading | Kind::NonObject => None,
        Kind::Message if meta.message_is_object => Some(Holder::Message),
        Kind::Message => None,
        _ => Some(Holder::Entry),
    }
}

/// [`read_meta`] for a line known to be valid, compact JSON of an object (our own
/// `JSON.stringify` output, which is canonical): skips validation.
pub fn read_meta_trusted(line: &[u8]) -> Option<Meta> {
    let mut raw: [Option<std::ops::Range<usize>>; 11] = Default::default();
    if !json::visit_members_trusted(line, |key, range| note_member(&mut raw, key, range)) {
        return read_meta(line);
    }
    let mut meta = meta_from(line, &raw);
    meta.canonical = true;
    Some(meta)
}

/// Remember where the members we read are. JSON.parse keeps the last of duplicate keys, so later
/// members overwrite earlier ones.
fn note_member(
    raw: &mut [Option<std::ops::Range<usize>>; 11],
    key: &[u8],
    range: std::ops::Range<usize>,
) {
    let slot = match key {
        b"type" => 0,
        b"id" => 1,
        b"parentId" => 2,
        b"timestamp" => 3,
        b"message" => 4,
        b"firstKeptEntryId" => 5,
        b"retainedTail" => 6,
        b"targetId" => 7,
        b"label" => 8,
        b"summary" => 9,
        b"systemMessage" => 10,
        _ => return,
    };
    raw[slot] = Some(range);
}

/// How many items the array `raw` (valid JSON) holds; 0 for any other value.
fn array_len(raw: &[u8]) -> u32 {
    let mut n = 0u32;
    json::visit_items_valid(raw, |_| n = n.saturating_add(1));
    n
}

fn meta_from(line: &[u8], raw: &[Option<std::ops::Range<usize>>; 11]) -> Meta {
    let get = |i: usize| raw[i].clone().map(|r| &line[r]);
    let kind = get(0).map(kind_of_raw).unwrap_or(Kind::Other);
    let mut meta = Meta::empty(kind);
    if let Some(r) = get(1) {
        meta.id = key_of(r);
        meta.header_id_is_string = meta.id.starts_with('"');
    }
    if let Some(r) = get(2) {
        meta.parent = key_of(r);
    }
    if let Some(r) = get(3) {
        meta.ts_ms = match r {
            [b'"', body @ .., b'"'] => std::str::from_utf8(body)
                .ok()
                .and_then(timefmt::parse_iso_strict)
                .unwrap_or(f64::NAN),
            _ => f64::NAN,
        };
    }
    meta.context_items = match kind {
        Kind::Message | Kind::CustomMessage => 1,
        Kind::BranchSummary => u32::from(get(9).is_some_and(truthy)),
        Kind::Compaction => {
            1 + u32::from(get(10).is_some_and(truthy)) + get(6).map_or(0, array_len)
        }
        _ => 0,
    };
    match kind {
        Kind::Message => {
            if let Some(role) = get(4).and_then(role_of) {
                meta.message_is_object = true;
                meta.role = role;
            }
        }
        Kind::Compaction => {
            if let Some(r) = get(5) {
                meta.first_kept = key_of(r);
            }
            meta.retained_tail = get(6).is_some_and(|r| r.first() == Some(&b'['));
        }
        Kind::Label => {
            if let Some(r) = get(7) {
                meta.target = key_of(r);
            }
            meta.label_truthy = get(8).is_some_and(truthy);
        }
        Kind::ContextEdit => {
            if let Some(r) = get(7) {
                meta.target = key_of(r);
            }
        }
        _ => {}
    }
    meta
}

/// Is this raw JSON value truthy in JavaScript?
fn truthy(raw: &[u8]) -> bool {
    match raw {
        b"\"\"" | b"null" | b"false" => false,
        [b'"', ..] | b"true" | [b'{', ..] | [b'[', ..] => true,
        _ => json::parse(raw).map(|v| v.is_truthy()).unwrap_or(false),
    }
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
