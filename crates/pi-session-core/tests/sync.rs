//! `sync`: two agent dirs stand for two machines, a bare git repository (or a plain folder) for
//! the remote. Sessions made on each side meet; one continued on both ends as one file with both
//! continuations; conflict copies are merged and removed; homes that differ are mapped (a fork's
//! `parentSession` too); a branch other than `main` is used when asked; bad input changes
//! nothing; a second sync with nothing new writes nothing. Deletions: `sync_deletions.rs`; purges:
//! `sync_purge.rs`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use pi_session_core::fault::{self, Point};
use pi_session_core::sync::{Action, Kind, Options};
use pi_session_core::ErrorCode;

#[path = "sync/machines.rs"]
mod machines;
use machines::*;

#[test]
fn sessions_made_on_each_machine_reach_the_other() -> R {
    let root = temp("new");
    let remote = bare(&root);
    let (a, b) = same_path_pair(&root);
    a.write("s-a", &[entry("a1", None, 1, "from a")]);
    b.write("s-b", &[entry("b1", None, 1, "from b")]);
    let ra = a.sync(&remote, Kind::Git)?;
    assert_eq!(ra.count(Action::Pushed), 1);
    let rb = b.sync(&remote, Kind::Git)?;
    assert_eq!((rb.count(Action::Pushed), rb.count(Action::Pulled)), (1, 1));
    a.sync(&remote, Kind::Git)?;
    for id in ["s-a", "s-b"] {
        assert_eq!(fs::read(a.file(id))?, fs::read(b.file(id))?, "{id}");
    }
    let again = a.sync(&remote, Kind::Git)?;
    assert!(again.synced.is_empty(), "{:?}", again.synced);
    assert_eq!(again.unchanged, 2);
    Ok(())
}

#[test]
fn a_session_continued_on_both_machines_ends_as_one_file_with_both_branches() -> R {
    let root = temp("both");
    let remote = bare(&root);
    let (a, b) = same_path_pair(&root);
    let base = [entry("e1", None, 1, "start")];
    a.write("s", &base);
    a.sync(&remote, Kind::Git)?;
    b.sync(&remote, Kind::Git)?;
    let fa = a.file("s");
    let fb = b.file("s");
    fs::write(
        &fa,
        format!(
            "{}{}\n",
            fs::read_to_string(&fa)?,
            entry("a2", Some("e1"), 2, "on a")
        ),
    )?;
    fs::write(
        &fb,
        format!(
            "{}{}\n",
            fs::read_to_string(&fb)?,
            entry("b2", Some("e1"), 3, "on b")
        ),
    )?;
    a.sync(&remote, Kind::Git)?;
    let rb = b.sync(&remote, Kind::Git)?;
    assert_eq!(rb.count(Action::Merged), 1);
    a.sync(&remote, Kind::Git)?;
    let text = fs::read_to_string(&fb)?;
    assert_eq!(text, fs::read_to_string(&fa)?);
    let mut got = ids(&text);
    assert_eq!(
        got.last().map(String::as_str),
        Some("b2"),
        "the later tip ends the file"
    );
    got.sort();
    assert_eq!(got, ["a2", "b2", "e1"]);
    for m in [&b, &a] {
        let quiet = m.sync(&remote, Kind::Git)?;
        assert!(
            quiet.synced.is_empty(),
            "the machines agree: {:?}",
            quiet.synced
        );
    }
    Ok(())
}

