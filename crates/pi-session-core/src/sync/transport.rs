//! Where the shared copy of the sessions lives: a git remote (any URL git understands, or a bare
//! repository on a shared disk; the `git` binary does the talking) or a shared folder that a
//! file-sync tool keeps in step. Either way the shared copy is a directory `sessions/` of
//! `<name>.jsonl` files, one per session, named as on the machine that made it, with the
//! header's `cwd` in the remote's spelling (see `pathmap`). For git that directory is a work
//! tree of the sync's own under `<agentDir>/sync/`, reset to the remote's branch (`main`, or the
//! one asked for) before a sync and committed and pushed after it. A fetch that finds the branch's
//! history no longer containing the one fetched before (a purge elsewhere, see `purge`) marks the
//! clone rewritten until a sync completes, and drops the old history from the clone.

use std::path::{Path, PathBuf};

use super::git;
use crate::error::{Error, ErrorCode, Result};
use crate::fsio;
use crate::merge::fnv1a;

/// The branch the sessions are kept on unless another is asked for.
pub const DEFAULT_BRANCH: &str = "main";

/// A remote spelled as a URL (`https://…`, `ssh://…`, `git@host:path`): anything with `://`, or
/// a `host:path` whose host has two characters or more and no separator (`C:\x` is a path).
pub fn is_url(remote: &str) -> bool {
    let scp_like = remote
        .split_once(':')
        .is_some_and(|(host, _)| host.len() > 1 && !host.contains(['/', '\\']));
    remote.contains("://") || scp_like
}

/// The remote a caller named: a URL as given, a path resolved against `cwd` (tilde and file URLs
/// expanded with `home`), as both `pi-sessions sync` and `syncSessions` take it.
pub fn remote_arg(raw: &str, cwd: &str, home: &str) -> String {
    if is_url(raw) {
        raw.to_owned()
    } else {
        crate::paths::Style::HOST.resolve_input(cwd, raw, home)
    }
}

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
    /// The git branch (`main` unless asked; unused for a folder).
    pub branch: String,
}

/// What bringing the shared copy up to date found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pulled {
    /// The remote holds a copy at all (git: its branch exists; a folder: its `sessions/`). Only
    /// then can a session missing there have been deleted there.
    pub present: bool,
    /// The branch's history was rewritten (a purge elsewhere) since this clone last fetched it,
    /// and no sync has completed since.
    pub rewritten: bool,
}

