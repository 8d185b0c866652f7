//! Throughput of the core's JSONL scanner on a realistic session file.
//!
//! `cargo bench -p pi-session-core --bench scan`
//!
//! Generates a ~64 MB v3 session (seeded, deterministic) in a temp dir: turns of user message,
//! assistant message (thinking, text, tool call, usage) and tool result (multi-line tool output with
//! the escapes real output has: newlines, tabs, quotes, backslashes, non-ASCII), base64 image
//! blocks (user pastes and `read` of images), compactions, an abandoned branch with a branch
//! summary, labels, model and thinking-level changes, keys in the order the reference writes them.
//! Then measures, as MB/s of file bytes (`Throughput::Bytes`):
//!
//! - `fs_read`: `std::fs::read` of the file (page cache warm): the floor for anything that loads it;
//! - `split_lines`: memchr over the bytes, no parsing;
//! - `json_validate`: `json::validate` on every line (the full JSON grammar, no values built);
//! - `read_meta`: `record::read_meta` on every line (validation + the members the index needs);
//! - `read_meta_trusted`: `record::read_meta_trusted` on every line (the path for our own lines);
//! - `loaded_file_parse`: `file::LoadedFile::parse` of the bytes (split + read_meta);
//! - `set_session_file`: `Session::set_session_file` end to end (read, scan, index).
//!
//! `PI_SCAN_BENCH_MB` changes the file size (default 64).
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use pi_session_core::file::LoadedFile;
use pi_session_core::{json, record, Session};

// ------------------------------------------------------------------------------ data generator

/// SplitMix64: small, seeded, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn hex(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b"0123456789abcdef"[self.below(16) as usize]))
            .collect()
    }
}

const WORDS: &[&str] = &[
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "for",
    "that",
    "it",
    "with",
    "on",
    "as",
    "this",
    "file",
    "function",
    "return",
    "value",
    "type",
    "error",
    "test",
    "build",
    "module",
    "import",
    "session",
    "entry",
    "message",
    "context",
    "tool",
    "result",
    "output",
    "parse",
    "write",
    "read",
    "path",
    "directory",
    "line",
    "json",
    "string",
    "array",
    "object",
    "index",
    "leaf",
    "branch",
    "tree",
    "compaction",
    "summary",
    "label",
    "model",
    "cargo",
    "npm",
    "node",
    "rust",
    "napi",
    "struct",
    "impl",
    "trait",
    "fn",
    "match",
    "vec",
    "buffer",
    "stream",
    "chunk",
    "utf8",
    "bytes",
    "naïve",
    "café",
    "größe",
    "—",
    "→",
    "✓",
    "😀",
    "日本語",
];

fn words(r: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(r.pick(WORDS));
    }
    s
}

fn text(r: &mut Rng, chars: usize) -> String {
    let mut s = String::new();
    while s.len() < chars {
        let n = r.range(6, 16) as usize;
        s.push_str(&words(r, n));
        s.push_str(". ");
    }
    s
}

fn text_n(r: &mut Rng, lo: u64, hi: u64) -> String {
    let n = r.range(lo, hi) as usize;
    text(r, n)
}

fn tool_output(r: &mut Rng, bytes: usize) -> String {
    let mut s = String::new();
    while s.len() < bytes {
        match r.below(5) {
            0 => s.push_str(&format!(
                "src/{}/{}.rs:{}:{}: warning: unused variable `{}`",
                r.pick(WORDS),
                r.pick(WORDS),
                r.range(1, 999),
                r.range(1, 80),
                r.pick(WORDS)
            )),
            1 => s.push_str(&format!(
                "    let {}_{} = \"{}\".to_string(); // {}",
                r.pick(WORDS),
                r.pick(WORDS),
                r.pick(WORDS),
                words(r, 4)
            )),
            2 => s.push_str(&format!(
                "-rw-r--r--\t1 user user\t{:>6} Jan {} 12:{} C:\\tmp\\{}.json",
                r.range(100, 99999),
                r.range(1, 28),
                r.range(10, 59),
                r.pick(WORDS)
            )),
            3 => s.push_str(&format!(
                "test {}::tests::{} ... {}",
                r.pick(WORDS),
                r.pick(WORDS),
                if r.chance(0.1) { "FAILED" } else { "ok" }
            )),
            _ => {
                let n = r.range(5, 14) as usize;
                s.push_str(&words(r, n));
            }
        }
        s.push('\n');
    }
    s
}

