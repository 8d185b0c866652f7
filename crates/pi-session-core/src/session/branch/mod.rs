//! `createBranchedSession`: a new session holding the path to one entry, written (when it must
//! be) before memory changes. The lines come from [`lines::branched_lines`].

mod lines;
mod write;

use std::path::{Path, PathBuf};

use super::header::{header_line, new_identity, session_file_path, Identity};
use super::Session;
use crate::error::{Error, Result};
use crate::json;
use crate::record::{self, Meta};
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
        let header = self.branched_header(&new_id, &timestamp);
        let metas = self.branched_metas(&header, &plan);
        let has_conversation = metas.iter().any(|m| m.is_conversation_message());
        let new_file = self
            .persist
            .then(|| session_file_path(Path::new(&self.session_dir), &timestamp, &new_id));
        let write_to = new_file.as_deref().filter(|_| has_conversation);
        // Lines copied as they were keep their lazy values, described by these shapes.
        let shapes = self.records.shapes.clone();
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
            let (text, recs) = self.branched_text(&header, &plan, metas, total)?;
            if let Some(target) = write_to {
                self.write_branched_text(target, &text)?;
            }
            self.adopt_text(text, recs, new_id);
        }
        self.records.shapes = shapes;
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

    /// The new session's header: its `parentSession` is this one's file, when it has one.
    fn branched_header(&self, new_id: &str, timestamp: &str) -> Vec<u8> {
        let parent_json = match (&self.file, self.persist) {
            (Some(f), true) => Some(json::string_to_json(&f.to_string_lossy())),
            _ => None,
        };
        header_line(new_id, timestamp, &self.cwd, parent_json.as_deref()).into_bytes()
    }

    /// The new records' metas, the header's first (the lines were written by us or are
    /// unchanged, so they are read as trusted). A line copied as it was is known to be canonical
    /// now (that is why it could be copied), so branching the new session again reads none of
    /// them to find out.
    fn branched_metas(&self, header: &[u8], plan: &[Piece]) -> Vec<Meta> {
        let mut metas = Vec::with_capacity(plan.len() + 1);
        metas.push(record::read_meta_trusted(header).expect("header line is a JSON object"));
        for piece in plan {
            metas.push(match piece {
                Piece::Same(pos) => Meta {
                    canonical: true,
                    ..self.meta(*pos).clone()
                },
                Piece::New { line, from } => {
                    let mut meta =
                        record::read_meta_trusted(line).expect("generated lines are JSON objects");
                    // A line made from a skeleton is one too.
                    meta.skeleton = self.meta(*from).skeleton;
                    meta
                }
            });
        }
        metas
    }
}
