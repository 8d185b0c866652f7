//! Deletions through `sync`: agent dirs stand for machines, a bare git repository or a plain
//! folder for the remote. A session deleted on one machine is gone from every machine after
//! their syncs (to the trash where there is a `trash` command); one continued elsewhere since is
//! kept with the new lines; nothing but the deleted session is touched; what gives no evidence of
//! a deletion (a state from before deletions were carried, a side missing as a whole, a file that
//! no longer reads) deletes nothing.

use std::fs;

use pi_session_core::sync::{Action, Kind, Options, Place, Removal};

#[path = "sync/machines.rs"]
mod machines;
use machines::*;

/// A and B hold sessions `s` (to delete) and `k` (to keep) after a sync of each.
fn two_synced(root: &std::path::Path, kind: Kind) -> Result<(String, Machine, Machine), Error> {
    let remote = remote_for(root, kind);
    let (a, b) = same_path_pair(root);
    a.write("s", &[entry("s1", None, 1, "to delete")]);
    a.write("k", &[entry("k1", None, 1, "to keep")]);
    a.sync(&remote, kind)?;
    b.sync(&remote, kind)?;
    Ok((remote, a, b))
}

type Error = Box<dyn std::error::Error>;

#[cfg(unix)]
fn unlinked_on_a_is_gone_everywhere_after_syncs(kind: Kind, name: &str) -> R {
    let root = temp(name);
    let (remote, a, b) = two_synced(&root, kind)?;
    let keep_a = fs::read(a.file("k"))?;
    let keep_b = fs::read(b.file("k"))?;
    fs::remove_file(a.file("s"))?;

    let ra = a.sync(&remote, kind)?;
    assert_eq!(ra.deleted.len(), 1, "{:?}", ra.deleted);
    assert_eq!(
        (
            ra.deleted[0].id.as_str(),
            ra.deleted[0].from,
            ra.deleted[0].how
        ),
        ("s", Place::Remote, Removal::Removed)
    );
    let remote_file = format!(
        "sessions/{}",
        b.file("s").file_name().unwrap().to_string_lossy()
    );
    match kind {
        Kind::Folder => assert!(!std::path::Path::new(&remote).join(&remote_file).exists()),
        Kind::Git => {
            assert!(git_in(&remote, &["cat-file", "-e", &format!("main:{remote_file}")]).is_none());
            let log = git_in(&remote, &["log", "--format=%H", "main", "--", &remote_file]);
            assert_eq!(
                log.unwrap_or_default().lines().count(),
                2,
                "the history keeps it"
            );
        }
    }

    // B deletes it through its trash command.
    let (trash, can) = trash_can(&root, "b");
    let rb = b.sync_with(&Options {
        trash: Some(trash),
        ..b.options(&remote, kind)
    })?;
    assert_eq!(rb.deleted.len(), 1, "{:?}", rb.deleted);
    assert_eq!(
        (rb.deleted[0].from, rb.deleted[0].how),
        (Place::Here, Removal::Trash)
    );
    assert!(!b.file("s").exists());
    assert!(
        can.join(b.file("s").file_name().unwrap()).exists(),
        "in b's trash"
    );
    assert_eq!((rb.synced.len(), rb.problems.len()), (0, 0));

    // Nothing else was touched, and it stays deleted on both.
    assert_eq!(fs::read(a.file("k"))?, keep_a);
    assert_eq!(fs::read(b.file("k"))?, keep_b);
    for m in [&a, &b] {
        let again = m.sync(&remote, kind)?;
        assert!(again.synced.is_empty() && again.deleted.is_empty());
        assert_eq!(m.files().len(), 1);
        assert!(!m.file("s").exists());
    }
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_session_unlinked_on_a_is_gone_from_the_git_remote_and_from_b_after_their_syncs() -> R {
    unlinked_on_a_is_gone_everywhere_after_syncs(Kind::Git, "del-git")
}

#[cfg(unix)]
#[test]
fn a_session_unlinked_on_a_is_gone_from_the_shared_folder_and_from_b_after_their_syncs() -> R {
    unlinked_on_a_is_gone_everywhere_after_syncs(Kind::Folder, "del-folder")
}

fn continued_on_b_is_kept(kind: Kind, name: &str, b_first: bool) -> R {
    let root = temp(name);
    let (remote, a, b) = two_synced(&root, kind)?;
    fs::remove_file(a.file("s"))?;
    b.append("s", &entry("s2", Some("s1"), 2, "b goes on"));
    let want = fs::read(b.file("s"))?;
    let (first, second) = if b_first { (&b, &a) } else { (&a, &b) };
    let r1 = first.sync(&remote, kind)?;
    let r2 = second.sync(&remote, kind)?;
    let r3 = a.sync(&remote, kind)?;
    // Where the report names the session brought back, and on which side.
    let restored: Vec<_> = [&r1, &r2, &r3]
        .iter()
        .flat_map(|r| r.synced.iter())
        .filter_map(|s| s.restored.map(|p| (s.id.clone(), p, s.action)))
        .collect();
    if b_first {
        assert_eq!(restored, [("s".to_owned(), Place::Here, Action::Pulled)]);
    } else {
        assert_eq!(restored, [("s".to_owned(), Place::Remote, Action::Pushed)]);
        assert_eq!(r1.deleted.len(), 1, "a's sync carried the deletion first");
    }
    for m in [&a, &b] {
        assert_eq!(fs::read(m.file("s"))?, want, "b's lines on both");
    }
    assert!([&r2, &r3].iter().all(|r| r.problems.is_empty()));
    Ok(())
}

#[test]
fn a_session_deleted_on_a_but_continued_on_b_survives_the_syncs_on_both_with_bs_lines_git() -> R {
    continued_on_b_is_kept(Kind::Git, "keep-git", true)
}

#[test]
fn a_session_deleted_on_a_but_continued_on_b_survives_the_syncs_on_both_with_bs_lines_folder() -> R
{
    continued_on_b_is_kept(Kind::Folder, "keep-folder", true)
}

#[test]
fn a_deletion_synced_before_the_continuation_is_undone_by_bs_sync_which_puts_it_back() -> R {
    continued_on_b_is_kept(Kind::Git, "keep-late", false)
}

#[test]
fn a_session_deleted_on_b_but_continued_on_a_is_restored_on_b_by_the_syncs() -> R {
    let root = temp("keep-here");
    let (remote, a, b) = two_synced(&root, Kind::Git)?;
    fs::remove_file(b.file("s"))?;
    b.sync(&remote, Kind::Git)?;
    // a had continued it before it saw the deletion: its sync puts it back on the remote.
    let fa = a.file("s");
    fs::write(
        &fa,
        format!(
            "{}{}\n",
            fs::read_to_string(&fa)?,
            entry("s2", Some("s1"), 2, "a")
        ),
    )?;
    let ra = a.sync(&remote, Kind::Git)?;
    assert_eq!(ra.restored(), 1);
    assert_eq!(ra.synced[0].restored, Some(Place::Remote));
    let rb = b.sync(&remote, Kind::Git)?;
    assert_eq!(rb.count(Action::Pulled), 1);
    assert_eq!(fs::read(b.file("s"))?, fs::read(&fa)?);
    Ok(())
}

fn third_machine_loses_it(kind: Kind, name: &str) -> R {
    let root = temp(name);
    let (remote, a, b) = two_synced(&root, kind)?;
    let mut c = machine(&root, "c");
    c.project = a.project.clone();
    c.sync(&remote, kind)?;
    let c_keep = fs::read(c.file("k"))?;
    fs::remove_file(a.file("s"))?;
    a.sync(&remote, kind)?;
    b.sync(&remote, kind)?;
    b.append("k", &entry("k2", Some("k1"), 2, "b goes on with k"));
    b.sync(&remote, kind)?;
    // c was offline all along; its state says it saw `s` and its copy is unchanged.
    assert!(c.file("s").exists());
    let rc = c.sync(&remote, kind)?;
    assert_eq!(rc.deleted.len(), 1, "{:?}", rc.deleted);
    assert_eq!(rc.deleted[0].from, Place::Here);
    assert_eq!(rc.count(Action::Pulled), 1, "k's new line still arrives");
    assert!(!c.file("s").exists());
    assert!(fs::read(c.file("k"))?.starts_with(&c_keep));
    let again = c.sync(&remote, kind)?;
    assert!(again.synced.is_empty() && again.deleted.is_empty());
    assert!(!c.file("s").exists(), "not brought back by c's next sync");
    Ok(())
}

#[test]
fn a_third_machine_offline_during_the_deletion_loses_the_file_at_its_next_sync_git() -> R {
    third_machine_loses_it(Kind::Git, "third-git")
}

#[test]
fn a_third_machine_offline_during_the_deletion_loses_the_file_at_its_next_sync_folder() -> R {
    third_machine_loses_it(Kind::Folder, "third-folder")
}

#[test]
fn a_dry_run_sync_names_the_deletion_it_would_make_and_deletes_nothing() -> R {
    let root = temp("del-dry");
    let (remote, a, b) = two_synced(&root, Kind::Git)?;
    fs::remove_file(a.file("s"))?;
    a.sync(&remote, Kind::Git)?;
    let dry = b.sync_with(&Options {
        dry_run: true,
        ..b.options(&remote, Kind::Git)
    })?;
    assert_eq!(dry.deleted.len(), 1);
    assert_eq!(
        (dry.deleted[0].from, dry.deleted[0].how),
        (Place::Here, Removal::Removed)
    );
    assert!(b.file("s").exists(), "the dry run deleted nothing");
    let real = b.sync(&remote, Kind::Git)?;
    assert_eq!(real.deleted.len(), 1, "nor did it record anything");
    assert!(!b.file("s").exists());
    Ok(())
}

#[test]
fn a_state_from_before_deletions_were_synced_brings_a_deleted_session_back_once() -> R {
    let root = temp("del-v1");
    let (remote, a, _b) = two_synced(&root, Kind::Git)?;
    // The state as the sync before this one wrote it: version 1, no hashes.
    let sync_dir = fs::read_dir(a.agent.join("sync"))?
        .flatten()
        .find(|e| e.path().is_dir())
        .unwrap()
        .path();
    let state = sync_dir.join("state.tsv");
    let v1: String = fs::read_to_string(&state)?
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                "pi-sessions-sync-state 1\n".to_owned()
            } else {
                let f: Vec<&str> = l.split('\t').collect();
                format!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                    f[0], f[1], f[2], f[3], f[5], f[6], f[7]
                )
            }
        })
        .collect();
    fs::write(&state, v1)?;
    fs::remove_file(a.file("s"))?;
    let r = a.sync(&remote, Kind::Git)?;
    assert!(r.deleted.is_empty(), "{:?}", r.deleted);
    assert_eq!(r.count(Action::Pulled), 1);
    assert!(
        a.file("s").exists(),
        "no evidence of a deletion: copied back"
    );
    // That sync recorded what it saw; a deletion now is carried.
    fs::remove_file(a.file("s"))?;
    assert_eq!(a.sync(&remote, Kind::Git)?.deleted.len(), 1);
    Ok(())
}

