//! Errors with stable codes. Messages keep the reference's wording where it throws, so callers
//! that match on message text keep working.

use std::fmt;
use std::io;

pub mod win32;

/// Stable, documented error codes (surfaced to JS as `err.code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// An entry id that is not in the session (`Entry <id> not found`).
    EntryNotFound,
    /// `appendContextEdit` target is not on the current branch.
    NotOnActiveBranch,
    /// `appendContextEdit` target does not carry model-visible content.
    NotEditable,
    /// `appendContextEdit` replacement is neither null nor `{content: string | array}`.
    InvalidReplacement,
    /// A custom session id fails `assertValidSessionId`.
    InvalidSessionId,
    /// An entry id a caller reserves by name is not a string of the session ids' pattern (a
    /// `TypeError` in JS, as the reference's argument checks are).
    InvalidEntryId,
    /// A non-empty file that is not a pi session.
    InvalidSessionFile,
    /// `forkFrom` source is missing, empty or not a session.
    ForkSourceInvalid,
    /// A JS argument of the wrong type or shape.
    InvalidArgument,
    /// Another process holds the exclusive lock on the session file.
    SessionLocked,
    /// An appended entry reuses an id already in the session (the binding retries with a new id).
    IdTaken,
    /// A big session's file was changed in place after it was opened (its lines are read lazily).
    FileChanged,
    /// An append names an id that was not reserved (or whose reservation was used or released).
    EntryIdNotReserved,
    /// An append names an id that an entry of the session already has.
    DuplicateEntryId,
    /// `pruneBranch` on an entry of the active path (the path from the leaf to the root).
    OnActiveBranch,
    /// `merge` of two files whose headers name different sessions (nothing is written).
    SessionMismatch,
    /// `sync` to a git remote that `git ls-remote` cannot read (not a repository, or unreachable).
    SyncRemoteNotGit,
    /// `sync` to a shared folder that is not an existing directory.
    SyncRemoteNotFolder,
    /// `sync` met a project path of another machine that no mapping turns into a path here.
    SyncUnmappedPath,
    /// A `git` command of `sync` failed (its stderr is in the message).
    SyncGitFailed,
    /// `sync` with the refuse policy found sessions holding credentials (nothing was sent).
    SyncSecretsFound,
    /// An operating-system I/O error; the JS error carries the errno name (`EEXIST`, `ENOENT`, ...).
    Io,
    /// A bug of ours caught before it could do harm (as a panic at the boundary would be).
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::EntryNotFound => "ENTRY_NOT_FOUND",
            ErrorCode::NotOnActiveBranch => "NOT_ON_ACTIVE_BRANCH",
            ErrorCode::NotEditable => "NOT_EDITABLE",
            ErrorCode::InvalidReplacement => "INVALID_REPLACEMENT",
            ErrorCode::InvalidSessionId => "INVALID_SESSION_ID",
            ErrorCode::InvalidEntryId => "INVALID_ENTRY_ID",
            ErrorCode::InvalidSessionFile => "INVALID_SESSION_FILE",
            ErrorCode::ForkSourceInvalid => "FORK_SOURCE_INVALID",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::SessionLocked => "SESSION_LOCKED",
            ErrorCode::IdTaken => "ID_TAKEN",
            ErrorCode::FileChanged => "SESSION_FILE_CHANGED",
            ErrorCode::EntryIdNotReserved => "ENTRY_ID_NOT_RESERVED",
            ErrorCode::DuplicateEntryId => "DUPLICATE_ENTRY_ID",
            ErrorCode::OnActiveBranch => "ON_ACTIVE_BRANCH",
            ErrorCode::SessionMismatch => "SESSION_MISMATCH",
            ErrorCode::SyncRemoteNotGit => "SYNC_REMOTE_NOT_GIT",
            ErrorCode::SyncRemoteNotFolder => "SYNC_REMOTE_NOT_FOLDER",
            ErrorCode::SyncUnmappedPath => "SYNC_UNMAPPED_PATH",
            ErrorCode::SyncGitFailed => "SYNC_GIT_FAILED",
            ErrorCode::SyncSecretsFound => "SYNC_SECRETS_FOUND",
            ErrorCode::Io => "IO_ERROR",
            ErrorCode::Internal => "INTERNAL_ERROR",
        }
    }

    /// The error is about the type or form of an argument, which JS reports as a `TypeError`.
    pub fn is_type_error(self) -> bool {
        matches!(self, ErrorCode::InvalidEntryId)
    }
}

