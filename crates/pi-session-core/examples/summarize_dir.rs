//! Summarize every `.jsonl` of a directory and print the time and a hash of the summaries
//! (profiling aid: `summarize_dir <dir> [threads]`).
fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: summarize_dir <dir> [threads]");
    let threads: usize = std::env::args()
        .nth(2)
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let files: Vec<_> = pi_session_core::listing::list_dir_files(std::path::Path::new(&dir))
        .expect("read dir")
        .into_iter()
        .map(|p| (p, None))
        .collect();
    let t = std::time::Instant::now();
    let out = pi_session_core::listing::summarize_many(&files, threads);
    let elapsed = t.elapsed();
    let bytes: usize = out.iter().flatten().map(|s| s.len()).sum();
    // FNV-1a over every summary, to compare outputs across changes.
    let mut h: u64 = 0xcbf29ce484222325;
    for s in &out {
        for &b in s.as_deref().unwrap_or("-").as_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
    }
    println!(
        "{} files, {bytes} summary bytes, hash {h:016x}, {elapsed:?}",
        out.len()
    );
}
