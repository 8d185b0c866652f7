//! New files made visible complete: temp files next to their target, linked or renamed into place.

use super::*;

/// Create a file that must not exist yet, with all its content.
pub fn create_new(path: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
    create_new_with(shared_options(), path, bytes, durability)
}

/// [`create_new`] opened with `options` (a private session file: [`session_options`]).
pub fn create_new_with(
    options: OpenOptions,
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> Result<()> {
    let mut options = options;
    let mut f = options
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
    /// Made 0600 for a file of ours; otherwise it takes the mode of the file it replaces.
    private: bool,
}

impl TempFile {
    /// Create the temp file for `target` (readable too: the finished file can be read back
    /// through [`TempFile::file`] without opening it again).
    pub fn create(target: &Path) -> Result<TempFile> {
        TempFile::create_with(target, shared_options(), false)
    }

    /// A temp file for a new session file: private when `private` (`PI_SESSION_PRIVATE`).
    pub fn create_session(target: &Path, private: bool) -> Result<TempFile> {
        if private {
            TempFile::create_private(target)
        } else {
            TempFile::create(target)
        }
    }

    /// [`TempFile::create`] for a file of ours (see `fsio::private`): 0600 from the start, and
    /// still 0600 after it replaces a file.
    pub fn create_private(target: &Path) -> Result<TempFile> {
        TempFile::create_with(target, private_options(), true)
    }

    fn create_with(target: &Path, mut options: OpenOptions, private: bool) -> Result<TempFile> {
        let tmp = temp_path(target);
        let file = options
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io(&e, "open", &tmp))?;
        Ok(TempFile {
            tmp,
            file: Some(file),
            linked: false,
            private,
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
        if !self.private {
            keep_mode(self.file(), target);
        }
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

pub(super) fn temp_path(path: &Path) -> PathBuf {
    hidden_sibling(path, "tmp")
}

/// A new hidden name next to `path`: `.<name>.<pid>.<random>.<what>`.
pub(super) fn hidden_sibling(path: &Path, what: &str) -> PathBuf {
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

pub(super) fn write_whole(f: &mut File, bytes: &[u8], path: &Path) -> Result<()> {
    f.write_all(bytes).map_err(|e| Error::io(&e, "write", path))
}
