//! How many threads this process can run at once, asked of the OS once and remembered: on Linux
//! the answer reads the cgroup's CPU quota from files, which the per-call paths that size their
//! helper threads (materializing entries, scanning a file) should not do again each time.

use std::sync::OnceLock;

/// The parallelism the OS grants this process, or `None` when it cannot tell.
pub fn available() -> Option<usize> {
    static CORES: OnceLock<Option<usize>> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().ok().map(|n| n.get()))
}
