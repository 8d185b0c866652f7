//! The link fixes, from format v2 on, each the way readers already interpret the file: ids for
//! entries without one, fresh ids for all but the last of records sharing an id, dangling
//! `parentId`s made null, `parentId` cycles cut, dangling `firstKeptEntryId`s pointed at their
//! compaction.

use std::collections::{HashMap, HashSet};

use pi_session_core::ids;
use pi_session_core::inspect::find_cycles;
use pi_session_core::json::Value;
use pi_session_core::record::{self, Key};

use super::{is_header, key_of, Line};

/// Entry ids in use, and fresh ones that are not.
struct Taken(HashSet<Key>);

impl Taken {
    fn fresh(&mut self) -> String {
        let id = ids::entry_id(|c| self.0.contains(&*record::string_key(c)));
        self.0.insert(record::string_key(&id));
        id
    }
}

/// The entries (object records after the header that are not further headers) with their ids
/// once every one is unique: line indices, ids, and an entry's position by id.
struct Entries {
    rows: Vec<usize>,
    ids: Vec<Key>,
    index: HashMap<Key, usize>,
}

pub(super) fn fix_links(lines: &mut [Line], act: &mut impl FnMut(Option<usize>, String)) {
    let rows: Vec<usize> = (1..lines.len())
        .filter(|&i| matches!(lines[i].value, Value::Object(_)) && !is_header(&lines[i].value))
        .collect();
    let mut taken = Taken(
        rows.iter()
            .map(|&i| key_of(lines[i].value.get("id")))
            .collect(),
    );
    give_ids(lines, &rows, &mut taken, act);
    rename_duplicates(lines, &rows, &mut taken, act);
    let ids: Vec<Key> = rows
        .iter()
        .map(|&i| key_of(lines[i].value.get("id")))
        .collect();
    let index: HashMap<Key, usize> = ids
        .iter()
        .cloned()
        .enumerate()
        .map(|(k, v)| (v, k))
        .collect();
    let entries = Entries { rows, ids, index };
    let parent_of = fix_parents(lines, &entries, act);
    cut_cycles(lines, &entries, &parent_of, act);
    fix_first_kept(lines, &entries, act);
}

fn give_ids(
    lines: &mut [Line],
    rows: &[usize],
    taken: &mut Taken,
    act: &mut impl FnMut(Option<usize>, String),
) {
    for &i in rows {
        if lines[i].value.get("id").is_none() {
            let id = taken.fresh();
            act(
                Some(lines[i].orig),
                format!("gave the entry without an id the id {id}"),
            );
            lines[i].set("id", Value::from(id.as_str()));
        }
    }
}

/// Every record but the last one with an id gets a fresh id.
fn rename_duplicates(
    lines: &mut [Line],
    rows: &[usize],
    taken: &mut Taken,
    act: &mut impl FnMut(Option<usize>, String),
) {
    let mut last_of: HashMap<Key, usize> = HashMap::new();
    for &i in rows {
        last_of.insert(key_of(lines[i].value.get("id")), i);
    }
    for &i in rows {
        let k = key_of(lines[i].value.get("id"));
        let last = last_of[&k];
        if last != i {
            let id = taken.fresh();
            act(
                Some(lines[i].orig),
                format!(
                    "renamed duplicate id {k} to \"{id}\" (readers resolve {k} to the record on line {})",
                    lines[last].orig
                ),
            );
            lines[i].set("id", Value::from(id.as_str()));
        }
    }
}

/// Each entry's parent by position; a dangling `parentId` is made null.
fn fix_parents(
    lines: &mut [Line],
    entries: &Entries,
    act: &mut impl FnMut(Option<usize>, String),
) -> Vec<Option<usize>> {
    let mut parent_of: Vec<Option<usize>> = vec![None; entries.rows.len()];
    for (k, &i) in entries.rows.iter().enumerate() {
        let parent = key_of(lines[i].value.get("parentId"));
        if !record::key_truthy(&parent) {
            continue;
        }
        match entries.index.get(&parent) {
            Some(&p) => parent_of[k] = Some(p),
            None => {
                act(
                    Some(lines[i].orig),
                    format!("parentId {parent} does not exist: set it to null (a root, as readers already show it)"),
                );
                lines[i].set("parentId", Value::Null);
            }
        }
    }
    parent_of
}

fn cut_cycles(
    lines: &mut [Line],
    entries: &Entries,
    parent_of: &[Option<usize>],
    act: &mut impl FnMut(Option<usize>, String),
) {
    for cycle in find_cycles(parent_of, &entries.index, &entries.ids) {
        let first = cycle[0];
        let i = entries.rows[first];
        act(
            Some(lines[i].orig),
            format!(
                "cut a parentId cycle of {} entr{} here: parentId set to null",
                cycle.len(),
                if cycle.len() == 1 { "y" } else { "ies" }
            ),
        );
        lines[i].set("parentId", Value::Null);
    }
}

fn fix_first_kept(
    lines: &mut [Line],
    entries: &Entries,
    act: &mut impl FnMut(Option<usize>, String),
) {
    for (k, &i) in entries.rows.iter().enumerate() {
        if !matches!(lines[i].value.get("type"), Some(Value::String(t)) if t.eq_str("compaction")) {
            continue;
        }
        let fk = key_of(lines[i].value.get("firstKeptEntryId"));
        if record::key_truthy(&fk) && fk != entries.ids[k] && !entries.index.contains_key(&fk) {
            act(
                Some(lines[i].orig),
                format!("firstKeptEntryId {fk} does not exist: set it to the compaction's own id (keeps nothing before it, as readers already do)"),
            );
            let own = lines[i].value.get("id").cloned().unwrap_or(Value::Null);
            lines[i].set("firstKeptEntryId", own);
        }
    }
}
