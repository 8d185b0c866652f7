//! Appends of whole lines: one-shot, and the kept descriptor ([`Appender`]).
//!
//! An append never starts after another writer's torn bytes. A writer killed inside its `write`
//! can leave part of a line and no newline; a line appended right after those bytes would share
//! their physical line, which the reference's reader drops whole (ours reads the entry glued
//! there, see [`crate::torn`], but the reference and older readers do not). So before writing,
//! an append looks at the file's length (the `fstat` the kept descriptor does anyway, to see that
//! the file still has its name): when it is where this writer's last append left it, nobody else
//! wrote and nothing is read; when it is not, the last byte is read (one `pread` of 1 byte) and a
//! newline goes first, in the same `write`, when that byte is not one.
//!
//! A look that lands while another writer's line is being copied in (the file grows a page at a
//! time) sees a line not ended yet: it looks again until the file holds still (see
//! [`starts_mid_line`]), so that line is not followed by an empty one.
//!
//! What is left: `O_APPEND` puts each `write` at the end of the file atomically, so the only
//! window is between the last look and the `write`, a few microseconds. Another writer killed
//! inside a write that begins in that window still leaves torn bytes that our line then follows
//! (read by this store, not by the reference). And a line that takes longer than the looks wait
//! to be copied in (megabytes, or a writer stalled half-way) is followed by an empty line, which
//! every reader skips.

use super::*;

/// Append `bytes` in a single write, starting on a line of their own when the file is no longer
/// `left` bytes long (the length this writer left it at; `None`: not known) and does not end
/// with a newline. Bytes that continue a line this writer began (a copy in chunks) are appended
/// as they are while nobody else wrote. Returns the length to pass as `left` next time: the
/// file's length before the write plus what was written (longer when someone wrote meanwhile,
/// which the next append then sees).
pub fn append_continuing(
    path: &Path,
    bytes: &[u8],
    left: Option<u64>,
    durability: Durability,
) -> Result<u64> {
    let (f, readable) = open_append(path)?;
    let len = f
        .metadata()
        .map_err(|e| Error::io(&e, "fstat", path))?
        .len();
    let lead = readable && starts_mid_line(&f, len, left);
    let mut framed = Vec::new();
    let out = if lead {
        framed.reserve(bytes.len() + 1);
        framed.push(b'\n');
        framed.extend_from_slice(bytes);
        &framed[..]
    } else {
        bytes
    };
    write_line(&f, out, path)?;
    if durability == Durability::Fsync {
        f.sync_data().map_err(|e| Error::io(&e, "fsync", path))?;
    }
    Ok(len + out.len() as u64)
}

/// End the file's last line: one `\n` appended unless the file now ends with one. `len` is a
/// length at which it was seen to end without one (then an unchanged length needs no read).
/// Returns whether a newline was written.
pub fn end_last_line(path: &Path, len: u64) -> Result<bool> {
    let (f, readable) = open_append(path)?;
    let now = f
        .metadata()
        .map_err(|e| Error::io(&e, "fstat", path))?
        .len();
    // Another writer ended the line meanwhile (or cannot be checked: written as before).
    if now != len && readable && !starts_mid_line(&f, now, None) {
        return Ok(false);
    }
    write_line(&f, b"\n", path)?;
    Ok(true)
}

/// Open `path` for appending (created when missing), readable too when the file lets us: the
/// reference only ever writes, so a write-only file must still take appends. The flag says
/// whether it could be opened for reading.
fn open_append(path: &Path) -> Result<(File, bool)> {
    let open = |read: bool| {
        shared_options()
            .read(read)
            .append(true)
            .create(true)
            .open(path)
    };
    match open(true) {
        Ok(f) => Ok((f, true)),
        Err(_) => Ok((open(false).map_err(|e| Error::io(&e, "open", path))?, false)),
    }
}

/// The pause between two looks at a file whose last line is not ended yet...
const SETTLE_PAUSE: std::time::Duration = std::time::Duration::from_micros(50);
/// ...how many looks in a row must find the same length (5 ms of pauses: a writer descheduled
/// half-way through its `write` on a busy machine stays still for a while; 1 ms was seen to be
/// too short with two writers and a test runner on two cores)...
const STILL_LOOKS: u32 = 100;
/// ...and at most this many looks (50 ms of pauses in all).
const SETTLE_LOOKS: u32 = 1000;