/// A base64 payload of `bytes` characters (the image itself is noise).
fn base64(r: &mut Rng, bytes: usize) -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes);
    while s.len() + 8 <= bytes {
        let mut x = r.next();
        for _ in 0..8 {
            s.push(char::from(B64[(x & 63) as usize]));
            x >>= 6;
        }
    }
    while s.len() < bytes {
        s.push('=');
    }
    s
}

/// `JSON.stringify` of a string (the escapes V8 writes for these inputs).
fn js(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

struct Writer {
    r: Rng,
    out: Vec<u8>,
    ms: u64,
    leaf: Option<String>,
    main: Vec<String>,
    users: Vec<String>,
}

impl Writer {
    fn iso(&self) -> String {
        // Good enough for a benchmark: a valid ISO-8601 UTC timestamp that advances.
        let s = self.ms / 1000;
        let (d, h, m, sec) = (s / 86400, (s / 3600) % 24, (s / 60) % 60, s % 60);
        format!(
            "2025-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + (d / 28) % 12,
            1 + d % 28,
            h,
            m,
            sec,
            self.ms % 1000
        )
    }
    fn line(&mut self, s: String) {
        self.out.extend_from_slice(s.as_bytes());
        self.out.push(b'\n');
    }
    /// An entry on the main line: `{"type":…,"id":…,"parentId":…,"timestamp":…,<rest>}`.
    fn entry(&mut self, ty: &str, rest: &str) -> String {
        self.ms += self.r.range(200, 4000);
        let id = self.r.hex(8);
        let parent = self.leaf.as_deref().map_or("null".to_string(), js);
        let ts = self.iso();
        self.line(format!(
            "{{\"type\":\"{ty}\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"{ts}\"{rest}}}"
        ));
        self.leaf = Some(id.clone());
        self.main.push(id.clone());
        id
    }
    fn usage(&mut self) -> String {
        let input = self.r.range(2000, 90000);
        let output = self.r.range(50, 2000);
        let cache = self.r.range(0, input);
        format!(
            "{{\"input\":{input},\"output\":{output},\"cacheRead\":{cache},\"cacheWrite\":{},\"totalTokens\":{},\"cost\":{{\"input\":{},\"output\":{},\"cacheRead\":{},\"cacheWrite\":0,\"total\":{}}}}}",
            self.r.range(0, 3000),
            input + output + cache,
            input as f64 * 3e-6,
            output as f64 * 15e-6,
            cache as f64 * 3e-7,
            input as f64 * 3e-6 + output as f64 * 15e-6
        )
    }
    fn turn(&mut self) {
        let r = &mut self.r;
        let user_text = js(&text_n(r, 40, 400));
        let image = if r.chance(0.04) {
            let n = r.range(100_000, 900_000) as usize;
            format!(
                ",{{\"type\":\"image\",\"data\":\"{}\",\"mimeType\":\"image/png\"}}",
                base64(r, n)
            )
        } else {
            String::new()
        };
        let ms = self.ms;
        let u = self.entry(
            "message",
            &format!(",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":{user_text}}}{image}],\"timestamp\":{ms}}}"),
        );
        self.users.push(u);
        let r = &mut self.r;
        let call = format!("toolu_01{}", r.hex(22));
        let tool = r.pick(&["bash", "read", "edit", "write", "grep"]);
        let thinking = js(&text_n(r, 200, 900));
        let sig = r.hex(64);
        let answer = js(&text_n(r, 80, 600));
        let args = if tool == "bash" {
            format!(
                "{{\"command\":{},\"timeout\":120}}",
                js(&format!(
                    "cargo test -p {} -- \"{}\"",
                    r.pick(WORDS),
                    r.pick(WORDS)
                ))
            )
        } else {
            format!(
                "{{\"path\":\"src/{}/{}.rs\",\"offset\":{},\"limit\":200}}",
                r.pick(WORDS),
                r.pick(WORDS),
                r.range(1, 400)
            )
        };
        let usage = self.usage();
        let ms = self.ms;
        let resp = self.r.hex(22);
        let dur = self.r.range(800, 30000);
        self.entry(
            "message",
            &format!(",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"thinking\",\"thinking\":{thinking},\"thinkingSignature\":\"{sig}\"}},{{\"type\":\"text\",\"text\":{answer}}},{{\"type\":\"toolCall\",\"id\":\"{call}\",\"name\":\"{tool}\",\"arguments\":{args}}}],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",\"usage\":{usage},\"stopReason\":\"toolUse\",\"timestamp\":{ms},\"responseId\":\"msg_01{resp}\",\"durationMs\":{dur}}}"),
        );
        let r = &mut self.r;
        let content = if tool == "read" && r.chance(0.15) {
            let n = r.range(150_000, 1_200_000) as usize;
            format!(
                "[{{\"type\":\"text\",\"text\":\"Read image file [image/png]\"}},{{\"type\":\"image\",\"data\":\"{}\",\"mimeType\":\"image/png\"}}]",
                base64(r, n)
            )
        } else {
            let n = if r.chance(0.1) {
                r.range(20_000, 50_000)
            } else {
                r.range(500, 8_000)
            } as usize;
            format!(
                "[{{\"type\":\"text\",\"text\":{}}}]",
                js(&tool_output(r, n))
            )
        };
        let is_error = r.chance(0.05);
        let dur = r.range(5, 20000);
        let ms = self.ms;
        self.entry(
            "message",
            &format!(",\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"{call}\",\"toolName\":\"{tool}\",\"content\":{content},\"isError\":{is_error},\"durationMs\":{dur},\"timestamp\":{ms}}}"),
        );
    }
}

