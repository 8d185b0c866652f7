//! The records of a branched session after its header: the path re-chained, and fresh label
//! records for the labels on it. A line that stays as it was is a [`Piece::Same`], copied
//! without being looked at.

use std::collections::HashMap;

use crate::ids;
use crate::json::{self, JsStr, Value};
use crate::record::{self, Key, Kind, UNDEFINED};
use crate::store::View;

/// `{...entry, prop: value, …}` then `JSON.stringify`, done on the text when the line is already
/// canonical JSON of an object: each property's value is replaced in place, or appended at the
/// end when absent (none of these names is integer-like, so the end is where JS puts them).
/// `None` when the fast path does not apply (non-canonical text, or a property to drop).
fn splice_members(line: &[u8], sets: &[(&str, &str)]) -> Option<Vec<u8>> {
    if sets.iter().any(|(_, v)| *v == UNDEFINED) || !json::is_canonical(line) {
        return None;
    }
    let mut found: Vec<Option<std::ops::Range<usize>>> = vec![None; sets.len()];
    let is_object = json::visit_top_level_members(line, |k, r| {
        if let Some(i) = sets.iter().position(|(name, _)| *name == k) {
            found[i] = Some(r);
        }
    })
    .ok()?;
    if !is_object {
        return None;
    }
    let mut edits: Vec<(std::ops::Range<usize>, &str)> = found
        .iter()
        .zip(sets)
        .filter_map(|(r, (_, v))| r.clone().map(|r| (r, *v)))
        .collect();
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = Vec::with_capacity(line.len() + 64);
    let mut at = 0;
    for (r, v) in &edits {
        out.extend_from_slice(&line[at..r.start]);
        out.extend_from_slice(v.as_bytes());
        at = r.end;
    }
    // The closing brace of a canonical object is its last byte.
    out.extend_from_slice(&line[at..line.len() - 1]);
    let mut empty = line.len() == 2;
    for ((name, v), r) in sets.iter().zip(&found) {
        if r.is_none() {
            if !empty {
                out.push(b',');
            }
            empty = false;
            out.push(b'"');
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
            out.extend_from_slice(v.as_bytes());
        }
    }
    out.push(b'}');
    Some(out)
}

fn key_value(key: &str) -> Option<Value> {
    if key == UNDEFINED {
        None
    } else {
        json::parse(key.as_bytes()).ok()
    }
}

/// Set (or, for `undefined`, drop) a property the way `{...entry, prop: value}` then
/// `JSON.stringify` would leave it.
fn assign(obj: &mut json::Object, prop: &str, value: Option<Value>) {
    match value {
        Some(v) => obj.insert(JsStr::from_str(prop), v),
        None => {
            obj.remove(prop);
        }
    }
}

/// One record of a branched session.
pub enum Piece {
    /// Byte for byte the line of this record (same meta too): copied, never looked at.
    Same(u32),
    /// A new or changed line, made from the record at `from`.
    New { line: Vec<u8>, from: u32 },
}

impl Piece {
    /// The old record this one was made from.
    pub fn from(&self) -> u32 {
        match self {
            Piece::Same(pos) | Piece::New { from: pos, .. } => *pos,
        }
    }
}

/// The records of a branched session after its header, and what a host holding the old records
/// as objects needs to make the new ones from them (see [`branched_lines`]).
pub struct BranchedLines {
    /// The path's entries (labels left out), then the fresh label records.
    pub pieces: Vec<Piece>,
    /// How many of `pieces` are the path's entries. Each one's `parentId` is now the id of the
    /// entry before it (the first's is `null`).
    pub kept: usize,
    /// For each compaction among them: its index in `pieces`, and the old record whose id is now
    /// its `firstKeptEntryId` (`None`: the value it had).
    pub first_kept: Vec<(u32, Option<u32>)>,
}

