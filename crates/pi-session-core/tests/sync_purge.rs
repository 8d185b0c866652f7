//! `sync --purge`: a deleted session's bytes taken out of a bare git remote's history; the other
//! machines follow the rewritten history at their next sync without bringing the session back,
//! and a history set back by hand (not a purge) deletes nothing.

use std::fs;

use pi_session_core::sync::{Kind, Options, Place};

#[path = "sync/machines.rs"]
mod machines;
use machines::*;

/// Every blob id the remote's history ever held for `path`.
fn blobs_of(remote: &str, path: &str) -> Vec<String> {
    let log = git_in(
        remote,
        &[
            "log",
            "--all",
            "--format=",
            "--raw",
            "--no-abbrev",
            "--",
            path,
        ],
    )
    .unwrap_or_default();
    let mut ids: Vec<String> = log
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3).map(str::to_owned))
        .filter(|id| id.chars().any(|c| c != '0'))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Whether any ref of the repository at `git_dir` reaches the object `id`.
fn reaches(git_dir: &str, id: &str) -> bool {
    git_in(git_dir, &["rev-list", "--objects", "--all"])
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with(id))
}

fn purge(
    m: &Machine,
    remote: &str,
    targets: &[&str],
) -> Result<pi_session_core::sync::Report, pi_session_core::Error> {
    m.sync_with(&Options {
        purge: targets.iter().map(|t| (*t).to_owned()).collect(),
        ..m.options(remote, Kind::Git)
    })
}

