//! `createBranchedSession`: a new session holding the path to one entry, written (when it must
//! be) before memory changes. The lines come from [`lines::branched_lines`].

mod lines;

use std::path::{Path, PathBuf};

use super::header::{header_line, new_identity, session_file_path, Identity};
use super::Session;
use crate::error::{Error, Result};
use crate::file::fingerprint;
use crate::file::scan::{self, ScannedRec};
use crate::fsio;
use crate::json;
use crate::record::{self, Meta};
use crate::store::records::file_changed;
use lines::{branched_lines, BranchedLines, Piece};

/// What `createBranchedSession` did, for a host that holds the old records as objects and makes
/// the new ones from them (the reference's new entries are shallow copies of its old ones).
#[derive(Debug)]
pub struct Branched {
    /// The new file (`None` in memory).
    pub file: Option<PathBuf>,
    /// Per record after the new header, the old record it was made from: first the path's
    /// entries (label records left out), then one fresh label record per label whose target is on
    /// the path, made from the label record it copies.
    pub from: Vec<u32>,
    /// How many of `from` are the path's entries. Each one's `parentId` is now the id of the
    /// one before it (the first's is `null`).
    pub kept: usize,
    /// For each compaction among them: its index in `from`, and the old record whose id is now
    /// its `firstKeptEntryId` (`None`: the value it had).
    pub first_kept: Vec<(u32, Option<u32>)>,
}

impl Session {
    fn piece_len(&self, piece: &Piece) -> usize {
        match piece {
            Piece::Same(pos) => self.records.recs[*pos as usize].len(),
            Piece::New { line, .. } => line.len(),
        }
    }

    /// `createBranchedSession(leafId)`; `start` is the key of `leafId ?? current leaf`, `display`
    /// its text for the error. The new file is written (when it must be) before memory changes, so a
    /// failed write leaves the manager as it was.
    ///
    /// Lines that stay as they were (`Piece::Same`) are copied without being parsed. A new file
    /// big enough to be read lazily is written by streaming (runs of lines that follow each other
    /// in the old file in one read and one write), and the new session's records are left in it,
    /// as opening it would; a smaller one is built in memory and written at once.
    pub fn create_branched_session(
        &mut self,
        start: Option<&str>,
        display: &str,
    ) -> Result<Option<PathBuf>> {
        self.create_branched(start, display).map(|b| b.file)
    }

    /// [`Session::create_branched_session`], saying also what each new record was made from
    /// (see [`Branched`]).
    pub fn create_branched(&mut self, start: Option<&str>, display: &str) -> Result<Branched> {
        let path = self.branch_from(start);
        if path.is_empty() {
            return Err(Error::entry_not_found(display));
        }
        let BranchedLines {
            pieces: plan,
            kept,
            first_kept,
        } = branched_lines(self.view(), &path)?;
        let from: Vec<u32> = plan.iter().map(Piece::from).collect();
        let Identity {
            id: new_id,
            timestamp,
        } = new_identity(None)?;
        let parent_json = match (&self.file, self.persist) {
            (Some(f), true) => Some(json::string_to_json(&f.to_string_lossy())),
            _ => None,
        };
        let header =
            header_line(&new_id, &timestamp, &self.cwd, parent_json.as_deref()).into_bytes();
        // The new records' metas (the lines were written by us or are unchanged).
        let mut metas = Vec::with_capacity(plan.len() + 1);
        metas.push(record::read_meta_trusted(&header).expect("header line is a JSON object"));
        for piece in &plan {
            metas.push(match piece {
                Piece::Same(pos) => self.meta(*pos).clone(),
                Piece::New { line, from } => {
                    let mut meta =
                        record::read_meta_trusted(line).expect("generated lines are JSON objects");
                    // A line made from a skeleton is one too.
                    meta.skeleton = self.meta(*from).skeleton;
                    meta
                }
            });
        }
        let has_conversation = metas.iter().any(|m| m.is_conversation_message());
        let new_file = self
            .persist
            .then(|| session_file_path(Path::new(&self.session_dir), &timestamp, &new_id));
        let write_to = new_file.as_deref().filter(|_| has_conversation);
        let total: usize =
            header.len() + 1 + plan.iter().map(|p| self.piece_len(p) + 1).sum::<usize>();
        if let Some(target) = write_to.filter(|_| total as u64 >= self.tuning.lazy_file_bytes) {
            self.guard.before_write(target)?;
            let (recs, reader) = match self.write_branched_file(target, &header, &plan, metas) {
                Ok(done) => done,
                Err(e) => {
                    self.guard.follow(self.file.as_deref());
                    return Err(e);
                }
            };
            self.adopt_scan(target, recs, new_id, reader);
        } else {
            let mut text = Vec::with_capacity(total);
            let mut recs = Vec::with_capacity(metas.len());
            let mut metas = metas.into_iter();
            for line in std::iter::once(Ok(std::borrow::Cow::Borrowed(&header[..]))).chain(
                plan.iter().map(|piece| match piece {
                    Piece::Same(pos) => self.line(*pos),
                    Piece::New { line, .. } => Ok(std::borrow::Cow::Borrowed(&line[..])),
                }),
            ) {
                let line = line?;
                let start = text.len();
                text.extend_from_slice(&line);
                recs.push((start, text.len(), metas.next().expect("one meta per line")));
                text.push(b'\n');
            }
            if let Some(target) = write_to {
                self.guard.before_write(target)?;
                let written = fsio::TempFile::create(target).and_then(|mut tmp| {
                    tmp.write_all(&text)?;
                    tmp.rename_over(target, self.durability)
                });
                if let Err(e) = written {
                    self.guard.follow(self.file.as_deref());
                    return Err(e);
                }
            }
            self.adopt_text(text, recs, new_id);
        }
        if self.persist {
            self.file = new_file.clone();
            self.guard.follow(self.file.as_deref());
            self.flushed = has_conversation;
        }
        Ok(Branched {
            file: new_file,
            from,
            kept,
            first_kept,
        })
    }

