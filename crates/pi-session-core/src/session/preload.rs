//! Sessions built from entries handed over in memory: `inMemory(cwd, options, entries)` and the
//! constructor with preloaded entries, as lines, as skeletons of objects JavaScript keeps, or as
//! records of another session.

use std::sync::Arc;

use super::header::header_id_string;
use super::{LoadReport, Session};
use crate::error::{Error, ErrorCode, Result};
use crate::file::{migrate, LoadedFile};
use crate::record::{Kind, Meta};
use crate::text::Text;

impl Session {
    /// `inMemory(cwd, options, entries)` / the constructor with preloaded entries. `lines` are the
    /// JSON texts of the entries. With a header among them they become the state (migrated when old);
    /// without, a new session is started and they are appended after its header unmigrated.
    ///
    /// With `skeletons`, the lines of all but headers and labels are skeletons of objects JS keeps
    /// (see [`Session::append_skeleton`]); they must be current already (JS migrates the objects).
    pub fn load_preloaded(&mut self, lines: Vec<String>, skeletons: bool) -> Result<LoadReport> {
        self.check_skeletons(skeletons)?;
        let loaded = LoadedFile::parse(join_lines(&lines));
        if skeletons && migrate::migrate_file(&loaded).is_some() {
            return Err(Error::new(
                ErrorCode::Internal,
                "skeleton entries of an old version cannot be migrated",
            ));
        }
        let report = self.load_records(loaded)?;
        if skeletons {
            self.mark_skeletons(0);
        }
        Ok(report)
    }

    /// Skeletons only ever live in a session that never writes: this is what keeps them out of
    /// every file (writing paths read lines without asking whether they are skeletons).
    pub(super) fn check_skeletons(&self, skeletons: bool) -> Result<()> {
        if skeletons && self.persist {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "skeleton entries in a session that writes",
            ));
        }
        Ok(())
    }

    /// Records from `from` on, but headers and labels, are skeletons.
    fn mark_skeletons(&mut self, from: usize) {
        for r in &mut self.records.recs[from..] {
            r.meta.skeleton = !matches!(r.meta.kind, Kind::Header | Kind::Label);
        }
    }

    /// `inMemory(cwd, options, entries)` where every entry is an object made from a record of
    /// `source` (JS keeps track of that): the records at `positions` are taken from `source`, with
    /// their metas, instead of the entries being serialized and parsed again. No line is copied:
    /// lines held in memory are shared with `source` (see [`Text::sharing`]), lines of a big
    /// session stay in its file, read through a descriptor of our own. The first record must be a
    /// header. Nothing is written, nothing migrated (the source's records are current already).
    pub fn load_records_of(&mut self, source: &mut Session, positions: &[u32]) -> Result<()> {
        // Checked first; copied once, straight into this session's records, at the end.
        {
            let all = &source.records.recs;
            if positions.iter().any(|&p| p as usize >= all.len()) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "record position out of range",
                ));
            }
            let rec = |i: usize| &all[positions[i] as usize];
            self.check_skeletons((0..positions.len()).any(|i| rec(i).meta.skeleton))?;
            if positions.is_empty() || rec(0).meta.kind != Kind::Header {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "the first record is not a header",
                ));
            }
        }
        let session_id = header_id_string(&source.line(positions[0])?);
        // The copy reads through the same descriptor (its file stays open as long as either does).
        let in_file = positions
            .iter()
            .any(|&p| source.records.recs[p as usize].in_file);
        let reader = match (&source.records.reader, in_file) {
            (Some((path, file)), true) => Some((path.clone(), Arc::clone(file))),
            _ => None,
        };
        // The records keep their offsets into the shared bytes.
        let text = Text::sharing(&mut source.records.storage_mut().text);
        self.reset_state();
        self.records.text = text;
        self.records.reader = reader;
        let all = &source.records.recs;
        self.adopt_recs(
            positions.iter().map(|&p| all[p as usize].clone()),
            session_id,
        );
        // The records' lazy values are described by the source's shapes and skeletons.
        self.records.shapes = source.records.shapes.clone();
        self.records.skeletons = Arc::clone(&source.records.skeletons);
        Ok(())
    }

    /// Preloaded entries without a header: appended after the current (new) header unmigrated, then
    /// indexed; nothing is written.
    /// `skeletons` as for [`Session::load_preloaded`].
    pub fn push_preloaded(&mut self, lines: Vec<String>, skeletons: bool) -> Result<()> {
        self.check_skeletons(skeletons)?;
        let loaded = LoadedFile::parse(join_lines(&lines));
        let first = self.records.recs.len();
        for (line, meta) in loaded.records() {
            // Their shapes are the parse's own, which these records do not keep.
            let meta = Meta {
                lazy: None,
                ..meta.clone()
            };
            self.push_record(line, meta);
        }
        if skeletons {
            self.mark_skeletons(first);
        }
        self.build_index();
        Ok(())
    }
}

fn join_lines(lines: &[String]) -> Vec<u8> {
    let mut text = Vec::new();
    for l in lines {
        text.extend_from_slice(l.as_bytes());
        text.push(b'\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"sid","timestamp":"t","cwd":"/w"}"#;
    const ENTRY: &str = r#"{"type":"custom","id":"a","parentId":null,"customType":"t"}"#;

    #[test]
    fn skeletons_are_refused_in_a_session_that_writes() {
        let dir = std::env::temp_dir().join(format!("pi-preload-{}", std::process::id()));
        let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
        let err = s
            .load_preloaded(vec![HEADER.into(), ENTRY.into()], true)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn records_of_another_session_are_taken_with_their_lines_shared() {
        let mut source = Session::blank("/w".into(), String::new(), false).unwrap();
        source
            .load_preloaded(vec![HEADER.into(), ENTRY.into()], false)
            .unwrap();
        let mut copy = Session::blank("/w".into(), String::new(), false).unwrap();
        copy.load_records_of(&mut source, &[0, 1]).unwrap();
        assert_eq!(copy.session_id(), "sid");
        assert_eq!(&*copy.line(1).unwrap(), ENTRY.as_bytes());
        assert_eq!(copy.leaf_key(), Some("\"a\""));
        let err = copy.load_records_of(&mut source, &[1]).unwrap_err();
        assert_eq!(
            err.code,
            ErrorCode::InvalidArgument,
            "the first record is no header"
        );
    }
}