/// The sync's own clone of `m` (its git dir).
fn clone_of(m: &Machine) -> String {
    let home = fs::read_dir(m.agent.join("sync"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("git-"))
        .unwrap()
        .path();
    home.join("repo/.git").to_string_lossy().into_owned()
}

#[test]
fn a_purge_after_the_deletion_sync_leaves_no_ref_of_the_remote_reaching_the_sessions_bytes() -> R {
    let root = temp("purge");
    let remote = bare(&root);
    let (a, b) = same_path_pair(&root);
    let mut c = machine(&root, "c");
    c.project = a.project.clone();
    // The "secret" is made at run time; no literal credential lives in the repository.
    let secret: String = ["sk", "-", "test", "-", &"x".repeat(20)].concat();
    a.write("s", &[entry("s1", None, 1, &secret)]);
    a.write("k", &[entry("k1", None, 1, "kept")]);
    a.sync(&remote, Kind::Git)?;
    a.append("s", &entry("s2", Some("s1"), 2, "a second version"));
    a.sync(&remote, Kind::Git)?;
    b.sync(&remote, Kind::Git)?;
    c.sync(&remote, Kind::Git)?;
    let name = a
        .file("s")
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let path = format!("sessions/{name}");
    let blobs = blobs_of(&remote, &path);
    assert_eq!(blobs.len(), 2, "two versions in the history");

    fs::remove_file(a.file("s"))?;
    let r = purge(&a, &remote, &["s"])?;
    assert_eq!(r.deleted.len(), 1, "the sync carried the deletion first");
    assert_eq!(r.purged.len(), 1, "{:?}", r.problems);
    assert_eq!(
        (r.purged[0].id.as_str(), r.purged[0].remote.as_str()),
        ("s", name.as_str())
    );
    assert!(
        blobs_of(&remote, &path).is_empty(),
        "no commit names the file"
    );
    for blob in &blobs {
        assert!(!reaches(&remote, blob), "the remote reaches {blob}");
        assert!(!reaches(&clone_of(&a), blob), "a's clone reaches {blob}");
    }
    // Once the remote's own garbage collection ran, the bytes are gone from it.
    git_in(&remote, &["reflog", "expire", "--expire=now", "--all"]);
    git_in(&remote, &["gc", "-q", "--prune=now"]).unwrap();
    for blob in &blobs {
        assert!(git_in(&remote, &["cat-file", "-e", blob]).is_none());
    }
    let record = git_in(&remote, &["show", "main:purged.tsv"]).unwrap();
    assert!(record.contains(&format!("{name}\ts")), "{record}");

    // b follows the new history: its unchanged copy goes, k stays, its clone forgets the bytes.
    let rb = b.sync(&remote, Kind::Git)?;
    assert!(rb.rewritten);
    assert_eq!(rb.deleted.len(), 1);
    assert_eq!(rb.deleted[0].from, Place::Here);
    assert!(!b.file("s").exists() && b.file("k").exists());
    for blob in &blobs {
        assert!(git_in(&clone_of(&b), &["cat-file", "-e", blob]).is_none());
    }
    assert!(
        !b.sync(&remote, Kind::Git)?.rewritten,
        "settled after one sync"
    );
    // c was offline throughout; its next sync does the same and brings nothing back.
    let rc = c.sync(&remote, Kind::Git)?;
    assert!(rc.rewritten && rc.deleted.len() == 1 && rc.synced.is_empty());
    assert!(!c.file("s").exists());
    assert!(git_in(&remote, &["cat-file", "-e", &format!("main:{path}")]).is_none());
    assert!(git_in(
        &remote,
        &["cat-file", "-e", "main:sessions/".trim_end_matches('/')]
    )
    .is_some());
    Ok(())
}

#[test]
fn a_purge_of_a_session_still_on_the_remote_is_refused_by_the_sync_and_rewrites_nothing() -> R {
    let root = temp("purge-live");
    let remote = bare(&root);
    let (a, _) = same_path_pair(&root);
    a.write("k", &[entry("k1", None, 1, "kept")]);
    a.sync(&remote, Kind::Git)?;
    let tip = git_in(&remote, &["rev-parse", "main"]);
    let r = purge(&a, &remote, &["k"])?;
    assert!(r.purged.is_empty());
    assert_eq!(r.problems.len(), 1);
    assert_eq!(r.problems[0].code, "INVALID_ARGUMENT");
    assert!(
        r.problems[0].message.contains("still on the remote"),
        "{}",
        r.problems[0].message
    );
    let none = purge(&a, &remote, &["nothing-like-it"])?;
    assert!(
        none.problems[0].message.contains("no session"),
        "{:?}",
        none.problems
    );
    assert_eq!(git_in(&remote, &["rev-parse", "main"]), tip);
    assert!(a.file("k").exists());
    Ok(())
}

#[test]
fn a_history_set_back_by_hand_deletes_nothing_at_the_next_sync_and_gets_the_sessions_back() -> R {
    let root = temp("setback");
    let remote = bare(&root);
    let (a, b) = same_path_pair(&root);
    a.write("old", &[entry("o1", None, 1, "old")]);
    a.sync(&remote, Kind::Git)?;
    let before = git_in(&remote, &["rev-parse", "main"]).unwrap();
    a.write("new", &[entry("n1", None, 1, "new")]);
    a.sync(&remote, Kind::Git)?;
    b.sync(&remote, Kind::Git)?;
    // Someone forces the branch back to the first commit: `new` is missing there, and no
    // commit of the new history deleted it.
    git_in(&remote, &["update-ref", "refs/heads/main", before.trim()]).unwrap();
    let rb = b.sync(&remote, Kind::Git)?;
    assert!(rb.rewritten);
    assert!(rb.deleted.is_empty(), "{:?}", rb.deleted);
    assert!(b.file("new").exists());
    assert!(
        git_in(
            &remote,
            &[
                "cat-file",
                "-e",
                &format!(
                    "main:sessions/{}",
                    b.file("new").file_name().unwrap().to_string_lossy()
                )
            ]
        )
        .is_some(),
        "pushed back"
    );
    Ok(())
}

#[test]
fn a_sync_that_deleted_one_session_and_added_a_near_copy_keeps_both_purgeable_by_id() -> R {
    let root = temp("purge-renamed");
    let remote = bare(&root);
    let (a, _) = same_path_pair(&root);
    let lines: Vec<String> = (1..40)
        .map(|i| entry(&format!("e{i}"), None, i % 60, "the same long conversation"))
        .collect();
    a.write("p", &lines);
    a.sync(&remote, Kind::Git)?;
    // One commit deletes p and adds f with nearly its bytes: git would call it a rename.
    fs::remove_file(a.file("p"))?;
    a.write("f", &lines);
    a.sync(&remote, Kind::Git)?;
    fs::remove_file(a.file("f"))?;
    let r = purge(&a, &remote, &["f", "p"])?;
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let mut ids: Vec<&str> = r.purged.iter().map(|p| p.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["f", "p"]);
    assert!(
        git_in(&remote, &["log", "--all", "--format=%H", "--", "sessions/"])
            .unwrap()
            .lines()
            .all(
                |c| git_in(&remote, &["ls-tree", "-r", "--name-only", c, "sessions/"])
                    .unwrap()
                    .is_empty()
            )
    );
    Ok(())
}
