//! The scan benchmark's session: seeded and deterministic, turns as pi writes them (see
//! `scan.rs`).

use std::path::Path;

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

pub fn generate(path: &Path, target_bytes: usize) {
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
