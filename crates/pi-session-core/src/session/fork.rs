//! `SessionManager.forkFrom`'s file work: a new session file holding every entry of another, under
//! a new header, written complete or not at all.

use std::path::{Path, PathBuf};

use super::header::{header_line, new_identity, session_file_path, Identity};
use crate::error::{Error, ErrorCode, Result};
use crate::file::scan::{self, ScannedRec};
use crate::file::{self, fingerprint, load_file, migrate};
use crate::fsio::{self, Durability};
use crate::json;
use crate::paths;
use crate::record::{self, Kind, Meta};
use crate::store::records::NO_SKELETON;

/// What `forkFrom` wrote: the new file, and (unless the source needed a migration) its records as
/// a scan of the new file would find them, so the session opened on it need not read it again.
pub struct Forked {
    /// The new file, resolved against the process cwd.
    pub file: PathBuf,
    /// Records `(start, end, meta, fingerprint)` in the new file, and the new session id.
    pub(super) scan: Option<(Vec<ScannedRec>, String)>,
    /// The new file, open for reading.
    pub(super) reader: std::fs::File,
    pub(super) bytes: u64,
}

fn fork_source_invalid(source: &Path) -> Error {
    Error::new(
        ErrorCode::ForkSourceInvalid,
        format!(
            "Cannot fork: source session file is empty or invalid: {}",
            source.display()
        ),
    )
}

/// `SessionManager.forkFrom` file work: copy every non-header record of `source` (migrated to v3
/// first, unlike the reference) under a new header into `dir`. The new file appears complete or
/// not at all (temp file, then an exclusive link), and an existing name fails with `EEXIST`.
/// Returns the new file's resolved path. Not fsynced (see [`fork`] for a chosen durability).
pub fn fork_file(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    custom_id: Option<&str>,
) -> Result<PathBuf> {
    fork(source, target_cwd, dir, custom_id, ForkWrites::default()).map(|f| f.file)
}

/// How `forkFrom`'s new file is written: fsynced or not, and private (`PI_SESSION_PRIVATE`: 0600
/// from the start, its directory 0700 when made) or with the reference's modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ForkWrites {
    pub durability: Durability,
    pub private: bool,
}

impl ForkWrites {
    /// As a manager of `config` writes.
    pub fn of(config: &crate::Config) -> ForkWrites {
        ForkWrites {
            durability: config.durability,
            private: config.private_files,
        }
    }
}

/// The new file's name and header line (after the checks the reference makes before writing).
fn fork_target(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    custom_id: Option<&str>,
    private: bool,
) -> Result<(PathBuf, String, String)> {
    fsio::ensure_session_dir(dir, private)?;
    let Identity { id, timestamp } = new_identity(custom_id)?;
    let file = session_file_path(dir, &timestamp, &id);
    let parent = json::string_to_json(&source.to_string_lossy());
    let header = header_line(&id, &timestamp, target_cwd, Some(&parent));
    Ok((file, header, id))
}

/// [`fork_file`], keeping what the new session needs to open the new file without reading it.
///
/// The source is read once, in chunks: each line is validated, read and checked for canonical
/// form in one pass, and runs of canonical records are written straight from the read buffer
/// (the reference writes `JSON.stringify(JSON.parse(line))`, which for them is the line itself).
/// A source that needs a migration (v1/v2) takes the in-memory path.
pub fn fork(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    custom_id: Option<&str>,
    writes: ForkWrites,
) -> Result<Forked> {
    use scan::{chunk_lines, LineChunks, CHUNK_BYTES};
    let src = match crate::fsio::open_read(source) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(fork_source_invalid(source))
        }
        Err(e) => return Err(Error::io(&e, "open", source)),
    };
    let read_err = |e: std::io::Error| Error::io(&e, "read", source);
    let mut chunks = LineChunks::new(&src, CHUNK_BYTES);
    // Set once the first record turned out to be a valid v3 header.
    let mut out: Option<ForkWriter> = None;
    while let Some((_, chunk)) = chunks.next_chunk().map_err(read_err)? {
        for (at, line, has_nl) in chunk_lines(chunk) {
            let Some((skip, meta)) = crate::torn::read_line(line, out.is_some()) else {
                continue;
            };
            let (at, line) = (at + skip, &line[skip..]);
            let Some(o) = out.as_mut() else {
                // Records leading the header stay with the source (a fork is a file of its own);
                // a run of them not followed by a header fails on the record after it, or at
                // the end as a file without records does.
                if record::may_lead(&meta) {
                    continue;
                }
                // The first record decides: a valid header, and which path.
                if meta.kind != Kind::Header || !meta.header_id_is_string {
                    return Err(fork_source_invalid(source));
                }
                end_source_tail(&src, source)?;
                if needs_migration(line) {
                    return fork_migrated(source, target_cwd, dir, custom_id, writes);
                }
                let (file, header, id) =
                    fork_target(source, target_cwd, dir, custom_id, writes.private)?;
                out = Some(ForkWriter::start(file, &header, id, writes.private)?);
                continue;
            };
            o.record(chunk, at, line, has_nl, meta)?;
        }
        if let Some(o) = out.as_mut() {
            o.flush_run(chunk)?;
        }
    }
    let Some(o) = out else {
        return Err(fork_source_invalid(source));
    };
    o.finish(writes.durability)
}

