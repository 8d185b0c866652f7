//! File operations with the guarantees the store documents.
//!
//! - Appends: one `write` of a complete line on an `O_APPEND` descriptor, so concurrent writers
//!   never interleave bytes inside a line. The file is opened per append, like the reference's
//!   `appendFileSync`, so a file deleted behind our back is recreated.
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
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::fault::{self, Point};

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

/// Open a file for reading with [`shared_options`].
pub fn open_read(path: &Path) -> io::Result<File> {
    shared_options().read(true).open(path)
}

/// Read a whole file; `Ok(None)` when it does not exist.
pub fn read_all(path: &Path) -> Result<Option<Vec<u8>>> {
    match open_read(path) {
        Ok(mut f) => {
            let mut buf = Vec::with_capacity(f.metadata().map(|m| m.len() as usize).unwrap_or(0));
            f.read_to_end(&mut buf)
                .map_err(|e| Error::io(&e, "read", path))?;
            Ok(Some(buf))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&e, "open", path)),
    }
}

/// Read up to `buf.len()` bytes at `offset` (without moving a position others rely on, on Unix);
/// how many were read (0 at the end).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    loop {
        #[cfg(unix)]
        let r = {
            use std::os::unix::fs::FileExt;
            file.read_at(buf, offset)
        };
        #[cfg(windows)]
        let r = {
            use std::os::windows::fs::FileExt;
            file.seek_read(buf, offset)
        };
        match r {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// Read exactly `buf.len()` bytes at `offset`.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match read_at(file, &mut buf[done..], offset + done as u64)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => done += n,
        }
    }
    Ok(())
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

/// Append bytes (complete lines) in a single write.
pub fn append(path: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
    let f = shared_options()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| Error::io(&e, "open", path))?;
    write_line(&f, bytes, path)?;
    if durability == Durability::Fsync {
        f.sync_data().map_err(|e| Error::io(&e, "fsync", path))?;
    }
    Ok(())
}

/// An append descriptor kept open between appends (opening the file per append costs more than
/// the write). Before each use it checks the file still has a name: if it was deleted or replaced,
/// the path is opened again, so the next line recreates the file as the reference's
/// `appendFileSync` would.
#[derive(Debug, Default)]
pub struct Appender {
    /// The descriptor, and whether it was opened for reading too (so that a session can read
    /// back what it appended through it, without a descriptor of its own).
    open: Option<(PathBuf, Arc<File>, bool)>,
    /// Counts the descriptors opened: a session that reads back what it appended checks once per
    /// descriptor that it is the file it reads from.
    opened: u64,
    /// The last append went out in one `write` (so no other writer's bytes can be inside it).
    last_in_one_write: bool,
    /// The line and its newline, assembled for one `write` (kept between appends: most lines
    /// are small and come several per turn).
    buf: Vec<u8>,
}

/// A line buffer bigger than this is not kept for the next append.
const KEEP_BUF: usize = 64 * 1024;

impl Appender {
    /// Append `line` and a newline in one `write` (a concurrent reader or writer never sees half
    /// a line of ours between other writes).
    pub fn append_line(&mut self, path: &Path, line: &[u8], durability: Durability) -> Result<()> {
        let mut bytes = std::mem::take(&mut self.buf);
        bytes.clear();
        bytes.reserve(line.len() + 1);
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
        let result = self.append(path, &bytes, durability);
        if bytes.capacity() <= KEEP_BUF {
            self.buf = bytes;
        }
        result
    }

    fn append(&mut self, path: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
        self.last_in_one_write = false;
        let reusable = match &self.open {
            Some((p, f, _)) if p == path => still_at(f, path),
            _ => false,
        };
        if !reusable {
            self.open = None;
            let open = |read: bool| {
                shared_options()
                    .read(read)
                    .append(true)
                    .create(true)
                    .open(path)
            };
            // Readable when the file lets us (it always does for files we made); the reference
            // only ever writes, so a write-only file must still take appends.
            let (f, readable) = match open(true) {
                Ok(f) => (f, true),
                Err(_) => (open(false).map_err(|e| Error::io(&e, "open", path))?, false),
            };
            self.open = Some((path.to_path_buf(), Arc::new(f), readable));
            self.opened += 1;
        }
        let (_, f, _) = self.open.as_ref().expect("opened above");
        let f: &File = f;
        let result = write_line(f, bytes, path).and_then(|writes| {
            self.last_in_one_write = writes == 1;
            if durability == Durability::Fsync {
                f.sync_data().map_err(|e| Error::io(&e, "fsync", path))
            } else {
                Ok(())
            }
        });
        if result.is_err() {
            self.open = None;
        }
        result
    }

