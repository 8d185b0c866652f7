//! Merging two copies of one session (the same header id) that grew apart, e.g. on two machines.
//!
//! The result is `a`'s header, then every entry of both files exactly once: an entry whose id
//! and bytes are in both is written once; an entry of `b` whose id `a` has with other bytes is
//! kept as a sibling under a new id (8 hex digits of a hash of its line, never an id either file
//! uses) with `"mergedFrom":"<its id>"` added, and the entries of `b` that hang under it follow it
//! there. A sibling an earlier merge already made is recognised (same new id, same bytes), so
//! merging the same copy again adds nothing. Entries come parents first, in the order they have
//! in `a` and then in `b`, except that the tip of the continuation with the latest `timestamp`
//! (tie: the larger id) is moved to the end, so that a reader which resumes at the file's last
//! entry resumes there. Lines that are no entry (do not parse, or carry no string `id`) are kept
//! once each, right after the entry that preceded them in their file (right after the header
//! when none did). Blank lines are dropped, and so is a CR before a newline. A line holding an
//! entry glued after a torn record ([`crate::torn`]) is read as two: the torn bytes, kept as a
//! line that is no entry, then the entry.
//! The output depends only on the two inputs' bytes.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::Path;

use crate::error::{Error, ErrorCode, Result};
use crate::fsio;
use crate::json::{self, JsStr, Value};
use crate::{record, torn};

/// An entry of `b` that `a` has under the same id with other bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The id both files use.
    pub id: String,
    /// The id `b`'s entry was given in the result.
    pub new_id: String,
}

/// The result of a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The merged file, every line ending in `\n`.
    pub bytes: Vec<u8>,
    /// The header id both files share.
    pub session_id: String,
    /// Entries written.
    pub entries: usize,
    /// Entries of `b` kept under a new id, in the order they were met.
    pub conflicts: Vec<Conflict>,
    /// Lines that are no entry, kept as they were (each distinct line once).
    pub kept_lines: usize,
    /// The id of the last entry (the leaf a reader resumes at), if there is an entry.
    pub leaf_id: Option<String>,
}

enum Item {
    Entry {
        id: String,
        parent: Option<String>,
        line: Vec<u8>,
    },
    Other(Vec<u8>),
}

struct Parsed {
    header: Vec<u8>,
    id: String,
    items: Vec<Item>,
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(JsStr::to_string_lossy)
}

fn parse_file(bytes: &[u8], which: &str) -> Result<Parsed> {
    // A CR before the newline is dropped, so a copy that went through a CRLF editor still matches.
    let mut lines = bytes
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let not_session = || {
        Error::new(
            ErrorCode::InvalidSessionFile,
            format!("{which} is not a pi session: its first line is no session header"),
        )
    };
    let header = lines.next().ok_or_else(not_session)?;
    let hv = json::parse(header).map_err(|_| not_session())?;
    if str_field(&hv, "type").as_deref() != Some("session") {
        return Err(not_session());
    }
    let id = str_field(&hv, "id").ok_or_else(not_session)?;
    let mut items = Vec::new();
    for line in lines {
        let v = match json::parse(line) {
            Ok(v) => v,
            Err(_) => match torn::glued_entry(line, record::read_meta) {
                // The torn bytes and the entry glued after them become two lines.
                Some((at, _)) => {
                    items.push(Item::Other(line[..at].to_vec()));
                    items.push(item(&line[at..]));
                    continue;
                }
                None => Value::Null,
            },
        };
        items.push(item_of(line, &v));
    }
    Ok(Parsed {
        header: header.to_vec(),
        id,
        items,
    })
}

/// A line after the header as a merge sees it: an entry (an object with a string `id`) or
/// another line.
fn item(line: &[u8]) -> Item {
    item_of(line, &json::parse(line).unwrap_or(Value::Null))
}

fn item_of(line: &[u8], v: &Value) -> Item {
    match (v.as_object().is_some(), str_field(v, "id")) {
        (true, Some(id)) => Item::Entry {
            id,
            parent: str_field(v, "parentId"),
            line: line.to_vec(),
        },
        _ => Item::Other(line.to_vec()),
    }
}

/// FNV-1a, 64 bits: stable across versions and platforms (unlike `std`'s hasher).
pub(crate) fn fnv1a(parts: &[&[u8]]) -> u64 {
    fnv1a_on(0xcbf2_9ce4_8422_2325, parts)
}