/// A v1 or v2 header (or one whose version is not a number): the fork takes the in-memory path.
fn needs_migration(header: &[u8]) -> bool {
    let version = migrate::header_version(header);
    version.is_nan() || version < 3.0
}

/// As `loadEntriesFromFile`: a final line of the source without newline gets one.
fn end_source_tail(src: &std::fs::File, source: &Path) -> Result<()> {
    let len = src
        .metadata()
        .map_err(|e| Error::io(&e, "stat", source))?
        .len();
    let mut last = [b'\n'; 1];
    if len > 0 {
        crate::fsio::read_exact_at(src, &mut last, len - 1)
            .map_err(|e| Error::io(&e, "read", source))?;
    }
    file::end_torn_tail(source, len, last[0] == b'\n')?;
    Ok(())
}

/// The new file of the streaming [`fork`] as it is written: a temp file under the new header,
/// the records written to it as a scan would find them, and a run of canonical lines of the
/// current read chunk not yet written (they go out straight from the chunk, in one write).
struct ForkWriter {
    file: PathBuf,
    tmp: fsio::TempFile,
    id: String,
    recs: Vec<ScannedRec>,
    /// Bytes written to `tmp`.
    written: usize,
    /// Canonical records waiting to be written: a range of the current chunk.
    run: std::ops::Range<usize>,
}

impl ForkWriter {
    /// A record after the header, at `at` in `chunk`: canonical lines with their newline join
    /// the run written from the chunk, others are written as `JSON.stringify(JSON.parse(line))`
    /// would; further headers are left out.
    fn record(
        &mut self,
        chunk: &[u8],
        at: usize,
        line: &[u8],
        has_nl: bool,
        meta: Meta,
    ) -> Result<()> {
        if meta.kind == Kind::Header {
            return Ok(());
        }
        if meta.canonical && has_nl {
            return self.push_in_place(chunk, at, line, meta);
        }
        self.flush_run(chunk)?;
        let (text, meta) = if meta.canonical {
            (std::borrow::Cow::Borrowed(line), meta)
        } else {
            // A record always parses: `read_meta` took it.
            let Some(n) = json::normalize(line) else {
                return Ok(());
            };
            let n = n.into_bytes();
            let meta = record::read_meta_trusted(&n).unwrap_or(meta);
            (std::borrow::Cow::Owned(n), meta)
        };
        self.push(&text, meta)
    }

    /// A temp file next to `file` holding the header line.
    fn start(file: PathBuf, header: &str, id: String, private: bool) -> Result<ForkWriter> {
        let mut tmp = fsio::TempFile::create_session(&file, private)?;
        tmp.write_all(header.as_bytes())?;
        tmp.write_all(b"\n")?;
        let header_meta =
            record::read_meta_trusted(header.as_bytes()).expect("header line is JSON");
        let recs = vec![(
            0,
            header.len(),
            header_meta,
            fingerprint(header.as_bytes()),
            NO_SKELETON,
        )];
        Ok(ForkWriter {
            file,
            tmp,
            id,
            recs,
            written: header.len() + 1,
            run: 0..0,
        })
    }

    /// A canonical `line` ending in a newline, at `at` in `chunk`: it joins the pending run (a
    /// gap before it writes the run so far and starts a new one).
    fn push_in_place(&mut self, chunk: &[u8], at: usize, line: &[u8], meta: Meta) -> Result<()> {
        if self.run.end != at {
            self.tmp.write_all(&chunk[self.run.clone()])?;
            self.written += self.run.len();
            self.run = at..at;
        }
        let start = self.written + self.run.len();
        self.run.end = at + line.len() + 1;
        self.recs.push((
            start,
            start + line.len(),
            meta,
            fingerprint(line),
            NO_SKELETON,
        ));
        Ok(())
    }

    /// Write the pending run of `chunk` (before a record written from its own bytes, and at the
    /// end of each chunk).
    fn flush_run(&mut self, chunk: &[u8]) -> Result<()> {
        self.tmp.write_all(&chunk[self.run.clone()])?;
        self.written += self.run.len();
        self.run = 0..0;
        Ok(())
    }