    /// Whether the next append to `path` opens it again: no descriptor of it yet, or the file
    /// it had lost its name (deleted, or its directory removed).
    pub fn reopens(&self, path: &Path) -> bool {
        match &self.open {
            Some((p, f, _)) if p == path => !still_at(f, path),
            _ => true,
        }
    }

    /// After a successful append: the descriptor it wrote through (`opened` tells descriptors
    /// apart) and the offset just past the newline. With `O_APPEND` the descriptor's offset is the
    /// end of our own write, whatever other writers appended since.
    /// The descriptor is shared when it was opened for reading too, else `None` in its place.
    pub fn last_write_end(&self) -> Option<(u64, Option<Arc<File>>, u64)> {
        use std::io::Seek;
        if !self.last_in_one_write {
            return None;
        }
        let (_, f, readable) = self.open.as_ref()?;
        let end = (&**f).stream_position().ok()?;
        Some((self.opened, readable.then(|| Arc::clone(f)), end))
    }

    /// Forget the descriptor (the session moved to another file).
    pub fn close(&mut self) {
        self.open = None;
    }
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

/// Create a file that must not exist yet, with all its content.
pub fn create_new(path: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
    let mut f = shared_options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(&e, "open", path))?;
    if let Err(e) = write_whole(&mut f, bytes, path) {
        // Nothing of a half-written first flush may stay behind: the name must be reusable.
        drop(f);
        let _ = fs::remove_file(path);
        return Err(e);
    }
    if durability == Durability::Fsync {
        f.sync_all().map_err(|e| Error::io(&e, "fsync", path))?;
        sync_dir(path);
    }
    Ok(())
}

/// Replace (or create) a file atomically: temp file, fsync, rename, fsync of the directory.
pub fn replace_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_atomic_with_hook(path, bytes, |_| fault::hit(Point::BeforeRename, path))
}

/// [`replace_atomic`] with a hook run after the temp file is durable and before the rename; tests
/// use it to simulate a crash at that moment.
pub fn replace_atomic_with_hook(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let mut tmp = TempFile::create(path)?;
    tmp.write_all(bytes)?;
    tmp.rename_over_after(path, Durability::Fsync, before_rename)
        .map(drop)
}

/// Create a file that must not exist yet, atomically: the content goes to a temp file first and is
/// linked into place only when complete, so a crash or failure leaves no partial target.
pub fn create_new_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = TempFile::create(path)?;
    tmp.write_all(bytes)?;
    tmp.link_new(path, Durability::Fsync).map(drop)
}

/// A new file under construction: a hidden temp file next to its target, written in pieces and
/// then made visible complete ([`TempFile::link_new`], [`TempFile::rename_over`]). Dropped before
/// that (an error on the way), the temp file is removed. A simulated kill (a panicking fault
/// hook) leaves it behind, as a real kill would: hidden `.tmp` names are never read.
#[derive(Debug)]
pub struct TempFile {
    tmp: PathBuf,
    /// Taken out when the finished file is handed over.
    file: Option<File>,
    linked: bool,
}

