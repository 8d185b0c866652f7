//! Windows: the `code` and `errno` Node's `fs` gives there. Node's errors on Windows carry
//! libuv's names and numbers (libuv translates the Win32 error code, `GetLastError()`, into its
//! own), not the Win32 code: a missing file is `ENOENT` with `errno` -4058, not 2 or -2. So the
//! core's errors do the same. [`translate`] is that translation, a pure table, tested on every
//! platform; [`for_call`] adds what Node's calls answer on top of it for the two calls where the
//! plain translation of the code differs from Node's answer:
//!
//! - a recursive `mkdir` below a regular file: Windows says the name exists (or the path is not
//!   found), and Node, finding that one of the names above is not a directory, says `ENOTDIR`
//!   (as Linux does on its own);
//! - `open`/`read` of a directory: Windows refuses to open it ("access denied"), and Node, which
//!   opens directories and fails on the read, says `EISDIR`.

use std::path::Path;

/// One of libuv's errors: its name (Node's `code`), its number on Windows (Node's `errno`), and
/// the description Node's message has after the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UvError {
    pub name: &'static str,
    pub errno: i32,
    pub description: &'static str,
}

macro_rules! uv_errors {
    ($($name:ident = $errno:literal, $description:literal;)*) => {
        $(pub const $name: UvError = UvError {
            name: stringify!($name),
            errno: $errno,
            description: $description,
        };)*
        /// Every libuv error [`translate`] can answer.
        #[cfg(test)]
        pub const ALL: &[UvError] = &[$($name),*];
    };
}

// libuv's numbers for Windows (include/uv/errno.h, where the C runtime has no such errno) and
// its descriptions (include/uv.h).
uv_errors! {
    E2BIG = -4093, "argument list too long";
    EACCES = -4092, "permission denied";
    EADDRINUSE = -4091, "address already in use";
    EAGAIN = -4088, "resource temporarily unavailable";
    EBADF = -4083, "bad file descriptor";
    EBUSY = -4082, "resource busy or locked";
    ECANCELED = -4081, "operation canceled";
    ECHARSET = -4080, "invalid Unicode character";
    ECONNABORTED = -4079, "software caused connection abort";
    ECONNREFUSED = -4078, "connection refused";
    ECONNRESET = -4077, "connection reset by peer";
    EEXIST = -4075, "file already exists";
    EFAULT = -4074, "bad address in system call argument";
    EFTYPE = -4028, "inappropriate file type or format";
    EHOSTUNREACH = -4073, "host is unreachable";
    EINVAL = -4071, "invalid argument";
    EIO = -4070, "i/o error";
    EISDIR = -4068, "illegal operation on a directory";
    ELOOP = -4067, "too many symbolic links encountered";
    EMFILE = -4066, "too many open files";
    ENAMETOOLONG = -4064, "name too long";
    ENETUNREACH = -4062, "network is unreachable";
    ENOENT = -4058, "no such file or directory";
    ENOMEM = -4057, "not enough memory";
    ENOSPC = -4055, "no space left on device";
    ENOTCONN = -4053, "socket is not connected";
    ENOTDIR = -4052, "not a directory";
    ENOTEMPTY = -4051, "directory not empty";
    ENOTSUP = -4049, "operation not supported on socket";
    EOF = -4095, "end of file";
    EPERM = -4048, "operation not permitted";
    EPIPE = -4047, "broken pipe";
    EROFS = -4043, "read-only file system";
    ETIMEDOUT = -4039, "connection timed out";
    EXDEV = -4037, "cross-device link not permitted";
    UNKNOWN = -4094, "unknown error";
}

