//! Opening a session file: `setSessionFile` (read whole, or a big file in one streaming pass
//! with its lines left on disk), and taking a file's records as the state.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::header::header_id_string;
use super::{Forked, Session};
use crate::error::{Error, ErrorCode, Result};
use crate::file::scan::{self, Scan, ScannedRec};
use crate::file::{self, load_file, migrate, preread, Line, LoadedFile};
use crate::fsio;
use crate::record::{self, Kind, Meta};
use crate::store::Rec;
use crate::text::Text;

/// What happened when a file was loaded.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// The file had an old format version and was rewritten.
    pub migrated: bool,
    /// Where the original bytes were kept before that rewrite.
    pub backup: Option<PathBuf>,
    /// The file was empty and received a fresh header.
    pub initialized: bool,
    /// The file's records became the state (false: a fresh session was started for the path).
    pub loaded: bool,
    /// The size of the file as it was loaded (0 when none was).
    pub bytes: u64,
}

impl Session {
    /// `setSessionFile(path)` with an already resolved path.
    pub fn set_session_file(&mut self, path: PathBuf) -> Result<LoadReport> {
        self.set_session_file_with(path, None)
    }

    /// As [`Session::set_session_file`], reusing a file already read by the caller.
    pub fn set_session_file_with(
        &mut self,
        path: PathBuf,
        preloaded: Option<LoadedFile>,
    ) -> Result<LoadReport> {
        if self.persist {
            self.guard.before_open(&path)?;
        }
        // The reference records the path before reading, so it stays set even when loading throws.
        self.file = Some(path.clone());
        self.guard.follow(Some(&path));
        let size = std::fs::metadata(&path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        let lazy = size.filter(|&n| n >= self.tuning.lazy_file_bytes);
        // What pi-native read ahead of this open, if it is this file as it is now.
        let (mut ahead_whole, mut ahead_scan) = (None, None);
        if preloaded.is_none() {
            match preread::take(&path, self.tuning.lazy_file_bytes) {
                Some(preread::Read::Whole(l)) => ahead_whole = Some(l),
                Some(preread::Read::Scanned(s)) => ahead_scan = Some(s),
                None => {}
            }
        }
        if let (None, Some(size)) = (&preloaded, lazy) {
            if let Some(report) = self.load_streaming(&path, ahead_scan)? {
                self.file = Some(path);
                self.flushed = true;
                return Ok(LoadReport {
                    bytes: size,
                    ..report
                });
            }
        }
        let loaded = match (preloaded, ahead_whole) {
            (Some(l), _) => Some(l),
            (None, Some(l)) => Some(file::end_tail(&path, l)?),
            (None, None) => load_file(&path)?,
        };
        match loaded {
            None => {
                self.new_session(None, None)?;
                self.file = Some(path);
                Ok(LoadReport::default())
            }
            Some(loaded) if !loaded.has_valid_header() => {
                if !loaded.text.is_empty() {
                    return Err(Error::new(
                        ErrorCode::InvalidSessionFile,
                        format!("Session file is not a valid pi session: {}", path.display()),
                    ));
                }
                self.new_session(None, None)?;
                self.file = Some(path);
                self.rewrite_file()?;
                self.flushed = true;
                Ok(LoadReport {
                    initialized: true,
                    ..LoadReport::default()
                })
            }
            Some(loaded) => {
                self.file = Some(path);
                let bytes = loaded.text.len() as u64;
                let report = self.load_records(loaded)?;
                self.flushed = true;
                Ok(LoadReport {
                    loaded: true,
                    bytes,
                    ..report
                })
            }
        }
    }

    /// Take a file's records as the state (`_loadEntries` with a header present), migrating old
    /// versions and rewriting the file when persisting.
    pub(super) fn load_records(&mut self, loaded: LoadedFile) -> Result<LoadReport> {
        let mut report = LoadReport::default();
        let leading = loaded.leading();
        let migration = migrate::migrate_file(&loaded);
        if let (Some(m), true, Some(file)) = (&migration, self.persist, self.file.clone()) {
            self.guard.before_write(&file)?;
            report.backup = Some(fsio::backup(&file, &loaded.text)?);
            fsio::replace_atomic(&file, &m.file_bytes)?;
            report.migrated = true;
        }
        // Records keep pointing into the file's bytes (no copy); a migration brings its own text.
        let (text, lines, shapes): (Vec<u8>, Vec<Line>, _) = match migration {
            Some(m) => (
                m.text,
                m.records.into_iter().map(|(s, e)| (s, e, None)).collect(),
                Default::default(),
            ),
            None => (
                loaded.text,
                loaded
                    .lines
                    .into_iter()
                    .filter(|(_, _, m)| m.is_some())
                    .collect(),
                loaded.shapes,
            ),
        };
        self.reset_state();
        self.records.shapes = shapes;
        self.records.text = Text::loaded(text);
        self.records.recs.reserve(lines.len());
        for (s, e, meta) in lines {
            let Some(meta) = meta.or_else(|| record::read_meta(&self.records.text[s..e])) else {
                continue;
            };
            self.records.push(Rec::in_text(s, e, meta));
            self.ids.grow();
        }
        // A migration's records were read again: they lead the header as they did in the file.
        for r in &mut self.records.recs[..leading] {
            r.meta.kind = Kind::Leading;
        }
        self.session_id = match self.header_pos() {
            Some(p) => header_id_string(&self.line(p)?),
            None => String::new(),
        };
        self.build_index();
        Ok(report)
    }

    /// Load a big file in one streaming pass (done already when `ahead` is given): only what we
    /// read from each line is kept; the lines stay in the file and are read back when an entry is
    /// asked for. Returns `Ok(None)` when the file needs the in-memory path (not a valid session,
    /// or an old version to migrate).
    fn load_streaming(&mut self, path: &Path, ahead: Option<Scan>) -> Result<Option<LoadReport>> {
        let scan = match ahead {
            Some(scan) => scan,
            None => match scan::scan_file(path)? {
                Some(scan) => scan,
                None => return Ok(None),
            },
        };
        let header_ok = scan
            .recs
            .iter()
            .find(|r| r.2.kind != Kind::Leading)
            .is_some_and(|r| r.2.kind == Kind::Header && r.2.header_id_is_string);
        if !header_ok || scan.header_version < 3.0 {
            return Ok(None);
        }
        file::end_torn_tail(path, scan.len, scan.ends_with_newline)?;
        // The lines are read later through the descriptor the scan read them from: a file renamed
        // over the path meanwhile is another file, whose offsets these are not.
        self.adopt_scan(path, scan.recs, scan.header_id, scan.file);
        self.records.shapes = scan.shapes;
        self.records.skeletons = Arc::new(scan.skeletons);
        Ok(Some(LoadReport {
            loaded: true,
            ..LoadReport::default()
        }))
    }

    /// Take the records of a scanned file as the state; their lines stay in the file (`reader`).
    pub(super) fn adopt_scan(
        &mut self,
        path: &Path,
        recs: Vec<ScannedRec>,
        session_id: String,
        reader: std::fs::File,
    ) {
        self.reset_state();
        self.records.reader = Some((path.to_path_buf(), Arc::new(reader)));
        let recs = recs.into_iter().map(|(start, end, meta, check, skel)| Rec {
            skel,
            ..Rec::in_file(start, end, meta, check)
        });
        self.adopt_recs(recs, session_id);
    }

    /// The shared tail of [`Session::adopt_scan`] and [`Session::adopt_text`]: take `recs` (on a
    /// reset state) and index them.
    pub(super) fn adopt_recs(
        &mut self,
        recs: impl ExactSizeIterator<Item = Rec>,
        session_id: String,
    ) {
        self.records.recs.reserve(recs.len());
        for rec in recs {
            self.records.push(rec);
        }
        self.ids.unresolved(self.records.len());
        self.session_id = session_id;
        self.build_index();
    }

    /// Open the file `forkFrom` just wrote, as [`Session::set_session_file`] would, reusing what
    /// the fork learned about its lines instead of reading the file again when it is big enough
    /// to be read lazily anyway (a smaller one is simply read).
    pub fn set_session_file_forked(&mut self, forked: Forked) -> Result<LoadReport> {
        let Forked {
            file,
            scan,
            reader,
            bytes,
        } = forked;
        let (Some((recs, header_id)), true) = (scan, bytes >= self.tuning.lazy_file_bytes) else {
            drop(reader);
            return self.set_session_file(file);
        };
        if self.persist {
            self.guard.before_open(&file)?;
        }
        self.guard.follow(Some(&file));
        self.adopt_scan(&file, recs, header_id, reader);
        self.file = Some(file);
        self.flushed = true;
        Ok(LoadReport {
            loaded: true,
            bytes,
            ..LoadReport::default()
        })
    }

    /// Replace the whole state by records held in `text` (used by `createBranchedSession`).
    pub(super) fn adopt_text(
        &mut self,
        text: Vec<u8>,
        recs: Vec<(usize, usize, Meta)>,
        session_id: String,
    ) {
        self.reset_state();
        self.records.text = Text::loaded(text);
        let recs = recs
            .into_iter()
            .map(|(start, end, meta)| Rec::in_text(start, end, meta));
        self.adopt_recs(recs, session_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::temp_dir;

    #[test]
    fn an_empty_file_receives_a_fresh_header() {
        let dir = temp_dir("empty");
        let file = dir.join("s.jsonl");
        std::fs::write(&file, "").unwrap();
        let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
        let report = s.set_session_file(file.clone()).unwrap();
        assert!(report.initialized && !report.loaded);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with(r#"{"type":"session","version":3,"id":""#),
            "{text}"
        );
        assert_eq!(s.session_file(), Some(&*file));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_that_is_no_session_is_refused_and_left_alone() {
        let dir = temp_dir("foreign");
        let file = dir.join("notes.jsonl");
        std::fs::write(&file, "{\"hello\":1}\n").unwrap();
        let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
        let err = s.set_session_file(file.clone()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidSessionFile);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"hello\":1}\n");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_records_of_a_file_become_the_state_with_the_last_entry_as_leaf() {
        let dir = temp_dir("records");
        let file = dir.join("s.jsonl");
        std::fs::write(
            &file,
            concat!(
                r#"{"type":"session","version":3,"id":"sid","timestamp":"t","cwd":"/w"}"#,
                "\n",
                r#"{"type":"custom","id":"a","parentId":null,"customType":"t"}"#,
                "\n",
                r#"{"type":"custom","id":"b","parentId":"a","customType":"t"}"#,
            ),
        )
        .unwrap();
        let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
        assert!(s.set_session_file(file.clone()).unwrap().loaded);
        assert_eq!(s.session_id(), "sid");
        assert_eq!(s.leaf_key(), Some("\"b\""));
        assert!(
            std::fs::read_to_string(&file).unwrap().ends_with("}\n"),
            "the torn tail ended"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_as_big_as_the_lazy_threshold_leaves_its_lines_on_disk() {
        let dir = temp_dir("lazy");
        let file = dir.join("s.jsonl");
        let long = "x".repeat(64 * 1024);
        let line = format!(r#"{{"type":"custom","id":"a","parentId":null,"customType":"{long}"}}"#);
        let header = r#"{"type":"session","version":3,"id":"sid","timestamp":"t","cwd":"/w"}"#;
        let text = format!("{header}\n{line}\n");
        std::fs::write(&file, &text).unwrap();
        let held = |lazy_file_bytes: u64| {
            let tuning = crate::Tuning {
                lazy_file_bytes,
                ..crate::Tuning::PRODUCT
            };
            let config = crate::Config {
                tuning,
                ..crate::Config::default()
            };
            let dir = dir.to_string_lossy().into_owned();
            let mut s = Session::with_config("/w".into(), dir, true, config).unwrap();
            s.set_session_file(file.clone()).unwrap();
            assert_eq!(s.tuning(), tuning);
            assert_eq!(*s.full_line(1).unwrap(), *line.as_bytes());
            s.memory_bytes()
        };
        let eager = held(text.len() as u64 + 1);
        let lazy = held(text.len() as u64);
        assert!(eager > long.len(), "{eager}");
        assert!(lazy < long.len(), "{lazy}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_renamed_over_the_path_after_the_scan_is_not_read_for_the_scanned_one() {
        // The scan and the load's reader must be the same file: another program may rename a
        // file over the path between them (a sync tool, a second writer's rewrite).
        let dir = temp_dir("renamed-after-scan");
        let file = dir.join("s.jsonl");
        let header = r#"{"type":"session","version":3,"id":"sid","timestamp":"t","cwd":"/w"}"#;
        let entry = |id: &str, fill: &str| {
            format!(r#"{{"type":"custom","id":"{id}","parentId":null,"customType":"{fill}"}}"#)
        };
        let first = entry("a", &"x".repeat(300));
        std::fs::write(&file, format!("{header}\n{first}\n")).unwrap();
        let scan = scan::scan_file(&file).unwrap().unwrap();
        let other = dir.join("other.jsonl");
        let second = entry("b", &"y".repeat(500));
        std::fs::write(&other, format!("{header}\n{second}\n")).unwrap();
        std::fs::rename(&other, &file).unwrap();
        let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
        assert!(s.load_streaming(&file, Some(scan)).unwrap().is_some());
        assert_eq!(*s.full_line(1).unwrap(), *first.as_bytes());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
