//! `merge`: properties over random session trees (a small deterministic PRNG, so every run checks
//! the same cases), and the rules for mismatched headers, conflicts and lines that are no entry.

use std::collections::BTreeSet;

use pi_session_core::json::{self, Value};
use pi_session_core::merge::{merge_bytes, merge_files};
use pi_session_core::ErrorCode;

const HEADER: &str = r#"{"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// Entries of a tree: each one's parent (an index) and its line.
type Tree = Vec<(Option<usize>, String)>;

/// xorshift64*: enough randomness for shapes, and the same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random tree of `n` entries: entry `i` hangs under an earlier one (or is a root), and its
/// timestamp grows with `i`.
fn tree(rng: &mut Rng, n: usize) -> Tree {
    (0..n)
        .map(|i| {
            let parent = (i > 0 && rng.below(8) != 0).then(|| rng.below(i));
            let pid = parent.map_or("null".to_owned(), |p| format!("\"e{p:04}\""));
            let line = format!(
                r#"{{"type":"message","id":"e{i:04}","parentId":{pid},"timestamp":"2026-01-01T00:{:02}:{:02}.000Z","message":{{"role":"user","content":"m{i}"}}}}"#,
                i / 60,
                i % 60
            );
            (parent, line)
        })
        .collect()
}

/// A file of the entries `keep` selects, in tree order (parents first, the latest tip last).
fn file(t: &[(Option<usize>, String)], keep: &[bool]) -> Vec<u8> {
    let mut s = format!("{HEADER}\n");
    for (i, (_, line)) in t.iter().enumerate() {
        if keep[i] {
            s.push_str(line);
            s.push('\n');
        }
    }
    s.into_bytes()
}

/// `keep` with every ancestor of a kept entry kept too.
fn prefix_closed(t: &[(Option<usize>, String)], mut keep: Vec<bool>) -> Vec<bool> {
    for i in (0..t.len()).rev() {
        if keep[i] {
            let mut p = t[i].0;
            while let Some(j) = p {
                keep[j] = true;
                p = t[j].0;
            }
        }
    }
    keep
}

fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect()
}

/// The entry lines (everything after the header).
fn entry_set(bytes: &[u8]) -> BTreeSet<Vec<u8>> {
    lines(bytes)[1..].iter().map(|l| l.to_vec()).collect()
}

fn merge(a: &[u8], b: &[u8]) -> Vec<u8> {
    let m = merge_bytes(a, b).expect("merge");
    assert!(m.conflicts.is_empty(), "no conflicts expected");
    m.bytes
}

fn field(line: &[u8], key: &str) -> Option<String> {
    json::parse(line)
        .ok()?
        .get(key)
        .and_then(Value::as_str)
        .map(|s| s.to_string_lossy())
}

/// Parents come before children, and the last entry is the leaf with the latest timestamp.
fn assert_well_ordered(bytes: &[u8]) {
    let ls = lines(bytes);
    let entries = &ls[1..];
    let mut seen = BTreeSet::new();
    let mut parents = BTreeSet::new();
    for l in entries {
        if let Some(p) = field(l, "parentId") {
            assert!(seen.contains(&p), "parent {p} comes later");
            parents.insert(p);
        }
        seen.insert(field(l, "id").unwrap());
    }
    let latest_leaf = entries
        .iter()
        .filter(|l| !parents.contains(&field(l, "id").unwrap()))
        .map(|l| (field(l, "timestamp").unwrap(), field(l, "id").unwrap()))
        .max();
    if let Some((_, id)) = latest_leaf {
        assert_eq!(field(entries.last().unwrap(), "id"), Some(id));
    }
}

/// Three random overlapping prefix-closed copies of a random tree, which together hold it all.
fn copies(rng: &mut Rng) -> (Tree, [Vec<bool>; 3]) {
    let n = 1 + rng.below(40);
    let t = tree(rng, n);
    let mut keep = [vec![false; n], vec![false; n], vec![false; n]];
    for i in 0..n {
        let mask = 1 + rng.below(7);
        for (c, k) in keep.iter_mut().enumerate() {
            k[i] = mask & (1 << c) != 0;
        }
    }
    let keep = keep.map(|k| prefix_closed(&t, k));
    (t, keep)
}