/// Whether a line appended to `f`, now `len` bytes long, would start after a byte that is not a
/// newline. `left` is the length this writer left it at: unchanged, nobody else wrote there and
/// nothing is read. A byte that cannot be read counts as a newline (as before the check).
///
/// An unended last line is either torn bytes, which stay as they are, or another writer's line
/// being copied in right now: the file then grows a page at a time, and the line will end. So
/// the look is taken again until the file has held still for [`STILL_LOOKS`] looks in a row (or
/// the line ended, or [`SETTLE_LOOKS`] looks were taken): only then does the line count as
/// unended. Without this, a line of 300 bytes that straddles a page boundary, seen between its
/// two pages, would get an empty line after it. It costs 5 ms after torn bytes, once.
fn starts_mid_line(f: &File, mut len: u64, left: Option<u64>) -> bool {
    if len == 0 || left == Some(len) || !ends_mid_line(f, len) {
        return false;
    }
    let mut still = 0;
    for _ in 0..SETTLE_LOOKS {
        std::thread::sleep(SETTLE_PAUSE);
        match f.metadata() {
            Ok(m) if m.len() != len => {
                len = m.len();
                still = 0;
                if !ends_mid_line(f, len) {
                    return false;
                }
            }
            Ok(_) if still + 1 < STILL_LOOKS => still += 1,
            _ => return true,
        }
    }
    true
}

/// The byte before `len` can be read and is not a newline.
fn ends_mid_line(f: &File, len: u64) -> bool {
    let mut last = [0u8];
    len > 0 && read_exact_at(f, &mut last, len - 1).is_ok() && last[0] != b'\n'
}