#[test]
fn syncthing_and_dropbox_conflict_copies_are_merged_and_removed() -> R {
    let root = temp("copies");
    let remote = bare(&root);
    let (a, _) = same_path_pair(&root);
    let f = a.write(
        "s",
        &[
            entry("e1", None, 1, "start"),
            entry("e2", Some("e1"), 2, "main"),
        ],
    );
    let dir = f.parent().unwrap();
    let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
    let st = dir.join(format!("{stem}.sync-conflict-20261203-123456-ABCDEF.jsonl"));
    let db = dir.join(format!("{stem} (ana's conflicted copy 2026-12-03).jsonl"));
    let head = header("s", &a.project);
    fs::write(
        &st,
        format!(
            "{head}\n{}\n{}\n",
            entry("e1", None, 1, "start"),
            entry("x3", Some("e1"), 3, "syncthing")
        ),
    )?;
    fs::write(
        &db,
        format!(
            "{head}\n{}\n{}\n",
            entry("e1", None, 1, "start"),
            entry("y4", Some("e1"), 4, "dropbox")
        ),
    )?;
    let r = a.sync(&remote, Kind::Git)?;
    assert_eq!(r.synced[0].copies_removed.len(), 2);
    assert!(!st.exists() && !db.exists());
    let mut got = ids(&fs::read_to_string(&f)?);
    got.sort();
    assert_eq!(got, ["e1", "e2", "x3", "y4"]);
    Ok(())
}

#[test]
fn machines_with_different_home_paths_are_mapped() -> R {
    let root = temp("map");
    let remote = bare(&root);
    let a = machine(&root, "a");
    let b = machine(&root, "b");
    let home_a = Path::new(&a.project)
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let home_b = Path::new(&b.project)
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    b.map(&format!("# a's src is b's src\n{home_a} = {home_b}\n"));
    a.write("s-a", &[entry("a1", None, 1, "from a")]);
    a.sync(&remote, Kind::Git)?;
    b.sync(&remote, Kind::Git)?;
    let on_b = fs::read_to_string(b.file("s-a"))?;
    assert!(on_b
        .lines()
        .next()
        .unwrap()
        .contains(&format!("\"cwd\":\"{}\"", b.project)));
    b.write("s-b", &[entry("b1", None, 1, "from b")]);
    b.sync(&remote, Kind::Git)?;
    a.sync(&remote, Kind::Git)?;
    let on_a = fs::read_to_string(a.file("s-b"))?;
    assert!(on_a
        .lines()
        .next()
        .unwrap()
        .contains(&format!("\"cwd\":\"{}\"", a.project)));
    Ok(())
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_remote_that_is_no_git_repository_or_no_folder_fails_and_changes_nothing() -> R {
    let root = temp("badremote");
    let (a, _) = same_path_pair(&root);
    a.write("s", &[entry("e1", None, 1, "x")]);
    let before = snapshot(&a.agent);
    let plain = root.join("plain");
    fs::create_dir_all(&plain)?;
    let e = a.sync(&plain.to_string_lossy(), Kind::Git).unwrap_err();
    assert_eq!(e.code, ErrorCode::SyncRemoteNotGit, "{}", e.message);
    let e = a.sync("--upload-pack=touch /tmp/x", Kind::Git).unwrap_err();
    assert_eq!(e.code, ErrorCode::SyncRemoteNotGit);
    let e = a
        .sync(&root.join("absent").to_string_lossy(), Kind::Folder)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::SyncRemoteNotFolder);
    assert_eq!(snapshot(&a.agent), before);
    Ok(())
}

