//! Helpers shared by the core's integration tests (each test file is its own crate and includes
//! this module with `mod common;`).

use std::fs;
use std::path::PathBuf;

/// A fresh directory under the system's temp dir: `pi-core-<name>-<pid>-<random>`, created.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "pi-core-{name}-{}-{}",
        std::process::id(),
        pi_session_core::ids::entry_id(|_| false)
    ));
    fs::create_dir_all(&d).unwrap();
    d
}