fn generate(path: &Path, target_bytes: usize) {
    let mut w = Writer {
        r: Rng(0x5eed_5ca1),
        out: Vec::with_capacity(target_bytes + (4 << 20)),
        ms: 1_740_787_200_000,
        leaf: None,
        main: Vec::new(),
        users: Vec::new(),
    };
    let sid = format!(
        "0195{}-{}-7{}-8{}-{}",
        w.r.hex(4),
        w.r.hex(4),
        w.r.hex(3),
        w.r.hex(3),
        w.r.hex(12)
    );
    let ts = w.iso();
    w.line(format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{sid}\",\"timestamp\":\"{ts}\",\"cwd\":\"/home/user/projects/pi-scan-bench\"}}"
    ));
    w.entry(
        "model_change",
        ",\"provider\":\"anthropic\",\"modelId\":\"claude-sonnet-4-5\"",
    );
    w.entry("thinking_level_change", ",\"thinkingLevel\":\"medium\"");
    let mut turns = 0u64;
    // Turns since the last branch / compaction (counters rather than `%`: the crate's MSRV has
    // no `is_multiple_of`, which clippy now asks for).
    let (mut since_branch, mut since_compaction) = (0u64, 0u64);
    while w.out.len() < target_bytes {
        w.turn();
        turns += 1;
        since_branch += 1;
        since_compaction += 1;
        if turns % 150 == 75 {
            let target = w.main[w.main.len() - 1 - w.r.below(20) as usize].clone();
            w.entry(
                "label",
                &format!(",\"targetId\":\"{target}\",\"label\":\"checkpoint\""),
            );
        }
        if since_branch == 400 {
            since_branch = 0;
            // An abandoned branch off the entry 9 back, then a branch summary on the main line.
            let saved = w.leaf.clone();
            let saved_main = w.main.len();
            w.leaf = Some(w.main[w.main.len() - 9].clone());
            w.turn();
            let abandoned = w.leaf.clone().unwrap();
            w.main.truncate(saved_main);
            w.leaf = saved;
            let summary = js(&text(&mut w.r, 600));
            w.entry("branch_summary", &format!(",\"fromId\":\"{abandoned}\",\"summary\":{summary},\"details\":{{\"readFiles\":[\"src/lib.rs\"],\"modifiedFiles\":[]}},\"fromHook\":false"));
        }
        if since_compaction == 700 {
            since_compaction = 0;
            let kept = w.users[w.users.len() - 20].clone();
            let summary = js(&format!(
                "## Goal\n{}\n\n## Progress\n{}\n\n## Next steps\n{}",
                text(&mut w.r, 400),
                text(&mut w.r, 1200),
                text(&mut w.r, 300)
            ));
            let tokens = w.r.range(150_000, 190_000);
            let usage = w.usage();
            w.entry("compaction", &format!(",\"summary\":{summary},\"firstKeptEntryId\":\"{kept}\",\"tokensBefore\":{tokens},\"details\":{{\"readFiles\":[\"src/a.rs\"],\"modifiedFiles\":[\"src/b.rs\"]}},\"usage\":{usage},\"fromHook\":false"));
        }
    }
    std::fs::write(path, &w.out).expect("write the benchmark session");
}

