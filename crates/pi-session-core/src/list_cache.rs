//! The listing cache: per-file `SessionInfo` summaries kept between runs, keyed by path and
//! validated by size, modification time (ns), change time and inode. A file whose stat differs in
//! any of these is read again, so an entry can never be stale; a deleted file simply stops being
//! asked for and is pruned on save. The cache file is disposable: missing, unreadable or damaged,
//! it is treated as empty (a damaged line only loses its own entry); deleting it is always safe.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::json::{self, JsStr, Value};
use crate::listing::FileSummary;

/// Bump when the summary format changes: old caches are then ignored.
const FORMAT: &str = "pi-session-list-cache/2";

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

/// A hit: a summary computed in this run, or a line of the loaded cache file, which is only
/// validated and decoded when used (on the worker that asked, see [`Hit::line`]).
#[derive(Debug, Clone)]
pub enum Hit {
    Fresh(Cached),
    Line(Arc<[u8]>, Range<usize>),
}

/// A cache line that does not hold a summary (torn or edited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damaged;

impl Hit {
    /// The summary of a cache-file line (`Err(Damaged)`: read the file again).
    pub fn line(text: &[u8]) -> Result<Option<(&str, &str, &str)>, Damaged> {
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
        let inner = |k: &str| -> Result<&str, Damaged> {
            let raw = get(k).ok_or(Damaged)?;
            let raw = raw
                .strip_prefix(b"\"")
                .and_then(|r| r.strip_suffix(b"\""))
                .ok_or(Damaged)?;
            std::str::from_utf8(raw).map_err(|_| Damaged)
        };
        let meta = std::str::from_utf8(v).map_err(|_| Damaged)?;
        Ok(Some((meta, inner("f")?, inner("a")?)))
    }
}

#[derive(Debug, Clone)]
enum Stored {
    Fresh(Cached),
    /// Byte range of the entry's line in `ListCache::text`.
    Line(Range<usize>),
}

#[derive(Debug, Clone)]
struct Entry {
    stamp: Stamp,
    value: Stored,
    used: bool,
}

/// An in-memory view of the cache file.
#[derive(Debug)]
pub struct ListCache {
    file: Option<PathBuf>,
    /// The cache file as loaded; `Line` entries point into it.
    text: Arc<[u8]>,
    entries: HashMap<String, Entry>,
    dirty: bool,
}

impl Default for ListCache {
    fn default() -> Self {
        ListCache {
            file: None,
            text: Arc::from(Vec::new()),
            entries: HashMap::new(),
            dirty: false,
        }
    }
}

impl ListCache {
    /// Read the cache at `file` (anything unreadable is ignored). Only each line's key and stamp
    /// are read here; summaries are checked when used.
    pub fn load(file: PathBuf) -> ListCache {
        let mut cache = ListCache {
            file: Some(file.clone()),
            ..ListCache::default()
        };
        let Ok(text) = fs::read(&file) else {
            return cache;
        };
        let header_end = memchr::memchr(b'\n', &text).unwrap_or(text.len());
        let header_ok = json::parse(&text[..header_end])
            .is_ok_and(|h| matches!(h.get("format"), Some(Value::String(f)) if f.eq_str(FORMAT)));
        if !header_ok {
            cache.dirty = true;
            return cache;
        }
        let mut start = header_end + 1;
        while start < text.len() {
            let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |k| start + k);
            match parse_key(&text[start..end]) {
                Some((path, stamp)) => {
                    cache.entries.insert(
                        path,
                        Entry {
                            stamp,
                            value: Stored::Line(start..end),
                            used: false,
                        },
                    );
                }
                // A damaged line: rewrite the file without it on the next save.
                None if end > start => cache.dirty = true,
                None => {}
            }
            start = end + 1;
        }
        cache.text = Arc::from(text);
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
            Stored::Line(r) => Hit::Line(self.text.clone(), r.clone()),
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
        let tmp = file.with_extension(format!("jsonl.tmp-{}", std::process::id()));
        let io = |e: std::io::Error| crate::Error::io(&e, "write", &tmp);
        let result = (|| {
            let f = fs::File::create(&tmp).map_err(io)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            writeln!(w, "{{\"format\":\"{FORMAT}\"}}").map_err(io)?;
            let mut line = String::new();
            for (path, e) in &self.entries {
                match &e.value {
                    Stored::Line(r) => {
                        w.write_all(&self.text[r.clone()]).map_err(io)?;
                        w.write_all(b"\n").map_err(io)?;
                    }
                    Stored::Fresh(summary) => {
                        line.clear();
                        write_entry(path, e.stamp, summary, &mut line);
                        w.write_all(line.as_bytes()).map_err(io)?;
                    }
                }
            }
            w.into_inner().map_err(|e| io(e.into_error()))?;
            fs::rename(&tmp, &file).map_err(|e| crate::Error::io(&e, "rename", &file))
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result?;
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

/// `{"p":path,"s":size,"m":"mtime ns","c":"ctime ns","i":inode,"v":meta|null,"f":"first","a":"all"}`
/// (path and stamp first: loading reads only those).
fn write_entry(path: &str, stamp: Stamp, summary: &Cached, out: &mut String) {
    out.push_str("{\"p\":");
    json::write_js_string(&JsStr::from_str(path), out);
    out.push_str(&format!(
        ",\"s\":{},\"m\":\"{}\",\"c\":\"{}\",\"i\":{},\"v\":",
        stamp.size, stamp.mtime_ns, stamp.ctime_ns, stamp.ino
    ));
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
    Some((path, stamp))
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

    #[test]
    fn saved_entries_hit_after_a_reload_and_damaged_lines_do_not() {
        let dir = std::env::temp_dir().join(format!("pi-list-cache-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("session-list-cache.jsonl");
        let mut c = ListCache::load(file.clone());
        assert!(c.is_empty());
        for n in 0..3u32 {
            c.put(
                &format!("/s/\"q\"{n}.jsonl"),
                stamp(u64::from(n)),
                summary(n),
            );
        }
        c.put("/s/not-a-session.jsonl", stamp(9), None);
        c.save().unwrap();

        let mut c = ListCache::load(file.clone());
        assert_eq!(c.len(), 4);
        for n in 0..3u32 {
            let path = format!("/s/\"q\"{n}.jsonl");
            assert!(
                c.get(&path, &stamp(u64::from(n) + 1)).is_none(),
                "other stamp"
            );
            let Some(Hit::Line(text, r)) = c.get(&path, &stamp(u64::from(n))) else {
                panic!("loaded entries are lines");
            };
            let s = summary(n).unwrap();
            assert_eq!(
                Hit::line(&text[r]),
                Ok(Some((
                    s.meta.as_str(),
                    s.first_message.as_str(),
                    s.all_text.as_str()
                )))
            );
        }
        let Some(Hit::Line(text, r)) = c.get("/s/not-a-session.jsonl", &stamp(9)) else {
            panic!("hit");
        };
        assert_eq!(Hit::line(&text[r]), Ok(None));

        // Cut one line short: its key still reads, its summary is reported damaged.
        let body = fs::read_to_string(&file).unwrap();
        let damaged: String = body
            .lines()
            .map(|l| {
                if l.contains("q\\\"1") {
                    format!("{}\n", &l[..l.len() - 3])
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        fs::write(&file, damaged).unwrap();
        let mut c = ListCache::load(file.clone());
        let Some(Hit::Line(text, r)) = c.get("/s/\"q\"1.jsonl", &stamp(1)) else {
            panic!("key survives");
        };
        assert_eq!(Hit::line(&text[r]), Err(Damaged));
        fs::remove_dir_all(&dir).unwrap();
    }
}
