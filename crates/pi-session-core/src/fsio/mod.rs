//! File operations with the guarantees the store documents.
//!
//! - Appends: one `write` of a complete line on an `O_APPEND` descriptor, so concurrent writers
//!   never interleave bytes inside a line, and never after another writer's torn bytes (a
//!   newline first when the file does not end with one; see `append`). The descriptor is
//!   checked before each append (kept open, see [`Appender`]), so a file deleted behind our back
//!   is recreated, as the reference's `appendFileSync` would.
//! - First write of a session: exclusive create (`EEXIST` when the name is taken), whole content in
//!   one write.
//! - Rewrites of an existing file (migration, initialisation of an empty file): a temp file in the
//!   same directory, fsync, rename over the target, fsync of the directory. A crash leaves the old
//!   file or the new one, never a mix, even on a power loss.
//! - New whole files (`forkFrom`'s target, `createBranchedSession`'s new file): [`TempFile`], a
//!   temp file in the same directory made visible by a link (new name) or rename only once it is
//!   complete. A process crash at any moment leaves the new file complete or absent. They are not
//!   fsynced by default, as the reference (plain `writeFileSync`) does not: the source session is
//!   never touched, so a power loss can at worst cost the new file; [`Durability::Fsync`] fsyncs
//!   the file before it is linked and the directory after.
//! - Durability: by default nothing is fsynced per append (as the reference); [`Durability::Fsync`]
//!   makes every append and first write durable before it returns.
//!
//! Windows: every descriptor we keep is opened with read, write and delete sharing
//! ([`shared_options`]), so that while we hold a session file another process (stock pi's delete
//! from `/resume`, `pi-sessions rm`, another manager) can still read, append to, rename, delete or
//! replace it, as on Unix. Replacing a file by rename ([`rename_replace`]) uses std's rename, which
//! asks for POSIX semantics (the name moves to the new file at once, held handles keep the old
//! one). Where the OS refuses that while the target is held (file systems without POSIX renames:
//! FAT, many network shares; Wine), the target is first renamed aside, then the new file renamed
//! in, then the old one deleted: the name is absent for the moment between the two renames, and a
//! crash inside it leaves both files under hidden names (`.<name>.<pid>.<id>.old` and `.tmp`),
//! never a mix.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::fault::{self, Point};

mod append;
mod backup;
mod leftovers;
mod private;
mod read;
mod temp;

pub use append::*;
pub use backup::*;
pub use leftovers::{is_leftover, recover, scan_recovered, Recovered, STALE_AFTER};
pub use private::*;
pub use read::*;
pub use temp::*;

/// How hard a write tries to reach stable storage before returning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Written to the OS page cache (survives a process crash, not a power loss).
    #[default]
    Buffered,
    /// fsync after every write (survives a power loss once the call returns).
    Fsync,
}

/// `OpenOptions` for a descriptor we keep: on Windows with read, write and delete sharing, so
/// holding it never stops another handle or process from reading, writing, renaming, deleting or
/// replacing the file (std's default today, stated here so that it stays true); on Unix plain.
pub fn shared_options() -> OpenOptions {
    #[cfg_attr(not(windows), allow(unused_mut))]
    let mut options = OpenOptions::new();
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{
            FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
        };
        options.share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE);
    }
    options
}

pub fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok() && fs::metadata(path).is_ok()
}

/// The name `file` is gone (nothing there, not even a dangling link) while its directory is
/// still there: a session file deleted under its manager.
pub fn vanished_from_its_dir(file: &Path) -> bool {
    let dir_there = file
        .parent()
        .is_none_or(|d| d.as_os_str().is_empty() || d.is_dir());
    dir_there && fs::symlink_metadata(file).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}

/// `mkdir -p`.
pub fn ensure_dir(path: &Path) -> Result<()> {
    if path.as_os_str().is_empty() || path.is_dir() {
        return Ok(());
    }
    fs::create_dir_all(path).map_err(|e| Error::io(&e, "mkdir", path))
}

/// Create the directory `file` goes in (recursively) when it is missing; true when it was. With
/// [`Durability::Fsync`] each directory made is fsynced into its parent, so the file written
/// next has a durable path.
pub fn ensure_parent(file: &Path, durability: Durability) -> Result<bool> {
    let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(false);
    };
    if dir.is_dir() {
        return Ok(false);
    }
    let mut missing = vec![dir];
    while let Some(up) = missing.last().and_then(|d| d.parent()) {
        if up.as_os_str().is_empty() || up.is_dir() {
            break;
        }
        missing.push(up);
    }
    fs::create_dir_all(dir).map_err(|e| Error::io(&e, "mkdir", dir))?;
    if durability == Durability::Fsync {
        for made in missing.iter().rev() {
            sync_dir(made);
        }
    }
    Ok(true)
}

