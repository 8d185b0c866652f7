//! `sync`: two worlds (machines) through a bare git repository: text and `--json` reports, the
//! dry run that changes nothing, and a remote that is no git repository.

mod common;
use common::*;

const ENTRY: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#;

fn header(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{FIXTURE_CWD}"}}"#
    )
}

fn bare(name: &str) -> String {
    let d = temp_dir(name).join("remote.git");
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&d)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    d.to_string_lossy().into_owned()
}

#[test]
fn a_session_pushed_by_one_machine_is_pulled_by_the_other_and_reported_as_json() {
    let remote = bare("sync-cli-remote");
    let a = World::new("sync-cli-a");
    let b = World::new("sync-cli-b");
    a.write(
        FIXTURE_CWD,
        "one.jsonl",
        &format!("{}\n{ENTRY}\n", header("s-1")),
    );
    // b knows the project (its session dir exists), so the path needs no mapping.
    std::fs::create_dir_all(b.project_dir(FIXTURE_CWD)).unwrap();
    let o = a.run(&["sync", &remote]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.contains("1 pushed, 0 pulled"), "{}", o.out);

    let dry = b.run(&["sync", &remote, "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.err);
    assert!(
        dry.out.contains("Would sync") && dry.out.contains("1 pulled"),
        "{}",
        dry.out
    );
    assert!(!b.project_dir(FIXTURE_CWD).join("one.jsonl").exists());

    let o = b.run(&["sync", &remote, "--json"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let v = json(&o.out);
    assert_eq!(s(v.get("transport")).as_deref(), Some("git"));
    assert_eq!(n(v.get("pulled")), Some(1.0));
    let synced = arr(v.get("synced").unwrap());
    assert_eq!(s(synced[0].get("action")).as_deref(), Some("pull"));
    assert_eq!(
        std::fs::read_to_string(b.project_dir(FIXTURE_CWD).join("one.jsonl")).unwrap(),
        format!("{}\n{ENTRY}\n", header("s-1"))
    );
}

#[test]
fn a_folder_that_is_no_git_repository_fails_with_its_code() {
    let a = World::new("sync-cli-notgit");
    let plain = temp_dir("sync-cli-plain");
    let o = a.run(&["sync", &plain.to_string_lossy()]);
    assert_eq!(o.code, 1);
    assert!(o.err.contains("SYNC_REMOTE_NOT_GIT"), "{}", o.err);
    assert!(
        !a.agent.join("sync").exists(),
        "nothing made for a bad remote"
    );
}

#[test]
fn progress_is_drawn_on_stderr_only_when_it_is_a_terminal() {
    let remote = bare("sync-cli-progress-remote");
    let w = World::new("sync-cli-progress");
    for i in 0..120 {
        w.write(
            FIXTURE_CWD,
            &format!("s{i:03}.jsonl"),
            &format!("{}\n{ENTRY}\n", header(&format!("s-{i:03}"))),
        );
    }
    let mut env = w.env();
    env.is_tty_err = true;
    let o = w.run_with(&env, &["sync", &remote, "--json"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.err.contains("Syncing"), "{:?}", o.err);
    assert!(!o.out.contains("Syncing"));
    assert_eq!(n(json(&o.out).get("pushed")), Some(120.0));
    let quiet = w.run(&["sync", &remote]);
    assert_eq!(quiet.code, 0, "{}", quiet.err);
    assert!(quiet.err.is_empty(), "{:?}", quiet.err);
    assert!(quiet.out.contains("120 unchanged"), "{}", quiet.out);
}

/// Two machines holding `one.jsonl` (session s-1) and `two.jsonl` (s-2) after a sync of each.
fn two_synced(name: &str) -> (String, World, World) {
    let remote = bare(&format!("{name}-remote"));
    let a = World::new(&format!("{name}-a"));
    let b = World::new(&format!("{name}-b"));
    for (file, id) in [("one.jsonl", "s-1"), ("two.jsonl", "s-2")] {
        a.write(FIXTURE_CWD, file, &format!("{}\n{ENTRY}\n", header(id)));
    }
    std::fs::create_dir_all(b.project_dir(FIXTURE_CWD)).unwrap();
    for w in [&a, &b] {
        let o = w.run(&["sync", &remote]);
        assert_eq!(o.code, 0, "{}", o.err);
    }
    (remote, a, b)
}

#[cfg(unix)]
#[test]
fn a_session_removed_with_rm_is_deleted_by_the_other_machines_sync_and_named_in_the_report() {
    use std::os::unix::fs::PermissionsExt;
    let (remote, a, b) = two_synced("sync-cli-rm");
    let one_a = a.project_dir(FIXTURE_CWD).join("one.jsonl");
    let one_b = b.project_dir(FIXTURE_CWD).join("one.jsonl");
    let two_b = b.project_dir(FIXTURE_CWD).join("two.jsonl");
    let kept = std::fs::read(&two_b).unwrap();
    let o = a.run(&["rm", &one_a.to_string_lossy(), "--yes"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let o = a.run(&["sync", &remote, "--json"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let deleted = arr(json(&o.out).get("deleted").unwrap()).clone();
    assert_eq!(deleted.len(), 1);
    assert_eq!(s(deleted[0].get("id")).as_deref(), Some("s-1"));
    assert_eq!(s(deleted[0].get("from")).as_deref(), Some("remote"));
    assert_eq!(s(deleted[0].get("how")).as_deref(), Some("removed"));

    let dry = b.run(&["sync", &remote, "--dry-run"]);
    assert!(
        dry.out.contains("delete") && dry.out.contains("1 deleted"),
        "{}",
        dry.out
    );
    assert!(one_b.exists(), "the dry run deleted nothing");

    // b has a trash command: the file goes there.
    let bin = b.root.join("bin");
    let can = b.root.join("can");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&can).unwrap();
    let script = bin.join("trash");
    let body = format!("#!/bin/sh\nmv \"$@\" '{}'/\n", can.display());
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut env = b.env();
    env.path_var = Some(bin.into_os_string());
    let o = b.run_with(&env, &["sync", &remote]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(
        o.out
            .contains("deleted on the remote: moved to the trash here"),
        "{}",
        o.out
    );
    assert!(!one_b.exists() && can.join("one.jsonl").exists());
    assert_eq!(std::fs::read(&two_b).unwrap(), kept, "nothing else touched");
}

#[test]
fn a_purge_through_the_cli_reports_the_file_it_took_out_of_the_history_and_a_bad_branch_is_usage() {
    let (remote, a, _b) = two_synced("sync-cli-purge");
    let one = a.project_dir(FIXTURE_CWD).join("one.jsonl");
    std::fs::remove_file(&one).unwrap();
    let o = a.run(&["sync", &remote, "--purge", "one.jsonl", "--json"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let v = json(&o.out);
    let purged = arr(v.get("purged").unwrap());
    assert_eq!(s(purged[0].get("id")).as_deref(), Some("s-1"));
    let log = std::process::Command::new("git")
        .args([
            "--git-dir",
            &remote,
            "log",
            "--all",
            "--",
            "sessions/one.jsonl",
        ])
        .output()
        .unwrap();
    assert!(log.status.success() && log.stdout.is_empty());
    let bad = a.run(&["sync", &remote, "--branch", "two..dots"]);
    assert_eq!(bad.code, 2, "{}", bad.err);
    assert!(bad.err.contains("INVALID_ARGUMENT"), "{}", bad.err);
    let folder = a.run(&[
        "sync",
        &a.root.to_string_lossy(),
        "--folder",
        "--purge",
        "x",
    ]);
    assert_eq!(folder.code, 2, "{}", folder.err);
}