#[test]
fn merging_is_commutative_on_entry_sets() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..300 {
        let (t, [ka, kb, _]) = copies(&mut rng);
        let (a, b) = (file(&t, &ka), file(&t, &kb));
        let ab = merge(&a, &b);
        let ba = merge(&b, &a);
        assert_eq!(entry_set(&ab), entry_set(&ba));
        assert_well_ordered(&ab);
        assert_well_ordered(&ba);
    }
}

#[test]
fn merging_a_file_with_itself_gives_it_back_byte_for_byte() {
    let mut rng = Rng(7);
    for _ in 0..300 {
        let (t, [ka, ..]) = copies(&mut rng);
        let a = file(&t, &ka);
        assert_eq!(merge(&a, &a), a);
    }
}

#[test]
fn merging_is_associative_on_entry_sets() {
    let mut rng = Rng(0xdead_beef);
    for _ in 0..300 {
        let (t, [ka, kb, kc]) = copies(&mut rng);
        let (a, b, c) = (file(&t, &ka), file(&t, &kb), file(&t, &kc));
        let left = merge(&merge(&a, &b), &c);
        let right = merge(&a, &merge(&b, &c));
        assert_eq!(entry_set(&left), entry_set(&right));
        assert_well_ordered(&left);
        assert_well_ordered(&right);
    }
}

#[test]
fn two_overlapping_copies_merge_back_into_the_whole_tree() {
    let mut rng = Rng(42);
    for _ in 0..300 {
        let (t, [ka, kb, _]) = copies(&mut rng);
        // Cover the tree with the first two copies alone.
        let kb: Vec<bool> = kb.iter().zip(&ka).map(|(b, a)| *b || !*a).collect();
        let kb = prefix_closed(&t, kb);
        let whole = file(&t, &vec![true; t.len()]);
        let m = merge_bytes(&file(&t, &ka), &file(&t, &kb)).unwrap();
        assert!(m.conflicts.is_empty());
        assert_eq!(m.entries, t.len());
        assert_eq!(entry_set(&m.bytes), entry_set(&whole));
        assert_eq!(lines(&m.bytes)[0], HEADER.as_bytes());
        assert_well_ordered(&m.bytes);
    }
}