/// A core error: a code, a message, and for I/O errors the errno name and number, syscall and path
/// the way Node's `fs` reports them (so `err.code === "EEXIST"` keeps working for callers of the
/// reference, and `errno`, `syscall` and `path` are there as on Node's own errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    pub errno_name: Option<&'static str>,
    pub errno: Option<i32>,
    pub syscall: Option<&'static str>,
    pub path: Option<String>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            errno_name: None,
            errno: None,
            syscall: None,
            path: None,
        }
    }

    pub fn entry_not_found(id: &str) -> Self {
        Error::new(ErrorCode::EntryNotFound, format!("Entry {id} not found"))
    }

    /// Wrap an OS error in Node's wording: `ENOENT: no such file or directory, open '<path>'`.
    /// `path` is kept only for a call on a path: Node's `fs` reports none for a call on a
    /// descriptor (`read`, `write`, `fsync`), so neither does this error (its message still
    /// names the file, as it always has).
    ///
    /// On Windows the name and `errno` are libuv's, as Node's are there (see [`win32`]); elsewhere
    /// `errno` is the negated OS errno, as Node's.
    pub fn io(err: &io::Error, syscall: &'static str, path: &std::path::Path) -> Self {
        #[cfg(windows)]
        let (name, desc, errno) = match err.raw_os_error() {
            Some(code) => {
                let uv = win32::for_call(code as u32, syscall, path, win32::kind_of);
                (uv.name, uv.description, Some(uv.errno))
            }
            None => {
                let (name, desc) = errno_info(err);
                (name, desc, None)
            }
        };
        #[cfg(not(windows))]
        let (name, desc, errno) = {
            let (name, desc) = errno_info(err);
            (name, desc, err.raw_os_error().map(|e| -e))
        };
        let path_s = path.to_string_lossy().into_owned();
        Error {
            code: ErrorCode::Io,
            message: format!("{name}: {desc}, {syscall} '{path_s}'"),
            errno_name: Some(name),
            errno,
            syscall: Some(syscall),
            path: (!on_descriptor(syscall)).then_some(path_s),
        }
    }

    /// A bug of ours caught before it could do harm (`INTERNAL_ERROR`).
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::Internal, message)
    }

    /// A JS argument of the wrong type or shape (`INVALID_ARGUMENT`).
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    /// The code JS sees: the errno name for I/O errors, else the stable code.
    pub fn js_code(&self) -> &'static str {
        self.errno_name.unwrap_or_else(|| self.code.as_str())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Whether Node's `fs` makes `syscall` on a file descriptor (its errors then carry no `path`).
fn on_descriptor(syscall: &str) -> bool {
    matches!(
        syscall,
        "read" | "write" | "fsync" | "fdatasync" | "fstat" | "ftruncate" | "close"
    )
}

/// libuv's names and descriptions for the errors a session store meets (on Windows, for an error
/// with no OS code: [`win32`] names those that have one).
fn errno_info(err: &io::Error) -> (&'static str, &'static str) {
    #[cfg(unix)]
    {
        if let Some(code) = err.raw_os_error() {
            let known = match code {
                libc_consts::EEXIST => Some(("EEXIST", "file already exists")),
                libc_consts::ENOENT => Some(("ENOENT", "no such file or directory")),
                libc_consts::EACCES => Some(("EACCES", "permission denied")),
                libc_consts::EISDIR => Some(("EISDIR", "illegal operation on a directory")),
                libc_consts::ENOTDIR => Some(("ENOTDIR", "not a directory")),
                libc_consts::ENOSPC => Some(("ENOSPC", "no space left on device")),
                libc_consts::EROFS => Some(("EROFS", "read-only file system")),
                libc_consts::EPERM => Some(("EPERM", "operation not permitted")),
                libc_consts::EMFILE => Some(("EMFILE", "too many open files")),
                libc_consts::EBADF => Some(("EBADF", "bad file descriptor")),
                libc_consts::EIO => Some(("EIO", "i/o error")),
                // Platform-dependent numbers, from libc.
                libc::ENAMETOOLONG => Some(("ENAMETOOLONG", "name too long")),
                libc::ELOOP => Some(("ELOOP", "too many symbolic links encountered")),
                libc::EINVAL => Some(("EINVAL", "invalid argument")),
                libc::EXDEV => Some(("EXDEV", "cross-device link not permitted")),
                libc::EFBIG => Some(("EFBIG", "file too large")),
                libc::EDQUOT => Some(("EDQUOT", "disk quota exceeded")),
                _ => None,
            };
            if let Some(k) = known {
                return k;
            }
        }
    }
    match err.kind() {
        io::ErrorKind::NotFound => ("ENOENT", "no such file or directory"),
        io::ErrorKind::AlreadyExists => ("EEXIST", "file already exists"),
        io::ErrorKind::PermissionDenied => ("EACCES", "permission denied"),
        // Raised by Rust itself, e.g. for a path holding a NUL byte.
        io::ErrorKind::InvalidInput => ("EINVAL", "invalid argument"),
        _ => ("EIO", "i/o error"),
    }
}