/// The Win32 error codes [`translate`] knows (winerror.h's numbers; a Windows-only test checks
/// them against `windows-sys`).
pub mod code {
    pub const ERROR_INVALID_FUNCTION: u32 = 1;
    pub const ERROR_FILE_NOT_FOUND: u32 = 2;
    pub const ERROR_PATH_NOT_FOUND: u32 = 3;
    pub const ERROR_TOO_MANY_OPEN_FILES: u32 = 4;
    pub const ERROR_ACCESS_DENIED: u32 = 5;
    pub const ERROR_INVALID_HANDLE: u32 = 6;
    pub const ERROR_NOT_ENOUGH_MEMORY: u32 = 8;
    pub const ERROR_INVALID_DATA: u32 = 13;
    pub const ERROR_OUTOFMEMORY: u32 = 14;
    pub const ERROR_INVALID_DRIVE: u32 = 15;
    pub const ERROR_NOT_SAME_DEVICE: u32 = 17;
    pub const ERROR_WRITE_PROTECT: u32 = 19;
    pub const ERROR_CRC: u32 = 23;
    pub const ERROR_GEN_FAILURE: u32 = 31;
    pub const ERROR_SHARING_VIOLATION: u32 = 32;
    pub const ERROR_LOCK_VIOLATION: u32 = 33;
    pub const ERROR_HANDLE_DISK_FULL: u32 = 39;
    pub const ERROR_NOT_SUPPORTED: u32 = 50;
    pub const ERROR_NETNAME_DELETED: u32 = 64;
    pub const ERROR_FILE_EXISTS: u32 = 80;
    pub const ERROR_CANNOT_MAKE: u32 = 82;
    pub const ERROR_INVALID_PARAMETER: u32 = 87;
    pub const ERROR_BROKEN_PIPE: u32 = 109;
    pub const ERROR_OPEN_FAILED: u32 = 110;
    pub const ERROR_BUFFER_OVERFLOW: u32 = 111;
    pub const ERROR_DISK_FULL: u32 = 112;
    pub const ERROR_SEM_TIMEOUT: u32 = 121;
    pub const ERROR_INSUFFICIENT_BUFFER: u32 = 122;
    pub const ERROR_INVALID_NAME: u32 = 123;
    pub const ERROR_MOD_NOT_FOUND: u32 = 126;
    pub const ERROR_DIR_NOT_EMPTY: u32 = 145;
    pub const ERROR_SIGNAL_REFUSED: u32 = 156;
    pub const ERROR_BAD_PATHNAME: u32 = 161;
    pub const ERROR_ALREADY_EXISTS: u32 = 183;
    pub const ERROR_BAD_EXE_FORMAT: u32 = 193;
    pub const ERROR_ENVVAR_NOT_FOUND: u32 = 203;
    pub const ERROR_NO_SIGNAL_SENT: u32 = 205;
    pub const ERROR_FILENAME_EXCED_RANGE: u32 = 206;
    pub const ERROR_META_EXPANSION_TOO_LONG: u32 = 208;
    pub const ERROR_BAD_PIPE: u32 = 230;
    pub const ERROR_PIPE_BUSY: u32 = 231;
    pub const ERROR_NO_DATA: u32 = 232;
    pub const ERROR_PIPE_NOT_CONNECTED: u32 = 233;
    pub const ERROR_DIRECTORY: u32 = 267;
    pub const ERROR_EA_TABLE_FULL: u32 = 277;
    pub const ERROR_ELEVATION_REQUIRED: u32 = 740;
    pub const ERROR_OPERATION_ABORTED: u32 = 995;
    pub const ERROR_NOACCESS: u32 = 998;
    pub const ERROR_INVALID_FLAGS: u32 = 1004;
    pub const ERROR_END_OF_MEDIA: u32 = 1100;
    pub const ERROR_FILEMARK_DETECTED: u32 = 1101;
    pub const ERROR_BEGINNING_OF_MEDIA: u32 = 1102;
    pub const ERROR_SETMARK_DETECTED: u32 = 1103;
    pub const ERROR_NO_DATA_DETECTED: u32 = 1104;
    pub const ERROR_INVALID_BLOCK_LENGTH: u32 = 1106;
    pub const ERROR_BUS_RESET: u32 = 1111;
    pub const ERROR_NO_UNICODE_TRANSLATION: u32 = 1113;
    pub const ERROR_IO_DEVICE: u32 = 1117;
    pub const ERROR_EOM_OVERFLOW: u32 = 1129;
    pub const ERROR_DEVICE_REQUIRES_CLEANING: u32 = 1165;
    pub const ERROR_DEVICE_DOOR_OPEN: u32 = 1166;
    pub const ERROR_CONNECTION_REFUSED: u32 = 1225;
    pub const ERROR_ADDRESS_ALREADY_ASSOCIATED: u32 = 1227;
    pub const ERROR_NETWORK_UNREACHABLE: u32 = 1231;
    pub const ERROR_HOST_UNREACHABLE: u32 = 1232;
    pub const ERROR_CONNECTION_ABORTED: u32 = 1236;
    pub const ERROR_PRIVILEGE_NOT_HELD: u32 = 1314;
    pub const ERROR_DISK_CORRUPT: u32 = 1393;
    pub const ERROR_SYMLINK_NOT_SUPPORTED: u32 = 1464;
    pub const ERROR_CANT_ACCESS_FILE: u32 = 1920;
    pub const ERROR_CANT_RESOLVE_FILENAME: u32 = 1921;
    pub const ERROR_NOT_CONNECTED: u32 = 2250;
    pub const ERROR_INVALID_REPARSE_DATA: u32 = 4392;
}

