//! Property test of the loader over damaged session files, with a seeded PRNG (no extra crates).
//!
//! Every fixture (`fixtures/**/*.jsonl`) is damaged in 1–3 random ways (truncation, byte flips,
//! NUL bytes, invalid UTF-8, CRLF, a BOM, duplicated / dropped / swapped lines, rewired parents
//! that make cycles or dangle, garbage and deeply nested lines) and opened. Properties:
//! - open never panics and never hangs (each case runs on a worker watched with a timeout);
//! - it either loads or refuses a non-session file (`INVALID_SESSION_FILE`), nothing else;
//! - no byte of the file is lost: it is unchanged, gets exactly one `\n` (torn last line), or is
//!   migrated with the original kept byte for byte as `<file>.bak`;
//! - every structural query (paths, context, tree, children) terminates, and an append after the
//!   damage is found again on reopen.
//!
//! `PI_FUZZ_SEED` (default 1) and `PI_FUZZ_CASES` (default 1500) choose the run; it also stops after
//! `PI_FUZZ_SECS` seconds (default 20) so CI stays bounded. A failure prints the seed and the
//! case's recipe.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pi_session_core::{context, tree, ErrorCode, Session};

mod common;
use common::temp_dir;

/// splitmix64: small, seedable, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.u64() % n as u64) as usize
        }
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.u64() % 100 < percent
    }
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, Vec<u8>)>) {
        let mut names: Vec<_> = fs::read_dir(dir).unwrap().flatten().collect();
        names.sort_by_key(|e| e.file_name());
        for e in names {
            let name = e.file_name().to_string_lossy().into_owned();
            let r = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if e.path().is_dir() {
                walk(&e.path(), &r, out);
            } else if name.ends_with(".jsonl") {
                out.push((r, fs::read(e.path()).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&fixtures_dir(), "", &mut out);
    assert!(out.len() >= 20, "fixtures not found");
    out
}

fn lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    lines.join(&b'\n')
}

/// The quoted values of `"id":"…"` in the text.
fn ids_in(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let pat = b"\"id\":\"";
    let mut i = 0;
    while let Some(at) = find(&bytes[i..], pat) {
        let start = i + at + pat.len();
        if let Some(end) = bytes[start..].iter().position(|&b| b == b'"') {
            out.push(bytes[start..start + end].to_vec());
            i = start + end;
        } else {
            break;
        }
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

const GARBAGE: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"null",
    b"123",
    b"\"just a string\"",
    b"{\"type\":\"session\"}",
    b"{\"type\":\"message\",\"id\":\"zz\",\"parentId\":\"zz\"}",
    b"{\"type\":\"label\",\"id\":\"lb\",\"targetId\":\"nope\",\"label\":\"x\"}",
    b"{\"type\":\"compaction\",\"id\":\"cp\",\"firstKeptEntryId\":\"missing\",\"summary\":1}",
    b"{\"id\":\"\\ud800\",\"parentId\":\"\\udfff\"}",
    b"{\"type\":\"message\",\"message\":null}",
    b"{\"a\":1e999999,\"b\":-0,\"c\":\"\\u0000\"}",
    b"   ",
    b"\r",
    b"\xef\xbb\xbf{}",
];

/// Damage `bytes` once; returns a short description of what was done.
fn mutate_once(rng: &mut Rng, bytes: &mut Vec<u8>, other: &[u8]) -> String {
    let len = bytes.len();
    match rng.below(14) {
        0 => {
            let at = rng.below(len + 1);
            bytes.truncate(at);
            format!("truncate@{at}")
        }
        1 => {
            let n = 1 + rng.below(4);
            for _ in 0..n {
                if !bytes.is_empty() {
                    let at = rng.below(bytes.len());
                    bytes[at] ^= 1 << rng.below(8);
                }
            }
            format!("flip×{n}")
        }
        2 => {
            let at = rng.below(len + 1);
            bytes.insert(at, 0);
            format!("nul@{at}")
        }
        3 => {
            const BAD: &[&[u8]] = &[
                b"\xff",
                b"\xc3",
                b"\xed\xa0\x80",
                b"\xf8\x88\x80\x80\x80",
                b"\xe2\x82",
                b"\xc0\xaf",
            ];
            let at = rng.below(len + 1);
            let b = BAD[rng.below(BAD.len())];
            bytes.splice(at..at, b.iter().copied());
            format!("badutf8@{at}")
        }
        4 => {
            let mut out = Vec::with_capacity(len + len / 20);
            for &b in bytes.iter() {
                if b == b'\n' {
                    out.push(b'\r');
                }
                out.push(b);
            }
            *bytes = out;
            "crlf".into()
        }
        5 => {
            bytes.splice(0..0, [0xef, 0xbb, 0xbf]);
            "bom".into()
        }
        6 => {
            let mut ls = lines(bytes);
            let i = rng.below(ls.len());
            let dup = ls[i].clone();
            let at = rng.below(ls.len() + 1);
            ls.insert(at, dup);
            *bytes = join(&ls);
            format!("dup-line{i}@{at}")
        }
        7 => {
            let mut ls = lines(bytes);
            let i = rng.below(ls.len());
            ls.remove(i);
            *bytes = join(&ls);
            format!("drop-line{i}")
        }
        8 => {
            let mut ls = lines(bytes);
            let (i, j) = (rng.below(ls.len()), rng.below(ls.len()));
            ls.swap(i, j);
            *bytes = join(&ls);
            format!("swap{i},{j}")
        }
        9 => {
            // Point a parentId at another id of the file (cycles, self-parents) or nowhere.
            let ids = ids_in(bytes);
            let pat = b"\"parentId\":";
            let spots: Vec<usize> = (0..bytes.len().saturating_sub(pat.len()))
                .filter(|&i| bytes[i..].starts_with(pat))
                .collect();
            if spots.is_empty() {
                return "rewire(none)".into();
            }
            let at = spots[rng.below(spots.len())] + pat.len();
            let end = bytes[at..]
                .iter()
                .position(|&b| b == b',' || b == b'}')
                .map_or(bytes.len(), |e| at + e);
            let new: Vec<u8> = if ids.is_empty() || rng.chance(20) {
                b"\"dangling\"".to_vec()
            } else {
                let id = &ids[rng.below(ids.len())];
                [b"\"".as_slice(), id, b"\""].concat()
            };
            bytes.splice(at..end, new);
            format!("rewire@{at}")
        }
        10 => {
            let mut ls = lines(bytes);
            let g = GARBAGE[rng.below(GARBAGE.len())].to_vec();
            let at = rng.below(ls.len() + 1);
            ls.insert(at, g);
            *bytes = join(&ls);
            format!("garbage@{at}")
        }
        11 => {
            let depth = 1000 + rng.below(200_000);
            let mut ls = lines(bytes);
            let mut g = vec![b'['; depth];
            if rng.chance(50) {
                g.resize(2 * depth, b']');
            }
            let at = rng.below(ls.len() + 1);
            ls.insert(at, g);
            *bytes = join(&ls);
            format!("deep{depth}@{at}")
        }
        12 => {
            // Lines of another fixture spliced in (a second header, foreign ids, other versions).
            let mut ls = lines(bytes);
            let theirs = lines(other);
            let i = rng.below(theirs.len());
            let at = rng.below(ls.len() + 1);
            ls.insert(at, theirs[i].clone());
            *bytes = join(&ls);
            format!("splice{i}@{at}")
        }
        _ => {
            // Cut a line in the middle, as a torn write followed by further appends would.
            let mut ls = lines(bytes);
            let i = rng.below(ls.len());
            let cut = rng.below(ls[i].len() + 1);
            ls[i].truncate(cut);
            *bytes = join(&ls);
            format!("tear-line{i}@{cut}")
        }
    }
}

struct Case {
    n: u64,
    recipe: String,
    bytes: Vec<u8>,
    /// Also append an entry after the damage and reopen.
    append_after: bool,
}

fn make_cases(seed: u64, count: u64) -> Vec<Case> {
    let corpus = corpus();
    let mut rng = Rng(seed);
    (0..count)
        .map(|n| {
            let (name, base) = &corpus[rng.below(corpus.len())];
            let other = &corpus[rng.below(corpus.len())].1;
            let mut bytes = base.clone();
            let mut recipe = vec![name.clone()];
            for _ in 0..1 + rng.below(3) {
                recipe.push(mutate_once(&mut rng, &mut bytes, other));
            }
            Case {
                n,
                recipe: recipe.join(" "),
                bytes,
                append_after: rng.chance(25),
            }
        })
        .collect()
}

fn blank(dir: &Path) -> Session {
    Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap()
}

fn bak_of(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".bak");
    PathBuf::from(name)
}

/// Exercise every structural query; they must terminate.
fn walk_everything(s: &Session) {
    let entries = s.entry_positions();
    for &p in &entries {
        let _ = s.line(p);
        let _ = s.path_to(p);
        let id = s.meta(p).id.clone();
        let _ = s.children(&id);
        let _ = s.branch_from(Some(&id));
    }
    let path = s.context_path();
    let _ = context::select(s, &path);
    let _ = context::plan(s, &path);
    let _ = tree::tree(s);
    let _ = s.labels().count();
    let _ = (s.leaf_pos(), s.session_name_pos(), s.header_pos());
}

/// Open one damaged file and check the properties; `Err` describes a violation.
fn check_case(dir: &Path, case: &Case) -> Result<(), String> {
    let file = dir.join(format!("case-{}.jsonl", case.n));
    fs::write(&file, &case.bytes).unwrap();
    let mut s = blank(dir);
    match s.set_session_file(file.clone()) {
        Err(e) if e.code == ErrorCode::InvalidSessionFile => {
            if fs::read(&file).unwrap() != case.bytes {
                return Err("a refused file was modified".into());
            }
            return Ok(());
        }
        Err(e) => return Err(format!("unexpected error {:?}: {}", e.code, e.message)),
        Ok(_) => {}
    }
    let after = fs::read(&file).unwrap();
    let backup = bak_of(&file);
    if backup.exists() {
        // The original bytes, after the one-newline repair of a torn last line.
        let mut repaired = case.bytes.clone();
        if !repaired.ends_with(b"\n") {
            repaired.push(b'\n');
        }
        let kept = fs::read(&backup).unwrap();
        if kept != case.bytes && kept != repaired {
            return Err("the migration backup differs from the original".into());
        }
    } else if case.bytes.is_empty() {
        if !after.starts_with(b"{\"type\":\"session\"") {
            return Err("an empty file did not get a header".into());
        }
    } else if after != case.bytes {
        let repaired = after.len() == case.bytes.len() + 1
            && after.starts_with(&case.bytes)
            && after.ends_with(b"\n")
            && !case.bytes.ends_with(b"\n");
        if !repaired {
            return Err("open changed the file other than by appending one newline".into());
        }
    }
    walk_everything(&s);

    // Appending after the damage works and survives a reopen.
    if case.append_after {
        let count = s.entry_count();
        let id = s.next_entry_id();
        // The empty key is an id-less leaf (`undefined` in JS, which JSON.stringify writes as null).
        let parent = match s.leaf_key() {
            Some(k) if !k.is_empty() => k.to_string(),
            _ => "null".to_string(),
        };
        let line = format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2024-01-02T00:00:00.000Z","message":{{"role":"user","content":"after"}}}}"#
        );
        s.append(line.as_bytes())
            .map_err(|e| format!("append after damage failed: {}", e.message))?;
        drop(s);
        let mut again = blank(dir);
        again
            .set_session_file(file.clone())
            .map_err(|e| format!("reopen after append failed: {}", e.message))?;
        let key = pi_session_core::record::string_key(&id);
        if again.lookup(&key).is_none() {
            return Err("the appended entry is missing after reopen".into());
        }
        if again.entry_count() != count + 1 {
            return Err(format!(
                "entry count after reopen {} != {} + 1",
                again.entry_count(),
                count
            ));
        }
        walk_everything(&again);
    }
    let _ = fs::remove_file(&file);
    let _ = fs::remove_file(&backup);
    Ok(())
}

enum Report {
    Started(usize),
    Failed(usize, String),
    Done,
}

#[test]
fn damaged_files_never_panic_hang_or_lose_bytes() {
    let seed = env_num("PI_FUZZ_SEED", 1);
    let count = env_num("PI_FUZZ_CASES", 1500);
    let budget = Duration::from_secs(env_num("PI_FUZZ_SECS", 20));
    // Generous: a debug build on a loaded CI machine; a hang is forever.
    let per_case = Duration::from_secs(30);
    let cases = make_cases(seed, count);
    let recipes: Vec<String> = cases.iter().map(|c| c.recipe.clone()).collect();
    let dir = temp_dir("loader");
    let (tx, rx) = mpsc::channel();
    let worker_dir = dir.clone();
    std::thread::Builder::new()
        .name("fuzz-worker".into())
        .spawn(move || {
            let started = Instant::now();
            for (i, case) in cases.iter().enumerate() {
                if started.elapsed() > budget {
                    break;
                }
                let _ = tx.send(Report::Started(i));
                match catch_unwind(AssertUnwindSafe(|| check_case(&worker_dir, case))) {
                    Ok(Ok(())) => {}
                    Ok(Err(msg)) => {
                        let kept =
                            std::env::temp_dir().join(format!("pi-fuzz-failed-{seed}-{i}.jsonl"));
                        let _ = fs::write(&kept, &case.bytes);
                        let _ = tx.send(Report::Failed(
                            i,
                            format!("{msg} (bytes in {})", kept.display()),
                        ));
                    }
                    Err(p) => {
                        let msg = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        let _ = tx.send(Report::Failed(i, format!("PANIC: {msg}")));
                    }
                }
            }
            let _ = tx.send(Report::Done);
        })
        .unwrap();
    let mut current = None;
    let mut failures = Vec::new();
    let mut ran = 0;
    loop {
        match rx.recv_timeout(per_case) {
            Ok(Report::Started(i)) => {
                current = Some(i);
                ran += 1;
            }
            Ok(Report::Failed(i, msg)) => {
                failures.push(format!("case {i} [{}]: {msg}", recipes[i]))
            }
            Ok(Report::Done) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let i = current.unwrap_or(0);
                panic!(
                    "seed {seed}: case {i} [{}] did not finish within {per_case:?} (hang?)",
                    recipes[i]
                );
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let _ = fs::remove_dir_all(&dir);
    assert!(ran >= 100.min(count as usize), "only {ran} cases ran");
    assert!(
        failures.is_empty(),
        "seed {seed}, {ran} cases, {} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("fuzz_loader: seed {seed}, {ran} cases passed");
}

#[test]
fn a_100_mb_single_line_opens_in_bounded_time_and_a_torn_one_is_repaired() {
    let dir = temp_dir("huge");
    let file = dir.join("huge.jsonl");
    let header = br#"{"type":"session","version":3,"id":"h","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let head = br#"{"type":"message","id":"big","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":""#;
    let tail = b"\"}}\n";
    let size = 100 << 20;
    let mut bytes = Vec::with_capacity(size + 300);
    bytes.extend_from_slice(header);
    bytes.push(b'\n');
    bytes.extend_from_slice(head);
    bytes.resize(bytes.len() + size, b'x');
    bytes.extend_from_slice(tail);
    fs::write(&file, &bytes).unwrap();
    let limit = Duration::from_secs(60);

    let t = Instant::now();
    let mut s = blank(&dir);
    s.set_session_file(file.clone()).unwrap();
    assert_eq!(s.entry_count(), 1);
    walk_everything(&s);
    drop(s);
    let took = t.elapsed();
    assert!(took < limit, "100 MB line took {took:?}");

    // Torn inside the huge string: not an entry, and one newline makes later appends start clean.
    let torn_len = bytes.len() as u64 - 10;
    fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(torn_len)
        .unwrap();
    let t = Instant::now();
    let mut s = blank(&dir);
    s.set_session_file(file.clone()).unwrap();
    assert_eq!(s.entry_count(), 0);
    assert_eq!(fs::metadata(&file).unwrap().len(), torn_len + 1);
    walk_everything(&s);
    let took_torn = t.elapsed();
    assert!(took_torn < limit, "torn 100 MB line took {took_torn:?}");
    drop(s);
    let _ = fs::remove_dir_all(&dir);
    eprintln!("100 MB line: open {took:?}, torn {took_torn:?}");
}
