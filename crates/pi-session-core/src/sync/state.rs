//! What the last sync saw of each session, so that the next one reads only the files that changed
//! since (a file whose size and modification time are as recorded is not opened). Kept in the
//! sync's own directory (`<agentDir>/sync/<remote>/state.tsv`), never among the `*.jsonl` the
//! agent reads. Tab-separated lines `id, local path, size, mtime, remote name, size, mtime`, after
//! a version line; a path holding a tab or newline is not recorded (its file is just read again).
//! A missing or unreadable state is an empty one: everything is compared again, nothing is lost.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::fsio;

const VERSION: &str = "pi-sessions-sync-state 1";

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
}

/// One session as both sides held it after the last sync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub id: String,
    pub local: PathBuf,
    pub local_stamp: Stamp,
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
    if f.len() != 7 {
        return None;
    }
    Some(Seen {
        id: f[0].to_owned(),
        local: PathBuf::from(f[1]),
        local_stamp: Stamp {
            size: f[2].parse().ok()?,
            mtime_ns: f[3].parse().ok()?,
        },
        remote: f[4].to_owned(),
        remote_stamp: Stamp {
            size: f[5].parse().ok()?,
            mtime_ns: f[6].parse().ok()?,
        },
    })
}

impl State {
    pub fn load(path: &Path) -> State {
        let Ok(Some(bytes)) = fsio::read_all(path) else {
            return State::default();
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut lines = text.lines();
        if lines.next() != Some(VERSION) {
            return State::default();
        }
        let sessions = lines
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
            out.push_str(&format!(
                "{id}\t{local}\t{}\t{}\t{}\t{}\t{}\n",
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
            remote: "b.jsonl".into(),
            remote_stamp: Stamp::default(),
        };
        st.sessions.insert("s1".into(), seen.clone());
        st.save(&path).unwrap();
        assert_eq!(State::load(&path).sessions.get("s1"), Some(&seen));
        std::fs::write(&path, "something else\n").unwrap();
        assert!(State::load(&path).sessions.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
