//! The record vector: each record's line (held in [`Text`], or left in the session file) and the
//! [`Meta`] read from it.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};
use crate::file::fingerprint;
use crate::lazy::{LazyReader, Shapes};
use crate::record::Meta;
use crate::text::Text;

/// One parsed record: its line (bytes in `Records::text`, or in the file) and what we read
/// from it.
#[derive(Debug, Clone)]
pub struct Rec {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The line lives in the session file at `start..end` (big files are not held in memory),
    /// rather than in `Records::text`.
    pub(crate) in_file: bool,
    /// For file-backed lines: a fingerprint of the bytes ([`fingerprint`]), checked on every
    /// read so a file changed behind our back is reported instead of misread.
    pub(crate) check: u32,
    /// For file-backed lines: where the line's skeleton is in `Records::skeletons` (see
    /// [`crate::lazy`]), or [`NO_SKELETON`] (read the line from the file instead).
    pub(crate) skel: u32,
    pub meta: Meta,
}

/// At most this many bytes of consecutive lines are read at once by [`Records::test_lines`].
const RUN_BYTES: usize = 4 << 20;

/// What one thread of [`Records::test_lines`] found: per run it took (its index), the answers.
type Tested = Vec<(usize, Vec<bool>)>;

/// [`Rec::skel`] of a line whose skeleton is not kept.
pub const NO_SKELETON: u32 = u32::MAX;

impl Rec {
    /// A record whose line is `text[start..end]`.
    pub(crate) fn in_text(start: usize, end: usize, meta: Meta) -> Rec {
        Rec {
            start,
            end,
            in_file: false,
            check: 0,
            skel: NO_SKELETON,
            meta,
        }
    }

    /// A record whose line stays in the session file at `start..end`, with its fingerprint.
    pub(crate) fn in_file(start: usize, end: usize, meta: Meta, check: u32) -> Rec {
        Rec {
            start,
            end,
            in_file: true,
            check,
            skel: NO_SKELETON,
            meta,
        }
    }

    /// Length of the line, wherever it is.
    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }
}

/// The records of a session, in file order, and where their lines are.
#[derive(Debug, Default)]
pub(crate) struct Records {
    pub(crate) text: Text,
    pub(crate) recs: Vec<Rec>,
    /// The file that file-backed records are read from (kept open: the bytes stay reachable even
    /// if the path is replaced).
    pub(crate) reader: Option<(PathBuf, Arc<std::fs::File>)>,
    /// How many records are user or assistant messages (the lazy first write waits for one).
    pub(crate) conversation: usize,
    /// The holder shapes of the loaded records' lazy values (see [`crate::lazy`]).
    pub(crate) shapes: Shapes,
    /// The skeletons of file-backed lines (see [`Rec::skel`]): what JavaScript gets of an entry
    /// at first, kept so that handing out thousands of entries reads nothing from the file.
    pub(crate) skeletons: Arc<Vec<u8>>,
    /// The snapshot lazy values are read from, once asked for (until the records are replaced).
    pub(crate) lazy_reader: Option<Arc<LazyReader>>,
}

