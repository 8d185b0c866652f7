//! `sync` and secrets: a session holding an unacknowledged credential is held back (and named
//! once), refused, or sent with a warning, as the policy says; an acknowledged or redacted one
//! goes; a clean one is never held. A session held back is not taken for deleted on either side
//! (both transports).

use pi_session_core::secrets::redact::{self, Target};
use pi_session_core::secrets::{self, Acks};
use pi_session_core::sync::{sync, Action, Kind, Options, Place, Report, SecretPolicy};

// The machines of the sync scenarios.
#[path = "sync/machines.rs"]
mod machines;
use machines::*;
#[path = "secrets/fakes.rs"]
mod fakes;

fn key() -> String {
    fakes::all_kinds(&mut fakes::Rng::new(5)).remove(0).text
}

fn run(m: &Machine, remote: &str, policy: SecretPolicy) -> Result<Report, pi_session_core::Error> {
    sync(
        &Options {
            secrets: policy,
            ..m.options(remote, Kind::Git)
        },
        &mut |_, _| {},
    )
}

/// The files on the remote's branch (none before the first push).
fn remote_files(remote: &str) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["--git-dir", remote, "ls-tree", "-r", "--name-only", "main"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("sessions/"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_session_with_a_secret_is_held_back_and_named_once_then_goes_once_acknowledged() -> R {
    let root = temp("secrets-skip");
    let remote = bare(&root);
    let a = machine(&root, "a");
    a.write("clean", &[entry("c1", None, 1, "hello")]);
    let leaky = a.write("leaky", &[entry("l1", None, 1, &key())]);
    let r = run(&a, &remote, SecretPolicy::Skip)?;
    assert_eq!(r.count(Action::Pushed), 1, "{:?}", r.synced);
    assert_eq!(r.secrets.len(), 1);
    let f = &r.secrets[0];
    assert_eq!((f.id.as_str(), f.sent, f.first), ("leaky", false, true));
    assert_eq!(f.kinds, [secrets::Kind::Anthropic]);
    assert_eq!(remote_files(&remote).len(), 1);

    let again = run(&a, &remote, SecretPolicy::Skip)?;
    assert_eq!(again.secrets.len(), 1);
    assert!(!again.secrets[0].first, "reported once: now only counted");
    assert!(again.synced.is_empty());

    let scan = secrets::scan_file(&leaky, &Acks::default())?;
    let fps: Vec<_> = scan
        .findings
        .iter()
        .map(|f| (f.fingerprint.clone(), Some(f.kind)))
        .collect();
    Acks::add(&a.agent, &fps, "2026-12-03T10:00:00.000Z")?;
    let acked = run(&a, &remote, SecretPolicy::Skip)?;
    assert!(acked.secrets.is_empty());
    assert_eq!(acked.count(Action::Pushed), 1);
    assert_eq!(remote_files(&remote).len(), 2);
    Ok(())
}

#[test]
fn a_redacted_session_goes_where_the_original_was_held_back() -> R {
    let root = temp("secrets-redacted");
    let remote = bare(&root);
    let a = machine(&root, "a");
    let leaky = a.write("leaky", &[entry("l1", None, 1, &key())]);
    assert_eq!(run(&a, &remote, SecretPolicy::Skip)?.secrets.len(), 1);
    redact::redact(&leaky, &Target::InPlace { backup: false }, &Acks::default())?;
    let r = run(&a, &remote, SecretPolicy::Skip)?;
    assert!(r.secrets.is_empty());
    assert_eq!(r.count(Action::Pushed), 1);
    Ok(())
}

#[test]
fn refusing_sends_nothing_when_any_session_holds_a_secret() -> R {
    let root = temp("secrets-refuse");
    let remote = bare(&root);
    let a = machine(&root, "a");
    a.write("clean", &[entry("c1", None, 1, "hello")]);
    a.write("leaky", &[entry("l1", None, 1, &key())]);
    let e = run(&a, &remote, SecretPolicy::Refuse).unwrap_err();
    assert_eq!(e.js_code(), "SYNC_SECRETS_FOUND");
    assert!(e.message.contains("leaky"), "{}", e.message);
    assert!(
        remote_files(&remote).is_empty(),
        "not even the clean session went"
    );
    Ok(())
}

#[test]
fn a_local_bare_repository_gets_the_session_with_a_warning_by_default() -> R {
    let root = temp("secrets-auto-local");
    let remote = bare(&root);
    let a = machine(&root, "a");
    a.write("leaky", &[entry("l1", None, 1, &key())]);
    let r = run(&a, &remote, SecretPolicy::Auto)?;
    assert_eq!(r.secrets_policy, SecretPolicy::Warn);
    assert_eq!(r.secrets.len(), 1);
    assert!(r.secrets[0].sent && r.secrets[0].first);
    assert_eq!(r.count(Action::Pushed), 1);
    Ok(())
}

/// Whether the remote's branch tip (git) or folder holds `file`'s name under `sessions/`.
fn on_remote(remote: &str, kind: Kind, file: &std::path::Path) -> bool {
    let name = format!("sessions/{}", file.file_name().unwrap().to_string_lossy());
    match kind {
        Kind::Git => git_in(remote, &["cat-file", "-e", &format!("main:{name}")]).is_some(),
        Kind::Folder => std::path::Path::new(remote).join(name).exists(),
    }
}

fn with(m: &Machine, remote: &str, kind: Kind, policy: SecretPolicy) -> Result<Report, Error> {
    m.sync_with(&Options {
        secrets: policy,
        ..m.options(remote, kind)
    })
}

type Error = pi_session_core::Error;

fn held_back_copy_outlives_a_deletion_on_the_remote(kind: Kind, name: &str) -> R {
    let root = temp(name);
    let remote = remote_for(&root, kind);
    let (a, b) = same_path_pair(&root);
    a.write("s", &[entry("s1", None, 1, "hello")]);
    with(&a, &remote, kind, SecretPolicy::Skip)?;
    with(&b, &remote, kind, SecretPolicy::Skip)?;
    std::fs::remove_file(b.file("s"))?;
    assert_eq!(
        with(&b, &remote, kind, SecretPolicy::Skip)?.deleted.len(),
        1
    );
    assert!(!on_remote(&remote, kind, &a.file("s")));

    // A goes on with a credential in it: held back, and the remote's deletion of the synced
    // copy does not take A's newer one, this run or the next.
    a.append("s", &entry("s2", Some("s1"), 2, &key()));
    let want = std::fs::read(a.file("s"))?;
    for run in 0..2 {
        let r = with(&a, &remote, kind, SecretPolicy::Skip)?;
        assert_eq!(r.secrets.len(), 1, "run {run}: {:?}", r.secrets);
        assert!(!r.secrets[0].sent);
        assert!(r.deleted.is_empty(), "run {run}: {:?}", r.deleted);
        assert!(r.synced.is_empty(), "run {run}: {:?}", r.synced);
        assert_eq!(std::fs::read(a.file("s"))?, want, "run {run}");
        assert!(!on_remote(&remote, kind, &a.file("s")), "run {run}");
    }

    // Once it may go, it is new work over an old deletion: back on the remote, then on B.
    let sent = with(&a, &remote, kind, SecretPolicy::Warn)?;
    assert!(sent.secrets[0].sent);
    assert!(sent.deleted.is_empty(), "{:?}", sent.deleted);
    assert_eq!(sent.restored(), 1, "{:?}", sent.synced);
    assert_eq!(sent.synced[0].restored, Some(Place::Remote));
    assert!(on_remote(&remote, kind, &a.file("s")));
    let rb = with(&b, &remote, kind, SecretPolicy::Skip)?;
    assert_eq!(rb.count(Action::Pulled), 1, "{:?}", rb.synced);
    assert_eq!(std::fs::read(b.file("s"))?, want);
    Ok(())
}

#[test]
fn a_session_held_back_is_kept_here_though_the_git_remote_deleted_its_synced_copy() -> R {
    held_back_copy_outlives_a_deletion_on_the_remote(Kind::Git, "secrets-del-git")
}

#[test]
fn a_session_held_back_is_kept_here_though_the_shared_folder_deleted_its_synced_copy() -> R {
    held_back_copy_outlives_a_deletion_on_the_remote(Kind::Folder, "secrets-del-folder")
}

fn new_held_back_session_is_never_taken_for_deleted(kind: Kind, name: &str) -> R {
    let root = temp(name);
    let remote = remote_for(&root, kind);
    let (a, b) = same_path_pair(&root);
    a.write("clean", &[entry("c1", None, 1, "hello")]);
    let leaky = a.write("leaky", &[entry("l1", None, 1, &key())]);
    let want = std::fs::read(&leaky)?;
    // Were the held-back session recorded as synced, the second run would find it gone from the
    // remote and unchanged here, and delete it.
    for run in 0..2 {
        let r = with(&a, &remote, kind, SecretPolicy::Skip)?;
        assert_eq!(r.secrets.len(), 1, "run {run}");
        assert!(r.deleted.is_empty(), "run {run}: {:?}", r.deleted);
        assert_eq!(std::fs::read(&leaky)?, want, "run {run}");
        assert!(!on_remote(&remote, kind, &leaky), "run {run}");
    }
    // B, which never had it, neither gets it nor deletes anything.
    let rb = with(&b, &remote, kind, SecretPolicy::Skip)?;
    assert!(rb.deleted.is_empty() && rb.secrets.is_empty());
    assert!(!b.file("leaky").exists());
    let sent = with(&a, &remote, kind, SecretPolicy::Warn)?;
    assert!(sent.deleted.is_empty(), "{:?}", sent.deleted);
    let pushed: Vec<_> = sent
        .synced
        .iter()
        .map(|s| (s.id.as_str(), s.action, s.restored))
        .collect();
    assert_eq!(pushed, [("leaky", Action::Pushed, None)]);
    assert!(on_remote(&remote, kind, &leaky));
    Ok(())
}

#[test]
fn a_new_session_held_back_from_a_git_remote_is_never_taken_for_one_deleted_there() -> R {
    new_held_back_session_is_never_taken_for_deleted(Kind::Git, "secrets-new-git")
}

#[test]
fn a_new_session_held_back_from_a_shared_folder_is_never_taken_for_one_deleted_there() -> R {
    new_held_back_session_is_never_taken_for_deleted(Kind::Folder, "secrets-new-folder")
}