#[test]
fn a_session_file_that_no_longer_reads_is_left_alone_by_the_sync_and_deleted_nowhere() -> R {
    let root = temp("del-torn");
    let (remote, a, b) = two_synced(&root, Kind::Git)?;
    fs::write(a.file("s"), "not a session header\n")?;
    let r = a.sync(&remote, Kind::Git)?;
    assert!(r.deleted.is_empty());
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].code, "INVALID_SESSION_FILE");
    let rb = b.sync(&remote, Kind::Git)?;
    assert!(rb.deleted.is_empty() && b.file("s").exists());
    Ok(())
}

#[test]
fn a_shared_folder_without_its_sessions_dir_deletes_nothing_at_the_sync_and_gets_them_back() -> R {
    let root = temp("del-unmounted");
    let (remote, _a, b) = two_synced(&root, Kind::Folder)?;
    let before = b.files();
    // The folder as an unmounted or not yet synced share shows it: no `sessions/` at all.
    fs::remove_dir_all(std::path::Path::new(&remote).join("sessions"))?;
    let r = b.sync(&remote, Kind::Folder)?;
    assert!(r.deleted.is_empty(), "{:?}", r.deleted);
    assert_eq!(r.count(Action::Pushed), 2);
    assert_eq!(b.files(), before);
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_session_whose_push_the_server_refused_is_pushed_by_the_next_sync_not_taken_for_deleted() -> R {
    use std::os::unix::fs::PermissionsExt;
    let root = temp("del-refused");
    let (remote, a, _b) = two_synced(&root, Kind::Git)?;
    let hook = std::path::Path::new(&remote).join("hooks/pre-receive");
    fs::write(&hook, "#!/bin/sh\necho 'not now' >&2\nexit 1\n")?;
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755))?;
    let fresh = a.write("n", &[entry("n1", None, 1, "new on a")]);
    assert!(a.sync(&remote, Kind::Git).is_err());
    fs::remove_file(&hook)?;
    // The next sync resets its work tree to the remote, which never got `n`: the state must not
    // say the remote had it.
    let r = a.sync(&remote, Kind::Git)?;
    assert!(r.deleted.is_empty(), "{:?}", r.deleted);
    assert_eq!(r.count(Action::Pushed), 1);
    assert!(fresh.exists());
    Ok(())
}
