//! Where the shared copy of the sessions lives: a git remote (any URL git understands, or a bare
//! repository on a shared disk; the `git` binary does the talking) or a shared folder that a
//! file-sync tool keeps in step. Either way the shared copy is a directory `sessions/` of
//! `<name>.jsonl` files, one per session, named as on the machine that made it, with the
//! header's `cwd` in the remote's spelling (see `pathmap`). For git that directory is a work
//! tree of the sync's own under `<agentDir>/sync/`, reset to the remote's branch before a sync and
//! committed and pushed after it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::error::{Error, ErrorCode, Result};
use crate::fsio;
use crate::merge::fnv1a;

/// The branch the sessions are kept on.
pub const BRANCH: &str = "main";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Git,
    Folder,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Git => "git",
            Kind::Folder => "folder",
        }
    }
}

/// An opened remote.
#[derive(Debug, Clone)]
pub struct Transport {
    pub kind: Kind,
    /// The remote as git or the file system is given it (a local path made absolute).
    pub remote: String,
    /// The sync's own directory for this remote (state, and the git work tree).
    pub home: PathBuf,
    /// The directory that holds `sessions/`.
    pub root: PathBuf,
}

/// What a push did.
#[derive(Debug, PartialEq, Eq)]
pub enum Pushed {
    Nothing,
    Done,
    /// Someone pushed first: fetch and sync again.
    Rejected,
}

fn git(dir: Option<&Path>, args: &[&str]) -> Result<Output> {
    let mut c = Command::new("git");
    if let Some(d) = dir {
        c.arg("-C").arg(d);
    }
    c.args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C");
    private_umask(&mut c);
    c.output().map_err(|e| {
        Error::new(
            ErrorCode::SyncGitFailed,
            format!("cannot run git (is it installed?): {e}"),
        )
    })
}

