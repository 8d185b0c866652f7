//! The machines of the sync scenarios (`sync.rs`, `sync_deletions.rs`, `sync_purge.rs`): an
//! agent dir and a project each, a remote, and the sessions they write and read.

// Each scenario file uses only part of these.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use pi_session_core::paths;
use pi_session_core::sync::{sync, Kind, Options, Report};
use pi_session_core::Error;

pub type R = Result<(), Box<dyn std::error::Error>>;

pub fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pi-sync-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// A bare repository to push to.
pub fn bare(root: &Path) -> String {
    let r = root.join("remote.git");
    let ok = Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&r)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    r.to_string_lossy().into_owned()
}

pub struct Machine {
    pub agent: PathBuf,
    /// A project directory of this machine.
    pub project: String,
}

pub fn machine(root: &Path, name: &str) -> Machine {
    let agent = root.join(name).join("agent");
    let project = root.join(name).join("home/src/app");
    fs::create_dir_all(&agent).unwrap();
    fs::create_dir_all(&project).unwrap();
    Machine {
        agent,
        project: project.to_string_lossy().into_owned(),
    }
}

pub fn header(id: &str, cwd: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-12-03T10:00:00.000Z","cwd":"{cwd}"}}"#
    )
}

pub fn entry(id: &str, parent: Option<&str>, second: u32, text: &str) -> String {
    let p = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"2026-12-03T10:00:{second:02}.000Z","message":{{"role":"user","content":"{text}"}}}}"#
    )
}

impl Machine {
    pub fn dir(&self, cwd: &str) -> PathBuf {
        paths::default_session_dir(&self.agent.to_string_lossy(), cwd)
    }
    pub fn file(&self, id: &str) -> PathBuf {
        self.dir(&self.project)
            .join(format!("2026-12-03T10-00-00-000Z_{id}.jsonl"))
    }
    pub fn write(&self, id: &str, lines: &[String]) -> PathBuf {
        let f = self.file(id);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        let mut text = header(id, &self.project);
        for l in lines {
            text.push('\n');
            text.push_str(l);
        }
        text.push('\n');
        fs::write(&f, text).unwrap();
        f
    }
    pub fn sync(&self, remote: &str, kind: Kind) -> Result<Report, Error> {
        self.sync_with(&self.options(remote, kind))
    }
    /// The options of a plain sync of this machine, to change before [`Machine::sync_with`].
    pub fn options(&self, remote: &str, kind: Kind) -> Options {
        Options::new(self.agent.to_string_lossy(), remote, kind)
    }
    pub fn sync_with(&self, opts: &Options) -> Result<Report, Error> {
        sync(opts, &mut |_, _| {})
    }
    pub fn map(&self, text: &str) {
        let p = self.agent.join("sync/paths");
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
}

pub fn ids(bytes: &str) -> Vec<String> {
    bytes
        .lines()
        .skip(1)
        .filter_map(|l| l.split("\"id\":\"").nth(1))
        .map(|r| r[..r.find('"').unwrap()].to_owned())
        .collect()
}

/// Both machines use the same project path (the common case: same user name, same layout).
pub fn same_path_pair(root: &Path) -> (Machine, Machine) {
    let a = machine(root, "a");
    let mut b = machine(root, "b");
    b.project = a.project.clone();
    (a, b)
}

/// The remote of a transport under `root`: a bare repository, or an empty shared folder.
pub fn remote_for(root: &Path, kind: Kind) -> String {
    match kind {
        Kind::Git => bare(root),
        Kind::Folder => {
            let d = root.join("Sync");
            fs::create_dir_all(&d).unwrap();
            d.to_string_lossy().into_owned()
        }
    }
}

/// A `trash` command of this machine's own (a script moving its arguments into a folder), and
/// that folder.
#[cfg(unix)]
pub fn trash_can(root: &Path, name: &str) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let bin = root.join(name).join("bin");
    let can = root.join(name).join("can");
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&can).unwrap();
    let script = bin.join("trash");
    fs::write(
        &script,
        format!("#!/bin/sh\nmv \"$@\" '{}'/\n", can.display()),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    (script, can)
}

/// `git --git-dir <remote> <args>`: its stdout, or `None` when it fails.
pub fn git_in(remote: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(remote)
        .args(args)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Machine {
    /// Continue session `id` with one more entry (appended, as pi does).
    pub fn append(&self, id: &str, line: &str) {
        let f = self.file(id);
        let mut text = fs::read_to_string(&f).unwrap();
        text.push_str(line);
        text.push('\n');
        fs::write(&f, text).unwrap();
    }
    /// Every session file of this machine with its bytes.
    pub fn files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let root = self.agent.join("sessions");
        for d in fs::read_dir(&root).into_iter().flatten().flatten() {
            for f in fs::read_dir(d.path()).into_iter().flatten().flatten() {
                let p = f.path();
                if p.extension().is_some_and(|e| e == "jsonl") {
                    out.push((p.clone(), fs::read(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    }
}