/// [`fnv1a`] continued from `h`, the hash of what comes before `parts`.
pub(crate) fn fnv1a_on(mut h: u64, parts: &[&[u8]]) -> u64 {
    for p in parts {
        for &b in *p {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The `salt`-th candidate id for a conflicting entry: 8 hex digits of a hash of its line (a
/// counter is mixed in when an earlier candidate is taken).
fn candidate_id(line: &[u8], salt: u64) -> String {
    let salt_bytes = salt.to_le_bytes();
    let parts: &[&[u8]] = if salt == 0 {
        &[line]
    } else {
        &[line, &salt_bytes]
    };
    let h = fnv1a(parts);
    format!("{:08x}", (h ^ (h >> 32)) as u32)
}

/// `line` with string fields set (an existing key keeps its place, a new one goes last).
fn rewrite(line: &[u8], fields: &[(&str, &str)]) -> Result<Vec<u8>> {
    let mut v = json::parse(line).map_err(|_| Error::internal("a merged entry does not parse"))?;
    let o = v
        .as_object_mut()
        .ok_or_else(|| Error::internal("a merged entry is no object"))?;
    for (k, val) in fields {
        o.insert(JsStr::from_str(k), Value::from(*val));
    }
    Ok(json::to_json(&v).into_bytes())
}

struct Out {
    id: String,
    parent: Option<String>,
    line: Vec<u8>,
    /// The non-entry lines that follow this entry.
    after: Vec<Vec<u8>>,
}

/// Merge two session files' bytes. Headers with different ids are a `SESSION_MISMATCH` error.
pub fn merge_bytes(a: &[u8], b: &[u8]) -> Result<Merged> {
    let pa = parse_file(a, "the first file")?;
    let pb = parse_file(b, "the second file")?;
    if pa.id != pb.id {
        return Err(Error::new(
            ErrorCode::SessionMismatch,
            format!("cannot merge different sessions: {} and {}", pa.id, pb.id),
        ));
    }
    let mut join = Join::new(&[&pa, &pb]);
    for p in [&pa, &pb] {
        join.file(p)?;
    }
    let order = parents_first(&join.out, &join.by_id);
    let bytes = join.bytes(&pa.header, &order, a.len() + b.len());
    Ok(Merged {
        bytes,
        session_id: pa.id,
        entries: join.out.len(),
        conflicts: join.conflicts,
        kept_lines: join.kept_lines,
        leaf_id: order.last().map(|&k| join.out[k].id.clone()),
    })
}

/// The merged session as it is built: each file's items are fed in turn, entries once each (a
/// conflicting one kept beside the other under a new id), other lines once each after the entry
/// they followed.
struct Join {
    /// Every entry id of both files, and the ids handed out since.
    taken: HashSet<String>,
    out: Vec<Out>,
    /// The non-entry lines before any entry.
    head: Vec<Vec<u8>>,
    by_id: HashMap<String, usize>,
    seen_other: HashSet<Vec<u8>>,
    conflicts: Vec<Conflict>,
    kept_lines: usize,
}

impl Join {
    fn new(files: &[&Parsed]) -> Join {
        let mut taken: HashSet<String> = HashSet::new();
        for p in files {
            for it in &p.items {
                if let Item::Entry { id, .. } = it {
                    taken.insert(id.clone());
                }
            }
        }
        Join {
            taken,
            out: Vec::new(),
            head: Vec::new(),
            by_id: HashMap::new(),
            seen_other: HashSet::new(),
            conflicts: Vec::new(),
            kept_lines: 0,
        }
    }

    /// One file's items, in order.
    fn file(&mut self, p: &Parsed) -> Result<()> {
        // Ids of this file's entries that were kept under a new id; their children follow them.
        let mut renamed: HashMap<&str, String> = HashMap::new();
        let mut last: Option<usize> = None;
        for it in &p.items {
            match it {
                Item::Other(line) => {
                    if self.seen_other.insert(line.clone()) {
                        self.kept_lines += 1;
                        match last {
                            Some(k) => self.out[k].after.push(line.clone()),
                            None => self.head.push(line.clone()),
                        }
                    }
                }
                Item::Entry { id, parent, line } => {
                    last = Some(self.entry(id, parent, line, &mut renamed)?);
                }
            }
        }
        Ok(())
    }

    /// An entry: the one already there when it is the same, else added (under a new id when
    /// its id is taken). Its parent follows a renamed parent. Returns where it is in `out`.
    fn entry<'p>(
        &mut self,
        id: &'p str,
        parent: &Option<String>,
        line: &[u8],
        renamed: &mut HashMap<&'p str, String>,
    ) -> Result<usize> {
        if let Some(&k) = self.by_id.get(id) {
            if self.out[k].line == *line {
                return Ok(k);
            }
        }
        let new_parent = parent.as_deref().and_then(|pid| renamed.get(pid));
        let (line, parent) = match new_parent {
            Some(np) => (rewrite(line, &[("parentId", np)])?, Some(np.clone())),
            None => (line.to_vec(), parent.clone()),
        };
        match self.by_id.get(id) {
            None => Ok(self.push(id.to_owned(), parent, line)),
            Some(&k) if self.out[k].line == line => Ok(k),
            Some(_) => self.sibling(id, parent, &line, renamed),
        }
    }

    /// An entry whose id names other content: kept beside it under the first free candidate id,
    /// unless an earlier merge (or an earlier line of this file) already carries this very entry
    /// as a sibling.
    fn sibling<'p>(
        &mut self,
        id: &'p str,
        parent: Option<String>,
        line: &[u8],
        renamed: &mut HashMap<&'p str, String>,
    ) -> Result<usize> {
        let mut salt = 0;
        loop {
            let new_id = candidate_id(line, salt);
            let new_line = rewrite(line, &[("id", &new_id), ("mergedFrom", id)])?;
            if let Some(&k) = self.by_id.get(&new_id) {
                if self.out[k].line == new_line {
                    renamed.insert(id, new_id);
                    return Ok(k);
                }
            }
            if self.taken.contains(&new_id) {
                salt += 1;
                continue;
            }
            self.taken.insert(new_id.clone());
            self.conflicts.push(Conflict {
                id: id.to_owned(),
                new_id: new_id.clone(),
            });
            renamed.insert(id, new_id.clone());
            return Ok(self.push(new_id, parent, new_line));
        }
    }

    fn push(&mut self, id: String, parent: Option<String>, line: Vec<u8>) -> usize {
        let k = self.out.len();
        self.by_id.insert(id.clone(), k);
        self.out.push(Out {
            id,
            parent,
            line,
            after: Vec::new(),
        });
        k
    }

    /// The merged file: the header, the lines before any entry, then each entry in `order` with
    /// the lines that followed it.
    fn bytes(&self, header: &[u8], order: &[usize], capacity: usize) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(capacity);
        bytes.extend_from_slice(header);
        bytes.push(b'\n');
        for l in &self.head {
            bytes.extend_from_slice(l);
            bytes.push(b'\n');
        }
        for &k in order {
            bytes.extend_from_slice(&self.out[k].line);
            bytes.push(b'\n');
            for l in &self.out[k].after {
                bytes.extend_from_slice(l);
                bytes.push(b'\n');
            }
        }
        bytes
    }
}

/// The entries' order: parents before children, otherwise the order met (a cycle is broken at
/// its first entry met), then the latest tip moved to the end.
fn parents_first(out: &[Out], by_id: &HashMap<String, usize>) -> Vec<usize> {
    let n = out.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0usize; n];
    for (k, e) in out.iter().enumerate() {
        if let Some(&p) = e.parent.as_ref().and_then(|p| by_id.get(p)) {
            if p != k {
                children[p].push(k);
                indeg[k] += 1;
            }
        }
    }
    let mut heap: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&k| indeg[k] == 0).map(Reverse).collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut next_forced = 0;
    while order.len() < n {
        let k = match heap.pop() {
            Some(Reverse(k)) if done[k] => continue,
            Some(Reverse(k)) => k,
            None => {
                while done[next_forced] {
                    next_forced += 1;
                }
                next_forced
            }
        };
        done[k] = true;
        order.push(k);
        for &c in &children[k] {
            if !done[c] {
                indeg[c] -= 1;
                if indeg[c] == 0 {
                    heap.push(Reverse(c));
                }
            }
        }
    }
    let tip = (0..n)
        .filter(|&k| children[k].is_empty())
        .map(|k| (timestamp(&out[k].line), &out[k].id, k))
        .max()
        .map(|(_, _, k)| k);
    if let Some(t) = tip {
        order.retain(|&k| k != t);
        order.push(t);
    }
    order
}

fn timestamp(line: &[u8]) -> String {
    json::parse(line)
        .ok()
        .and_then(|v| str_field(&v, "timestamp"))
        .unwrap_or_default()
}

/// Merge the files `a` and `b` into `out` (which may be `a` or `b`), replaced atomically. Nothing
/// is written when the merge fails.
pub fn merge_files(a: &Path, b: &Path, out: &Path) -> Result<Merged> {
    let read = |p: &Path| -> Result<Vec<u8>> {
        fsio::read_all(p)?.ok_or_else(|| {
            Error::io(
                &std::io::Error::from(std::io::ErrorKind::NotFound),
                "open",
                p,
            )
        })
    };
    let merged = merge_bytes(&read(a)?, &read(b)?)?;
    fsio::replace_atomic(out, &merged.bytes)?;
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_ids_are_8_hex_digits_and_change_with_the_salt() {
        let first = candidate_id(b"x", 0);
        assert_eq!(first, candidate_id(b"x", 0));
        assert_ne!(first, candidate_id(b"x", 1));
        assert_eq!(first.len(), 8);
        assert!(first.bytes().all(|c| c.is_ascii_hexdigit()));
    }
}