#[test]
fn a_conflict_copy_of_another_session_and_an_unmapped_path_are_reported_and_left_alone() -> R {
    let root = temp("badinput");
    let remote = bare(&root);
    let (a, b) = same_path_pair(&root);
    let f = a.write("s", &[entry("e1", None, 1, "x")]);
    let copy = f.with_file_name(format!(
        "{} (conflict).jsonl",
        f.file_stem().unwrap().to_string_lossy()
    ));
    fs::write(
        &copy,
        format!(
            "{}\n{}\n",
            header("other", &a.project),
            entry("o1", None, 1, "o")
        ),
    )?;
    let foreign = "/Users/nobody-here/src/app";
    let ff = a.dir(foreign).join("2026_f.jsonl");
    fs::create_dir_all(ff.parent().unwrap())?;
    fs::write(
        &ff,
        format!("{}\n{}\n", header("f", foreign), entry("f1", None, 1, "f")),
    )?;
    let r = a.sync(&remote, Kind::Git)?;
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].code, "SESSION_MISMATCH");
    assert!(copy.exists(), "the copy of another session stays");
    let b_before = snapshot(&b.agent);
    let rb = b.sync(&remote, Kind::Git)?;
    let unmapped: Vec<_> = rb
        .problems
        .iter()
        .filter(|p| p.code == "SYNC_UNMAPPED_PATH")
        .collect();
    assert_eq!(unmapped.len(), 1, "{:?}", rb.problems);
    assert_eq!(unmapped[0].id.as_deref(), Some("f"));
    assert!(!b.dir(foreign).exists());
    assert!(b.file("s").exists());
    let after: Vec<_> = snapshot(&b.agent)
        .into_iter()
        .filter(|(p, _)| p.starts_with(b.agent.join("sessions")))
        .collect();
    assert_eq!(after.len(), b_before.len() + 1, "only s was added");
    Ok(())
}

#[test]
fn a_shared_folder_carries_sessions_and_changes_both_ways() -> R {
    let root = temp("folder");
    let shared = root.join("Sync");
    fs::create_dir_all(&shared)?;
    let shared = shared.to_string_lossy().into_owned();
    let (a, b) = same_path_pair(&root);
    a.write("s", &[entry("e1", None, 1, "start")]);
    a.sync(&shared, Kind::Folder)?;
    let rb = b.sync(&shared, Kind::Folder)?;
    assert_eq!(rb.count(Action::Pulled), 1);
    let fb = b.file("s");
    fs::write(
        &fb,
        format!(
            "{}{}\n",
            fs::read_to_string(&fb)?,
            entry("b2", Some("e1"), 2, "on b")
        ),
    )?;
    b.sync(&shared, Kind::Folder)?;
    let ra = a.sync(&shared, Kind::Folder)?;
    assert_eq!(ra.count(Action::Pulled), 1);
    assert_eq!(fs::read(a.file("s"))?, fs::read(&fb)?);
    Ok(())
}

#[test]
fn a_file_under_a_live_writer_lease_is_skipped_and_reported_then_synced_once_released() -> R {
    let root = temp("lease");
    let remote = bare(&root);
    let (a, _) = same_path_pair(&root);
    let f = a.write("s", &[entry("e1", None, 1, "held")]);
    let before = fs::read(&f)?;
    let lease = pi_session_core::lock::acquire(&f)?;
    let r = a.sync(&remote, Kind::Git)?;
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].code, "SESSION_LOCKED");
    assert!(r.synced.is_empty());
    assert_eq!(fs::read(&f)?, before);
    drop(lease);
    let r = a.sync(&remote, Kind::Git)?;
    assert_eq!((r.count(Action::Pushed), r.problems.len()), (1, 0));
    Ok(())
}

#[test]
fn a_dry_run_reports_the_merge_it_would_make_and_writes_nothing() -> R {
    let root = temp("dry");
    let remote = bare(&root);
    let (a, b) = same_path_pair(&root);
    let fa = a.write("s", &[entry("e1", None, 1, "start")]);
    a.sync(&remote, Kind::Git)?;
    b.sync(&remote, Kind::Git)?;
    let fb = b.file("s");
    fs::write(
        &fa,
        format!(
            "{}{}\n",
            fs::read_to_string(&fa)?,
            entry("a2", Some("e1"), 2, "a")
        ),
    )?;
    fs::write(
        &fb,
        format!(
            "{}{}\n",
            fs::read_to_string(&fb)?,
            entry("b2", Some("e1"), 3, "b")
        ),
    )?;
    a.sync(&remote, Kind::Git)?;
    let before = fs::read(&fb)?;
    let dry = b.sync_with(&Options {
        dry_run: true,
        ..b.options(&remote, Kind::Git)
    })?;
    assert!(dry.dry_run);
    assert_eq!(dry.count(Action::Merged), 1);
    assert_eq!(fs::read(&fb)?, before, "the dry run left b's file alone");
    let real = b.sync(&remote, Kind::Git)?;
    assert_eq!(
        real.count(Action::Merged),
        1,
        "the dry run recorded nothing either"
    );
    Ok(())
}

