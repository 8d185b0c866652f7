//! The listing cache: per-file `SessionInfo` summaries kept between runs, keyed by path and
//! validated by size, modification time (ns), change time and inode. A file whose stat differs in
//! any of these is read again, so an entry can never be stale; a deleted file simply stops being
//! asked for and is pruned on save. The cache file is disposable: missing, unreadable or damaged,
//! it is treated as empty; deleting it is always safe.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::fsio;
use crate::json::{self, JsStr, Value};
use crate::listing;

/// Bump when the summary format changes: old caches are then ignored.
const FORMAT: &str = "pi-session-list-cache/1";

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

#[derive(Debug, Clone)]
struct Entry {
    stamp: Stamp,
    /// The summary JSON, or None for a file that is not a session.
    summary: Option<String>,
    used: bool,
}

/// An in-memory view of the cache file.
#[derive(Debug, Default)]
pub struct ListCache {
    file: Option<PathBuf>,
    entries: HashMap<String, Entry>,
    dirty: bool,
}

impl ListCache {
    /// Read the cache at `file` (anything unreadable is ignored).
    pub fn load(file: PathBuf) -> ListCache {
        let mut cache = ListCache {
            file: Some(file.clone()),
            ..ListCache::default()
        };
        let Ok(text) = fs::read(&file) else {
            return cache;
        };
        let mut lines = text.split(|&b| b == b'\n');
        let header_ok = lines
            .next()
            .and_then(|h| json::parse(h).ok())
            .is_some_and(|h| matches!(h.get("format"), Some(Value::String(f)) if f.eq_str(FORMAT)));
        if !header_ok {
            cache.dirty = true;
            return cache;
        }
        for line in lines {
            if let Some((path, entry)) = parse_entry(line) {
                cache.entries.insert(path, entry);
            }
        }
        cache
    }

    /// The cached summary for `path` if its stamp still matches.
    pub fn get(&mut self, path: &str, stamp: &Stamp) -> Option<Option<String>> {
        let e = self.entries.get_mut(path)?;
        if e.stamp != *stamp {
            return None;
        }
        e.used = true;
        Some(e.summary.clone())
    }

    pub fn put(&mut self, path: &str, stamp: Stamp, summary: Option<String>) {
        self.entries.insert(
            path.to_owned(),
            Entry {
                stamp,
                summary,
                used: true,
            },
        );
        self.dirty = true;
    }

    /// Write the cache back (atomically) if it changed, dropping entries of files that are gone.
    pub fn save(&mut self) -> crate::Result<()> {
        let before = self.entries.len();
        self.entries.retain(|p, e| e.used || Path::new(p).exists());
        if !self.dirty && self.entries.len() == before {
            return Ok(());
        }
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        let mut out = String::with_capacity(self.entries.len() * 256);
        out.push_str("{\"format\":\"");
        out.push_str(FORMAT);
        out.push_str("\"}\n");
        for (path, e) in &self.entries {
            out.push_str("{\"p\":");
            json::write_js_string(&JsStr::from_str(path), &mut out);
            out.push_str(&format!(
                ",\"s\":{},\"m\":\"{}\",\"c\":\"{}\",\"i\":{},\"v\":",
                e.stamp.size, e.stamp.mtime_ns, e.stamp.ctime_ns, e.stamp.ino
            ));
            out.push_str(e.summary.as_deref().unwrap_or("null"));
            out.push_str("}\n");
        }
        // The cache never creates the agent dir: listing must not leave traces where the
        // reference would not (an agent dir that does not exist yet stays absent).
        if file
            .parent()
            .is_some_and(|dir| !dir.as_os_str().is_empty() && !dir.is_dir())
        {
            return Ok(());
        }
        fsio::replace_atomic(&file, out.as_bytes())?;
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

fn parse_entry(line: &[u8]) -> Option<(String, Entry)> {
    let members = json::top_level_members(line).ok()??;
    let get = |k: &str| {
        members
            .iter()
            .find(|(key, _)| key.as_escaped() == k)
            .map(|(_, r)| &line[r.clone()])
    };
    let path = json::parse(get("p")?)
        .ok()?
        .into_string()?
        .to_string_lossy();
    let num = |k: &str| -> Option<i128> {
        let raw = get(k)?;
        let raw = raw
            .strip_prefix(b"\"")
            .and_then(|r| r.strip_suffix(b"\""))
            .unwrap_or(raw);
        std::str::from_utf8(raw).ok()?.parse().ok()
    };
    let stamp = Stamp {
        size: u64::try_from(num("s")?).ok()?,
        mtime_ns: num("m")?,
        ctime_ns: num("c")?,
        ino: u64::try_from(num("i")?).ok()?,
    };
    let v = get("v")?;
    let summary = if v == b"null" {
        None
    } else {
        Some(String::from_utf8(v.to_vec()).ok()?)
    };
    Some((
        path,
        Entry {
            stamp,
            summary,
            used: false,
        },
    ))
}

/// Summaries for many files through the cache: hits are answered from it, misses are read (on up
/// to `threads` threads) and stored.
pub fn summarize_many_cached(
    cache: &mut ListCache,
    files: &[(PathBuf, Option<f64>)],
    threads: usize,
) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> = vec![None; files.len()];
    let mut misses: Vec<(usize, Stamp)> = Vec::new();
    let mut todo: Vec<(PathBuf, Option<f64>)> = Vec::new();
    for (i, (path, _)) in files.iter().enumerate() {
        // A file that cannot be stat-ed is skipped, as the reference's summary would be.
        let Ok(meta) = fs::metadata(path) else {
            continue;
        };
        let stamp = Stamp::of(&meta);
        match cache.get(&path.to_string_lossy(), &stamp) {
            Some(hit) => out[i] = hit,
            None => {
                misses.push((i, stamp));
                todo.push((path.clone(), meta.modified().ok().map(listing::mtime_ms)));
            }
        }
    }
    let fresh = listing::summarize_many(&todo, threads);
    for ((i, stamp), summary) in misses.into_iter().zip(fresh) {
        cache.put(&files[i].0.to_string_lossy(), stamp, summary.clone());
        out[i] = summary;
    }
    out
}
