//! The listing cache: per-file `SessionInfo` summaries kept between runs, keyed by path and
//! validated by size, modification time (ns), change time and inode. A file whose stat differs in
//! any of these is read again, so an entry can never be stale; a deleted file simply stops being
//! asked for and is pruned on save. The cache file is disposable: missing, unreadable or damaged,
//! it is treated as empty (a damaged line only loses its own entry: each record has a checksum in
//! the index); deleting it is always safe.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fsio;
use crate::json::{self, JsStr, Value};
use crate::listing::FileSummary;

/// Bump when the summary format changes: old caches are then ignored.
const FORMAT: &str = "pi-session-list-cache/5";

/// What identifies a file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
}

impl Stamp {
    pub fn of(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Stamp {
                size: meta.len(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                ino: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let ns = |t: std::io::Result<std::time::SystemTime>| {
                t.ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos() as i128)
                    .unwrap_or(-1)
            };
            Stamp {
                size: meta.len(),
                mtime_ns: ns(meta.modified()),
                ctime_ns: ns(meta.created()),
                ino: 0,
            }
        }
    }
}

/// A cached answer: the summary, or `None` for a file that is not a session.
pub type Cached = Option<Arc<FileSummary>>;

/// A hit: a summary computed in this run, or a record of the cache file, which is only read,
/// validated and decoded when used (on the worker that asked, see [`Hit::read`]).
#[derive(Debug, Clone)]
pub enum Hit {
    Fresh(Cached),
    /// The cache file, the record's byte range in it and the record's checksum.
    Stored(Arc<fs::File>, Range<u64>, u64),
}

/// A stored summary as read: `meta` JSON and the two texts' escaped bytes.
pub type StoredSummary<'a> = (&'a str, &'a [u8], &'a [u8]);

/// A cache line that does not hold a summary (torn or edited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damaged;

impl Hit {
    /// Read a stored record (`Err(Damaged)`: unreadable, changed since it was written, or not
    /// the record of `path`/`stamp`).
    pub fn read(
        file: &fs::File,
        range: Range<u64>,
        checksum: u64,
        path: &str,
        stamp: &Stamp,
    ) -> Result<Vec<u8>, Damaged> {
        let len = usize::try_from(range.end - range.start).map_err(|_| Damaged)?;
        let mut buf = vec![0u8; len];
        read_exact_at(file, &mut buf, range.start).map_err(|_| Damaged)?;
        if record_checksum(&buf) != checksum {
            return Err(Damaged);
        }
        match parse_key(&buf) {
            Some((p, s)) if p == path && s == *stamp => Ok(buf),
            _ => Err(Damaged),
        }
    }

    /// The summary of a cache-file line (`Err(Damaged)`: read the file again).
    pub fn line(text: &[u8]) -> Result<Option<StoredSummary<'_>>, Damaged> {
        let members = json::top_level_members(text)
            .map_err(|_| Damaged)?
            .ok_or(Damaged)?;
        let get = |k: &str| {
            members
                .iter()
                .rev()
                .find(|(key, _)| key.as_escaped() == k)
                .map(|(_, r)| &text[r.clone()])
        };
        let v = get("v").ok_or(Damaged)?;
        if v == b"null" {
            return Ok(None);
        }
        if v.first() != Some(&b'{') {
            return Err(Damaged);
        }
        // The texts stay bytes: the decoder checks UTF-8 where it meets non-ASCII.
        let inner = |k: &str| -> Result<&[u8], Damaged> {
            let raw = get(k).ok_or(Damaged)?;
            raw.strip_prefix(b"\"")
                .and_then(|r| r.strip_suffix(b"\""))
                .ok_or(Damaged)
        };
        let meta = std::str::from_utf8(v).map_err(|_| Damaged)?;
        Ok(Some((meta, inner("f")?, inner("a")?)))
    }
}

#[derive(Debug, Clone)]
enum Stored {
    Fresh(Cached),
    /// Byte range of the entry's record in the loaded cache file, and its checksum.
    At(Range<u64>, u64),
}

#[derive(Debug, Clone)]
struct Entry {
    stamp: Stamp,
    value: Stored,
    used: bool,
}