/// libuv's error for a Win32 error code, as its `uv_translate_sys_error` gives it for the codes
/// a file call can return (its socket codes, `WSAE*`, are left out: the store opens no socket);
/// `UNKNOWN` for any other code, as there.
pub fn translate(win32: u32) -> UvError {
    use code::*;
    match win32 {
        ERROR_ELEVATION_REQUIRED | ERROR_CANT_ACCESS_FILE => EACCES,
        ERROR_ADDRESS_ALREADY_ASSOCIATED => EADDRINUSE,
        ERROR_NO_DATA => EAGAIN,
        ERROR_INVALID_FLAGS | ERROR_INVALID_HANDLE => EBADF,
        ERROR_LOCK_VIOLATION | ERROR_PIPE_BUSY | ERROR_SHARING_VIOLATION => EBUSY,
        ERROR_OPERATION_ABORTED => ECANCELED,
        ERROR_NO_UNICODE_TRANSLATION => ECHARSET,
        ERROR_CONNECTION_ABORTED => ECONNABORTED,
        ERROR_CONNECTION_REFUSED => ECONNREFUSED,
        ERROR_NETNAME_DELETED => ECONNRESET,
        ERROR_ALREADY_EXISTS | ERROR_FILE_EXISTS => EEXIST,
        ERROR_NOACCESS => EFAULT,
        ERROR_HOST_UNREACHABLE => EHOSTUNREACH,
        ERROR_INSUFFICIENT_BUFFER
        | ERROR_INVALID_DATA
        | ERROR_INVALID_PARAMETER
        | ERROR_SYMLINK_NOT_SUPPORTED => EINVAL,
        ERROR_BEGINNING_OF_MEDIA
        | ERROR_BUS_RESET
        | ERROR_CRC
        | ERROR_DEVICE_DOOR_OPEN
        | ERROR_DEVICE_REQUIRES_CLEANING
        | ERROR_DISK_CORRUPT
        | ERROR_EOM_OVERFLOW
        | ERROR_FILEMARK_DETECTED
        | ERROR_GEN_FAILURE
        | ERROR_INVALID_BLOCK_LENGTH
        | ERROR_IO_DEVICE
        | ERROR_NO_DATA_DETECTED
        | ERROR_NO_SIGNAL_SENT
        | ERROR_OPEN_FAILED
        | ERROR_SETMARK_DETECTED
        | ERROR_SIGNAL_REFUSED => EIO,
        ERROR_CANT_RESOLVE_FILENAME => ELOOP,
        ERROR_TOO_MANY_OPEN_FILES => EMFILE,
        ERROR_BUFFER_OVERFLOW | ERROR_FILENAME_EXCED_RANGE => ENAMETOOLONG,
        ERROR_NETWORK_UNREACHABLE => ENETUNREACH,
        ERROR_BAD_PATHNAME
        | ERROR_DIRECTORY
        | ERROR_ENVVAR_NOT_FOUND
        | ERROR_FILE_NOT_FOUND
        | ERROR_INVALID_NAME
        | ERROR_INVALID_DRIVE
        | ERROR_INVALID_REPARSE_DATA
        | ERROR_MOD_NOT_FOUND
        | ERROR_PATH_NOT_FOUND => ENOENT,
        ERROR_NOT_ENOUGH_MEMORY | ERROR_OUTOFMEMORY => ENOMEM,
        ERROR_CANNOT_MAKE
        | ERROR_DISK_FULL
        | ERROR_EA_TABLE_FULL
        | ERROR_END_OF_MEDIA
        | ERROR_HANDLE_DISK_FULL => ENOSPC,
        ERROR_NOT_CONNECTED => ENOTCONN,
        ERROR_DIR_NOT_EMPTY => ENOTEMPTY,
        ERROR_NOT_SUPPORTED => ENOTSUP,
        ERROR_BROKEN_PIPE => EOF,
        ERROR_ACCESS_DENIED | ERROR_PRIVILEGE_NOT_HELD => EPERM,
        ERROR_BAD_PIPE | ERROR_PIPE_NOT_CONNECTED => EPIPE,
        ERROR_WRITE_PROTECT => EROFS,
        ERROR_SEM_TIMEOUT => ETIMEDOUT,
        ERROR_NOT_SAME_DEVICE => EXDEV,
        ERROR_INVALID_FUNCTION => EISDIR,
        ERROR_META_EXPANSION_TOO_LONG => E2BIG,
        ERROR_BAD_EXE_FORMAT => EFTYPE,
        _ => UNKNOWN,
    }
}