/// What a push did.
#[derive(Debug, PartialEq, Eq)]
pub enum Pushed {
    Nothing,
    Done,
    /// Someone pushed first: fetch and sync again.
    Rejected,
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
    pub fn open(
        agent_dir: &Path,
        remote: &str,
        kind: Kind,
        branch: Option<&str>,
    ) -> Result<Transport> {
        let remote = absolute_if_local(remote);
        let branch = check_branch(kind, branch)?;
        // The default branch keeps the key sync had before branches could be chosen.
        let key = if branch == DEFAULT_BRANCH {
            fnv1a(&[remote.as_bytes()])
        } else {
            fnv1a(&[remote.as_bytes(), b"\0", branch.as_bytes()])
        };
        let home = agent_dir
            .join("sync")
            .join(format!("{}-{key:016x}", kind.name()));
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
                let out = git::run(None, &["ls-remote", "--heads", &remote])?;
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
            branch,
        })
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    pub fn state_path(&self) -> PathBuf {
        self.home.join("state.tsv")
    }

    /// Marks a rewritten history seen but not yet settled by a completed sync.
    fn rewritten_mark(&self) -> PathBuf {
        self.home.join("rewritten")
    }

    /// Bring the shared copy up to date (git: fetch and reset the work tree to the remote's
    /// branch, the work tree made first if needed). The caller holds the sync's lease.
    pub fn pull(&self) -> Result<Pulled> {
        if self.kind == Kind::Folder {
            return Ok(Pulled {
                present: self.sessions_dir().is_dir(),
                rewritten: false,
            });
        }
        let repo = &self.root;
        let b = self.branch.as_str();
        if !repo.join(".git").exists() {
            fsio::ensure_private_dir(repo)?;
            git::ok(repo, &["init", "-q"])?;
            git::ok(repo, &["symbolic-ref", "HEAD", &format!("refs/heads/{b}")])?;
            git::ok(repo, &["config", "core.autocrlf", "false"])?;
            git::ok(repo, &["remote", "add", "origin", &self.remote])?;
        }
        git::clear_stale_locks(repo, b);
        let head = format!("refs/heads/{b}");
        let heads = git::ok(repo, &["ls-remote", "--heads", "origin", &head])?;
        let tracking = format!("refs/remotes/origin/{b}");
        let exists = git::lines(&heads)
            .iter()
            .any(|l| l.ends_with(&format!("\t{head}")));
        if !exists {
            return Ok(Pulled {
                present: false,
                rewritten: fsio::exists(&self.rewritten_mark()),
            });
        }
        let before = git::rev(repo, &tracking)?;
        git::ok(
            repo,
            &["fetch", "-q", "origin", &format!("+{head}:{tracking}")],
        )?;
        let after = git::rev(repo, &tracking)?;
        let newly = match (&before, &after) {
            (Some(old), Some(new)) => old != new && !git::is_ancestor(repo, old, new)?,
            _ => false,
        };
        if newly {
            fsio::replace_private(&self.rewritten_mark(), b"")?;
        }
        git::ok(repo, &["reset", "-q", "--hard", &tracking])?;
        git::ok(repo, &["clean", "-q", "-f", "-d"])?;
        // Until a sync completes after the rewrite (also one this clone pushed, if the purge
        // was killed before it cleaned up), the old history is dropped from the clone.
        let rewritten = fsio::exists(&self.rewritten_mark());
        if rewritten {
            git::forget_unreachable(repo)?;
        }
        Ok(Pulled {
            present: true,
            rewritten,
        })
    }

    /// A sync completed after a rewrite was seen: this machine follows the new history.
    pub fn settled(&self) {
        let _ = std::fs::remove_file(self.rewritten_mark());
    }

    /// Publish the shared copy (git: commit what changed and push it).
    pub fn push(&self, message: &str) -> Result<Pushed> {
        if self.kind == Kind::Folder {
            return Ok(Pushed::Done);
        }
        let repo = &self.root;
        git::ok(repo, &["add", "-A", "--", "."])?;
        let staged = git::run(Some(repo), &["diff", "--cached", "--quiet"])?;
        if staged.status.success() {
            // Nothing new, but a commit an earlier run could not push is still to go out.
            if self.head_is_pushed()? {
                return Ok(Pushed::Nothing);
            }
            return self.push_head();
        }
        let mut args = git::identity(repo)?;
        args.extend(["commit", "-q", "-m", message]);
        git::ok(repo, &args)?;
        self.push_head()
    }

    /// Whether the work tree's commit is the remote's branch as last fetched (or there is none).
    fn head_is_pushed(&self) -> Result<bool> {
        let Some(head) = git::rev(&self.root, "HEAD")? else {
            return Ok(true);
        };
        let tracking = format!("refs/remotes/origin/{}", self.branch);
        Ok(git::rev(&self.root, &tracking)? == Some(head))
    }

    fn push_head(&self) -> Result<Pushed> {
        let repo = &self.root;
        let spec = format!("HEAD:refs/heads/{}", self.branch);
        let out = git::run(Some(repo), &["push", "-q", "origin", &spec])?;
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

/// The branch to sync on: `main` unless asked; a name git would not take as a branch, or one for
/// a folder, is `INVALID_ARGUMENT`.
fn check_branch(kind: Kind, branch: Option<&str>) -> Result<String> {
    let Some(b) = branch else {
        return Ok(DEFAULT_BRANCH.to_owned());
    };
    if kind == Kind::Folder {
        return Err(Error::invalid_argument(
            "a branch is for a git remote, not a shared folder",
        ));
    }
    let valid = !b.is_empty()
        && !b.starts_with('-')
        && git::run(None, &["check-ref-format", &format!("refs/heads/{b}")])?
            .status
            .success();
    if !valid {
        return Err(Error::invalid_argument(format!(
            "`{b}` is not a branch name git accepts"
        )));
    }
    Ok(b.to_owned())
}