#[test]
fn a_conflict_copy_a_file_sync_tool_left_in_the_shared_folder_is_merged_on_both_sides_and_removed(
) -> R {
    let root = temp("foldercopy");
    let shared = root.join("Sync");
    fs::create_dir_all(&shared)?;
    let shared_s = shared.to_string_lossy().into_owned();
    let (a, _) = same_path_pair(&root);
    let f = a.write("s", &[entry("e1", None, 1, "start")]);
    a.sync(&shared_s, Kind::Folder)?;
    let name = f.file_name().unwrap().to_string_lossy().into_owned();
    let stem = name.trim_end_matches(".jsonl");
    let copy = shared
        .join("sessions")
        .join(format!("{stem}.sync-conflict-20261203-123456-ABCDEF.jsonl"));
    let text = format!(
        "{}\n{}\n{}\n",
        header("s", &a.project),
        entry("e1", None, 1, "start"),
        entry("o2", Some("e1"), 2, "the other machine's turn")
    );
    fs::write(&copy, text)?;
    let r = a.sync(&shared_s, Kind::Folder)?;
    assert_eq!(r.synced.len(), 1, "{:?}", r.synced);
    assert_eq!(r.synced[0].copies_removed, vec![copy.clone()]);
    assert!(!copy.exists());
    for file in [f.clone(), shared.join("sessions").join(&name)] {
        let mut got = ids(&fs::read_to_string(&file)?);
        got.sort();
        assert_eq!(got, ["e1", "o2"], "{}", file.display());
    }
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_push_the_server_refuses_fails_with_its_message_and_the_next_sync_pushes() -> R {
    use std::os::unix::fs::PermissionsExt;
    let root = temp("refused");
    let remote = bare(&root);
    let hook = Path::new(&remote).join("hooks/pre-receive");
    fs::write(&hook, "#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n")?;
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755))?;
    let (a, _) = same_path_pair(&root);
    let f = a.write("s", &[entry("e1", None, 1, "x")]);
    let before = fs::read(&f)?;
    let e = a.sync(&remote, Kind::Git).unwrap_err();
    assert_eq!(e.code, ErrorCode::SyncGitFailed);
    assert!(e.message.contains("no pushes today"), "{}", e.message);
    assert_eq!(fs::read(&f)?, before);
    fs::remove_file(&hook)?;
    let r = a.sync(&remote, Kind::Git)?;
    assert_eq!(r.rounds, 1);
    // The refused run committed the session in the sync's work tree and recorded it; the next
    // run has nothing new to commit but still pushes that commit.
    let name = f.file_name().unwrap().to_string_lossy().into_owned();
    let shown = Command::new("git")
        .args([
            "--git-dir",
            &remote,
            "show",
            &format!("main:sessions/{name}"),
        ])
        .output()?;
    assert!(
        shown.status.success(),
        "the session is on the remote's main"
    );
    assert_eq!(shown.stdout, before);
    Ok(())
}