#[test]
fn different_sessions_are_a_session_mismatch_and_nothing_is_written() {
    let a = format!("{HEADER}\n");
    let b = a.replace("\"s-1\"", "\"s-2\"");
    let e = merge_bytes(a.as_bytes(), b.as_bytes()).unwrap_err();
    assert_eq!(e.code, ErrorCode::SessionMismatch);
    assert_eq!(e.js_code(), "SESSION_MISMATCH");

    let dir = std::env::temp_dir().join(format!("pi-merge-mismatch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (pa, pb, out) = (
        dir.join("a.jsonl"),
        dir.join("b.jsonl"),
        dir.join("out.jsonl"),
    );
    std::fs::write(&pa, &a).unwrap();
    std::fs::write(&pb, &b).unwrap();
    let e = merge_files(&pa, &pb, &out).unwrap_err();
    assert_eq!(e.code, ErrorCode::SessionMismatch);
    assert!(!out.exists());
    assert_eq!(std::fs::read_to_string(&pa).unwrap(), a);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_without_a_session_header_is_refused() {
    let e = merge_bytes(b"{\"type\":\"message\"}\n", HEADER.as_bytes()).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidSessionFile);
}

const ROOT: &str = r#"{"type":"message","id":"r","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#;
const X_A: &str = r#"{"type":"message","id":"x","parentId":"r","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":"from a"}}"#;
const X_B: &str = r#"{"type":"message","id":"x","parentId":"r","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":"from b"}}"#;
const Y_B: &str = r#"{"type":"message","id":"y","parentId":"x","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"more"}}"#;

#[test]
fn a_conflict_keeps_both_and_the_later_continuation_ends_the_file() {
    let a = format!("{HEADER}\n{ROOT}\n{X_A}\n");
    let b = format!("{HEADER}\n{ROOT}\n{X_B}\n{Y_B}\n");
    let m = merge_bytes(a.as_bytes(), b.as_bytes()).unwrap();
    assert_eq!(m.entries, 4);
    assert_eq!(m.conflicts.len(), 1);
    let c = &m.conflicts[0];
    assert_eq!(c.id, "x");
    assert_eq!(c.new_id.len(), 8);
    let ls = lines(&m.bytes);
    assert_eq!(ls[0], HEADER.as_bytes());
    assert_eq!(ls[1], ROOT.as_bytes());
    assert_eq!(ls[2], X_A.as_bytes(), "a's entry keeps its id and bytes");
    let sibling = ls[3];
    assert_eq!(field(sibling, "id").as_deref(), Some(c.new_id.as_str()));
    assert_eq!(field(sibling, "mergedFrom").as_deref(), Some("x"));
    assert_eq!(field(sibling, "parentId").as_deref(), Some("r"));
    assert!(String::from_utf8_lossy(sibling).contains("from b"));
    // b's continuation follows b's entry, and as the latest tip it is the file's last entry.
    assert_eq!(field(ls[4], "id").as_deref(), Some("y"));
    assert_eq!(field(ls[4], "parentId").as_deref(), Some(c.new_id.as_str()));
    assert_eq!(m.leaf_id.as_deref(), Some("y"));

    // Deterministic, and merging b in again adds nothing.
    assert_eq!(merge_bytes(a.as_bytes(), b.as_bytes()).unwrap(), m);
    let again = merge_bytes(&m.bytes, b.as_bytes()).unwrap();
    assert!(again.conflicts.is_empty());
    assert_eq!(again.bytes, m.bytes);
    // The other way round b's entry keeps the id, a's is the sibling.
    let ba = merge_bytes(b.as_bytes(), a.as_bytes()).unwrap();
    assert_eq!(ba.conflicts.len(), 1);
    assert_eq!(lines(&ba.bytes)[2], X_B.as_bytes());
}

#[test]
fn lines_that_are_no_entry_are_kept_once_and_counted() {
    let junk1 = "{not json";
    let junk2 = r#"{"type":"note"}"#;
    let a = format!("{HEADER}\n{junk1}\n{ROOT}\n{junk2}\n{X_A}\n");
    let b = format!("{HEADER}\n{ROOT}\n{junk2}\nzzz\n");
    let m = merge_bytes(a.as_bytes(), b.as_bytes()).unwrap();
    assert_eq!(m.kept_lines, 3);
    assert_eq!(m.entries, 2);
    assert_eq!(
        String::from_utf8(m.bytes).unwrap(),
        format!("{HEADER}\n{junk1}\n{ROOT}\n{junk2}\nzzz\n{X_A}\n")
    );
    assert_eq!(
        merge_bytes(a.as_bytes(), a.as_bytes()).unwrap().bytes,
        a.as_bytes()
    );
}

#[test]
fn random_conflicts_keep_both_versions_and_merging_again_adds_nothing() {
    let mut rng = Rng(0x5eed);
    for _ in 0..200 {
        let n = 1 + rng.below(30);
        let t = tree(&mut rng, n);
        let a = file(&t, &vec![true; n]);
        // b: the same tree with some entries' content changed.
        let changed: Vec<bool> = (0..n).map(|_| rng.below(4) == 0).collect();
        let tb: Tree = t
            .iter()
            .zip(&changed)
            .map(|((p, line), c)| {
                let line = if *c {
                    line.replace("\"content\":\"m", "\"content\":\"b")
                } else {
                    line.clone()
                };
                (*p, line)
            })
            .collect();
        let b = file(&tb, &vec![true; n]);
        let m = merge_bytes(&a, &b).unwrap();
        let k = changed.iter().filter(|c| **c).count();
        assert_eq!(m.conflicts.len(), k);
        assert_eq!(m.entries, n + k);
        let got = entry_set(&m.bytes);
        for l in &lines(&a)[1..] {
            assert!(got.contains(*l), "a's entries are kept as they are");
        }
        for (i, (_, line)) in tb.iter().enumerate() {
            if changed[i] {
                let id = format!("e{i:04}");
                let content = format!("b{i}");
                assert!(
                    got.iter()
                        .any(|g| field(g, "mergedFrom").as_deref() == Some(&id)
                            && String::from_utf8_lossy(g).contains(&content)),
                    "b's {line} is kept as a sibling"
                );
            }
        }
        assert_well_ordered(&m.bytes);
        let again = merge_bytes(&m.bytes, &b).unwrap();
        assert!(again.conflicts.is_empty());
        assert_eq!(again.bytes, m.bytes);
    }
}

#[test]
fn a_crlf_copy_matches_its_lf_original() {
    let a = format!("{HEADER}\n{ROOT}\n{X_A}\n");
    let b = a.replace('\n', "\r\n");
    let m = merge_bytes(a.as_bytes(), b.as_bytes()).unwrap();
    assert!(m.conflicts.is_empty());
    assert_eq!(m.bytes, a.as_bytes());
}
