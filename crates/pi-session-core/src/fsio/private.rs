//! Who may read what we write. The session files and their directories are the reference's: they
//! get the modes it gives them (the process umask over 0666/0777) unless the user asks for
//! private ones (`PI_SESSION_PRIVATE=1`, see `Config::private_files`), and a rewrite keeps the
//! mode the file had. Everything else we create, beside them or in our own directories, is
//! private from the start: the listing cache and `.pi-session-native/`, sync's state and work
//! trees, `.bak` backups, exports, redacted copies, the acknowledgement store: 0600 files and 0700
//! directories on Unix. Windows has no such modes: there a file gets the ACL it inherits from its
//! directory, which for a directory under the user's profile is the user's (and the system's).

use super::*;

/// The mode of our own new files on Unix.
#[cfg(unix)]
pub const PRIVATE_FILE_MODE: u32 = 0o600;
/// The mode of our own new directories on Unix.
#[cfg(unix)]
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// `mkdir -p` with the directories made 0700; an existing `path` whose group or others may read
/// it is narrowed to 0700 (it is ours: an older version made it with the umask's mode).
pub fn ensure_private_dir(path: &Path) -> Result<()> {
    if path.as_os_str().is_empty() {
        return Ok(());
    }
    if !path.is_dir() {
        let mut b = fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(PRIVATE_DIR_MODE);
        }
        b.create(path).map_err(|e| Error::io(&e, "mkdir", path))?;
    }
    narrow(path, 0o700)
}

/// Narrow an existing file or directory of ours to `mode` when group or others have any right.
#[cfg_attr(not(unix), allow(unused_variables))]
pub fn narrow(path: &Path, mode: u32) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = fs::metadata(path).map_err(|e| Error::io(&e, "stat", path))?;
        if meta.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(path, fs::Permissions::from_mode(mode))
                .map_err(|e| Error::io(&e, "chmod", path))?;
        }
    }
    Ok(())
}

/// `mkdir -p` of a session directory: new directories 0700 when `private` (the user's
/// `PI_SESSION_PRIVATE`), else the reference's mode; an existing one is left as it is.
pub fn ensure_session_dir(path: &Path, private: bool) -> Result<()> {
    if !private {
        return ensure_dir(path);
    }
    if path.as_os_str().is_empty() || path.is_dir() {
        return Ok(());
    }
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(PRIVATE_DIR_MODE);
    }
    b.create(path).map_err(|e| Error::io(&e, "mkdir", path))
}

/// `OpenOptions` for a new session file: [`private_options`] when `private`, else
/// [`shared_options`] (the reference's mode).
pub fn session_options(private: bool) -> OpenOptions {
    if private {
        private_options()
    } else {
        shared_options()
    }
}

/// `OpenOptions` for a new file of ours: [`shared_options`], created 0600 on Unix (the mode is
/// given to `open`, so the file is never readable by others, not even for a moment).
pub fn private_options() -> OpenOptions {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut o = shared_options();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(PRIVATE_FILE_MODE);
    }
    o
}

/// [`replace_atomic`] for a file of ours: the new file is 0600 whatever the old one was.
pub fn replace_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = TempFile::create_private(path)?;
    tmp.write_all(bytes)?;
    tmp.rename_over(path, Durability::Fsync).map(drop)
}

/// [`create_new_atomic`] for a file of ours (a backup, an export, a redacted copy): 0600.
pub fn create_new_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = TempFile::create_private(path)?;
    tmp.write_all(bytes)?;
    tmp.link_new(path, Durability::Fsync).map(drop)
}

/// Give the temp file that replaces `target` the mode `target` has, as the reference's
/// truncate-and-write keeps it (a session a user made 0600 stays 0600 through a migration or a
/// redaction). A target that is gone keeps the temp file's own mode.
#[cfg_attr(not(unix), allow(unused_variables))]
pub(super) fn keep_mode(tmp: &File, target: &Path) {
    #[cfg(unix)]
    if let Ok(meta) = fs::metadata(target) {
        let _ = tmp.set_permissions(meta.permissions());
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn our_files_and_directories_are_private_from_the_start() {
        let root = crate::testing::temp_dir("private");
        let dir = root.join("a/b");
        ensure_private_dir(&dir).unwrap();
        assert_eq!((mode(&root.join("a")), mode(&dir)), (0o700, 0o700));
        let f = dir.join("f");
        replace_private(&f, b"1").unwrap();
        assert_eq!(mode(&f), 0o600);
        fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
        replace_private(&f, b"2").unwrap();
        assert_eq!(
            mode(&f),
            0o600,
            "a wider old file does not widen the new one"
        );
        let g = dir.join("g");
        create_new_private(&g, b"x").unwrap();
        assert_eq!(mode(&g), 0o600);
        let wide = root.join("wide");
        fs::create_dir(&wide).unwrap();
        fs::set_permissions(&wide, fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&wide).unwrap();
        assert_eq!(
            mode(&wide),
            0o700,
            "an existing directory of ours is narrowed"
        );
    }

    #[test]
    fn a_rewrite_keeps_the_mode_the_file_had() {
        let root = crate::testing::temp_dir("keepmode");
        let f = root.join("s.jsonl");
        fs::write(&f, "old\n").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o640)).unwrap();
        replace_atomic(&f, b"new\n").unwrap();
        assert_eq!(mode(&f), 0o640);
        assert_eq!(fs::read(&f).unwrap(), b"new\n");
    }
}
