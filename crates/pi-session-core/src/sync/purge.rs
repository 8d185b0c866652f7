//! Gone from history, when asked (`pi-sessions sync <remote> --purge <id|file>`): a deleted
//! session's bytes taken out of the git remote's history too, for a session that held a secret.
//!
//! What it rewrites: every commit of the sync's branch, each made again without the session's
//! file (`git fast-export` of the branch, the file's lines dropped, `git fast-import`), plus one
//! commit on top that adds the file's name to `purged.tsv` at the top of the repository. The
//! rewritten branch is force-pushed, with a lease on the tip this run fetched (a push someone
//! made meanwhile makes the purge fail rather than be lost). Other branches and tags of the
//! remote are not touched. Only a session that is deleted already (gone from the branch's tip)
//! is purged; one still there is refused: delete it and sync first.
//!
//! What other machines do: nothing by hand. Their next sync sees that the branch's history no
//! longer contains the one they fetched before, resets their work tree to the new history and
//! drops the old one from their clone (reflogs expired, `git gc --prune=now`); their copy of a
//! purged session, unchanged since they last synced, goes as any deletion does (to the trash).
//! A machine that continued it since brings it back, with its lines, as for any deletion. A
//! hosted remote (GitHub, GitLab) keeps the unreachable objects until its own garbage collection,
//! and forks or clones made elsewhere keep theirs.

use std::collections::HashSet;

use super::transport::Transport;
use super::{git, header, Kind, Purged};
use crate::error::{Error, ErrorCode, Result};
use crate::fsio;

/// The record of purged files, at the top of the repository (outside `sessions/`).
const RECORD: &str = "purged.tsv";
/// Where the rewritten branch is built in the sync's clone before it is pushed.
const SCRATCH: &str = "refs/pi-sessions/purge";

/// Every file name the branch's history ever held under `sessions/` (renames not detected:
/// a file deleted and another added alike in one commit are a deletion and an addition).
fn names_in_history(t: &Transport, tip: &str) -> Result<Vec<String>> {
    let mut names = session_names_in_log(t, tip, "A")?;
    names.sort();
    names.dedup();
    Ok(names)
}

/// The names under `sessions/` of the files the commits reachable from `tip` changed as
/// `filter` says (`A` added, `D` deleted; a name once per commit that changed it).
fn session_names_in_log(t: &Transport, tip: &str, filter: &str) -> Result<Vec<String>> {
    let filter = format!("--diff-filter={filter}");
    let out = git::ok(
        &t.root,
        &[
            "-c",
            "core.quotePath=false",
            "log",
            "--format=",
            "--name-only",
            "--no-renames",
            &filter,
            tip,
            "--",
            "sessions/",
        ],
    )?;
    Ok(git::lines(&out)
        .iter()
        .filter_map(|l| l.strip_prefix("sessions/").map(str::to_owned))
        .collect())
}

/// The session id in the header of the first version of `name` the history holds.
fn id_of(t: &Transport, tip: &str, name: &str) -> Result<Option<String>> {
    let path = format!("sessions/{name}");
    let added = git::ok(
        &t.root,
        &[
            "log",
            "--format=%H",
            "--no-renames",
            "--diff-filter=A",
            "-1",
            tip,
            "--",
            &path,
        ],
    )?;
    let Some(commit) = git::lines(&added).into_iter().next() else {
        return Ok(None);
    };
    let blob = git::ok(&t.root, &["cat-file", "blob", &format!("{commit}:{path}")])?;
    Ok(header::read(&blob.stdout).map(|h| h.id))
}