/// An in-memory view of the cache file: the index of its records (read at load) and the open
/// file they are read from when used.
#[derive(Debug, Default)]
pub struct ListCache {
    file: Option<PathBuf>,
    data: Option<Arc<fs::File>>,
    entries: HashMap<String, Entry>,
    dirty: bool,
}

#[cfg(unix)]
fn read_exact_at(f: &fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
}

#[cfg(windows)]
fn read_exact_at(f: &fs::File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match f.seek_read(buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

/// Length of the fixed-size last line: `{"index":<offset>}` padded with spaces.
const TRAILER: usize = 40;

impl ListCache {
    /// Read the cache at `file` (anything unreadable is ignored). Only the index at its end is
    /// read here; a summary is read and checked when it is used.
    pub fn load(file: PathBuf) -> ListCache {
        let mut cache = ListCache {
            file: Some(file.clone()),
            ..ListCache::default()
        };
        let Ok(f) = fs::File::open(&file) else {
            return cache;
        };
        match read_index(&f) {
            Some(entries) => {
                cache.entries = entries;
                cache.data = Some(Arc::new(f));
            }
            None => cache.dirty = true,
        }
        cache
    }

    /// The cached answer for `path` if its stamp still matches.
    pub fn get(&mut self, path: &str, stamp: &Stamp) -> Option<Hit> {
        let e = self.entries.get_mut(path)?;
        if e.stamp != *stamp {
            return None;
        }
        e.used = true;
        Some(match &e.value {
            Stored::Fresh(c) => Hit::Fresh(c.clone()),
            Stored::At(r, sum) => Hit::Stored(self.data.clone()?, r.clone(), *sum),
        })
    }

    pub fn put(&mut self, path: &str, stamp: Stamp, summary: Cached) {
        self.entries.insert(
            path.to_owned(),
            Entry {
                stamp,
                value: Stored::Fresh(summary),
                used: true,
            },
        );
        self.dirty = true;
    }

    /// Write the cache back if it changed, dropping entries of files that are gone. The new file
    /// is streamed to a temp file and renamed over the old one, so readers see either version.
    /// No fsync: after a power loss the cache may be torn or old, and both are merely ignored
    /// or re-validated by stamp.
    pub fn save(&mut self) -> crate::Result<()> {
        let before = self.entries.len();
        self.entries.retain(|p, e| e.used || Path::new(p).exists());
        if !self.dirty && self.entries.len() == before {
            return Ok(());
        }
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        // The cache never creates the agent dir: listing must not leave traces where the
        // reference would not (an agent dir that does not exist yet stays absent).
        if file
            .parent()
            .is_some_and(|dir| !dir.as_os_str().is_empty() && !dir.is_dir())
        {
            return Ok(());
        }
        // No fsync: after a power loss the cache may be old or missing, and both are fine.
        let tmp = fsio::TempFile::create(&file)?;
        let io = |e: std::io::Error| crate::Error::io(&e, "write", &file);
        {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.file());
            let header = format!("{{\"format\":\"{FORMAT}\"}}\n");
            w.write_all(header.as_bytes()).map_err(io)?;
            let mut at = header.len() as u64;
            let mut index = String::with_capacity(self.entries.len() * 200);
            let mut line = String::new();
            let mut copy = Vec::new();
            for (path, e) in &self.entries {
                let bytes: &[u8] = match &e.value {
                    Stored::At(r, sum) => {
                        // Unchanged records are copied from the old file (which stays readable
                        // through our descriptor until the rename below replaces its name); a
                        // damaged one is dropped (its file is read again when next listed).
                        let Some(data) = &self.data else { continue };
                        copy.resize((r.end - r.start) as usize, 0);
                        if read_exact_at(data, &mut copy, r.start).is_err()
                            || record_checksum(&copy) != *sum
                        {
                            continue;
                        }
                        copy.push(b'\n');
                        &copy
                    }
                    Stored::Fresh(summary) => {
                        line.clear();
                        write_entry(path, e.stamp, summary, &mut line);
                        line.as_bytes()
                    }
                };
                w.write_all(bytes).map_err(io)?;
                let record = &bytes[..bytes.len() - 1]; // without the newline
                let len = record.len() as u64;
                write_index_line(
                    path,
                    e.stamp,
                    at..at + len,
                    record_checksum(record),
                    &mut index,
                );
                at += len + 1;
            }
            w.write_all(index.as_bytes()).map_err(io)?;
            let mut trailer = format!("{{\"index\":{at}}}");
            while trailer.len() < TRAILER - 1 {
                trailer.push(' ');
            }
            trailer.push('\n');
            w.write_all(trailer.as_bytes()).map_err(io)?;
            w.flush().map_err(io)?;
        }
        tmp.rename_over(&file, fsio::Durability::Buffered)?;
        self.dirty = false;
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The index of a cache file: header check, trailer, then one key line per record.
fn read_index(f: &fs::File) -> Option<HashMap<String, Entry>> {
    let size = f.metadata().ok()?.len();
    let mut head = vec![0u8; (FORMAT.len() + 16).min(size as usize)];
    read_exact_at(f, &mut head, 0).ok()?;
    let header_end = memchr::memchr(b'\n', &head)?;
    let header_ok = json::parse(&head[..header_end])
        .is_ok_and(|h| matches!(h.get("format"), Some(Value::String(v)) if v.eq_str(FORMAT)));
    if !header_ok || size < TRAILER as u64 {
        return None;
    }
    let mut trailer = [0u8; TRAILER];
    read_exact_at(f, &mut trailer, size - TRAILER as u64).ok()?;
    let index_at = match json::parse(trailer.strip_suffix(b"\n")?).ok()?.get("index") {
        Some(Value::Number(n)) if *n >= 0.0 && n.fract() == 0.0 => *n as u64,
        _ => return None,
    };
    let index_len = (size - TRAILER as u64).checked_sub(index_at)?;
    let mut index = vec![0u8; usize::try_from(index_len).ok()?];
    read_exact_at(f, &mut index, index_at).ok()?;
    let mut entries = HashMap::new();
    for line in index.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let (path, stamp, range, sum) = parse_index_line(line)?;
        if range.end > index_at || range.start > range.end {
            return None;
        }
        let entry = Entry {
            stamp,
            value: Stored::At(range, sum),
            used: false,
        };
        entries.insert(path, entry);
    }
    Some(entries)
}

/// A record's checksum, kept in the index: the cache is written without fsync, and a record whose
/// bytes changed (a block lost in a crash, a stray edit) must not be served even when it still
/// parses and names the right file.
fn record_checksum(record: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::fxhash::FxHasher::default();
    h.write_usize(record.len());
    h.write(record);
    h.finish()
}

/// `{"p":path,"s":size,"m":"mtime ns","c":"ctime ns","i":inode,"o":offset,"n":length,"h":checksum}`
fn write_index_line(path: &str, stamp: Stamp, range: Range<u64>, checksum: u64, out: &mut String) {
    write_key(path, stamp, out);
    out.push_str(&format!(
        ",\"o\":{},\"n\":{},\"h\":{checksum}}}\n",
        range.start,
        range.end - range.start
    ));
}

fn parse_index_line(line: &[u8]) -> Option<(String, Stamp, Range<u64>, u64)> {
    let (path, stamp, rest) = parse_key_prefix(line)?;
    let mut rest = rest;
    let mut field = |name: &[u8]| -> Option<u64> {
        rest = rest
            .strip_prefix(b",")?
            .strip_prefix(name)?
            .strip_prefix(b":")?;
        let end = rest.iter().position(|c| !c.is_ascii_digit())?;
        let n = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
        rest = &rest[end..];
        Some(n)
    };
    let start = field(b"\"o\"")?;
    let len = field(b"\"n\"")?;
    let sum = field(b"\"h\"")?;
    (rest == b"}").then_some((path, stamp, start..start.checked_add(len)?, sum))
}

fn write_key(path: &str, stamp: Stamp, out: &mut String) {
    out.push_str("{\"p\":");
    json::write_js_string(&JsStr::from_str(path), out);
    out.push_str(&format!(
        ",\"s\":{},\"m\":\"{}\",\"c\":\"{}\",\"i\":{}",
        stamp.size, stamp.mtime_ns, stamp.ctime_ns, stamp.ino
    ));
}

/// `{"p":path,"s":size,"m":"mtime ns","c":"ctime ns","i":inode,"v":meta|null,"f":"first","a":"all"}`
/// (path and stamp first: loading reads only those).
fn write_entry(path: &str, stamp: Stamp, summary: &Cached, out: &mut String) {
    write_key(path, stamp, out);
    out.push_str(",\"v\":");
    match summary {
        None => out.push_str("null"),
        Some(s) => {
            out.push_str(&s.meta);
            out.push_str(",\"f\":\"");
            out.push_str(&s.first_message);
            out.push_str("\",\"a\":\"");
            out.push_str(&s.all_text);
            out.push('"');
        }
    }
    out.push_str("}\n");
}

/// Path and stamp from the start of a cache line, as `write_entry` lays it out (anything else
/// is treated as damaged).
fn parse_key(line: &[u8]) -> Option<(String, Stamp)> {
    parse_key_prefix(line).map(|(p, s, _)| (p, s))
}

/// [`parse_key`] and the bytes after the key.
fn parse_key_prefix(line: &[u8]) -> Option<(String, Stamp, &[u8])> {
    let rest = line.strip_prefix(b"{\"p\":\"")?;
    // The path string: up to the first unescaped quote.
    let mut i = 0;
    loop {
        let k = memchr::memchr2(b'"', b'\\', &rest[i..])?;
        if rest[i + k] == b'\\' {
            i += k + 2;
        } else {
            i += k;
            break;
        }
    }
    let path = match json::parse(line.get(5..7 + i)?).ok()? {
        Value::String(ref p) => p.to_string_lossy(),
        _ => return None,
    };
    let mut rest = rest.get(i + 1..)?;
    let mut field = |name: &[u8], quoted: bool| -> Option<i128> {
        rest = rest
            .strip_prefix(b",")?
            .strip_prefix(name)?
            .strip_prefix(b":")?;
        if quoted {
            rest = rest.strip_prefix(b"\"")?;
        }
        let end = rest
            .iter()
            .position(|c| !(c.is_ascii_digit() || *c == b'-'))?;
        let n = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
        rest = &rest[end..];
        if quoted {
            rest = rest.strip_prefix(b"\"")?;
        }
        Some(n)
    };
    let stamp = Stamp {
        size: u64::try_from(field(b"\"s\"", false)?).ok()?,
        mtime_ns: field(b"\"m\"", true)?,
        ctime_ns: field(b"\"c\"", true)?,
        ino: u64::try_from(field(b"\"i\"", false)?).ok()?,
    };
    Some((path, stamp, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(n: u32) -> Cached {
        Some(Arc::new(FileSummary {
            meta: format!("{{\"path\":\"/s/{n}.jsonl\",\"messageCount\":{n}}}"),
            first_message: format!("first \\\"{n}\\\""),
            all_text: format!("all\\n{n} caf\u{e9} \\ud800"),
        }))
    }

    fn stamp(n: u64) -> Stamp {
        Stamp {
            size: n,
            mtime_ns: -5 - i128::from(n),
            ctime_ns: 1_700_000_000_123_456_789,
            ino: 42 + n,
        }
    }

    /// The summary a hit stands for (reading stored records the way the job does).
    fn resolve(
        hit: Hit,
        path: &str,
        stamp: &Stamp,
    ) -> Result<Option<(String, String, String)>, Damaged> {
        match hit {
            Hit::Fresh(c) => {
                Ok(c.map(|s| (s.meta.clone(), s.first_message.clone(), s.all_text.clone())))
            }
            Hit::Stored(f, r, sum) => {
                let rec = Hit::read(&f, r, sum, path, stamp)?;
                let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("UTF-8");
                Hit::line(&rec).map(|o| o.map(|(m, f, a)| (m.to_owned(), text(f), text(a))))
            }
        }
    }

    fn owned(c: &Cached) -> Option<(String, String, String)> {
        c.as_ref()
            .map(|s| (s.meta.clone(), s.first_message.clone(), s.all_text.clone()))
    }

    #[test]
    fn saved_entries_hit_after_a_reload_and_damage_is_detected() {
        let dir = std::env::temp_dir().join(format!("pi-list-cache-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("session-list-cache.jsonl");
        let mut c = ListCache::load(file.clone());
        assert!(c.is_empty());
        let path = |n: u32| format!("/s/\"q\"{n}.jsonl");
        for n in 0..3u32 {
            c.put(&path(n), stamp(u64::from(n)), summary(n));
        }
        c.put("/s/not-a-session.jsonl", stamp(9), None);
        c.save().unwrap();

        let check = |c: &mut ListCache| {
            assert_eq!(c.len(), 4);
            for n in 0..3u32 {
                assert!(
                    c.get(&path(n), &stamp(u64::from(n) + 1)).is_none(),
                    "other stamp"
                );
                let hit = c.get(&path(n), &stamp(u64::from(n))).expect("hit");
                assert!(
                    matches!(hit, Hit::Stored(..)),
                    "loaded entries are read from the file"
                );
                assert_eq!(
                    resolve(hit, &path(n), &stamp(u64::from(n))),
                    Ok(owned(&summary(n)))
                );
            }
            let hit = c.get("/s/not-a-session.jsonl", &stamp(9)).expect("hit");
            assert_eq!(resolve(hit, "/s/not-a-session.jsonl", &stamp(9)), Ok(None));
        };
        let mut loaded = ListCache::load(file.clone());
        check(&mut loaded);
        // Saving copies the stored records into a new file that reads back the same.
        loaded.put("/s/extra.jsonl", stamp(7), summary(7));
        loaded.save().unwrap();
        let mut again = ListCache::load(file.clone());
        assert!(again.get("/s/extra.jsonl", &stamp(7)).is_some());
        again.entries.remove("/s/extra.jsonl");
        check(&mut again);

        // A record changed in a way that still parses and still names its file (one letter of
        // its text) fails its checksum: reported damaged, and left out when the cache is saved.
        let good = fs::read(&file).unwrap();
        let mut bytes = good.clone();
        let needle = b"\"a\":\"all\\n2";
        let at = bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("record 2's text");
        bytes[at + 7] = b'm';
        fs::write(&file, &bytes).unwrap();
        let mut c = ListCache::load(file.clone());
        let hit = c.get(&path(2), &stamp(2)).expect("index still names it");
        assert_eq!(resolve(hit, &path(2), &stamp(2)), Err(Damaged));
        // (Saving keeps the entries asked for, the way a listing asks for every file.)
        for n in 0..2u32 {
            c.get(&path(n), &stamp(u64::from(n))).expect("hit");
        }
        c.put("/s/extra.jsonl", stamp(7), summary(7));
        c.save().unwrap();
        let mut c = ListCache::load(file.clone());
        assert!(c.get(&path(2), &stamp(2)).is_none(), "dropped on save");
        let hit = c.get(&path(0), &stamp(0)).expect("the others are kept");
        assert_eq!(resolve(hit, &path(0), &stamp(0)), Ok(owned(&summary(0))));
        fs::write(&file, &good).unwrap();

        // A record whose bytes changed is reported damaged (the key no longer matches, or the
        // JSON no longer parses), never served.
        let mut bytes = fs::read(&file).unwrap();
        let needle = b"1.jsonl\",\"s\":1,";
        let at = bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("record 1 (records come before the index)");
        bytes[at + needle.len() - 2] = b'8';
        fs::write(&file, &bytes).unwrap();
        let mut c = ListCache::load(file.clone());
        let hit = c.get(&path(1), &stamp(1)).expect("index still names it");
        assert_eq!(resolve(hit, &path(1), &stamp(1)), Err(Damaged));
        // A torn file (no trailer) or a foreign one is ignored and marked for rewriting.
        fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
        let c = ListCache::load(file.clone());
        assert!(c.is_empty() && c.dirty);
        fs::write(&file, b"{\"format\":\"something else\"}\n").unwrap();
        assert!(ListCache::load(file.clone()).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
