//! Tree shapes derived from the records: `getTree()` and the path copy of `createBranchedSession`.

use std::collections::HashMap;

use crate::ids;
use crate::json::{self, JsStr, Value};
use crate::record::{self, Key, Kind, UNDEFINED};
use crate::session::Session;

/// Marker in encoded plans for "none".
pub const NONE: u32 = u32::MAX;

/// `getTree()` as a flat plan the binding turns into node objects:
/// `[rootCount, roots…, nodeCount, (pos, labelPos|NONE, sortInJs, childCount, children…)…]`.
/// A node is identified by the position of the record that owns its id (the last one with that id,
/// as the reference's Map keeps). Children are sorted by timestamp here when every child has a
/// strict ISO timestamp; otherwise `sortInJs` is 1 and the binding sorts with `Date` parsing.
pub fn tree_plan(s: &Session) -> Vec<u32> {
    let entries = s.entry_positions();
    // A node per index slot (the reference's nodeMap keyed by id): its entry is the slot's record.
    let n = s.slot_count();
    let node_slot = |p: u32| s.record_slot(p).expect("entries are indexed") as usize;
    let mut parent_of: Vec<u32> = vec![NONE; entries.len()];
    let mut roots: Vec<usize> = Vec::new();
    let mut child_count = vec![0u32; n];
    // Every edge goes from a node to one whose record comes later in the file (as in any file
    // written by appends): then there is no cycle to look for.
    let mut forward_only = true;
    for (i, &p) in entries.iter().enumerate() {
        let m = s.meta(p);
        if &*m.parent == "null" {
            continue;
        }
        let parent = s.cached_parent_slot(p).or_else(|| s.slot_of_key(&m.parent));
        if let Some(ps) = parent {
            let own = node_slot(p);
            // A parentId equal to the entry's own id (same key, so same slot) makes a root.
            if ps as usize == own {
                continue;
            }
            parent_of[i] = ps;
            child_count[ps as usize] += 1;
            forward_only &= s.slot_pos(ps) < s.slot_pos(own as u32);
        }
    }
    // Children lists laid out back to back (insertion order kept), offsets per node.
    let mut offset = vec![0usize; n + 1];
    for k in 0..n {
        offset[k + 1] = offset[k] + child_count[k] as usize;
    }
    let mut fill = offset.clone();
    let mut flat = vec![0usize; offset[n]];
    for (i, &p) in entries.iter().enumerate() {
        match parent_of[i] {
            NONE => roots.push(node_slot(p)),
            ps => {
                let ps = ps as usize;
                flat[fill[ps]] = node_slot(p);
                fill[ps] += 1;
            }
        }
    }
    let mut cut = vec![false; flat.len()];
    // A tree must be finite. Walking from the roots, an edge back to a node still on the current
    // path (a cycle closed through a duplicate id) is cut. Entries caught in a parentId cycle hang
    // off no root (the reference drops them, or loops): the first such entry of each cycle becomes
    // a root, and the walk from it cuts the edge that closes its cycle. Every entry appears.
    // Without a backward edge there is no cycle: nothing to cut, and every node hangs off a root.
    if !forward_only {
        let mut color = vec![0u8; n];
        walk_cutting_cycles(&roots, &offset, &flat, &mut cut, &mut color);
        for &p in &entries {
            let node = node_slot(p);
            if color[node] != 0 || s.slot_pos(node as u32) != p {
                continue;
            }
            roots.push(node);
            walk_cutting_cycles(&[node], &offset, &flat, &mut cut, &mut color);
        }
    }
    // Labels by node.
    let mut label_of = vec![NONE; n];
    for (target, pos) in s.labels() {
        if let Some(slot) = s.slot_of_key(target) {
            label_of[slot as usize] = pos;
        }
    }
    let ts = |node: usize| s.meta(s.slot_pos(node as u32)).ts_ms;
    let mut out = Vec::with_capacity(2 + roots.len() + n * 4 + flat.len());
    out.push(roots.len() as u32);
    out.extend(roots.iter().map(|&r| s.slot_pos(r as u32)));
    out.push(n as u32);
    let mut kids: Vec<usize> = Vec::new();
    for node in 0..n {
        kids.clear();
        kids.extend(
            (offset[node]..offset[node + 1])
                .filter(|&k| !cut[k])
                .map(|k| flat[k]),
        );
        let sort_in_js = if kids.iter().all(|&k| !ts(k).is_nan()) {
            kids.sort_by(|&a, &b| ts(a).total_cmp(&ts(b)));
            0
        } else {
            1
        };
        out.push(s.slot_pos(node as u32));
        out.push(label_of[node]);
        out.push(sort_in_js);
        out.push(kids.len() as u32);
        out.extend(kids.iter().map(|&k| s.slot_pos(k as u32)));
    }
    out
}

