//! Running the `git` binary for sync: no terminal prompts, C locale (so its messages can be
//! matched), umask 077 (what it makes under the sync's private directory is private too), and a
//! failure turned into `SYNC_GIT_FAILED` with git's stderr.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::error::{Error, ErrorCode, Result};

fn command(dir: Option<&Path>, args: &[&str]) -> Command {
    let mut c = Command::new("git");
    if let Some(d) = dir {
        c.arg("-C").arg(d);
    }
    c.args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C");
    private_umask(&mut c);
    c
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

fn not_run(e: std::io::Error) -> Error {
    Error::new(
        ErrorCode::SyncGitFailed,
        format!("cannot run git (is it installed?): {e}"),
    )
}

fn failed(args: &[&str], out: &Output) -> Error {
    Error::new(
        ErrorCode::SyncGitFailed,
        format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
    )
}

/// Run git; its exit status is the caller's to judge.
pub fn run(dir: Option<&Path>, args: &[&str]) -> Result<Output> {
    command(dir, args).output().map_err(not_run)
}

/// Whether git failed on a lock another git process holds (a ref or the index being updated).
fn lock_conflict(out: &Output) -> bool {
    let err = String::from_utf8_lossy(&out.stderr);
    ["cannot lock ref", ".lock': File exists", "but expected"]
        .iter()
        .any(|m| err.contains(m))
}

/// Run git and fail with its stderr unless it succeeds. A lock held by another git is waited
/// for a little: a sync killed by a signal of its own (not its process group) leaves its git
/// child running for a moment, still updating the clone the next sync is taking over.
pub fn ok(dir: &Path, args: &[&str]) -> Result<Output> {
    let mut out = run(Some(dir), args)?;
    for _ in 0..20 {
        if out.status.success() || !lock_conflict(&out) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        out = run(Some(dir), args)?;
    }
    if !out.status.success() {
        return Err(failed(args, &out));
    }
    Ok(out)
}

/// Run git with `input` on its stdin and fail with its stderr unless it succeeds.
pub fn ok_with_input(dir: &Path, args: &[&str], input: &[u8]) -> Result<Output> {
    let mut child = command(Some(dir), args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(not_run)?;
    let mut stdin = child.stdin.take();
    // Written on a thread of its own: git may fill its stdout before it has read all of stdin.
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.as_mut().map(|s| s.write_all(&input)));
    let out = child.wait_with_output().map_err(not_run)?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(failed(args, &out));
    }
    Ok(out)
}

/// The commit `rev` names in `dir`, if it names one.
pub fn rev(dir: &Path, rev: &str) -> Result<Option<String>> {
    let out = run(
        Some(dir),
        &["rev-parse", "-q", "--verify", &format!("{rev}^{{commit}}")],
    )?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned()))
}

/// Whether commit `a` is `b` or one of its ancestors.
pub fn is_ancestor(dir: &Path, a: &str, b: &str) -> Result<bool> {
    Ok(run(Some(dir), &["merge-base", "--is-ancestor", a, b])?
        .status
        .success())
}

/// Lines of a successful git command's output.
pub fn lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The identity options for a commit on a machine that has none configured (the commits then
/// say who made them).
pub fn identity(dir: &Path) -> Result<Vec<&'static str>> {
    let who = run(Some(dir), &["config", "user.email"])?;
    Ok(if !who.status.success() || who.stdout.is_empty() {
        vec![
            "-c",
            "user.name=pi-sessions",
            "-c",
            "user.email=pi-sessions@localhost",
        ]
    } else {
        Vec::new()
    })
}

/// Remove the lock files a killed sync's git left in the clone. The caller holds the sync's
/// lease, so the sync that ran git is gone; but a sync killed on its own (not with its process
/// group) leaves its git child running for a moment, so a lock is first given a little time to
/// go away by itself.
pub fn clear_stale_locks(repo: &Path, branch: &str) {
    let git = repo.join(".git");
    let locks = [
        git.join("index.lock"),
        git.join("HEAD.lock"),
        git.join("ORIG_HEAD.lock"),
        git.join("packed-refs.lock"),
        git.join("config.lock"),
        git.join(format!("refs/heads/{branch}.lock")),
        git.join(format!("refs/remotes/origin/{branch}.lock")),
    ];
    for _ in 0..20 {
        if !locks.iter().any(|l| l.exists()) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for l in &locks {
        let _ = std::fs::remove_file(l);
    }
}

/// Drop what only the old history reached from this clone: reflogs and unreachable objects (a
/// purge's bytes leave this machine too).
pub fn forget_unreachable(dir: &Path) -> Result<()> {
    let _ = std::fs::remove_file(dir.join(".git").join("ORIG_HEAD"));
    ok(dir, &["reflog", "expire", "--expire=now", "--all"])?;
    ok(dir, &["gc", "-q", "--prune=now"])?;
    Ok(())
}