impl Records {
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.reader = None;
        self.recs.clear();
        self.conversation = 0;
        self.shapes = Shapes::default();
        self.skeletons = Arc::default();
        self.lazy_reader = None;
    }

    /// The reader of this load's lazy values (made at the first call after a load).
    pub(crate) fn lazy_reader(&mut self) -> Arc<LazyReader> {
        if let Some(r) = &self.lazy_reader {
            return Arc::clone(r);
        }
        let r = Arc::new(LazyReader::of(self));
        self.lazy_reader = Some(Arc::clone(&r));
        r
    }

    /// The skeleton of the record at `pos` (its line when it has no lazy values), built in
    /// `scratch` where it must be; and its holder's shape id when it has lazy values.
    pub(crate) fn skeleton<'a>(
        &'a self,
        pos: u32,
        scratch: &'a mut Vec<u8>,
    ) -> Result<(Cow<'a, [u8]>, Option<u32>)> {
        let r = &self.recs[pos as usize];
        let lazy = self.lazy_of(r);
        let shape = lazy.map(|l| l.shape);
        if r.in_file && r.skel != NO_SKELETON {
            let len = self.skeleton_len(pos);
            let at = r.skel as usize;
            return Ok((Cow::Borrowed(&self.skeletons[at..at + len]), shape));
        }
        let line = self.full_line(pos)?;
        match &lazy {
            None => Ok((line, None)),
            Some(lazy) => {
                scratch.clear();
                crate::lazy::push_skeleton(&line, lazy, scratch);
                Ok((Cow::Borrowed(&scratch[..]), shape))
            }
        }
    }

    /// Whether the record's skeleton is in memory (its line, or the skeleton made when the file
    /// was read: JSON checked then), not read from the file when asked for.
    pub(crate) fn skeleton_held(&self, pos: u32) -> bool {
        let r = &self.recs[pos as usize];
        !r.in_file || r.skel != NO_SKELETON
    }

    /// A record's lazy values, when its shape is one of these records' (a record carried over
    /// from other records without their shapes would otherwise be misread: it is whole instead).
    fn lazy_of<'a>(&self, r: &'a Rec) -> Option<&'a crate::lazy::LazyMeta> {
        let lazy = r.meta.lazy.as_ref()?;
        let known = (lazy.shape as usize) < self.shapes.len();
        debug_assert!(
            known,
            "a record's lazy values have a shape of other records"
        );
        known.then_some(lazy)
    }

    /// How long the skeleton of the record at `pos` is.
    pub(crate) fn skeleton_len(&self, pos: u32) -> usize {
        let r = &self.recs[pos as usize];
        match self.lazy_of(r) {
            Some(lazy) => crate::lazy::skeleton_len(r.len(), lazy),
            None => r.len(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.recs.len()
    }

    pub(crate) fn meta(&self, pos: u32) -> &Meta {
        &self.recs[pos as usize].meta
    }

    /// Add a record (its line placed already).
    pub(crate) fn push(&mut self, rec: Rec) -> u32 {
        let pos = self.recs.len() as u32;
        if rec.meta.is_conversation_message() {
            self.conversation += 1;
        }
        self.recs.push(rec);
        pos
    }

    /// Remove the last record (the undo of [`Records::push`]).
    pub(crate) fn pop(&mut self) {
        let rec = self.recs.pop().expect("a record to pop");
        if rec.meta.is_conversation_message() {
            self.conversation -= 1;
        }
    }

    /// Put `line` at the end of the text as the line of the record at `pos`.
    pub(crate) fn keep_in_text(&mut self, pos: u32, line: &[u8]) {
        let start = self.text.len();
        self.text.extend_from_slice(line);
        let r = &mut self.recs[pos as usize];
        (r.start, r.end, r.in_file, r.check) = (start, self.text.len(), false, 0);
    }

    /// Point the record at `pos` to `line`, written at `start` in the file `reader` reads.
    pub(crate) fn point_into_file(&mut self, pos: u32, start: usize, line: &[u8]) {
        let r = &mut self.recs[pos as usize];
        (r.start, r.end, r.in_file, r.check) = (start, start + line.len(), true, fingerprint(line));
    }

    /// The raw bytes of a record's line (without its newline).
    pub(crate) fn line(&self, pos: u32) -> Result<Cow<'_, [u8]>> {
        let r = &self.recs[pos as usize];
        if !r.in_file {
            return Ok(Cow::Borrowed(&self.text[r.start..r.end]));
        }
        let (path, file) = self.file_reader();
        let mut buf = vec![0u8; r.end - r.start];
        read_held(path, file, &mut buf, r.start)?;
        if fingerprint(&buf) != r.check {
            return Err(file_changed(path));
        }
        Ok(Cow::Owned(buf))
    }

    /// [`Records::line`] for a caller that holds the whole session file as `file` (read just
    /// now): a file-backed line is taken from those bytes, checked against its fingerprint as a
    /// read is, instead of read again.
    pub(crate) fn line_in<'a>(&'a self, pos: u32, file: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        let r = &self.recs[pos as usize];
        if !r.in_file {
            return Ok(Cow::Borrowed(&self.text[r.start..r.end]));
        }
        match file.get(r.start..r.end) {
            Some(line) if fingerprint(line) == r.check => Ok(Cow::Borrowed(line)),
            _ => Err(file_changed(self.file_reader().0)),
        }
    }

    /// Whether the line of each record in `positions` passes `test`, read as [`Records::line`]
    /// reads it (a file-backed line checked against its fingerprint). The positions are taken in
    /// runs of up to [`RUN_BYTES`]: lines held in memory, or lines that follow each other in the
    /// file, read with one read per run. The runs are tested on up to one thread per core: a
    /// branched copy of a session must know which of its lines are canonical, and the open no
    /// longer finds that out.
    pub(crate) fn test_lines(
        &self,
        positions: &[u32],
        test: impl Fn(&[u8]) -> bool + Sync,
    ) -> Result<Vec<bool>> {
        self.test_lines_in_runs(positions, RUN_BYTES, test)
    }

    /// [`Records::test_lines`] with runs of at most `run_bytes`.
    fn test_lines_in_runs(
        &self,
        positions: &[u32],
        run_bytes: usize,
        test: impl Fn(&[u8]) -> bool + Sync,
    ) -> Result<Vec<bool>> {
        // Runs of indices into `positions`, each with its size in bytes.
        let mut runs: Vec<(std::ops::Range<usize>, usize)> = Vec::new();
        for (i, &p) in positions.iter().enumerate() {
            let r = &self.recs[p as usize];
            let joins = runs.last().is_some_and(|(run, bytes)| {
                let last = &self.recs[positions[run.end - 1] as usize];
                run.end == i
                    && last.in_file == r.in_file
                    && (!r.in_file || r.start == last.end + 1)
                    && bytes + r.len() <= run_bytes
            });
            match runs.last_mut() {
                Some((run, bytes)) if joins => (run.end, *bytes) = (i + 1, *bytes + r.len() + 1),
                _ => runs.push((i..i + 1, r.len() + 1)),
            }
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let threads = crate::cores::available()
            .unwrap_or(1)
            .clamp(1, 8)
            .min(runs.len());
        let tested: Vec<Result<Tested>> = std::thread::scope(|scope| {
            let work = || {
                let mut buf = Vec::new();
                let mut done = Vec::new();
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((run, _)) = runs.get(k) else {
                        return Ok(done);
                    };
                    done.push((k, self.test_run(&positions[run.clone()], &mut buf, &test)?));
                }
            };
            let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let mut all = vec![work()];
            all.extend(
                helpers
                    .into_iter()
                    .map(|h| h.join().expect("a line test panicked")),
            );
            all
        });
        let mut out = vec![false; positions.len()];
        for part in tested {
            for (k, results) in part? {
                out[runs[k].0.clone()].copy_from_slice(&results);
            }
        }
        Ok(out)
    }

    /// [`Records::test_lines`] for one run: lines held in memory, or file-backed lines that
    /// follow each other.
    fn test_run(
        &self,
        run: &[u32],
        buf: &mut Vec<u8>,
        test: &impl Fn(&[u8]) -> bool,
    ) -> Result<Vec<bool>> {
        let in_file = self.recs[run[0] as usize].in_file;
        let base = if in_file { self.read_run(run, buf)? } else { 0 };
        Ok(run
            .iter()
            .map(|&p| {
                let r = &self.recs[p as usize];
                test(if in_file {
                    &buf[r.start - base..r.end - base]
                } else {
                    &self.text[r.start..r.end]
                })
            })
            .collect())
    }

    /// The lines of `run` (file-backed records that follow each other in the file, in file
    /// order), each with the newline after it, read into `buf` at once and checked line by line
    /// against their fingerprints. Returns where `buf` starts in the file.
    pub(crate) fn read_run(&self, run: &[u32], buf: &mut Vec<u8>) -> Result<usize> {
        let base = self.recs[run[0] as usize].start;
        let end = self.recs[run[run.len() - 1] as usize].end;
        let (path, file) = self.file_reader();
        buf.clear();
        buf.resize(end + 1 - base, 0);
        read_held(path, file, buf, base)?;
        for &p in run {
            let r = &self.recs[p as usize];
            if fingerprint(&buf[r.start - base..r.end - base]) != r.check
                || buf[r.end - base] != b'\n'
            {
                return Err(file_changed(path));
            }
        }
        Ok(base)
    }

    /// [`Records::line`] where the line stands for the entry itself (handed out or written): a
    /// skeleton does not, and is refused.
    pub(crate) fn full_line(&self, pos: u32) -> Result<Cow<'_, [u8]>> {
        if self.recs[pos as usize].meta.skeleton {
            return Err(Error::new(
                ErrorCode::Internal,
                format!("record {pos} is held by JavaScript only and has no JSON text"),
            ));
        }
        self.line(pos)
    }

    /// The lines of the first `count` records, each followed by `\n`.
    pub(crate) fn lines_of_first(&self, count: usize, extra: usize) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.text.len() + extra + count);
        for pos in 0..count as u32 {
            out.extend_from_slice(&self.full_line(pos)?);
            out.push(b'\n');
        }
        Ok(out)
    }

    /// Every record's line, each followed by `\n`: the whole session file.
    pub(crate) fn all_lines(&self) -> Result<Vec<u8>> {
        self.lines_of_first(self.recs.len(), 0)
    }

    /// The error for the line of the record at `pos`, read as [`Records::line`] reads it, that
    /// does not parse: every record's line was JSON when it was read, so a file-backed one was
    /// changed in the file where its fingerprint does not look ([`file_changed`]).
    pub(crate) fn unparsable(&self, pos: u32) -> Error {
        if self.recs[pos as usize].in_file {
            file_changed(self.file_reader().0)
        } else {
            Error::internal(format!("the line of record {pos} does not parse"))
        }
    }

    /// The file that file-backed records are read from.
    pub(crate) fn file_reader(&self) -> (&Path, &std::fs::File) {
        let (path, file) = self
            .reader
            .as_ref()
            .expect("file-backed records have a reader");
        (path, file)
    }

    /// Approximate heap bytes held by the lines and records.
    pub(crate) fn held_bytes(&self) -> usize {
        self.text.held_bytes() + self.recs.capacity() * (std::mem::size_of::<Rec>() + 8)
    }
}