    /// Stream a branched session into `target`: the header, then each piece. Returns the records
    /// `(start, end, meta, fingerprint)` in the new file and the file, open.
    fn write_branched_file(
        &self,
        target: &Path,
        header: &[u8],
        plan: &[Piece],
        metas: Vec<Meta>,
    ) -> Result<(Vec<ScannedRec>, std::fs::File)> {
        /// The new file so far and its records.
        struct Sink {
            tmp: fsio::TempFile,
            recs: Vec<ScannedRec>,
            at: usize,
        }
        impl Sink {
            fn put(&mut self, line: &[u8], meta: Meta, check: u32) -> Result<()> {
                self.tmp.write_all(line)?;
                self.tmp.write_all(b"\n")?;
                self.recs.push((self.at, self.at + line.len(), meta, check));
                self.at += line.len() + 1;
                Ok(())
            }
        }
        let mut out = Sink {
            tmp: fsio::TempFile::create(target)?,
            recs: Vec::with_capacity(metas.len()),
            at: 0,
        };
        let mut metas = metas.into_iter();
        let mut meta = || metas.next().expect("one meta per line");
        out.put(header, meta(), fingerprint(header))?;
        let mut buf: Vec<u8> = Vec::new();
        let mut i = 0;
        while i < plan.len() {
            let pos = match &plan[i] {
                Piece::New { line, .. } => {
                    out.put(line, meta(), fingerprint(line))?;
                    i += 1;
                    continue;
                }
                Piece::Same(pos) => *pos as usize,
            };
            let first = &self.records.recs[pos];
            if !first.in_file {
                let line = &self.records.text[first.start..first.end];
                out.put(line, meta(), fingerprint(line))?;
                i += 1;
                continue;
            }
            // A run of lines that follow each other in the session file, up to a buffer's worth:
            // one read, checked line by line, one write.
            let base = first.start;
            let mut end = first.end;
            let mut j = i + 1;
            while let Some(Piece::Same(q)) = plan.get(j) {
                let r = &self.records.recs[*q as usize];
                if !r.in_file || r.start != end + 1 || r.end + 1 - base > scan::CHUNK_BYTES {
                    break;
                }
                end = r.end;
                j += 1;
            }
            let (path, file) = self.records.file_reader();
            buf.resize(end + 1 - base, 0);
            crate::fsio::read_exact_at(file, &mut buf, base as u64)
                .map_err(|e| Error::io(&e, "read", path))?;
            for piece in &plan[i..j] {
                let Piece::Same(q) = piece else {
                    unreachable!("runs hold unchanged lines only")
                };
                let r = &self.records.recs[*q as usize];
                let line = &buf[r.start - base..r.end - base];
                if fingerprint(line) != r.check || buf[r.end - base] != b'\n' {
                    return Err(file_changed(path));
                }
                let at = out.at + r.start - base;
                out.recs.push((at, at + line.len(), meta(), r.check));
            }
            out.tmp.write_all(&buf)?;
            out.at += buf.len();
            i = j;
        }
        let file = out.tmp.rename_over(target, self.durability)?;
        Ok((out.recs, file))
    }
}
