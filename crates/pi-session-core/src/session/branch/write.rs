//! Writing a branched session: streamed into a file when it is big enough to be read lazily
//! (runs of unchanged lines copied with one read and one write), else built in memory and, when it
//! must be, written at once.

use std::borrow::Cow;
use std::path::Path;

use super::lines::Piece;
use crate::error::Result;
use crate::file::fingerprint;
use crate::file::scan::{self, ScannedRec};
use crate::fsio;
use crate::record::Meta;
use crate::session::Session;
use crate::store::records::NO_SKELETON;

/// A record of an in-memory session: `(start, end, meta)` in its text.
type TextRec = (usize, usize, Meta);

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
        self.recs
            .push((self.at, self.at + line.len(), meta, check, NO_SKELETON));
        self.at += line.len() + 1;
        Ok(())
    }
}

impl Session {
    /// Stream a branched session into `target`: the header, then each piece. Returns the records
    /// `(start, end, meta, fingerprint)` in the new file and the file, open.
    pub(super) fn write_branched_file(
        &self,
        target: &Path,
        header: &[u8],
        plan: &[Piece],
        metas: Vec<Meta>,
    ) -> Result<(Vec<ScannedRec>, std::fs::File)> {
        let mut out = Sink {
            tmp: fsio::TempFile::create_session(target, self.private_files)?,
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
            let j = self.run_end(plan, i);
            self.copy_run(&mut out, &plan[i..j], &mut buf, &mut meta)?;
            i = j;
        }
        let file = out.tmp.rename_over(target, self.durability)?;
        Ok((out.recs, file))
    }

    /// Where the run from `plan[i]` (an unchanged line in the session file) ends: the lines that
    /// follow each other in the file, up to a buffer's worth.
    fn run_end(&self, plan: &[Piece], i: usize) -> usize {
        let Piece::Same(pos) = plan[i] else {
            unreachable!("runs start at an unchanged line")
        };
        let first = &self.records.recs[pos as usize];
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
        j
    }

    /// Copy a run of lines that follow each other in the session file: one read, checked line by
    /// line against the fingerprints ([`crate::store::records::Records::read_run`]), one write.
    fn copy_run(
        &self,
        out: &mut Sink,
        run: &[Piece],
        buf: &mut Vec<u8>,
        meta: &mut impl FnMut() -> Meta,
    ) -> Result<()> {
        let positions: Vec<u32> = run
            .iter()
            .map(|piece| match piece {
                Piece::Same(q) => *q,
                Piece::New { .. } => unreachable!("runs hold unchanged lines only"),
            })
            .collect();
        let base = self.records.read_run(&positions, buf)?;
        for &p in &positions {
            let r = &self.records.recs[p as usize];
            let at = out.at + r.start - base;
            out.recs
                .push((at, at + r.len(), meta(), r.check, NO_SKELETON));
        }
        out.tmp.write_all(buf)?;
        out.at += buf.len();
        Ok(())
    }

    /// The new session in memory: its text and records `(start, end, meta)`.
    pub(super) fn branched_text(
        &self,
        header: &[u8],
        plan: &[Piece],
        metas: Vec<Meta>,
        total: usize,
    ) -> Result<(Vec<u8>, Vec<TextRec>)> {
        let mut text = Vec::with_capacity(total);
        let mut recs = Vec::with_capacity(metas.len());
        let mut metas = metas.into_iter();
        for line in
            std::iter::once(Ok(Cow::Borrowed(header))).chain(plan.iter().map(|piece| match piece {
                Piece::Same(pos) => self.line(*pos),
                Piece::New { line, .. } => Ok(Cow::Borrowed(&line[..])),
            }))
        {
            let line = line?;
            let start = text.len();
            text.extend_from_slice(&line);
            recs.push((start, text.len(), metas.next().expect("one meta per line")));
            text.push(b'\n');
        }
        Ok((text, recs))
    }

    /// Write an in-memory branched session to `target` at once; on failure the lease follows
    /// this session's file again.
    pub(super) fn write_branched_text(&mut self, target: &Path, text: &[u8]) -> Result<()> {
        self.guard.before_write(target)?;
        let written =
            fsio::TempFile::create_session(target, self.private_files).and_then(|mut tmp| {
                tmp.write_all(text)?;
                tmp.rename_over(target, self.durability)
            });
        if let Err(e) = written {
            self.guard.follow(self.file.as_deref());
            return Err(e);
        }
        Ok(())
    }
}
