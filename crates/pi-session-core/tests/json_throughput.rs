//! Rough throughput report for the JSON fast paths. Ignored by default; run with
//! `cargo test --release -p pi-session-core --test json_throughput -- --ignored --nocapture`.

use std::time::Instant;

use pi_session_core::json::{is_canonical, normalize, parse, top_level_members, validate};

/// A session-like line: small envelope, one long text field with the escapes real assistant
/// output has (a newline every line of code, some quotes, backslashes and non-ASCII).
fn session_line(text_bytes: usize, escape_heavy: bool) -> String {
    let para = if escape_heavy {
        "fn main() {\\n    println!(\\\"héllo — 😀\\\");\\n    let p = \\\"C:\\\\\\\\tmp\\\";\\n}\\n"
    } else {
        "    let value = compute_something(&input, options.clone())?;\\n    if value.is_empty() {\\n        return Err(\\\"empty value — retry\\\".into());\\n    }\\n// The function above validates its input before doing any work.\\n"
    };
    let body = para.repeat(text_bytes / para.len() + 1);
    format!(
        r#"{{"type":"message","id":"a1b2c3d4","parentId":"9f8e7d6c","timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{body}"}}],"usage":{{"input":1234,"output":567,"cost":0.0123}}}}}}"#
    )
}

fn measure(name: &str, bytes: usize, mut f: impl FnMut() -> bool) -> f64 {
    assert!(f(), "{name} failed");
    let rounds = 10;
    let start = Instant::now();
    for _ in 0..rounds {
        assert!(f());
    }
    let secs = start.elapsed().as_secs_f64() / f64::from(rounds);
    let gbps = bytes as f64 / secs / 1e9;
    println!(
        "{name:>20}: {gbps:6.2} GB/s ({:.2} ms per {} MB)",
        secs * 1e3,
        bytes >> 20
    );
    gbps
}

#[test]
#[ignore = "timing; run in release mode with --ignored --nocapture"]
fn report_throughput_on_session_like_lines() {
    for (size, escape_heavy) in [(4 << 10, false), (64 << 20, false), (64 << 20, true)] {
        let line = session_line(size, escape_heavy);
        let repeat = (64 << 20) / line.len().max(1);
        let lines: Vec<&[u8]> = vec![line.as_bytes(); repeat.max(1)];
        let total: usize = lines.iter().map(|l| l.len()).sum();
        let escapes = line.bytes().filter(|&c| c == b'\\').count();
        println!(
            "{} lines of {} bytes, one escape per {} bytes",
            lines.len(),
            line.len(),
            line.len() / escapes.max(1)
        );
        measure("validate", total, || lines.iter().all(|l| validate(l)));
        measure("top_level_members", total, || {
            lines.iter().all(|l| top_level_members(l).is_ok())
        });
        measure("is_canonical", total, || {
            lines.iter().all(|l| is_canonical(l))
        });
        measure("normalize", total, || {
            lines.iter().all(|l| normalize(l).is_some())
        });
        measure("parse", total, || lines.iter().all(|l| parse(l).is_ok()));
    }
    let plain = format!("\"{}\"", "x".repeat(64 << 20));
    measure("validate (no escapes)", plain.len(), || {
        validate(plain.as_bytes())
    });
}
