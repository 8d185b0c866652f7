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
        crate::fsio::read_exact_at(file, &mut buf, r.start as u64)
            .map_err(|e| Error::io(&e, "read", path))?;
        if fingerprint(&buf) != r.check {
            return Err(file_changed(path));
        }
        Ok(Cow::Owned(buf))
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
