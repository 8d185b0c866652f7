//! What the last sync saw of each session, so that the next one reads only the files that changed
//! since (a file whose size and modification time are as recorded is not opened). Kept in the
//! sync's own directory (`<agentDir>/sync/<remote>/state.tsv`), never among the `*.jsonl` the
//! agent reads. Tab-separated lines `id, local path, size, mtime, hash, remote name, size, mtime,
//! hash`, after a version line; a path holding a tab or newline is not recorded (its file is just
//! read again). A missing or unreadable state is an empty one: everything is compared again, and
//! nothing is deleted (a deletion is told from a new file only by what the state saw).
//!
//! The hashes (FNV-1a of the bytes each side held) say whether a file is unchanged when its stamp
//! is not: git rewrites a file it resets even to the same bytes. A state of version 1 (written
//! before deletions were carried) has no hashes; its sessions are never taken for deleted, since
//! such a state could have been saved before a push that then failed.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::fsio;

const VERSION: &str = "pi-sessions-sync-state 2";
const VERSION_1: &str = "pi-sessions-sync-state 1";

/// A file's size and modification time (ns since the epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: u128,
}

impl Stamp {
    pub fn of(m: &Metadata) -> Stamp {
        let mtime_ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Stamp {
            size: m.len(),
            mtime_ns,
        }
    }

    /// The stamp of the file at `path`, if it exists.
    pub fn at(path: &Path) -> Option<Stamp> {
        std::fs::metadata(path).ok().map(|m| Stamp::of(&m))
    }

    /// The stamp of the file at `path` when it holds `len` bytes, else none (so that a file
    /// someone appended to since it was written is read again by the next sync).
    pub fn of_len(path: &Path, len: usize) -> Stamp {
        Stamp::at(path)
            .filter(|s| s.size == len as u64)
            .unwrap_or_default()
    }
}

/// The hash of a file's bytes the state keeps (FNV-1a, 64 bits).
pub fn hash(bytes: &[u8]) -> u64 {
    crate::merge::fnv1a(&[bytes])
}

/// The [`hash`] of bytes whose first part hashed to `h`, with `more` after them.
pub fn hash_on(h: u64, more: &[u8]) -> u64 {
    crate::merge::fnv1a_on(h, &[more])
}

/// One session as both sides held it after the last sync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub id: String,
    pub local: PathBuf,
    pub local_stamp: Stamp,
    /// The hashes of the local and the remote bytes; `None` from a version 1 state.
    pub hashes: Option<(u64, u64)>,
    pub remote: String,
    pub remote_stamp: Stamp,
}

/// The state of one remote, by session id.
#[derive(Debug, Default)]
pub struct State {
    pub sessions: HashMap<String, Seen>,
}

fn parse_line(line: &str) -> Option<Seen> {
    let f: Vec<&str> = line.split('\t').collect();
    let stamp = |size: &str, mtime: &str| {
        Some(Stamp {
            size: size.parse().ok()?,
            mtime_ns: mtime.parse().ok()?,
        })
    };
    let hex = |h: &str| u64::from_str_radix(h, 16).ok();
    let (local_stamp, hashes, remote, remote_stamp) = match f.len() {
        7 => (stamp(f[2], f[3])?, None, f[4], stamp(f[5], f[6])?),
        // `-`: a session carried over from a version 1 state, still without hashes.
        9 => (
            stamp(f[2], f[3])?,
            hex(f[4]).zip(hex(f[8])),
            f[5],
            stamp(f[6], f[7])?,
        ),
        _ => return None,
    };
    Some(Seen {
        id: f[0].to_owned(),
        local: PathBuf::from(f[1]),
        local_stamp,
        hashes,
        remote: remote.to_owned(),
        remote_stamp,
    })
}

impl State {
    pub fn load(path: &Path) -> State {
        let Ok(Some(bytes)) = fsio::read_all(path) else {
            return State::default();
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut lines = text.lines();
        let version = lines.next();
        if version != Some(VERSION) && version != Some(VERSION_1) {
            return State::default();
        }
        let columns = if version == Some(VERSION) { 9 } else { 7 };
        let sessions = lines
            .filter(|l| l.split('\t').count() == columns)
            .filter_map(parse_line)
            .map(|s| (s.id.clone(), s))
            .collect();
        State { sessions }
    }

    /// Write the state atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut out = String::from(VERSION);
        out.push('\n');
        let mut ids: Vec<&String> = self.sessions.keys().collect();
        ids.sort();
        for id in ids {
            let s = &self.sessions[id];
            let local = s.local.to_string_lossy();
            let clean = |t: &str| !t.contains(['\t', '\n', '\r']);
            if !clean(id) || !clean(&local) || !clean(&s.remote) {
                continue;
            }
            let (lh, rh) = match s.hashes {
                Some((l, r)) => (format!("{l:016x}"), format!("{r:016x}")),
                None => ("-".to_owned(), "-".to_owned()),
            };
            out.push_str(&format!(
                "{id}\t{local}\t{}\t{}\t{lh}\t{}\t{}\t{}\t{rh}\n",
                s.local_stamp.size,
                s.local_stamp.mtime_ns,
                s.remote,
                s.remote_stamp.size,
                s.remote_stamp.mtime_ns
            ));
        }
        if let Some(dir) = path.parent() {
            fsio::ensure_private_dir(dir)?;
        }
        fsio::replace_private(path, out.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_state_loads_back_and_a_foreign_file_is_an_empty_state() {
        let dir = std::env::temp_dir().join(format!("pi-sync-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("state.tsv");
        let mut st = State::default();
        let seen = Seen {
            id: "s1".into(),
            local: PathBuf::from("/a/b.jsonl"),
            local_stamp: Stamp {
                size: 3,
                mtime_ns: 1_700_000_000_123_456_789,
            },
            hashes: Some((hash(b"abc"), 7)),
            remote: "b.jsonl".into(),
            remote_stamp: Stamp::default(),
        };
        st.sessions.insert("s1".into(), seen.clone());
        let old = Seen {
            id: "s2".into(),
            hashes: None,
            ..seen.clone()
        };
        st.sessions.insert("s2".into(), old.clone());
        st.save(&path).unwrap();
        let back = State::load(&path);
        assert_eq!(back.sessions.get("s1"), Some(&seen));
        assert_eq!(back.sessions.get("s2"), Some(&old), "no hashes stay none");
        std::fs::write(&path, "something else\n").unwrap();
        assert!(State::load(&path).sessions.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_version_1_state_loads_without_hashes() {
        let dir = std::env::temp_dir().join(format!("pi-sync-state1-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.tsv");
        std::fs::write(
            &path,
            "pi-sessions-sync-state 1\ns1\t/a/b.jsonl\t3\t9\tb.jsonl\t3\t8\n",
        )
        .unwrap();
        let st = State::load(&path);
        let s = &st.sessions["s1"];
        assert_eq!(
            (s.hashes, s.local_stamp.mtime_ns, s.remote_stamp.mtime_ns),
            (None, 9, 8)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
