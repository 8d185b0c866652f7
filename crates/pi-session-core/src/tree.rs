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
    // nodeMap: id key -> node index, in first-insertion order, value = last record with the id.
    let mut node_of: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    let mut nodes: Vec<u32> = Vec::with_capacity(entries.len());
    for &p in &entries {
        let id: &str = &s.meta(p).id;
        match node_of.get(id) {
            Some(&n) => nodes[n] = p,
            None => {
                node_of.insert(id, nodes.len());
                nodes.push(p);
            }
        }
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots: Vec<usize> = Vec::new();
    for &p in &entries {
        let m = s.meta(p);
        let node = node_of[&*m.id];
        if &*m.parent == "null" || m.parent == m.id {
            roots.push(node);
        } else {
            match node_of.get(&*m.parent) {
                Some(&parent) => children[parent].push(node),
                None => roots.push(node),
            }
        }
    }
    // Entries caught in a parentId cycle hang off no root (the reference drops them). We make the
    // first such entry of each cycle a root and cut it from its parent, so every entry appears once.
    let mut reachable = vec![false; nodes.len()];
    mark_reachable(&roots, &children, &mut reachable);
    for &p in &entries {
        let n = node_of[&*s.meta(p).id];
        if reachable[n] || nodes[n] != p {
            continue;
        }
        if let Some(&parent) = node_of.get(&*s.meta(p).parent) {
            children[parent].retain(|&c| c != n);
        }
        roots.push(n);
        mark_reachable(&[n], &children, &mut reachable);
    }
    // Sort every node's children by timestamp.
    let mut sort_in_js = vec![false; nodes.len()];
    let mut visited = vec![false; nodes.len()];
    let mut stack: Vec<usize> = roots.clone();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut visited[n], true) {
            continue;
        }
        let kids = &mut children[n];
        if kids.iter().all(|&k| !s.meta(nodes[k]).ts_ms.is_nan()) {
            kids.sort_by(|&a, &b| s.meta(nodes[a]).ts_ms.total_cmp(&s.meta(nodes[b]).ts_ms));
        } else {
            sort_in_js[n] = true;
        }
        stack.extend(kids.iter().copied());
    }
    let mut out = Vec::with_capacity(2 + roots.len() + nodes.len() * 4 + entries.len());
    out.push(roots.len() as u32);
    out.extend(roots.iter().map(|&n| nodes[n]));
    out.push(nodes.len() as u32);
    for (n, &pos) in nodes.iter().enumerate() {
        out.push(pos);
        out.push(s.label_pos(&s.meta(pos).id).unwrap_or(NONE));
        out.push(u32::from(sort_in_js[n]));
        out.push(children[n].len() as u32);
        out.extend(children[n].iter().map(|&k| nodes[k]));
    }
    out
}

fn mark_reachable(from: &[usize], children: &[Vec<usize>], reachable: &mut [bool]) {
    let mut stack: Vec<usize> = from.to_vec();
    while let Some(n) = stack.pop() {
        if !std::mem::replace(&mut reachable[n], true) {
            stack.extend(children[n].iter().copied());
        }
    }
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

/// The records of `createBranchedSession` after the header: the path without label records,
/// re-chained, then fresh label records for every current label whose target is on that path.
pub fn branched_lines(s: &Session, path: &[u32]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(path.len());
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
        // `{...scalar}` copies nothing.
        let mut obj = json::parse(s.line(p))
            .ok()
            .and_then(Value::into_object)
            .unwrap_or_default();
        assign(&mut obj, "parentId", key_value(&parent_key));
        if m.kind == Kind::Compaction {
            let fk: Key = if m.first_kept == m.id {
                m.id.clone()
            } else {
                replacement
                    .get(&m.first_kept)
                    .cloned()
                    .unwrap_or_else(|| m.first_kept.clone())
            };
            assign(&mut obj, "firstKeptEntryId", key_value(&fk));
        }
        out.push(json::to_json(&Value::Object(obj)).into_bytes());
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
        let label_rec = json::parse(s.line(label_pos)).unwrap_or(Value::Null);
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
        out.push(line.into_bytes());
        taken.insert(id_key.clone());
        parent = id_key;
    }
    out
}