/// The records of `createBranchedSession` after the header: the path without label records,
/// re-chained, then fresh label records for every current label whose target is on that path
/// (each made from the label record it copies: its `from`).
/// A record whose re-chained line is its own line (canonical, same `parentId` and
/// `firstKeptEntryId`: most of them on a linear path) is [`Piece::Same`], so it costs nothing
/// when its meta says it is canonical.
///
/// A compaction whose `firstKeptEntryId` named a label record on the path names the entry that
/// follows that label instead (`replacement.get(id) ?? id`: an entry whose id is `null` or absent
/// leaves the value as it was), unless it names the compaction itself.
pub fn branched_lines(s: View<'_>, path: &[u32]) -> crate::Result<BranchedLines> {
    let canonical = canonical_on_path(s, path)?;
    let Chained {
        mut pieces,
        first_kept,
        kept_ids,
    } = chain_path(s, path, &canonical)?;
    let kept = pieces.len();
    push_labels(s, &kept_ids, &mut pieces)?;
    Ok(BranchedLines {
        pieces,
        kept,
        first_kept,
    })
}

/// Whether each entry of `path` has a canonical line, by index on the path (labels are left out,
/// as they are not copied). The open reads a big file without finding that out, so the lines it
/// could not tell are read here, all at once (see [`View::test_lines`]), instead of one read each.
fn canonical_on_path(s: View<'_>, path: &[u32]) -> crate::Result<Vec<bool>> {
    let mut canonical: Vec<bool> = path.iter().map(|&p| s.meta(p).canonical).collect();
    let unknown: Vec<usize> = (0..path.len())
        .filter(|&i| !canonical[i] && s.meta(path[i]).kind != Kind::Label)
        .collect();
    let positions: Vec<u32> = unknown.iter().map(|&i| path[i]).collect();
    for (i, c) in unknown
        .into_iter()
        .zip(s.test_lines(&positions, json::is_canonical)?)
    {
        canonical[i] = c;
    }
    Ok(canonical)
}

/// The path's entries, re-chained: see [`BranchedLines`].
struct Chained {
    pieces: Vec<Piece>,
    first_kept: Vec<(u32, Option<u32>)>,
    /// The kept entries' ids, in path order.
    kept_ids: Vec<Key>,
}

/// The path without its label records, each entry's `parentId` the entry before it, and each
/// compaction's `firstKeptEntryId` moved off a dropped label.
fn chain_path(s: View<'_>, path: &[u32], canonical: &[bool]) -> crate::Result<Chained> {
    let mut out: Vec<Piece> = Vec::with_capacity(path.len());
    let mut first_kept: Vec<(u32, Option<u32>)> = Vec::new();
    // Label id -> the position of the entry that follows it on the path.
    let mut replacement: HashMap<Key, u32> = HashMap::new();
    let mut pending: Vec<Key> = Vec::new();
    let mut parent_key: Key = "null".into();
    let mut kept_ids: Vec<Key> = Vec::new();
    for (i, &p) in path.iter().enumerate() {
        let m = s.meta(p);
        if m.kind == Kind::Label {
            pending.push(m.id.clone());
            continue;
        }
        for l in pending.drain(..) {
            replacement.insert(l, p);
        }
        let fk: Option<Key> = (m.kind == Kind::Compaction).then(|| {
            let by = if m.first_kept == m.id {
                Some(p)
            } else {
                replacement
                    .get(&m.first_kept)
                    .copied()
                    .filter(|&q| !matches!(&*s.meta(q).id, "null" | UNDEFINED))
            };
            first_kept.push((out.len() as u32, by));
            match by {
                Some(q) => s.meta(q).id.clone(),
                None => m.first_kept.clone(),
            }
        });
        // Setting a member to the value it has changes nothing in canonical text (a canonical
        // line's raw values are their keys).
        let unchanged = &*parent_key != UNDEFINED
            && m.parent == parent_key
            && match &fk {
                None => true,
                Some(fk) => &**fk != UNDEFINED && *fk == m.first_kept,
            };
        out.push(rechained(
            s,
            p,
            canonical[i],
            unchanged,
            &parent_key,
            fk.as_ref(),
        )?);
        parent_key = m.id.clone();
        kept_ids.push(m.id.clone());
    }
    Ok(Chained {
        pieces: out,
        first_kept,
        kept_ids,
    })
}