impl TempFile {
    /// Create the temp file for `target` (readable too: the finished file can be read back
    /// through [`TempFile::file`] without opening it again).
    pub fn create(target: &Path) -> Result<TempFile> {
        let tmp = temp_path(target);
        let file = shared_options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io(&e, "open", &tmp))?;
        Ok(TempFile {
            tmp,
            file: Some(file),
            linked: false,
        })
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let f = self.file.as_mut().expect("open until handed over");
        write_whole(f, bytes, &self.tmp)
    }

    /// The open file (its content so far).
    pub fn file(&self) -> &File {
        self.file.as_ref().expect("open until handed over")
    }

    fn sync(&self, durability: Durability) -> Result<()> {
        if durability == Durability::Fsync {
            self.file()
                .sync_all()
                .map_err(|e| Error::io(&e, "fsync", &self.tmp))?;
        }
        Ok(())
    }

    /// Give the complete file the name `target`, which must not exist yet (`EEXIST`, as an
    /// exclusive create). Returns the open file.
    pub fn link_new(mut self, target: &Path, durability: Durability) -> Result<File> {
        self.sync(durability)?;
        fault::hit(Point::BeforeLink, target)?;
        fs::hard_link(&self.tmp, target).map_err(|e| Error::io(&e, "open", target))?;
        self.linked = true;
        let _ = fs::remove_file(&self.tmp);
        if durability == Durability::Fsync {
            sync_dir(target);
        }
        Ok(self.into_file())
    }

    /// Give the complete file the name `target`, replacing what has that name. Returns the open
    /// file.
    pub fn rename_over(self, target: &Path, durability: Durability) -> Result<File> {
        self.rename_over_after(target, durability, |_| {
            fault::hit(Point::BeforeRename, target)
        })
    }

    /// [`TempFile::rename_over`] with `before_rename(temp path)` in place of the fault point.
    fn rename_over_after(
        mut self,
        target: &Path,
        durability: Durability,
        before_rename: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<File> {
        self.sync(durability)?;
        before_rename(&self.tmp)?;
        rename_replace(&self.tmp, target).map_err(|e| Error::io(&e, "rename", target))?;
        self.linked = true;
        fault::hit(Point::AfterRename, target)?;
        if durability == Durability::Fsync {
            sync_dir(target);
        }
        Ok(self.into_file())
    }

    fn into_file(mut self) -> File {
        self.file.take().expect("open until handed over")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // Unwinding from a panic is how tests simulate a kill: nothing is cleaned up then.
        if !self.linked && !std::thread::panicking() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Keep the original bytes next to the file as `<file>.bak` before we rewrite it (`<file>.bak.1`,
/// `.bak.2`, ... when that name is taken: an older backup is never overwritten).
pub fn backup(path: &Path, original: &[u8]) -> Result<PathBuf> {
    for n in 0u32.. {
        let mut name = path.as_os_str().to_owned();
        name.push(".bak");
        if n > 0 {
            name.push(format!(".{n}"));
        }
        let bak = PathBuf::from(name);
        match create_new_atomic(&bak, original) {
            Err(e) if e.errno_name == Some("EEXIST") => continue,
            other => return other.map(|_| bak),
        }
    }
    unreachable!("u32 range exhausted")
}

fn temp_path(path: &Path) -> PathBuf {
    hidden_sibling(path, "tmp")
}

/// A new hidden name next to `path`: `.<name>.<pid>.<random>.<what>`.
fn hidden_sibling(path: &Path, what: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let unique = uuid::Uuid::new_v4().simple().to_string();
    path.with_file_name(format!(
        ".{name}.{}.{}.{what}",
        std::process::id(),
        &unique[..8]
    ))
}

/// Append one line on an `O_APPEND` descriptor. If the line cannot be written whole (disk full, file
/// size limit), the part that was written is cut off again, so no partial line stays behind, unless
/// another writer has appended after it in the meantime (then cutting would destroy their line).
/// Returns how many `write` calls it took.
fn write_line(mut f: &File, bytes: &[u8], path: &Path) -> Result<usize> {
    let mut written = 0;
    let mut writes = 0;
    while written < bytes.len() {
        match f.write(&bytes[written..]) {
            Ok(0) => {
                let e = io::Error::new(io::ErrorKind::WriteZero, "failed to write whole line");
                cut_partial(f, written);
                return Err(Error::io(&e, "write", path));
            }
            Ok(n) => {
                written += n;
                writes += 1;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                cut_partial(f, written);
                return Err(Error::io(&e, "write", path));
            }
        }
    }
    Ok(writes)
}

/// Undo `written` bytes just appended: with `O_APPEND`, the descriptor's offset is the end of our
/// own write; the file is cut back only while that is still the end of the file.
fn cut_partial(mut f: &File, written: usize) {
    use std::io::Seek;
    if written == 0 {
        return;
    }
    let Ok(end) = f.stream_position() else {
        return;
    };
    if f.metadata().map(|m| m.len()).ok() == Some(end) {
        let _ = f.set_len(end - written as u64);
    }
}

fn write_whole(f: &mut File, bytes: &[u8], path: &Path) -> Result<()> {
    f.write_all(bytes).map_err(|e| Error::io(&e, "write", path))
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