/// The files `target` names: a file name (or a path, whose last part is taken), or a session id
/// or its first characters as pi puts it in its file names (`<time>_<id>.jsonl`).
fn resolve(t: &Transport, tip: &str, names: &[String], target: &str) -> Result<Vec<Purged>> {
    let not_found = || {
        Error::invalid_argument(format!(
            "no session {target} in the history of {} ({})",
            t.remote, t.branch
        ))
    };
    if target.ends_with(".jsonl") || target.contains(['/', '\\']) {
        let name = target.rsplit(['/', '\\']).next().unwrap_or(target);
        if !names.iter().any(|n| n == name) {
            return Err(not_found());
        }
        let id = id_of(t, tip, name)?.unwrap_or_default();
        return Ok(vec![Purged {
            id,
            remote: name.to_owned(),
        }]);
    }
    let mut found = Vec::new();
    for name in names
        .iter()
        .filter(|n| !target.is_empty() && n.contains(target))
    {
        if let Some(id) = id_of(t, tip, name)?.filter(|id| id.starts_with(target)) {
            found.push(Purged {
                id,
                remote: name.clone(),
            });
        }
    }
    let ids: HashSet<&str> = found.iter().map(|p| p.id.as_str()).collect();
    match ids.len() {
        0 => Err(not_found()),
        1 => Ok(found),
        _ => Err(Error::invalid_argument(format!(
            "{target} names {} sessions ({}); give more of the id",
            ids.len(),
            ids.into_iter().collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The sessions `targets` name, checked to be deleted already; then, unless `dry_run`, their
/// files removed from the branch's whole history and the branch force-pushed. The caller holds
/// the sync's lease and has just synced (the work tree is the remote's tip).
pub fn purge(t: &Transport, targets: &[String], dry_run: bool) -> Result<Vec<Purged>> {
    if t.kind == Kind::Folder {
        return Err(Error::invalid_argument(
            "a purge is for a git remote (a shared folder keeps no history of its own)",
        ));
    }
    let Some(tip) = git::rev(&t.root, "HEAD")? else {
        return Err(Error::invalid_argument(format!(
            "{} has no history to purge",
            t.remote
        )));
    };
    let names = names_in_history(t, &tip)?;
    let mut found: Vec<Purged> = Vec::new();
    for target in targets {
        for p in resolve(t, &tip, &names, target)? {
            if !found.iter().any(|f| f.remote == p.remote) {
                found.push(p);
            }
        }
    }
    for p in &found {
        let at_tip = format!("{tip}:sessions/{}", p.remote);
        if git::run(Some(&t.root), &["cat-file", "-e", &at_tip])?
            .status
            .success()
        {
            return Err(Error::invalid_argument(format!(
                "session {} ({}) is still on the remote: delete it (`pi-sessions rm`) and sync \
                 before purging it (a machine that continued it since brings it back)",
                p.id, p.remote
            )));
        }
    }
    if !dry_run && !found.is_empty() {
        rewrite(t, &tip, &found)?;
    }
    Ok(found)
}

/// Rebuild the branch without the files, add the record commit, force-push, and drop the old
/// history from this clone.
fn rewrite(t: &Transport, tip: &str, found: &[Purged]) -> Result<()> {
    let repo = &t.root;
    let branch = format!("refs/heads/{}", t.branch);
    let refspec = format!("--refspec={branch}:{SCRATCH}");
    let stream = git::ok(
        repo,
        &[
            "fast-export",
            "--no-data",
            "--signed-tags=strip",
            &refspec,
            &branch,
        ],
    )?;
    let drop: HashSet<String> = found
        .iter()
        .map(|p| format!("sessions/{}", p.remote))
        .collect();
    let filtered = filter_stream(&stream.stdout, &drop)?;
    git::ok_with_input(repo, &["fast-import", "--quiet", "--force"], &filtered)?;
    let new =
        git::rev(repo, SCRATCH)?.ok_or_else(|| internal("the rewritten branch is missing"))?;
    // The tip held none of the files, so the rewritten tip must hold exactly its tree.
    let tree = |c: &str| git::rev(repo, &format!("{c}^{{tree}}"));
    if tree(&new)? != tree(tip)? {
        return Err(internal(
            "the rewritten branch differs from the remote's tip",
        ));
    }
    git::ok(repo, &["update-ref", &branch, &new])?;
    record(t, found)?;
    // From here a kill leaves the remote rewritten and this clone not yet cleaned: the mark
    // makes the next sync clean it.
    fsio::replace_private(&t.home.join("rewritten"), b"")?;
    let lease = format!("--force-with-lease={branch}:{tip}");
    let spec = format!("HEAD:{branch}");
    let out = git::run(Some(repo), &["push", "-q", &lease, "origin", &spec])?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorCode::SyncGitFailed,
            format!(
                "the purge was not pushed (did another machine push meanwhile? run it again): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    git::ok(repo, &["update-ref", "-d", SCRATCH])?;
    git::forget_unreachable(repo)?;
    t.settled();
    Ok(())
}

fn internal(what: &str) -> Error {
    Error::new(
        ErrorCode::Internal,
        format!("purge: {what}; nothing was pushed"),
    )
}

/// Add the purged files to the record and commit it on the rewritten branch.
fn record(t: &Transport, found: &[Purged]) -> Result<()> {
    let path = t.root.join(RECORD);
    let mut text = match fsio::read_all(&path)? {
        Some(b) => String::from_utf8_lossy(&b).into_owned(),
        None => {
            "# file\tsession id: removed from this branch's history by pi-sessions sync --purge\n"
                .to_owned()
        }
    };
    for p in found {
        text.push_str(&format!("{}\t{}\n", p.remote, p.id));
    }
    fsio::replace_private(&path, text.as_bytes())?;
    git::ok(&t.root, &["add", "--", RECORD])?;
    let msg = format!(
        "pi-sessions purge from {}: {} session file(s) removed from the history",
        crate::lock::hostname(),
        found.len()
    );
    let mut args = git::identity(&t.root)?;
    args.extend(["commit", "-q", "-m", &msg]);
    git::ok(&t.root, &args)?;
    Ok(())
}

/// The names a rewritten history says were deleted: the purge record's, and those a commit
/// deleted. The work tree is the new tip.
pub fn deleted_in_history(t: &Transport) -> Result<HashSet<String>> {
    let mut names = HashSet::new();
    if let Some(b) = fsio::read_all(&t.root.join(RECORD))? {
        for line in String::from_utf8_lossy(&b).lines() {
            if let Some(name) = line.split('\t').next().filter(|n| !n.starts_with('#')) {
                names.insert(name.to_owned());
            }
        }
    }
    if git::rev(&t.root, "HEAD")?.is_some() {
        names.extend(session_names_in_log(t, "HEAD", "D")?);
    }
    Ok(names)
}

/// A path of a fast-export file command, unquoted (git quotes one with unusual characters).
fn unquote(p: &[u8]) -> Vec<u8> {
    let Some(inner) = p.strip_prefix(b"\"").and_then(|q| q.strip_suffix(b"\"")) else {
        return p.to_vec();
    };
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let c = inner[i];
        i += 1;
        if c != b'\\' || i >= inner.len() {
            out.push(c);
            continue;
        }
        let e = inner[i];
        i += 1;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'0'..=b'7' if i + 2 <= inner.len() => {
                let oct = &inner[i - 1..i + 2];
                let v = oct
                    .iter()
                    .fold(0u32, |a, d| a * 8 + u32::from(d.wrapping_sub(b'0')));
                out.push(v as u8);
                i += 2;
            }
            other => out.push(other),
        }
    }
    out
}

/// The fast-export `stream` without the file commands (`M`, `D`) on the paths of `drop`. Commit
/// messages (`data <n>` and its bytes) pass through untouched.
fn filter_stream(stream: &[u8], drop: &HashSet<String>) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(stream.len());
    let mut i = 0;
    while i < stream.len() {
        let end = memchr::memchr(b'\n', &stream[i..]).map_or(stream.len(), |e| i + e + 1);
        let line = &stream[i..end];
        i = end;
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if let Some(n) = body.strip_prefix(b"data ") {
            let len: usize = std::str::from_utf8(n)
                .ok()
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| internal("git fast-export wrote a data command it cannot read"))?;
            let stop = (i + len).min(stream.len());
            out.extend_from_slice(line);
            out.extend_from_slice(&stream[i..stop]);
            i = stop;
            continue;
        }
        let path = if let Some(rest) = body.strip_prefix(b"M ") {
            // `M <mode> <dataref> <path>`
            rest.splitn(3, |&b| b == b' ').nth(2)
        } else {
            body.strip_prefix(b"D ")
        };
        if path.is_some_and(|p| drop.contains(String::from_utf8_lossy(&unquote(p)).as_ref())) {
            continue;
        }
        out.extend_from_slice(line);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_loses_only_the_dropped_files_commands_and_keeps_messages_whole() {
        let stream = concat!(
            "commit refs/x\nmark :1\ndata 27\nsubject\nD sessions/a.jsonl\n",
            "M 100644 0123 sessions/a.jsonl\n",
            "M 100644 4567 \"sessions/b c.jsonl\"\n",
            "\ncommit refs/x\nmark :2\ndata 3\nxy\nfrom :1\nD sessions/a.jsonl\n",
            "D \"sessions/b c.jsonl\"\n\n"
        );
        let drop: HashSet<String> = ["sessions/a.jsonl".to_owned()].into();
        let out = filter_stream(stream.as_bytes(), &drop).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                "commit refs/x\nmark :1\ndata 27\nsubject\nD sessions/a.jsonl\n",
                "M 100644 4567 \"sessions/b c.jsonl\"\n",
                "\ncommit refs/x\nmark :2\ndata 3\nxy\nfrom :1\n",
                "D \"sessions/b c.jsonl\"\n\n"
            )
        );
        let drop: HashSet<String> = ["sessions/b c.jsonl".to_owned()].into();
        let out = String::from_utf8(filter_stream(stream.as_bytes(), &drop).unwrap()).unwrap();
        assert!(!out.contains("b c.jsonl"), "{out}");
        assert_eq!(unquote(b"\"a\\303\\251\\\"\""), "aé\"".as_bytes());
    }
}