/// The record at `p` with its new `parentId` (and `firstKeptEntryId`): its own line when that
/// changes nothing in canonical text (`canonical`: its line is), else spliced, else re-serialized.
fn rechained(
    s: View<'_>,
    p: u32,
    canonical: bool,
    unchanged: bool,
    parent_key: &str,
    fk: Option<&Key>,
) -> crate::Result<Piece> {
    if unchanged && canonical {
        return Ok(Piece::Same(p));
    }
    let line = s.line(p)?;
    let mut sets: Vec<(&str, &str)> = vec![("parentId", parent_key)];
    if let Some(fk) = fk {
        sets.push(("firstKeptEntryId", fk));
    }
    let line = match splice_members(&line, &sets) {
        Some(fast) => fast,
        None => {
            // `{...scalar}` copies nothing.
            let mut obj = s.parse_line(p, &line)?.into_object().unwrap_or_default();
            for (prop, key) in &sets {
                assign(&mut obj, prop, key_value(key));
            }
            json::to_json(&Value::Object(obj)).into_bytes()
        }
    };
    Ok(Piece::New { from: p, line })
}

/// Fresh label records for the current labels whose targets were kept, chained after the last
/// kept entry (`?.id || null`).
fn push_labels(s: View<'_>, kept_ids: &[Key], out: &mut Vec<Piece>) -> crate::Result<()> {
    let mut parent: Key = match kept_ids.last() {
        Some(k) if record::key_truthy(k) => k.clone(),
        _ => "null".into(),
    };
    let mut taken: std::collections::HashSet<Key> = kept_ids.iter().cloned().collect();
    for (target, label_pos) in s.labels() {
        if !kept_ids.iter().any(|k| k == target) {
            continue;
        }
        let label_rec = s.parsed(label_pos)?;
        let id = ids::entry_id(|c| taken.contains(&*record::string_key(c)));
        let id_key = record::string_key(&id);
        out.push(Piece::New {
            line: label_line(&id_key, &parent, target, &label_rec).into_bytes(),
            from: label_pos,
        });
        taken.insert(id_key.clone());
        parent = id_key;
    }
    Ok(())
}