/// Iterative depth-first walk: marks nodes (1 = on the current path, 2 = done) and cuts edges to a
/// node on the current path.
fn walk_cutting_cycles(
    from: &[usize],
    offset: &[usize],
    flat: &[usize],
    cut: &mut [bool],
    color: &mut [u8],
) {
    for &root in from {
        if color[root] != 0 {
            continue;
        }
        color[root] = 1;
        let mut stack: Vec<(usize, usize)> = vec![(root, offset[root])];
        while let Some(top) = stack.last_mut() {
            let (node, edge) = *top;
            if edge == offset[node + 1] {
                color[node] = 2;
                stack.pop();
                continue;
            }
            top.1 += 1;
            if cut[edge] {
                continue;
            }
            let child = flat[edge];
            match color[child] {
                0 => {
                    color[child] = 1;
                    stack.push((child, offset[child]));
                }
                1 => cut[edge] = true,
                _ => {}
            }
        }
    }
}

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

/// The records of `createBranchedSession` after the header: the path without label records,
/// re-chained, then fresh label records for every current label whose target is on that path.
/// A record whose re-chained line is its own line (canonical, same `parentId` and
/// `firstKeptEntryId`: most of them on a linear path) is [`Piece::Same`], so it costs nothing
/// when its meta says it is canonical.
pub fn branched_lines(s: &Session, path: &[u32]) -> crate::Result<Vec<Piece>> {
    let mut out: Vec<Piece> = Vec::with_capacity(path.len());
    let mut replacement: HashMap<Key, Key> = HashMap::new();
    let mut pending: Vec<Key> = Vec::new();
    let mut parent_key: Key = "null".into();
    let mut kept_ids: Vec<Key> = Vec::new();
    for &p in path {
        let m = s.meta(p);
        if m.kind == Kind::Label {
            pending.push(m.id.clone());
            continue;
        }
        for l in pending.drain(..) {
            replacement.insert(l, m.id.clone());
        }
        let fk: Option<Key> = (m.kind == Kind::Compaction).then(|| {
            if m.first_kept == m.id {
                m.id.clone()
            } else {
                replacement
                    .get(&m.first_kept)
                    .cloned()
                    .unwrap_or_else(|| m.first_kept.clone())
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
        out.push(if unchanged && m.canonical {
            Piece::Same(p)
        } else {
            let line = s.line(p)?;
            if unchanged && json::is_canonical(&line) {
                Piece::Same(p)
            } else {
                let mut sets: Vec<(&str, &str)> = vec![("parentId", &parent_key)];
                if let Some(fk) = &fk {
                    sets.push(("firstKeptEntryId", fk));
                }
                Piece::New {
                    from: p,
                    line: match splice_members(&line, &sets) {
                        Some(fast) => fast,
                        None => {
                            // `{...scalar}` copies nothing.
                            let mut obj = json::parse(&line)
                                .ok()
                                .and_then(Value::into_object)
                                .unwrap_or_default();
                            for (prop, key) in &sets {
                                assign(&mut obj, prop, key_value(key));
                            }
                            json::to_json(&Value::Object(obj)).into_bytes()
                        }
                    },
                }
            }
        });
        parent_key = m.id.clone();
        kept_ids.push(m.id.clone());
    }
    // Label records: parent chain starts at the last kept entry (`?.id || null`).
    let mut parent: Key = match kept_ids.last() {
        Some(k) if record::key_truthy(k) => k.clone(),
        _ => "null".into(),
    };
    let mut taken: std::collections::HashSet<Key> = kept_ids.iter().cloned().collect();
    for (target, label_pos) in s.labels() {
        if !kept_ids.iter().any(|k| k == target) {
            continue;
        }
        let label_rec = json::parse(&s.line(label_pos)?).unwrap_or(Value::Null);
        let id = ids::entry_id(|c| taken.contains(&*record::string_key(c)));
        let id_key = record::string_key(&id);
        let mut line = String::from("{\"type\":\"label\",\"id\":");
        line.push_str(&id_key);
        line.push_str(",\"parentId\":");
        line.push_str(&parent);
        if let Some(ts) = label_rec.get("timestamp") {
            line.push_str(",\"timestamp\":");
            json::write_json(ts, &mut line);
        }
        if &**target != UNDEFINED {
            line.push_str(",\"targetId\":");
            line.push_str(target);
        }
        if let Some(l) = label_rec.get("label") {
            line.push_str(",\"label\":");
            json::write_json(l, &mut line);
        }
        line.push('}');
        out.push(Piece::New {
            line: line.into_bytes(),
            from: label_pos,
        });
        taken.insert(id_key.clone());
        parent = id_key;
    }
    Ok(out)
}
