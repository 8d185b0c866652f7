//! File modes (Unix): what the tool and the store create beyond the reference's own files is
//! private (0600 files, 0700 directories): the listing cache and its directory, sync's state and
//! work tree, the acknowledgement store, backups, exports and redacted copies. Session files keep
//! the reference's modes unless `PI_SESSION_PRIVATE` asks for private ones.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

mod common;
use common::*;
#[path = "../../pi-session-core/tests/secrets/fakes.rs"]
mod fakes;

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Every file and directory under `dir`, with its mode.
fn walk(dir: &Path, out: &mut Vec<(String, u32)>) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        out.push((p.display().to_string(), mode(&p)));
        if p.is_dir() {
            walk(&p, out);
        }
    }
}

fn session_with_key(w: &World) -> std::path::PathBuf {
    let key = fakes::all_kinds(&mut fakes::Rng::new(9)).remove(0).text;
    let line = fakes::placements(&key)[0].1.clone();
    let body = format!(
        "{}\n{line}\n",
        fakes::header("s-1").replace("\"/w\"", &format!("\"{FIXTURE_CWD}\""))
    );
    w.write(FIXTURE_CWD, "s-1.jsonl", &body)
}

#[test]
fn the_listing_cache_and_its_directory_are_private() {
    let w = World::new("modes-cache");
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    assert_eq!(w.run(&["list"]).code, 0);
    let dir = w.agent.join(".pi-session-native");
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("list-cache")), 0o600);
}

#[test]
fn an_older_wide_cache_directory_is_narrowed_when_the_cache_is_written() {
    let w = World::new("modes-narrow");
    let dir = w.agent.join(".pi-session-native");
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    assert_eq!(w.run(&["list"]).code, 0);
    assert_eq!(mode(&dir), 0o700);
}

#[test]
fn the_ack_store_backups_exports_and_redacted_copies_are_private() {
    let w = World::new("modes-ours");
    let p = session_with_key(&w);
    let out = w.root.join("x.md");
    assert_eq!(
        w.run(&["export", "s-1", "--out", out.to_str().unwrap()])
            .code,
        0
    );
    let copy = w.root.join("copy.jsonl");
    assert_eq!(
        w.run(&["redact", "s-1", "--out", copy.to_str().unwrap()])
            .code,
        0
    );
    assert_eq!(w.run(&["secrets", "--ack-all"]).code, 0);
    let session_mode = mode(&p);
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(w.run(&["secrets", "--ack", &"0".repeat(16)]).code, 0);
    let store = w.agent.join(".pi-session-native/secrets-acknowledged");
    let e = w.run(&["redact", "s-1", "--in-place"]);
    assert_eq!(e.code, 0, "{}", e.err);
    assert_eq!(mode(&out), 0o600);
    assert_eq!(mode(&copy), 0o600);
    assert_eq!(mode(&store), 0o600);
    assert_eq!(mode(store.parent().unwrap()), 0o700);
    // Nothing to redact any more (acknowledged): no backup; redact a fresh one.
    let q = w.write(
        FIXTURE_CWD,
        "s-2.jsonl",
        &fs::read_to_string(&p).unwrap().replace("s-1", "s-2"),
    );
    fs::remove_file(&store).unwrap();
    assert_eq!(w.run(&["redact", "s-2", "--in-place"]).code, 0);
    let bak = std::path::PathBuf::from(format!("{}.bak", q.display()));
    assert_eq!(mode(&bak), 0o600);
    assert_eq!(mode(&q), session_mode, "the session keeps the mode it had");
}

#[test]
fn sync_state_and_its_work_tree_are_private() {
    let w = World::new("modes-sync");
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    let remote = temp_dir("modes-remote").join("r.git");
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&remote)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let o = w.run(&["sync", remote.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}{}", o.out, o.err);
    let sync = w.agent.join("sync");
    assert_eq!(mode(&sync), 0o700);
    let mut all = Vec::new();
    walk(&sync, &mut all);
    assert!(all.iter().any(|(p, _)| p.ends_with("state.tsv")));
    assert!(all.iter().any(|(p, _)| p.ends_with("a.jsonl")), "{all:?}");
    for (p, m) in &all {
        // Nobody else may read anything (git's own files keep their owner bits: read-only
        // objects 0400, sample hooks 0700); our directories and files are exactly 0700/0600.
        assert_eq!(m & 0o077, 0, "{p}: {m:o}");
        if Path::new(p).is_dir() {
            assert_eq!(*m, 0o700, "{p}");
        } else if p.ends_with("state.tsv") || p.ends_with("a.jsonl") {
            assert_eq!(*m, 0o600, "{p}");
        }
    }
}

#[test]
fn session_files_keep_the_reference_modes_unless_private_is_asked_for() {
    let w = World::new("modes-session");
    let p = w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
    // A merge in place rewrites the session: the mode it had stays.
    let b = w.add(FIXTURE_CWD, "v3-conversation.jsonl", "b.jsonl");
    let o = w.run(&[
        "merge",
        p.to_str().unwrap(),
        b.to_str().unwrap(),
        "--in-place",
    ]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(mode(&p), 0o644);

    for (private, file_mode, dir_mode) in [(true, 0o600, 0o700), (false, 0o644, 0o755)] {
        let dir = w.root.join(format!("sessions-{private}"));
        let config = pi_session_core::Config {
            private_files: private,
            ..Default::default()
        };
        let mut s = pi_session_core::Session::with_config(
            "/w".into(),
            dir.to_string_lossy().into_owned(),
            true,
            config,
        )
        .unwrap();
        s.new_session(None, None).unwrap();
        s.flush().unwrap();
        let file = s.session_file().unwrap().to_path_buf();
        let umask_default = mode(&file) == 0o644 || private;
        assert!(umask_default, "this test expects umask 022");
        assert_eq!(
            (mode(&file), mode(&dir)),
            (file_mode, dir_mode),
            "private={private}"
        );
    }
}