/// The work tree and repository git makes under the sync's private directory are private too:
/// git runs with umask 077 (its files 0600, its directories 0700).
#[cfg(unix)]
fn private_umask(c: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: runs in the forked child before exec; umask is async-signal-safe, allocates
    // nothing and takes no lock, which is all pre_exec asks of its closure.
    unsafe {
        c.pre_exec(|| {
            libc::umask(0o077);
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn private_umask(_c: &mut Command) {}

/// Run git and fail with its stderr unless it succeeds.
fn git_ok(dir: &Path, args: &[&str]) -> Result<Output> {
    let out = git(Some(dir), args)?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorCode::SyncGitFailed,
            format!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(out)
}

fn absolute_if_local(remote: &str) -> String {
    let p = Path::new(remote);
    if p.exists() {
        if let Ok(a) = std::path::absolute(p) {
            return a.to_string_lossy().into_owned();
        }
    }
    remote.to_owned()
}

impl Transport {
    /// Check the remote and name the sync's directory for it; creates nothing. A git remote that
    /// `git ls-remote` cannot read is `SYNC_REMOTE_NOT_GIT`, a folder that is not a directory
    /// `SYNC_REMOTE_NOT_FOLDER`.
    pub fn open(agent_dir: &Path, remote: &str, kind: Kind) -> Result<Transport> {
        let remote = absolute_if_local(remote);
        let key = format!("{}-{:016x}", kind.name(), fnv1a(&[remote.as_bytes()]));
        let home = agent_dir.join("sync").join(key);
        let root = match kind {
            Kind::Folder => {
                if !Path::new(&remote).is_dir() {
                    return Err(Error::new(
                        ErrorCode::SyncRemoteNotFolder,
                        format!("{remote} is not a folder (a shared folder must exist)"),
                    ));
                }
                PathBuf::from(&remote)
            }
            Kind::Git => {
                // git would take a leading dash for one of its options (`--upload-pack=…`).
                if remote.starts_with('-') {
                    return Err(Error::new(
                        ErrorCode::SyncRemoteNotGit,
                        format!(
                            "{remote} is not a git repository (a remote cannot start with '-')"
                        ),
                    ));
                }
                let out = git(None, &["ls-remote", "--heads", &remote])?;
                if !out.status.success() {
                    return Err(Error::new(
                        ErrorCode::SyncRemoteNotGit,
                        format!(
                            "{remote} is not a git repository: {}",
                            String::from_utf8_lossy(&out.stderr).trim()
                        ),
                    ));
                }
                home.join("repo")
            }
        };
        Ok(Transport {
            kind,
            remote,
            home,
            root,
        })
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    pub fn state_path(&self) -> PathBuf {
        self.home.join("state.tsv")
    }

    /// Bring the shared copy up to date (git: fetch and reset the work tree to the remote's
    /// branch, the work tree made first if needed). The caller holds the sync's lease.
    pub fn pull(&self) -> Result<()> {
        if self.kind == Kind::Folder {
            return Ok(());
        }
        let repo = &self.root;
        if !repo.join(".git").exists() {
            fsio::ensure_private_dir(repo)?;
            git_ok(repo, &["init", "-q"])?;
            git_ok(
                repo,
                &["symbolic-ref", "HEAD", &format!("refs/heads/{BRANCH}")],
            )?;
            git_ok(repo, &["config", "core.autocrlf", "false"])?;
            git_ok(repo, &["remote", "add", "origin", &self.remote])?;
        }
        // A sync killed inside `git add` or `git commit` leaves this behind; the caller holds
        // the sync's lease, so no live git of ours is using it.
        let _ = std::fs::remove_file(repo.join(".git").join("index.lock"));
        let heads = git_ok(repo, &["ls-remote", "--heads", "origin", BRANCH])?;
        if heads.stdout.is_empty() {
            return Ok(());
        }
        let spec = format!("+refs/heads/{BRANCH}:refs/remotes/origin/{BRANCH}");
        git_ok(repo, &["fetch", "-q", "origin", &spec])?;
        git_ok(
            repo,
            &["reset", "-q", "--hard", &format!("origin/{BRANCH}")],
        )?;
        git_ok(repo, &["clean", "-q", "-f", "-d"])?;
        Ok(())
    }

    /// Publish the shared copy (git: commit what changed and push it).
    pub fn push(&self, message: &str) -> Result<Pushed> {
        if self.kind == Kind::Folder {
            return Ok(Pushed::Done);
        }
        let repo = &self.root;
        git_ok(repo, &["add", "-A", "--", "."])?;
        let staged = git(Some(repo), &["diff", "--cached", "--quiet"])?;
        if staged.status.success() {
            // Nothing new, but a commit an earlier run could not push is still to go out.
            if self.head_is_pushed()? {
                return Ok(Pushed::Nothing);
            }
            return self.push_head();
        }
        let who = git(Some(repo), &["config", "user.email"])?;
        let mut args: Vec<&str> = Vec::new();
        if !who.status.success() || who.stdout.is_empty() {
            // A machine without a git identity still syncs; the commits say who made them.
            args.extend([
                "-c",
                "user.name=pi-sessions",
                "-c",
                "user.email=pi-sessions@localhost",
            ]);
        }
        args.extend(["commit", "-q", "-m", message]);
        git_ok(repo, &args)?;
        self.push_head()
    }

    /// Whether the work tree's commit is the remote's branch as last fetched (or there is none).
    fn head_is_pushed(&self) -> Result<bool> {
        let rev = |r: &str| -> Result<Option<Vec<u8>>> {
            let out = git(Some(&self.root), &["rev-parse", "-q", "--verify", r])?;
            Ok(out.status.success().then_some(out.stdout))
        };
        let Some(head) = rev("HEAD")? else {
            return Ok(true);
        };
        Ok(rev(&format!("refs/remotes/origin/{BRANCH}"))? == Some(head))
    }

    fn push_head(&self) -> Result<Pushed> {
        let repo = &self.root;
        let out = git(
            Some(repo),
            &["push", "-q", "origin", &format!("HEAD:refs/heads/{BRANCH}")],
        )?;
        if out.status.success() {
            return Ok(Pushed::Done);
        }
        let err = String::from_utf8_lossy(&out.stderr);
        // Beaten by another machine's push (between our fetch and our push): another round. A
        // refusal of the server's own (a hook, permissions) is an error, not a race.
        let beaten = [
            "fetch first",
            "non-fast-forward",
            "cannot lock ref",
            "failed to update ref",
        ];
        if beaten.iter().any(|b| err.contains(b)) {
            return Ok(Pushed::Rejected);
        }
        Err(Error::new(
            ErrorCode::SyncGitFailed,
            format!("git push failed: {}", err.trim()),
        ))
    }
}