    /// A record written from `text` (its newline added), once the pending run is written.
    fn push(&mut self, text: &[u8], meta: Meta) -> Result<()> {
        self.tmp.write_all(text)?;
        self.tmp.write_all(b"\n")?;
        self.recs.push((
            self.written,
            self.written + text.len(),
            meta,
            fingerprint(text),
            NO_SKELETON,
        ));
        self.written += text.len() + 1;
        Ok(())
    }

    /// Link the temp file in as the new file (which must not exist yet).
    fn finish(self, durability: Durability) -> Result<Forked> {
        let reader = self.tmp.link_new(&self.file, durability)?;
        Ok(Forked {
            file: opened_as(&self.file),
            scan: Some((self.recs, self.id)),
            reader,
            bytes: self.written as u64,
        })
    }
}

/// The fork is written to `join(dir, name)` (relative when the dir is), but the manager the
/// reference opens on it holds the resolved path (its constructor resolves the file it is given).
fn opened_as(written: &Path) -> PathBuf {
    PathBuf::from(paths::resolve(&written.to_string_lossy()))
}

/// [`fork`] of a source that needs a migration first (v1/v2 files: small and rare), in memory.
fn fork_migrated(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    custom_id: Option<&str>,
    writes: ForkWrites,
) -> Result<Forked> {
    let durability = writes.durability;
    let loaded = match load_file(source)? {
        Some(l) if l.has_valid_header() => l,
        _ => return Err(fork_source_invalid(source)),
    };
    let (file, header, _) = fork_target(source, target_cwd, dir, custom_id, writes.private)?;
    let mut out = header.into_bytes();
    out.push(b'\n');
    match migrate::migrate_file(&loaded) {
        Some(m) => {
            // Records leading the header stay with the source, as in the streaming fork.
            for (s, e) in m.records.iter().skip(loaded.leading()) {
                let line = &m.text[*s..*e];
                if record::read_meta(line).is_some_and(|meta| meta.kind != Kind::Header) {
                    out.extend_from_slice(line);
                    out.push(b'\n');
                }
            }
        }
        None => {
            for (line, meta) in loaded.records() {
                if !meta.kind.is_entry() {
                    continue;
                }
                // Records are written as JSON.stringify(JSON.parse(line)) would.
                if json::is_canonical(line) {
                    out.extend_from_slice(line);
                } else if let Some(n) = json::normalize(line) {
                    out.extend_from_slice(n.as_bytes());
                }
                out.push(b'\n');
            }
        }
    }
    let mut tmp = fsio::TempFile::create_session(&file, writes.private)?;
    tmp.write_all(&out)?;
    let reader = tmp.link_new(&file, durability)?;
    Ok(Forked {
        file: opened_as(&file),
        scan: None,
        reader,
        bytes: out.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::temp_dir;

    #[test]
    fn a_fork_holds_every_entry_under_a_header_that_names_its_source() {
        let dir = temp_dir("copy");
        let src = dir.join("src.jsonl");
        let entry = r#"{"type":"custom","id":"a","parentId":null,"customType":"t"}"#;
        std::fs::write(
            &src,
            format!("{{\"type\":\"session\",\"version\":3,\"id\":\"old\",\"timestamp\":\"t\",\"cwd\":\"/w\"}}\n{entry}"),
        )
        .unwrap();
        let out = fork_file(&src, "/target", &dir.join("forks"), Some("new-id")).unwrap();
        let name = out.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.ends_with("_new-id.jsonl"), "{name}");
        let text = std::fs::read_to_string(&out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains(r#""id":"new-id""#) && lines[0].contains(r#""cwd":"/target""#));
        let parent = crate::json::string_to_json(&src.to_string_lossy());
        assert!(lines[0].contains(&format!(r#""parentSession":{parent}"#)));
        assert_eq!(lines[1], entry);
        assert!(
            std::fs::read_to_string(&src).unwrap().ends_with('\n'),
            "the source's torn tail ended"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_source_without_a_valid_header_cannot_be_forked() {
        let dir = temp_dir("invalid");
        let src = dir.join("src.jsonl");
        std::fs::write(&src, "{\"type\":\"custom\",\"id\":\"a\"}\n").unwrap();
        let err = fork_file(&src, "/t", &dir.join("forks"), None).unwrap_err();
        assert_eq!(err.code, ErrorCode::ForkSourceInvalid);
        let missing = fork_file(&dir.join("none.jsonl"), "/t", &dir, None).unwrap_err();
        assert_eq!(missing.code, ErrorCode::ForkSourceInvalid);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