/// What is at a path, as far as [`for_call`] needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// Nothing (or it cannot be looked at).
    Absent,
    Dir,
    /// A file, or anything else that is not a directory.
    NotDir,
}

/// The error Node reports on Windows when its `syscall` on `path` fails with the Win32 code
/// `win32`: [`translate`], corrected where Node's call itself answers otherwise. `kind_of` says
/// what is at a path (following links, as Node's `stat` does); it is asked only for those
/// corrections, so only on a failure.
///
/// - `mkdir` (always recursive here, as Node's `mkdirSync(dir, { recursive: true })`): an invalid
///   name is `EINVAL` (libuv's mkdir says so); and when a name above `path` is something other
///   than a directory, `ENOTDIR`, where Windows says the name exists or the path is not found.
///   (Node's recursive mkdir, meeting that name, says `ENOTDIR`; for `path` itself being a file
///   it says `EEXIST`, as the translation does.)
/// - `open`, `read`: access denied on a directory is `EISDIR` (Node opens a directory and its
///   read fails with `EISDIR`; std's open, without backup semantics, is refused one).
pub fn for_call(
    win32: u32,
    syscall: &str,
    path: &Path,
    kind_of: impl Fn(&Path) -> PathKind,
) -> UvError {
    let plain = translate(win32);
    match syscall {
        "mkdir" => {
            if matches!(win32, code::ERROR_INVALID_NAME | code::ERROR_DIRECTORY) {
                return EINVAL;
            }
            let below_a_file = || {
                path.ancestors()
                    .skip(1)
                    .filter(|p| !p.as_os_str().is_empty())
                    .map(&kind_of)
                    .find(|k| *k != PathKind::Absent)
                    == Some(PathKind::NotDir)
            };
            if (plain == EEXIST || plain == ENOENT) && below_a_file() {
                ENOTDIR
            } else {
                plain
            }
        }
        "open" | "read" if win32 == code::ERROR_ACCESS_DENIED && kind_of(path) == PathKind::Dir => {
            EISDIR
        }
        _ => plain,
    }
}

/// [`PathKind`] of a real path (Node's `stat`: links followed).
#[cfg(windows)]
pub fn kind_of(path: &Path) -> PathKind {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => PathKind::Dir,
        Ok(_) => PathKind::NotDir,
        Err(_) => PathKind::Absent,
    }
}

#[cfg(test)]
#[path = "win32_tests.rs"]
mod tests;