#[test]
fn a_forks_parent_session_path_is_mapped_by_the_sync_to_the_parents_file_on_the_other_machine() -> R
{
    let root = temp("parent");
    let remote = bare(&root);
    let a = machine(&root, "a");
    let b = machine(&root, "b");
    // One line maps both the projects and the agent dirs of a onto b's.
    b.map(&format!(
        "{} = {}\n",
        root.join("a").display(),
        root.join("b").display()
    ));
    a.write("p", &[entry("p1", None, 1, "the parent")]);
    let fork = a.file("f");
    let header = header("f", &a.project).replace(
        '}',
        &format!(",\"parentSession\":\"{}\"}}", a.file("p").display()),
    );
    fs::write(
        &fork,
        format!("{header}\n{}\n", entry("p1", None, 1, "the parent")),
    )?;
    a.sync(&remote, Kind::Git)?;
    b.sync(&remote, Kind::Git)?;
    let on_b = fs::read_to_string(b.file("f"))?;
    let want = format!("\"parentSession\":\"{}\"", b.file("p").display());
    assert!(on_b.lines().next().unwrap().contains(&want), "{on_b}");
    assert!(b.file("p").exists(), "it names the parent's file on b");
    let quiet = b.sync(&remote, Kind::Git)?;
    assert!(
        quiet.synced.is_empty(),
        "the mapping goes both ways: {:?}",
        quiet.synced
    );
    Ok(())
}

#[test]
fn a_sync_on_another_branch_leaves_main_alone_and_a_bad_branch_name_is_refused() -> R {
    let root = temp("branch");
    let remote = bare(&root);
    let (a, b) = same_path_pair(&root);
    a.write("s", &[entry("e1", None, 1, "on a branch")]);
    let on = |m: &Machine, branch: &str| Options {
        branch: Some(branch.to_owned()),
        ..m.options(&remote, Kind::Git)
    };
    let ra = a.sync_with(&on(&a, "pi/sessions"))?;
    assert_eq!(ra.branch.as_deref(), Some("pi/sessions"));
    assert!(git_in(&remote, &["rev-parse", "--verify", "refs/heads/main"]).is_none());
    assert!(git_in(
        &remote,
        &["rev-parse", "--verify", "refs/heads/pi/sessions"]
    )
    .is_some());
    assert_eq!(b.sync(&remote, Kind::Git)?.count(Action::Pulled), 0);
    assert_eq!(
        b.sync_with(&on(&b, "pi/sessions"))?.count(Action::Pulled),
        1
    );
    let e = a.sync_with(&on(&a, "no..good")).unwrap_err();
    assert_eq!(e.code, pi_session_core::ErrorCode::InvalidArgument);
    Ok(())
}

/// Stock pi opens the path for each append. A pi that opened a session's file just before the
/// sync renamed the merged file over it, and writes its line only later in the round, while the
/// sync is busy with the next session, writes into the replaced file: the line reaches the new
/// file and the remote, and the state records what both sides then hold (the next sync of either
/// machine has nothing to do). Both sessions only gain lines here, which are written by a rename
/// too, never appended in place (a kill inside an append would leave part of a line).
#[test]
fn a_line_written_into_the_replaced_file_later_in_the_round_reaches_both_sides() -> R {
    use std::cell::RefCell;
    use std::io::Write;
    use std::rc::Rc;

    let root = temp("late-writer");
    let remote = bare(&root);
    let (a, b) = same_path_pair(&root);
    for id in ["s1", "s2"] {
        a.write(id, &[entry(&format!("{id}-e1"), None, 1, "start")]);
    }
    a.sync(&remote, Kind::Git)?;
    b.sync(&remote, Kind::Git)?;
    for id in ["s1", "s2"] {
        b.append(
            id,
            &entry(&format!("{id}-b2"), Some(&format!("{id}-e1")), 2, "on b"),
        );
    }
    b.sync(&remote, Kind::Git)?;

    let (s1, s2) = (a.file("s1"), a.file("s2"));
    let late = format!("{}\n", entry("s1-late", Some("s1-b2"), 3, "written late"));
    let held = Rc::new(RefCell::new(None));
    let renamed = Rc::new(RefCell::new(Vec::new()));
    let (h, r, line) = (held.clone(), renamed.clone(), late.clone());
    let guard = fault::set_hook(move |p, target| {
        if p != Point::BeforeRename {
            return Ok(());
        }
        r.borrow_mut().push(target.to_path_buf());
        if target == s1 {
            let f = fs::OpenOptions::new().append(true).open(target).unwrap();
            *h.borrow_mut() = Some(f);
        } else if target == s2 {
            let f: Option<fs::File> = h.borrow_mut().take();
            f.unwrap().write_all(line.as_bytes()).unwrap();
        }
        Ok(())
    });
    let ra = a.sync(&remote, Kind::Git)?;
    drop(guard);
    assert_eq!(renamed.borrow()[..2], [a.file("s1"), a.file("s2")]);
    assert!(held.borrow().is_none(), "the late line was written");
    let s1_report = ra.synced.iter().find(|s| s.id == "s1").unwrap();
    assert_eq!(
        (s1_report.action, s1_report.tail),
        (Action::Merged, late.len() as u64)
    );
    let text = fs::read_to_string(a.file("s1"))?;
    assert_eq!(ids(&text), ["s1-e1", "s1-b2", "s1-late"]);
    assert!(text.ends_with(&late));

    b.sync(&remote, Kind::Git)?;
    assert_eq!(fs::read(a.file("s1"))?, fs::read(b.file("s1"))?);
    for m in [&a, &b] {
        let quiet = m.sync(&remote, Kind::Git)?;
        assert!(quiet.synced.is_empty(), "{:?}", quiet.synced);
        assert_eq!((quiet.unchanged, quiet.problems.len()), (2, 0));
    }
    Ok(())
}

