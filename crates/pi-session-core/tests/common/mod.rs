//! Helpers shared by the core's integration tests (each test file is its own crate and includes
//! this module with `mod common;`).

use std::fs;
use std::path::{Path, PathBuf};

use pi_session_core::{Result, Session};

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

/// `file` opened as a session of working dir `/w` stored under `dir` (the default config).
#[allow(dead_code)] // not every test file opens a session
pub fn open(dir: &Path, file: &Path) -> Result<Session> {
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true)?;
    s.set_session_file(file.to_path_buf())?;
    Ok(s)
}
