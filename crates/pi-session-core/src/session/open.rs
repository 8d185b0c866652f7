//! `SessionManager.open(path, sessionDir?, cwdOverride?)` as one step: which cwd the manager
//! takes (the caller's override, else the file's header cwd, else the process's), a session of
//! that cwd, and the file loaded into it. The JS shell resolves the path and picks the session
//! dir (Node's path rules); everything that needs the file happens here, reading it once.

use std::path::PathBuf;

use super::{LoadReport, Session};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::file::{load_file, LoadedFile};
use crate::json::{self, Value};
use crate::listing::{self, ScanError};
use crate::paths;
use crate::record::Kind;

/// A session opened by [`Session::open`], with what its load reported.
pub struct Opened {
    pub session: Session,
    pub report: LoadReport,
}

impl Session {
    /// Open `path` (already resolved) as the reference's `open` does:
    /// - the cwd is `cwd_override`, else the header's `cwd` when it is a string, else the
    ///   process's; then resolved (tilde, file URL, relative to the process cwd);
    /// - the header is found by the bounded scan of discovery (`listing::read_header`); when the scan's limit goes by, the whole
    ///   file is read instead, the first `session` record decides, and that read is the load's;
    /// - a scan error other than the limit (the path is a directory) is the open's error, raised
    ///   before the session dir is made.
    pub fn open(
        path: PathBuf,
        session_dir: String,
        cwd_override: Option<&str>,
        config: Config,
    ) -> Result<Opened> {
        let (header_cwd, preloaded) = match cwd_override {
            Some(_) => (None, None),
            None => header_cwd_of(&path)?,
        };
        let chosen = cwd_override
            .map(str::to_owned)
            .or(header_cwd)
            .unwrap_or_else(paths::process_cwd);
        let mut session = Session::with_config(paths::resolve(&chosen), session_dir, true, config)?;
        let report = session.set_session_file_with(path, preloaded)?;
        Ok(Opened { session, report })
    }
}

/// The header cwd `open` takes from `path` (none when the file is missing, has no header, or its
/// header's cwd is not a string), and the whole file when it had to be read to learn it.
fn header_cwd_of(path: &std::path::Path) -> Result<(Option<String>, Option<LoadedFile>)> {
    // As `existsSync`: any failure to stat counts as missing.
    if !path.exists() {
        return Ok((None, None));
    }
    match listing::read_header(path) {
        Ok(header) => Ok((header.and_then(|h| h.cwd), None)),
        Err(ScanError::Io(e)) => Err(Error::io(&e, "read", path)),
        Err(ScanError::Limit) => {
            let loaded = load_file(path)?;
            let cwd = loaded.as_ref().and_then(first_header_cwd);
            Ok((cwd, loaded))
        }
    }
}

/// The cwd of the first `session` record of a file with a valid header (as `loadEntriesFromFile`
/// followed by `find(e => e.type === "session")`), when it is a string.
fn first_header_cwd(loaded: &LoadedFile) -> Option<String> {
    if !loaded.has_valid_header() {
        return None;
    }
    let (line, _) = loaded.records().find(|(_, m)| m.kind == Kind::Header)?;
    match json::parse(line).ok()?.get("cwd") {
        Some(Value::String(c)) => Some(c.to_string_lossy()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_dir;

    fn open(path: &std::path::Path, cwd_override: Option<&str>) -> Result<Opened> {
        let dir = path.parent().unwrap().to_string_lossy().into_owned();
        Session::open(path.to_path_buf(), dir, cwd_override, Config::default())
    }

    const ENTRY: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;

    fn header(cwd: &str) -> String {
        format!(
            r#"{{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":{cwd}}}"#
        )
    }

    #[test]
    fn the_header_cwd_is_the_sessions_unless_overridden() {
        let dir = temp_dir("open-cwd");
        let f = dir.join("s.jsonl");
        std::fs::write(&f, format!("{}\n{ENTRY}\n", header(r#""/work/proj""#))).unwrap();
        let o = open(&f, None).unwrap();
        assert_eq!(o.session.cwd(), "/work/proj");
        assert!(o.report.loaded);
        assert_eq!(o.session.record_count(), 2);
        assert_eq!(o.session.leaf_key(), Some(r#""a1""#));
        let o = open(&f, Some("/else/where/")).unwrap();
        assert_eq!(o.session.cwd(), "/else/where");
    }

    #[test]
    fn a_missing_file_or_a_cwd_that_is_not_a_string_takes_the_process_cwd() {
        let dir = temp_dir("open-fallback");
        let here = paths::process_cwd();
        let missing = dir.join("sub").join("new.jsonl");
        let o = open(&missing, None).unwrap();
        assert_eq!(o.session.cwd(), here);
        assert!(!o.report.loaded);
        let f = dir.join("n.jsonl");
        std::fs::write(&f, format!("{}\n{ENTRY}\n", header("5"))).unwrap();
        let o = open(&f, None).unwrap();
        assert_eq!(o.session.cwd(), here);
        assert!(o.report.loaded);
    }

    #[test]
    fn a_relative_header_cwd_is_resolved_against_the_process_cwd() {
        let dir = temp_dir("open-relative");
        let f = dir.join("r.jsonl");
        std::fs::write(&f, format!("{}\n", header(r#""proj/../app""#))).unwrap();
        let o = open(&f, None).unwrap();
        assert_eq!(o.session.cwd(), paths::resolve("app"));
    }

    #[test]
    fn past_the_scan_limit_the_whole_file_decides_and_is_read_once() {
        let dir = temp_dir("open-limit");
        let f = dir.join("l.jsonl");
        // A first line longer than the bounded scan: only a full read finds the header.
        let big = format!(
            r#"{{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/big/header","pad":"{}"}}"#,
            "x".repeat(listing::MAX_HEADER_SCAN_BYTES + 10)
        );
        std::fs::write(&f, format!("{big}\n{ENTRY}\n")).unwrap();
        let o = open(&f, None).unwrap();
        assert_eq!(o.session.cwd(), "/big/header");
        assert_eq!(o.session.record_count(), 2);
    }

    #[test]
    fn a_directory_is_refused_before_the_session_dir_is_made() {
        let dir = temp_dir("open-dir");
        let target = dir.join("adir");
        std::fs::create_dir(&target).unwrap();
        let session_dir = dir.join("not-made");
        let err = Session::open(
            target,
            session_dir.to_string_lossy().into_owned(),
            None,
            Config::default(),
        )
        .err()
        .expect("a directory is not a session file");
        assert_eq!(err.syscall, Some("read"));
        assert!(!session_dir.exists());
    }
}