/// An append descriptor kept open between appends (opening the file per append costs more than
/// the write). Before each use it checks the file still has a name: if it was deleted or replaced,
/// the path is opened again, so the next line recreates the file as the reference's
/// `appendFileSync` would.
#[derive(Debug, Default)]
pub struct Appender {
    /// The descriptor, and whether it was opened for reading too (so that a session can read
    /// back what it appended through it, without a descriptor of its own, and so that an append
    /// can look at the file's last byte).
    open: Option<(PathBuf, Arc<File>, bool)>,
    /// Counts the descriptors opened: a session that reads back what it appended checks once per
    /// descriptor that it is the file it reads from.
    opened: u64,
    /// The last append went out in one `write` (so no other writer's bytes can be inside it).
    last_in_one_write: bool,
    /// The file's length after the last append through the descriptor, as far as this writer
    /// knows (see [`append_continuing`]); `None` for a descriptor not written through yet.
    left: Option<u64>,
    /// How many appends read the file's last byte (another writer had written since): a count
    /// for the tests.
    tail_reads: u64,
    /// A newline, then the line and its newline, assembled for one `write` (kept between
    /// appends: most lines are small and come several per turn). The first newline is written
    /// only when the file does not end with one.
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
        bytes.reserve(line.len() + 2);
        bytes.push(b'\n');
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
        let result = self.append(path, &bytes, durability);
        if bytes.capacity() <= KEEP_BUF {
            self.buf = bytes;
        }
        result
    }

    /// Write `framed` (a newline, then the line and its newline), from its first byte when the
    /// file does not end with a newline, else from its second.
    fn append(&mut self, path: &Path, framed: &[u8], durability: Durability) -> Result<()> {
        self.last_in_one_write = false;
        let known = match &self.open {
            Some((p, f, _)) if p == path => length_if_still_at(f, path),
            _ => None,
        };
        let len = match known {
            Some(len) => len,
            None => self.reopen(path)?,
        };
        let (_, f, readable) = self.open.as_ref().expect("opened above");
        let f: &File = f;
        let lead = *readable && self.left != Some(len) && len > 0 && {
            self.tail_reads += 1;
            starts_mid_line(f, len, None)
        };
        let bytes = if lead { framed } else { &framed[1..] };
        let result = write_line(f, bytes, path).and_then(|writes| {
            self.last_in_one_write = writes == 1;
            if durability == Durability::Fsync {
                f.sync_data().map_err(|e| Error::io(&e, "fsync", path))
            } else {
                Ok(())
            }
        });
        self.left = Some(len + bytes.len() as u64);
        if result.is_err() {
            self.open = None;
        }
        result
    }

    /// Open `path` as the descriptor appends go through (see [`open_append`]); its length.
    fn reopen(&mut self, path: &Path) -> Result<u64> {
        self.open = None;
        self.left = None;
        let (f, readable) = open_append(path)?;
        let len = f
            .metadata()
            .map_err(|e| Error::io(&e, "fstat", path))?
            .len();
        self.open = Some((path.to_path_buf(), Arc::new(f), readable));
        self.opened += 1;
        Ok(len)
    }

    /// How many appends read the file's last byte because another writer had written since.
    pub fn tail_reads(&self) -> u64 {
        self.tail_reads
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_dir;

    /// Another process's append: its own descriptor, the bytes as they are.
    fn other_writer(path: &Path, bytes: &[u8]) {
        let mut f = OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(bytes).unwrap();
    }

    fn text(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }

    #[test]
    fn an_append_after_another_writers_torn_bytes_starts_on_a_line_of_its_own() {
        let dir = temp_dir("append-torn");
        let file = dir.join("s.jsonl");
        let mut a = Appender::default();
        a.append_line(&file, b"one", Durability::Buffered).unwrap();
        other_writer(&file, br#"{"type":"message","id":"cut"#);
        a.append_line(&file, b"two", Durability::Buffered).unwrap();
        assert_eq!(
            text(&file),
            "one\n{\"type\":\"message\",\"id\":\"cut\ntwo\n"
        );
        assert_eq!(a.tail_reads(), 1);
        // What the appender wrote, read back where it says it wrote it.
        let (_, _, end) = a.last_write_end().unwrap();
        assert_eq!(end, fs::metadata(&file).unwrap().len());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_append_after_another_writers_whole_line_adds_no_newline() {
        let dir = temp_dir("append-whole");
        let file = dir.join("s.jsonl");
        let mut a = Appender::default();
        a.append_line(&file, b"one", Durability::Buffered).unwrap();
        other_writer(&file, b"theirs\n");
        a.append_line(&file, b"two", Durability::Buffered).unwrap();
        assert_eq!(text(&file), "one\ntheirs\ntwo\n");
        assert_eq!(a.tail_reads(), 1, "the file grew: its last byte was read");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn appends_after_our_own_read_nothing() {
        let dir = temp_dir("append-own");
        let file = dir.join("s.jsonl");
        fs::write(&file, "header\n").unwrap();
        let mut a = Appender::default();
        for line in ["one", "two", "three"] {
            a.append_line(&file, line.as_bytes(), Durability::Buffered)
                .unwrap();
        }
        assert_eq!(text(&file), "header\none\ntwo\nthree\n");
        assert_eq!(
            a.tail_reads(),
            1,
            "only the first, through a new descriptor"
        );
        // A file that ends without a newline when first appended to (torn before we opened it).
        other_writer(&file, b"cut");
        let mut b = Appender::default();
        b.append_line(&file, b"four", Durability::Buffered).unwrap();
        assert!(text(&file).ends_with("three\ncut\nfour\n"));
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_continued_copy_follows_its_own_bytes_and_not_another_writers_torn_ones() {
        let dir = temp_dir("append-continuing");
        let file = dir.join("s.jsonl");
        fs::write(&file, "header\n").unwrap();
        let left = append_continuing(&file, b"half a li", Some(7), Durability::Buffered).unwrap();
        let left = append_continuing(&file, b"ne\n", Some(left), Durability::Buffered).unwrap();
        assert_eq!(text(&file), "header\nhalf a line\n");
        other_writer(&file, b"torn");
        let left = append_continuing(&file, b"next\n", Some(left), Durability::Buffered).unwrap();
        assert_eq!(text(&file), "header\nhalf a line\ntorn\nnext\n");
        other_writer(&file, b"whole\n");
        append_continuing(&file, b"last\n", Some(left), Durability::Buffered).unwrap();
        assert!(text(&file).ends_with("next\nwhole\nlast\n"));
        // Not knowing where it left the file, a copy looks at the last byte.
        other_writer(&file, b"cut");
        append_continuing(&file, b"after\n", None, Durability::Buffered).unwrap();
        assert!(text(&file).ends_with("last\ncut\nafter\n"));
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_torn_last_line_is_ended_once_whoever_ends_it() {
        let dir = temp_dir("end-last-line");
        let file = dir.join("s.jsonl");
        fs::write(&file, "header\ncut").unwrap();
        assert!(end_last_line(&file, 10).unwrap());
        assert_eq!(text(&file), "header\ncut\n");
        // Seen torn at 10 bytes, then ended by another writer's line glued to it.
        fs::write(&file, "header\ncut").unwrap();
        other_writer(&file, b"{\"theirs\":1}\n");
        assert!(!end_last_line(&file, 10).unwrap());
        assert_eq!(text(&file), "header\ncut{\"theirs\":1}\n");
        fs::remove_dir_all(dir).unwrap();
    }
}
