//! Time the per-line checks: `cargo run --release --example canon_profile -- FILE [mode]`.
use std::time::Instant;

use pi_session_core::{json, record};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: canon_profile FILE [mode]");
    let mode = std::env::args().nth(2).unwrap_or_default();
    let bytes = std::fs::read(&path).unwrap();
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    for _ in 0..5 {
        let t = Instant::now();
        let n = match mode.as_str() {
            "validate" => lines.iter().filter(|l| json::validate(l)).count(),
            "meta" => lines
                .iter()
                .filter(|l| record::read_meta(l).is_some())
                .count(),
            "scan" => lines
                .iter()
                .filter(|l| record::read_meta_canonical(l).is_some_and(|m| m.canonical))
                .count(),
            "utf8" => lines
                .iter()
                .filter(|l| std::str::from_utf8(l).is_ok())
                .count(),

            _ => lines.iter().filter(|l| json::is_canonical(l)).count(),
        };
        println!("{mode}: {:?} ({n})", t.elapsed());
    }
}
