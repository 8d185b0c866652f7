//! Helpers shared by the unit tests of this crate.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A version 3 session header (id `s1`, cwd `/p`), for tests that need a valid file's first line.
pub(crate) const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// A fresh, empty directory for one test: unique in this process (tests run in parallel threads)
/// and between processes, so two tests never share one whatever name they pass.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("pi-core-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