/// A label record as the reference writes it: type, id, parentId, then what it copies of the old
/// label record (timestamp, targetId, label).
fn label_line(id_key: &str, parent: &str, target: &str, label_rec: &Value) -> String {
    let mut line = String::from("{\"type\":\"label\",\"id\":");
    line.push_str(id_key);
    line.push_str(",\"parentId\":");
    line.push_str(parent);
    if let Some(ts) = label_rec.get("timestamp") {
        line.push_str(",\"timestamp\":");
        json::write_json(ts, &mut line);
    }
    if target != UNDEFINED {
        line.push_str(",\"targetId\":");
        line.push_str(target);
    }
    if let Some(l) = label_rec.get("label") {
        line.push_str(",\"label\":");
        json::write_json(l, &mut line);
    }
    line.push('}');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::fixture::Fixture;

    const H: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    fn shapes(f: &Fixture, pieces: &[Piece]) -> Vec<String> {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Same(pos) => format!("same {pos}"),
                Piece::New { line, .. } => String::from_utf8(line.clone()).unwrap(),
            })
            .chain(std::iter::once(format!("{}", f.view().record_count())))
            .collect()
    }

    #[test]
    fn a_linear_canonical_path_is_copied_as_it_is() {
        let f = Fixture::new(&[
            H,
            r#"{"type":"custom","id":"a","parentId":null,"customType":"t"}"#,
            r#"{"type":"custom","id":"b","parentId":"a","customType":"t"}"#,
        ]);
        let v = f.view();
        let b = branched_lines(v, &v.path_to(f.pos("b"))).unwrap();
        assert_eq!(shapes(&f, &b.pieces), ["same 1", "same 2", "3"]);
        assert_eq!((b.kept, b.first_kept.len()), (2, 0));
    }

    #[test]
    fn labels_on_the_path_are_dropped_relinked_and_written_again_at_the_end() {
        let f = Fixture::new(&[
            H,
            r#"{"type":"custom","id":"a","parentId":null,"customType":"t"}"#,
            r#"{"type":"label","id":"l","parentId":"a","timestamp":"T","targetId":"a","label":"x"}"#,
            r#"{"type":"compaction","id":"c","parentId":"l","summary":"s","firstKeptEntryId":"l"}"#,
        ]);
        let v = f.view();
        let b = branched_lines(v, &v.path_to(f.pos("c"))).unwrap();
        let got = shapes(&f, &b.pieces);
        // Two path entries, then the label, made from the label record it copies.
        assert_eq!(b.kept, 2);
        assert_eq!(b.pieces[2].from(), f.pos("l"));
        assert_eq!(b.first_kept, [(1, Some(f.pos("c")))]);
        assert_eq!(got[0], "same 1");
        // The compaction now hangs off `a`, and keeps from the entry that took the dropped
        // label's place on the path: itself.
        assert_eq!(
            got[1],
            r#"{"type":"compaction","id":"c","parentId":"a","summary":"s","firstKeptEntryId":"c"}"#
        );
        let label = json::parse(got[2].as_bytes()).unwrap();
        assert!(matches!(label.get("parentId"), Some(Value::String(p)) if p.eq_str("c")));
        assert!(matches!(label.get("targetId"), Some(Value::String(t)) if t.eq_str("a")));
        assert!(matches!(label.get("timestamp"), Some(Value::String(t)) if t.eq_str("T")));
        assert_eq!(got.len(), 4, "two pieces and the record count");
    }

    #[test]
    fn a_compaction_keeps_its_first_kept_id_unless_it_named_a_label_on_the_path() {
        let f = Fixture::new(&[
            H,
            r#"{"type":"custom","id":"a","parentId":null,"customType":"t"}"#,
            r#"{"type":"label","id":"l","parentId":"a","targetId":"a","label":"x"}"#,
            r#"{"type":"custom","id":"b","parentId":"l","customType":"t"}"#,
            r#"{"type":"compaction","id":"c","parentId":"b","summary":"s","firstKeptEntryId":"a"}"#,
            r#"{"type":"compaction","id":"d","parentId":"c","summary":"s","firstKeptEntryId":"l"}"#,
            r#"{"type":"compaction","id":"e","parentId":"d","summary":"s","firstKeptEntryId":"e"}"#,
        ]);
        let v = f.view();
        let b = branched_lines(v, &v.path_to(f.pos("e"))).unwrap();
        assert_eq!(b.kept, 5);
        assert_eq!(
            b.first_kept,
            [(2, None), (3, Some(f.pos("b"))), (4, Some(f.pos("e")))],
            "as it was; the entry after the label; itself"
        );
        let Piece::New { line, .. } = &b.pieces[3] else {
            panic!("d changes")
        };
        assert_eq!(
            std::str::from_utf8(line).unwrap(),
            r#"{"type":"compaction","id":"d","parentId":"c","summary":"s","firstKeptEntryId":"b"}"#
        );
    }

    #[test]
    fn a_label_followed_by_an_entry_without_an_id_leaves_the_first_kept_id_as_it_was() {
        let f = Fixture::new(&[
            H,
            r#"{"type":"custom","id":"a","parentId":null,"customType":"t"}"#,
            r#"{"type":"label","id":"l","parentId":"a","targetId":"a","label":"x"}"#,
            r#"{"type":"custom","id":null,"parentId":"l","customType":"t"}"#,
            r#"{"type":"compaction","id":"c","parentId":null,"summary":"s","firstKeptEntryId":"l"}"#,
        ]);
        let v = f.view();
        // `null` is no parent to walk to: the path is the compaction alone, so build it by hand.
        let path = [f.pos("a"), f.pos("l"), 3, f.pos("c")];
        let b = branched_lines(v, &path).unwrap();
        assert_eq!(b.first_kept, [(2, None)]);
    }

    #[test]
    fn splicing_replaces_members_in_place_and_appends_missing_ones() {
        let line = br#"{"type":"custom","id":"a","parentId":"x","n":1}"#;
        let out = splice_members(line, &[("parentId", "null"), ("firstKeptEntryId", "\"a\"")]);
        assert_eq!(
            out.as_deref(),
            Some(
                &br#"{"type":"custom","id":"a","parentId":null,"n":1,"firstKeptEntryId":"a"}"#[..]
            )
        );
        assert_eq!(
            splice_members(br#"{"a": 1}"#, &[("parentId", "null")]),
            None,
            "not canonical"
        );
    }
}
