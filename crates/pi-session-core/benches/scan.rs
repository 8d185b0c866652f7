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
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use pi_session_core::file::LoadedFile;
use pi_session_core::{json, record, Session};

#[path = "scan/generate.rs"]
mod generate;
use generate::generate;

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