// ------------------------------------------------------------------------------ benchmarks

fn data() -> (PathBuf, Vec<u8>) {
    let mb: usize = std::env::var("PI_SCAN_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let dir = std::env::temp_dir().join(format!("pi-scan-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("2025-03-01T00-00-00-000Z_scan-bench.jsonl");
    generate(&path, mb << 20);
    let bytes = std::fs::read(&path).unwrap();
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    let longest = bytes
        .split(|&b| b == b'\n')
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0);
    eprintln!(
        "scan bench data: {} ({:.1} MB, {lines} lines, longest line {:.2} MB)",
        path.display(),
        bytes.len() as f64 / 1e6,
        longest as f64 / 1e6
    );
    // Sanity: every line is valid and is a record, and the file loads.
    assert!(bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .all(|l| json::validate(l) && record::read_meta(l).is_some()));
    (path, bytes)
}

fn scan(c: &mut Criterion) {
    let (path, bytes) = data();
    // Line boundaries computed once, so the per-line benches measure the per-line function only.
    let ranges: Vec<(usize, usize)> = {
        let mut start = 0;
        memchr::memchr_iter(b'\n', &bytes)
            .map(|nl| {
                let r = (start, nl);
                start = nl + 1;
                r
            })
            .collect()
    };
    let dir = path.parent().unwrap().to_path_buf();

    let mut g = c.benchmark_group("scan");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(bytes.len() as u64));

    g.bench_function("fs_read", |b| {
        b.iter(|| black_box(std::fs::read(&path).unwrap()))
    });
    g.bench_function("split_lines", |b| {
        b.iter(|| black_box(memchr::memchr_iter(b'\n', black_box(&bytes)).count()))
    });
    g.bench_function("json_validate", |b| {
        b.iter(|| {
            let mut ok = 0usize;
            for &(s, e) in &ranges {
                ok += json::validate(black_box(&bytes[s..e])) as usize;
            }
            assert_eq!(ok, ranges.len());
        })
    });
    g.bench_function("read_meta", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for &(s, e) in &ranges {
                n += black_box(record::read_meta(&bytes[s..e])).is_some() as usize;
            }
            assert_eq!(n, ranges.len());
        })
    });
    g.bench_function("read_meta_trusted", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for &(s, e) in &ranges {
                n += black_box(record::read_meta_trusted(&bytes[s..e])).is_some() as usize;
            }
            assert_eq!(n, ranges.len());
        })
    });
    g.bench_function("loaded_file_parse", |b| {
        b.iter_batched(
            || bytes.clone(),
            |text| black_box(LoadedFile::parse(text)),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("set_session_file", |b| {
        b.iter_batched(
            || {
                Session::blank(
                    "/home/user/projects/pi-scan-bench".into(),
                    dir.display().to_string(),
                    true,
                )
                .unwrap()
            },
            |mut s| {
                s.set_session_file(path.clone()).unwrap();
                s
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, scan);
criterion_main!(benches);