/// Reads the bytes at `at` of the session file `file` (`path`) into `buf`: lines the scan found
/// there. A file now too short to hold them was cut behind our back, which is [`file_changed`]
/// as an edit of them is, not an I/O fault.
pub(crate) fn read_held(
    path: &Path,
    file: &std::fs::File,
    buf: &mut [u8],
    at: usize,
) -> Result<()> {
    crate::fsio::read_exact_at(file, buf, at as u64).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            file_changed(path)
        } else {
            Error::io(&e, "read", path)
        }
    })
}

/// The error for a file-backed line whose bytes are no longer the ones read.
pub(crate) fn file_changed(path: &Path) -> Error {
    Error::new(
        ErrorCode::FileChanged,
        format!(
            "Session file changed on disk since it was opened: {}",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::read_meta;

    #[test]
    fn a_line_left_in_a_file_that_changed_is_refused_not_misread() {
        let dir = std::env::temp_dir().join(format!("pi-records-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        let line = br#"{"type":"custom","id":"a","parentId":null}"#;
        std::fs::write(&path, [&line[..], b"\n"].concat()).unwrap();
        let mut records = Records {
            reader: Some((path.clone(), Arc::new(std::fs::File::open(&path).unwrap()))),
            ..Records::default()
        };
        let meta = read_meta(line).unwrap();
        records.push(Rec::in_file(0, line.len(), meta, fingerprint(line)));
        assert_eq!(&*records.line(0).unwrap(), &line[..]);
        // The same length, other bytes where the fingerprint looks (the ends).
        std::fs::write(&path, br#"{"type":"label_","id":"a","parentId":null}"#).unwrap();
        let err = records.line(0).unwrap_err();
        assert_eq!(err.code, ErrorCode::FileChanged);
        drop(records);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn lines_tested_in_runs_on_several_threads_answer_as_each_line_read_alone() {
        let dir = std::env::temp_dir().join(format!("pi-records-runs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        let lines: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    r#"{{"type":"custom","id":"e{i}","parentId":null,"data":"{}"}}"#,
                    "x".repeat(i % 7)
                )
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let mut records = Records {
            reader: Some((path.clone(), Arc::new(std::fs::File::open(&path).unwrap()))),
            ..Records::default()
        };
        let mut at = 0;
        for line in &lines {
            let b = line.as_bytes();
            records.push(Rec::in_file(
                at,
                at + b.len(),
                read_meta(b).unwrap(),
                fingerprint(b),
            ));
            at += b.len() + 1;
        }
        // One line kept in memory among them, and positions out of file order and with gaps:
        // runs break there.
        let kept = br#"{"type":"custom","id":"m","parentId":null,"data":"xxx"}"#;
        let pos = records.push(Rec::in_text(0, 0, read_meta(kept).unwrap()));
        records.keep_in_text(pos, kept);
        let positions: Vec<u32> = (0..120)
            .chain([pos])
            .chain((150..200).rev())
            .chain(130..140)
            .collect();
        let odd = |line: &[u8]| line.len() % 2 == 1;
        let alone: Vec<bool> = positions
            .iter()
            .map(|&p| odd(&records.line(p).unwrap()))
            .collect();
        assert!(alone.contains(&true) && alone.contains(&false));
        for run_bytes in [1, 64, 500, 1 << 20] {
            assert_eq!(
                records
                    .test_lines_in_runs(&positions, run_bytes, odd)
                    .unwrap(),
                alone,
                "runs of {run_bytes} bytes"
            );
        }
        // A line changed behind our back (same length) is refused, as a read of it alone is.
        let changed = lines[135].replacen("custom", "CUSTOM", 1);
        let mut text = lines.clone();
        text[135] = changed;
        std::fs::write(&path, text.join("\n") + "\n").unwrap();
        let err = records.test_lines_in_runs(&positions, 64, odd).unwrap_err();
        assert_eq!(err.code, ErrorCode::FileChanged);
        assert!(records.test_lines_in_runs(&[0, 1, 2], 64, odd).is_ok());
        // Cut short behind our back: refused the same way, by a run and by a line read alone.
        std::fs::write(&path, lines[..100].join("\n") + "\n").unwrap();
        for run_bytes in [64, 1 << 20] {
            let err = records
                .test_lines_in_runs(&[98, 99, 100, 101], run_bytes, odd)
                .unwrap_err();
            assert_eq!(err.code, ErrorCode::FileChanged, "{}", err.message);
        }
        assert_eq!(records.line(150).unwrap_err().code, ErrorCode::FileChanged);
        assert!(records.test_lines_in_runs(&[98, 99], 64, odd).is_ok());
        drop(records);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn popping_a_message_undoes_its_conversation_count() {
        let mut records = Records::default();
        let user = br#"{"type":"message","id":"u","parentId":null,"message":{"role":"user"}}"#;
        let pos = records.push(Rec::in_text(0, 0, read_meta(user).unwrap()));
        records.keep_in_text(pos, user);
        assert_eq!(records.conversation, 1);
        assert_eq!(records.all_lines().unwrap(), [&user[..], b"\n"].concat());
        records.pop();
        assert_eq!((records.conversation, records.len()), (0, 0));
    }
}
