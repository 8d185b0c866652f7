//! Summarize every `.jsonl` of a directory as a listing does (the summary job, without the
//! cache) and print the time and a hash of the summaries (profiling aid:
//! `summarize_dir <dir> [threads]`).
use pi_session_core::listing::job::{Ready, SummaryJob};

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
    let n = files.len();
    let t = std::time::Instant::now();
    let job = SummaryJob::start(files, None, threads);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let batch = job.next(256);
        if batch.is_empty() {
            break;
        }
        out.extend(batch);
    }
    job.finish();
    let elapsed = t.elapsed();
    // FNV-1a over every summary, to compare outputs across changes.
    let mut h: u64 = 0xcbf29ce484222325;
    let mut bytes = 0;
    for r in &out {
        let text = match r {
            Some(Ready {
                info,
                first_message,
                all_text,
            }) => format!(
                "{info:?}\u{0}{}\u{0}{}",
                first_message.to_string_lossy(),
                all_text.to_string_lossy()
            ),
            None => "-".to_owned(),
        };
        bytes += text.len();
        for &b in text.as_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
    }
    println!(
        "{} files, {bytes} summary bytes, hash {h:016x}, {elapsed:?}",
        out.len()
    );
}