/// Both descriptors are of one file (device and inode; on Windows volume and file index).
#[cfg(unix)]
pub fn same_file(a: &File, b: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (a.metadata(), b.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(windows)]
pub fn same_file(a: &File, b: &File) -> bool {
    match (win::identity(a), win::identity(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(not(any(unix, windows)))]
pub fn same_file(_a: &File, _b: &File) -> bool {
    false
}

/// Whether `f`, opened at `path`, is still the file found there: not deleted or replaced since
/// (a descriptor of a file that lost its name must not take more lines). On Unix the file keeps a
/// link (a rename over it or a delete drops its last one). On Windows link counts do not tell
/// (a deleted file open elsewhere keeps its name and its count until the last handle closes), so
/// the file at `path` is opened and compared by identity.
#[cfg(unix)]
fn still_at(f: &File, _path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    f.metadata().map(|m| m.nlink() > 0).unwrap_or(false)
}

#[cfg(windows)]
fn still_at(f: &File, path: &Path) -> bool {
    // Opening with no access rights at all reads attributes only and conflicts with no one.
    use std::os::windows::fs::OpenOptionsExt;
    let Ok(now) = shared_options().access_mode(0).open(path) else {
        return false;
    };
    same_file(f, &now)
}

#[cfg(not(any(unix, windows)))]
fn still_at(_f: &File, _path: &Path) -> bool {
    false
}

/// [`still_at`], and the file's length when it is (`None` when it is not): on Unix the one
/// `fstat` that tells both.
#[cfg(unix)]
fn length_if_still_at(f: &File, _path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let m = f.metadata().ok()?;
    (m.nlink() > 0).then_some(m.len())
}

#[cfg(not(unix))]
fn length_if_still_at(f: &File, path: &Path) -> Option<u64> {
    if !still_at(f, path) {
        return None;
    }
    f.metadata().ok().map(|m| m.len())
}

/// Rename `from` over `to`, replacing it even while another handle holds it (see the module
/// docs for how, on Windows, when the OS refuses the atomic replace).
pub fn rename_replace(from: &Path, to: &Path) -> io::Result<()> {
    match fs::rename(from, to) {
        #[cfg(windows)]
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => win::replace_held(from, to, e),
        other => other,
    }
}

#[cfg(windows)]
mod win {
    use std::fs::{self, File};
    use std::io;
    use std::os::windows::io::AsRawHandle;
    use std::path::Path;

    use windows_sys::Win32::Storage::FileSystem::{
        GetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION,
    };

    /// The volume serial number and file index of an open file (what tells files apart on
    /// Windows, as device and inode do on Unix).
    pub(super) fn identity(f: &File) -> Option<(u32, u64)> {
        // SAFETY: the handle is valid for as long as `f` is borrowed; the struct is plain data
        // that the call fills in completely when it returns nonzero, and is not read otherwise.
        unsafe {
            let mut info: BY_HANDLE_FILE_INFORMATION = std::mem::zeroed();
            if GetFileInformationByHandle(f.as_raw_handle(), &mut info) == 0 {
                return None;
            }
            let index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
            Some((info.dwVolumeSerialNumber, index))
        }
    }

    /// `to` is held by a handle and the OS will not rename over it: move it aside (a held file
    /// may be renamed when every handle shares delete), put `from` in its place, delete the old
    /// one (its name goes when the last handle closes). If `from` cannot be put in place, the
    /// old file gets its name back; if even that fails it stays aside, whole, and the error says
    /// so through the first failure.
    pub(super) fn replace_held(from: &Path, to: &Path, refused: io::Error) -> io::Result<()> {
        if !fs::symlink_metadata(to).is_ok_and(|m| m.is_file()) {
            return Err(refused);
        }
        let aside = super::hidden_sibling(to, "old");
        if fs::rename(to, &aside).is_err() {
            return Err(refused);
        }
        if let Err(e) = fs::rename(from, to) {
            let _ = fs::rename(&aside, to);
            return Err(e);
        }
        let _ = fs::remove_file(&aside);
        Ok(())
    }
}

// Windows has no fsync of a directory (NTFS journals its metadata): nothing to do there.
#[cfg_attr(not(unix), allow(unused_variables))]
pub fn sync_dir(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            // Best effort: some filesystems refuse fsync on directories.
            let _ = d.sync_all();
        }
    }
}

/// Force a file's data to stable storage. Opened for writing too where it can be: Windows flushes
/// only through a handle with write access; Unix through any.
pub fn fsync_file(path: &Path) -> Result<()> {
    let opened = if cfg!(windows) {
        shared_options().write(true).open(path)
    } else {
        open_read(path)
    };
    match opened {
        Ok(f) => f.sync_all().map_err(|e| Error::io(&e, "fsync", path)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&e, "open", path)),
    }
}
