//! Appends of whole lines: one-shot, and the kept descriptor ([`Appender`]).

use super::*;

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

/// Append one line on an `O_APPEND` descriptor. If the line cannot be written whole (disk full, file
/// size limit), the part that was written is cut off again, so no partial line stays behind, unless
/// another writer has appended after it in the meantime (then cutting would destroy their line).
/// Returns how many `write` calls it took.
pub(super) fn write_line(mut f: &File, bytes: &[u8], path: &Path) -> Result<usize> {
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
pub(super) fn cut_partial(mut f: &File, written: usize) {
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