/// A session whose remote write fails after its local file was replaced: a pi that opened the
/// local file just before the replace and writes its line while the remote write is under way
/// writes into the replaced file. The sync watches that file to the end before it reports the
/// session's problem, so the line is in the new local file (and the next sync sends it on).
#[test]
fn a_line_written_into_the_replaced_file_while_the_remote_write_fails_is_carried_over() -> R {
    use std::cell::RefCell;
    use std::io::Write;
    use std::rc::Rc;

    let root = temp("late-writer-remote-fails");
    let remote = bare(&root);
    let (a, b) = same_path_pair(&root);
    a.write("s1", &[entry("e1", None, 1, "start")]);
    a.sync(&remote, Kind::Git)?;
    b.sync(&remote, Kind::Git)?;
    b.append("s1", &entry("b2", Some("e1"), 2, "on b"));
    b.sync(&remote, Kind::Git)?;
    // Both sides changed: the local file and the remote one are both written.
    a.append("s1", &entry("a2", Some("e1"), 3, "on a"));
    let s1 = a.file("s1");
    let late = format!("{}\n", entry("a3", Some("a2"), 4, "written late"));
    let held = Rc::new(RefCell::new(None));
    let (h, line, local) = (held.clone(), late.clone(), s1.clone());
    let guard = fault::set_hook(move |p, target| {
        if p != Point::BeforeRename || target.file_name() != local.file_name() {
            return Ok(());
        }
        if target == local {
            *h.borrow_mut() = Some(fs::OpenOptions::new().append(true).open(target).unwrap());
            return Ok(());
        }
        // The remote write: the late line goes into the replaced local file, then it fails.
        let f: Option<fs::File> = h.borrow_mut().take();
        f.unwrap().write_all(line.as_bytes()).unwrap();
        Err(pi_session_core::Error::internal("the remote disk is full"))
    });
    let ra = a.sync(&remote, Kind::Git);
    drop(guard);
    assert!(held.borrow().is_none(), "the late line was written");
    let problems = ra.map(|r| r.problems).unwrap_or_default();
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("the remote disk is full")),
        "{problems:?}"
    );
    let text = fs::read_to_string(&s1)?;
    assert!(text.ends_with(&late), "{text}");
    assert_eq!(ids(&text).iter().filter(|i| *i == "a3").count(), 1);
    // The next sync sends it on.
    a.sync(&remote, Kind::Git)?;
    b.sync(&remote, Kind::Git)?;
    assert!(ids(&fs::read_to_string(b.file("s1"))?).contains(&"a3".to_string()));
    Ok(())
}
