//! An entry glued after a torn record: how every reader of session lines reads a line that a
//! dying writer began and another writer finished with an entry of its own.
//!
//! A writer killed inside its `write` (SIGKILL, SIGTERM, the OOM killer; a large entry is copied
//! into the file a page at a time, so a kill can stop it part-way) leaves the first bytes of its
//! line and no newline. The next writer that appends without looking (the reference always
//! does; ours looks first, see `fsio::Appender`) writes its whole entry right after them: one
//! physical line `<torn bytes><entry>` that `JSON.parse` rejects, so the reference loses that
//! entry and the entries after it hang from a parent no reader knows.
//!
//! The rule, for a line that does not parse as JSON (`JSON.parse` of the line, as read):
//! - A *record boundary* is a position in the line, other than its first byte, where the bytes
//!   `{"type":"` ([`BOUNDARY`]) begin. Every line that both the reference and this store append is
//!   `JSON.stringify` of an entry whose first member is a string `type`, so it begins with
//!   exactly these bytes, and an entry glued after torn bytes begins at one.
//! - The line yields an entry when, from a record boundary, the rest of the line (up to its `\n`,
//!   or the end of the file) parses as JSON and is an *entry*: an object that is no header (its
//!   `type` is not `"session"`), with a string `id` and a `parentId` that is a string or `null`:
//!   what every version 3 entry has, and what none of the objects inside entries has (content
//!   blocks, tool calls, usage). JSON whitespace may follow it (the CR of a CRLF line), as it may
//!   follow any line; anything else after it (NUL bytes, more text) means no entry.
//! - The bytes before that boundary are the torn record: they stay a malformed line's worth of
//!   bytes, no entry (`pi-sessions verify` reports them, `repair` drops them).
//! - Two boundaries can never both parse: in the longer text, the shorter one's `{"` cannot lie in
//!   a string (that `"` would end the string and be followed by `t`, which JSON never allows), so
//!   its `{` opens an object nested in the longer one, which closes before the line's last `}`:
//!   read alone from there, that `}` is left over. So the earliest boundary that parses is the
//!   only one; were there two, the earliest would keep the most bytes.
//! - Only lines after the file's header are read this way: a session file gets its header as its
//!   first line, written whole when the file is made, so nothing before it is an interrupted
//!   append (and an entry taken there would leave the file without a valid header).
//!
//! Reading never changes the file. A line cut exactly after an object that is itself shaped like
//! an entry (only an extension's custom data could hold one) reads as that object; no entry type
//! of pi holds another entry.
//!
//! Cost: nothing for lines that parse. For one that does not, each boundary is tried from the
//! left; when the text from one boundary fails at a byte, the boundaries before that byte fail
//! there too (they open objects nested in it, or close before it with more text after them), so
//! the search goes on from that byte: a real torn line costs about two parses of itself. Boundaries
//! inside a run of objects left open to the end of the line each cost the rest of the line, so the
//! work on one line is capped at [`BUDGET_PER_BYTE`] times its length (plus [`BUDGET_FLOOR`]); a
//! line built to exceed it stays malformed.

use crate::json;
use crate::record::{self, Kind, Meta};

/// The bytes an appended entry line begins with (see the module docs).
pub const BOUNDARY: &[u8] = b"{\"type\":\"";

/// The bytes one line's search may parse, per byte of the line...
pub const BUDGET_PER_BYTE: usize = 8;
/// ...plus this many.
pub const BUDGET_FLOOR: usize = 1 << 20;

/// Is `meta` (of a whole JSON text) an entry by the rule: no header, a string `id`, and a
/// `parentId` that is a string or `null`?
pub fn is_entry(meta: &Meta) -> bool {
    let kind_ok = !matches!(meta.kind, Kind::Header | Kind::NonObject | Kind::Leading);
    let parent: &str = &meta.parent;
    kind_ok && meta.id.starts_with('"') && (parent.starts_with('"') || parent == "null")
}

/// The entry glued after torn bytes in `line`, a line that does not parse: its offset in the line
/// and its meta as `read` gives it ([`crate::record::read_meta`] or a variant). `None` when the
/// line holds none by the rule of the module docs.
pub fn glued_entry(line: &[u8], read: impl Fn(&[u8]) -> Option<Meta>) -> Option<(usize, Meta)> {
    let mut budget = line
        .len()
        .saturating_mul(BUDGET_PER_BYTE)
        .saturating_add(BUDGET_FLOOR);
    let mut from = 1;
    while from < line.len() {
        let at = from + memchr::memmem::find(&line[from..], BOUNDARY)?;
        let tail = &line[at..];
        let reached = match json::check(tail) {
            // No other boundary can parse as well (module docs): this one decides.
            Ok(()) => return read(tail).filter(is_entry).map(|m| (at, m)),
            Err(e) => e.offset.min(tail.len()),
        };
        budget = budget.checked_sub(reached + 1)?;
        from = if reached < tail.len() {
            // A boundary inside a string of this text ends that string and fails right after
            // its `{"`: it lies just before the failing byte, so the search resumes a little
            // before it.
            (at + reached).saturating_sub(BOUNDARY.len()).max(at + 1)
        } else {
            at + 1
        };
    }
    None
}

