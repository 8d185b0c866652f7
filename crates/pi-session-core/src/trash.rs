//! Deleting a session file the way pi does: through a `trash` command when one is on the search
//! path (the file can be restored from the desktop's trash), else for good. Used by
//! `pi-sessions rm` and by a sync that carries a deletion made on another machine.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};
use crate::fsio;

/// How a file went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// Moved to the trash by the `trash` command.
    Trash,
    /// Deleted (no `trash` command, or it failed and left the file).
    Removed,
}

impl Removal {
    pub fn name(self) -> &'static str {
        match self {
            Removal::Trash => "trash",
            Removal::Removed => "removed",
        }
    }
}

/// An executable named `trash` on `path_var` (a `PATH`-style list; `None` reads `$PATH`).
pub fn find(path_var: Option<&OsStr>) -> Option<PathBuf> {
    let var = match path_var {
        Some(v) => v.to_owned(),
        None => std::env::var_os("PATH")?,
    };
    std::env::split_paths(&var)
        .map(|d| d.join("trash"))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    let Ok(m) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        m.is_file() && m.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        m.is_file()
    }
}

/// Move `path` to the trash with the command `trash` (see [`find`]), or delete it when there is
/// none or the command left the file where it was.
pub fn remove(path: &Path, trash: Option<&Path>) -> Result<Removal> {
    if let Some(cmd) = trash {
        let mut c = Command::new(cmd);
        // A name starting with '-' would be read as an option of the command.
        if path.as_os_str().to_string_lossy().starts_with('-') {
            c.arg("--");
        }
        let status = c
            .arg(path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if status.is_ok_and(|s| s.success()) || !fsio::exists(path) {
            return Ok(Removal::Trash);
        }
    }
    std::fs::remove_file(path).map_err(|e| Error::io(&e, "unlink", path))?;
    fsio::sync_dir(path);
    Ok(Removal::Removed)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_trash_command_on_the_path_takes_the_file_and_without_one_it_is_deleted() {
        let dir = std::env::temp_dir().join(format!("pi-trash-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (bin, can) = (dir.join("bin"), dir.join("can"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&can).unwrap();
        let script = bin.join("trash");
        std::fs::write(
            &script,
            format!("#!/bin/sh\nmv \"$@\" '{}'/\n", can.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let found = find(Some(bin.as_os_str()));
        assert_eq!(found.as_deref(), Some(script.as_path()));
        assert_eq!(find(Some(OsStr::new(""))), None);
        let f = dir.join("s.jsonl");
        std::fs::write(&f, "x\n").unwrap();
        assert_eq!(remove(&f, found.as_deref()).unwrap(), Removal::Trash);
        assert!(!f.exists() && can.join("s.jsonl").exists());
        std::fs::write(&f, "y\n").unwrap();
        assert_eq!(remove(&f, None).unwrap(), Removal::Removed);
        assert!(!f.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
