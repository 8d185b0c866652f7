//! The checks of the links between entries, made against the id index as the reference builds
//! it: missing and duplicate ids, dangling parent/target/first-kept/from ids, and parent cycles.

use std::collections::HashMap;

use super::{Finding, Rec};
use crate::json::{self, Value};
use crate::record::{self, Key, UNDEFINED};

fn key_of(v: Option<&Value>) -> Key {
    match v {
        None => UNDEFINED.into(),
        Some(v) => json::to_json(v).into(),
    }
}

fn shown(key: &str) -> String {
    if key == UNDEFINED {
        "undefined".into()
    } else {
        key.to_owned()
    }
}

pub(super) fn check_links(entries: &[&Rec], f: &mut Vec<Finding>) {
    let ids: Vec<Key> = entries.iter().map(|r| key_of(r.value.get("id"))).collect();
    let index = check_ids(entries, &ids, f);
    let mut parent_of: Vec<Option<usize>> = vec![None; entries.len()];
    for (i, r) in entries.iter().enumerate() {
        parent_of[i] = check_parent(r, &index, f);
        check_references(r, &ids[i], &index, f);
    }
    report_cycles(entries, &ids, &parent_of, &index, f);
}

/// Entry ids that are not strings or repeat; the id index as the reference's `Map` builds it
/// (the last record with an id wins).
fn check_ids(entries: &[&Rec], ids: &[Key], f: &mut Vec<Finding>) -> HashMap<Key, usize> {
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut first_line: HashMap<Key, usize> = HashMap::new();
    for (i, (r, id)) in entries.iter().zip(ids).enumerate() {
        if !matches!(r.value.get("id"), Some(Value::String(_))) {
            f.push(Finding::error(
                "missing-id",
                r.line,
                format!("the entry id is {}, not a string", shown(id)),
            ));
        }
        if let Some(&prev) = first_line.get(id) {
            f.push(Finding::error(
                "duplicate-id",
                r.line,
                format!(
                    "duplicate id {} (first on line {prev}): readers index only the last record with it",
                    shown(id)
                ),
            ));
        } else {
            first_line.insert(id.clone(), r.line);
        }
        index.insert(id.clone(), i);
    }
    index
}

/// The entry's parent in the index, if it has one there; a missing or dangling `parentId` is
/// reported.
fn check_parent(r: &Rec, index: &HashMap<Key, usize>, f: &mut Vec<Finding>) -> Option<usize> {
    let parent = key_of(r.value.get("parentId"));
    if &*parent == UNDEFINED {
        f.push(Finding::warning(
            "missing-parent-id",
            r.line,
            "the entry has no parentId (readers make it a root)",
        ));
    } else if &*parent != "null" {
        if !record::key_truthy(&parent) {
            // A falsy parentId ends the walk like null does.
        } else if let Some(&p) = index.get(&parent) {
            return Some(p);
        } else {
            f.push(Finding::error(
                "dangling-parent",
                r.line,
                format!(
                    "parentId {parent} is not an entry of this file: readers start a separate tree here"
                ),
            ));
        }
    }
    None
}

/// The other ids an entry names, by its type: a compaction's first kept entry, a label's or
/// context edit's target, a branch summary's `fromId`.
fn check_references(r: &Rec, own: &Key, index: &HashMap<Key, usize>, f: &mut Vec<Finding>) {
    let exists = |k: &str| index.contains_key(k);
    let ty = r.value.get("type");
    let is = |t: &str| matches!(ty, Some(Value::String(s)) if s.eq_str(t));
    if is("compaction") {
        let fk = key_of(r.value.get("firstKeptEntryId"));
        if record::key_truthy(&fk) && fk != *own && !exists(&fk) {
            f.push(Finding::warning(
                "dangling-first-kept",
                r.line,
                format!(
                    "firstKeptEntryId {fk} is not an entry of this file: nothing before this compaction stays in context"
                ),
            ));
        }
    }
    if is("label") || is("context_edit") {
        let t = key_of(r.value.get("targetId"));
        if !exists(&t) {
            f.push(Finding::warning(
                "dangling-target",
                r.line,
                format!("targetId {} is not an entry of this file", shown(&t)),
            ));
        }
    }
    if is("branch_summary") {
        let from = key_of(r.value.get("fromId"));
        if record::key_truthy(&from) && &*from != "\"root\"" && !exists(&from) {
            f.push(Finding::warning(
                "dangling-from",
                r.line,
                format!("fromId {from} is not an entry of this file"),
            ));
        }
    }
}

fn report_cycles(
    entries: &[&Rec],
    ids: &[Key],
    parent_of: &[Option<usize>],
    index: &HashMap<Key, usize>,
    f: &mut Vec<Finding>,
) {
    for cycle in find_cycles(parent_of, index, ids) {
        let first = *cycle.iter().min().expect("cycles are non-empty");
        let names: Vec<String> = cycle.iter().map(|&i| shown(&ids[i])).collect();
        f.push(Finding::error(
            "cycle",
            entries[first].line,
            if cycle.len() == 1 {
                format!("entry {} is its own parent: a parentId cycle", names[0])
            } else {
                format!(
                    "parentId cycle {} -> {}: walks to the root never end (pi-session-native stops at the repeat)",
                    names.join(" -> "),
                    names[0]
                )
            },
        ));
    }
}

/// Cycles among the indexed entries (the ones the id index resolves to), each listed once in walk
/// order starting from its first member in file order. `parent_of[i]` is the index position of
/// entry `i`'s parent.
pub fn find_cycles(
    parent_of: &[Option<usize>],
    index: &HashMap<Key, usize>,
    ids: &[Key],
) -> Vec<Vec<usize>> {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let n = parent_of.len();
    let indexed = |i: usize| index.get(&ids[i]) == Some(&i);
    let mut state = vec![NEW; n];
    let mut cycles = Vec::new();
    for start in 0..n {
        if state[start] != NEW || !indexed(start) {
            continue;
        }
        let mut path = Vec::new();
        let mut cur = Some(start);
        while let Some(c) = cur {
            match state[c] {
                NEW => {
                    state[c] = ON_PATH;
                    path.push(c);
                    cur = parent_of[c];
                }
                ON_PATH => {
                    let at = path.iter().position(|&p| p == c).expect("on the path");
                    let mut cycle: Vec<usize> = path[at..].to_vec();
                    let min_at = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, &v)| v)
                        .map(|(k, _)| k)
                        .unwrap_or(0);
                    cycle.rotate_left(min_at);
                    cycles.push(cycle);
                    break;
                }
                _ => break,
            }
        }
        for p in path {
            state[p] = DONE;
        }
    }
    cycles.sort();
    cycles
}
