//! The damage of `fuzz_loader.rs`: a seeded PRNG, the fixture corpus, and the mutations a case is
//! made of (each described in the case's recipe, so a failure can be replayed).

use std::fs;
use std::path::{Path, PathBuf};

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

pub fn env_num(name: &str, default: u64) -> u64 {
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

pub struct Case {
    pub n: u64,
    pub recipe: String,
    pub bytes: Vec<u8>,
    /// Also append an entry after the damage and reopen.
    pub append_after: bool,
}

pub fn make_cases(seed: u64, count: u64) -> Vec<Case> {
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