/// The record of a physical line, as the readers that go line by line read it: where it starts
/// in the line (after the torn bytes, for an entry glued after a torn record; looked for only
/// `after_header`) and its meta, canonical form included ([`record::read_meta_canonical`]).
/// `None` when the line holds no record.
pub fn read_line(line: &[u8], after_header: bool) -> Option<(usize, Meta)> {
    match record::read_meta_canonical(line) {
        Some(meta) => Some((0, meta)),
        None if after_header => glued_entry(line, record::read_meta_canonical),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::read_meta;

    const ENTRY: &str = r#"{"type":"message","id":"b2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"x"}}]}}"#;
    /// The first part of a tool result, cut inside its text.
    const TORN_IN_STRING: &str = r#"{"type":"message","id":"t9","parentId":"a1","message":{"role":"toolResult","content":[{"type":"text","text":"line one\nline tw"#;
    /// The first part of a message, cut between two content blocks.
    const TORN_BETWEEN: &str = r#"{"type":"message","id":"t9","parentId":"a1","message":{"role":"assistant","content":[{"type":"text","text":"a"},"#;

    fn found(line: &str) -> Option<usize> {
        assert!(
            json::parse(line.as_bytes()).is_err(),
            "a test line must not parse: {line}"
        );
        glued_entry(line.as_bytes(), read_meta).map(|(at, _)| at)
    }

    #[test]
    fn torn_bytes_then_a_whole_entry_yield_the_entry() {
        for torn in [TORN_IN_STRING, TORN_BETWEEN, "{\"ty", "garbage", "\u{fffd}"] {
            let line = format!("{torn}{ENTRY}");
            assert_eq!(found(&line), Some(torn.len()), "after {torn:?}");
            let (_, meta) = glued_entry(line.as_bytes(), read_meta).unwrap();
            assert_eq!(&*meta.id, "\"b2\"");
        }
    }

    #[test]
    fn of_several_boundaries_the_one_that_parses_is_taken() {
        // Boundaries: the torn record's start, its two content blocks, the entry and the entry's
        // own two blocks; only the entry's parses to the end of the line.
        let line = format!("{TORN_BETWEEN}{{\"type\":\"text\",\"text\":\"b\"}}{ENTRY}");
        assert_eq!(
            memchr::memmem::find_iter(line.as_bytes(), BOUNDARY).count(),
            6
        );
        assert_eq!(found(&line), Some(line.len() - ENTRY.len()));
        // Torn twice: the entry after the last torn record is the one.
        let twice = format!("{TORN_IN_STRING}{TORN_BETWEEN}{ENTRY}");
        assert_eq!(found(&twice), Some(twice.len() - ENTRY.len()));
    }

    #[test]
    fn a_boundary_inside_a_string_value_is_no_entry() {
        // As a writer escapes it: no boundary at all.
        let escaped = r#"{"type":"message","id":"t9","parentId":"a1","message":{"content":"{\"type\":\"message\",\"id\":\"q\",\"parentId\":null}"#;
        assert_eq!(found(escaped), None);
        assert_eq!(
            found(&format!("{escaped}{ENTRY}")),
            Some(escaped.len()),
            "the entry after it is found, not the text inside the string"
        );
        // Unescaped inside a string of a hand-made line: the text after it is no JSON.
        let raw = r#"{"type":"custom","id":"x","parentId":null,"note":"see {"type":"message","id":"q","parentId":null} here"}"#;
        assert_eq!(found(raw), None);
    }

    #[test]
    fn a_whole_object_at_the_end_that_is_no_entry_is_not_taken() {
        for tail in [
            r#"{"type":"text","text":"hi"}"#,
            r#"{"type":"toolCall","id":"c1","name":"read","arguments":{}}"#,
            r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#,
            r#"{"type":"message","id":5,"parentId":null}"#,
            r#"{"type":"message","id":"x","parentId":7}"#,
            r#"{"type":"message","id":"x"}"#,
        ] {
            assert_eq!(found(&format!("{TORN_BETWEEN}{tail}")), None, "{tail}");
        }
        let smallest_entry = r#"{"type":"custom","id":"x","parentId":null}"#;
        assert!(found(&format!("{TORN_BETWEEN}{smallest_entry}")).is_some());
    }

    #[test]
    fn a_crlf_line_end_stays_with_the_entry() {
        let line = format!("{TORN_IN_STRING}{ENTRY}\r");
        assert_eq!(found(&line), Some(TORN_IN_STRING.len()));
    }

    #[test]
    fn nul_padding_before_an_entry_is_torn_bytes_and_after_it_no_entry() {
        let before = format!("\0\0\0\0{ENTRY}");
        assert_eq!(found(&before), Some(4));
        assert_eq!(found(&format!("{ENTRY}\0\0")), None);
        assert_eq!(found("\0\0\0\0"), None);
    }

    #[test]
    fn a_line_that_parses_or_has_no_boundary_yields_nothing() {
        assert_eq!(glued_entry(ENTRY.as_bytes(), read_meta).map(|x| x.0), None);
        assert_eq!(found(r#"{"type":"message","id":"a"#), None);
        assert_eq!(found("not json at all"), None);
        assert_eq!(found(""), None);
    }

    #[test]
    fn a_line_of_many_nested_open_boundaries_gives_up_within_its_budget() {
        // 100,000 boundaries, each the start of an object left open to the end of the line: a
        // search without skips and budget would parse ~80 GB here.
        let line = "{\"type\":\"a\",\"x\":".repeat(100_000);
        assert_eq!(found(&line), None);
        // The same run with an entry glued after a torn end: still found (the skips).
        let mut glued = line.clone();
        glued.push_str("\"cut");
        glued.push_str(ENTRY);
        assert_eq!(found(&glued), Some(glued.len() - ENTRY.len()));
    }
}