/// Linux/macOS errno values we name (kept local to avoid a libc dependency for a handful of numbers).
#[cfg(unix)]
mod libc_consts {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const EIO: i32 = 5;
    pub const EBADF: i32 = 9;
    pub const EACCES: i32 = 13;
    pub const EEXIST: i32 = 17;
    pub const ENOTDIR: i32 = 20;
    pub const EISDIR: i32 = 21;
    pub const EMFILE: i32 = 24;
    pub const ENOSPC: i32 = 28;
    pub const EROFS: i32 = 30;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[cfg(unix)]
    #[test]
    fn an_io_error_on_a_path_carries_node_fields() {
        let e = Error::io(&io::Error::from_raw_os_error(2), "open", Path::new("/x/y"));
        assert_eq!(e.js_code(), "ENOENT");
        assert_eq!(e.errno, Some(-2));
        assert_eq!(e.syscall, Some("open"));
        assert_eq!(e.path.as_deref(), Some("/x/y"));
        assert_eq!(e.message, "ENOENT: no such file or directory, open '/x/y'");
    }

    #[cfg(unix)]
    #[test]
    fn an_io_error_on_a_descriptor_has_no_path_field_but_keeps_its_message() {
        let e = Error::io(&io::Error::from_raw_os_error(21), "read", Path::new("/d"));
        assert_eq!(e.js_code(), "EISDIR");
        assert_eq!(e.errno, Some(-21));
        assert_eq!(e.syscall, Some("read"));
        assert_eq!(e.path, None);
        assert_eq!(
            e.message,
            "EISDIR: illegal operation on a directory, read '/d'"
        );
    }

    /// Windows: libuv's names and numbers, as Node's errors there; the corrections look at the
    /// real file system.
    #[cfg(windows)]
    #[test]
    fn a_windows_error_carries_libuvs_name_and_number_as_nodes_do() {
        let e = Error::io(
            &io::Error::from_raw_os_error(2),
            "open",
            Path::new(r"C:\x\y"),
        );
        assert_eq!((e.js_code(), e.errno), ("ENOENT", Some(-4058)));
        assert_eq!(
            e.message,
            r"ENOENT: no such file or directory, open 'C:\x\y'"
        );
        let e = Error::io(
            &io::Error::from_raw_os_error(5),
            "rename",
            Path::new(r"C:\x"),
        );
        assert_eq!((e.js_code(), e.errno), ("EPERM", Some(-4048)));

        let dir = crate::testing::temp_dir("win32-errors");
        let file = dir.join("plain-file");
        std::fs::write(&file, "x").unwrap();
        let below = file.join("sessions");
        let made = std::fs::create_dir_all(&below).unwrap_err();
        let e = Error::io(&made, "mkdir", &below);
        assert_eq!((e.js_code(), e.errno), ("ENOTDIR", Some(-4052)));
        assert_eq!(
            e.message,
            format!("ENOTDIR: not a directory, mkdir '{}'", below.display())
        );
        let opened = crate::fsio::open_read(&dir).unwrap_err();
        let e = Error::io(&opened, "open", &dir);
        assert_eq!((e.js_code(), e.errno), ("EISDIR", Some(-4068)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_error_without_an_os_cause_has_its_stable_code_and_no_fs_fields() {
        let e = Error::invalid_argument("bad");
        assert_eq!(e.js_code(), "INVALID_ARGUMENT");
        assert_eq!((e.errno, e.syscall, e.path), (None, None, None));
        assert_eq!(Error::internal("bug").js_code(), "INTERNAL_ERROR");
    }
}
