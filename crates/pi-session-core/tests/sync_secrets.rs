//! `sync` and secrets: a session holding an unacknowledged credential is held back (and named
//! once), refused, or sent with a warning, as the policy says; an acknowledged or redacted one
//! goes; a clean one is never held.

use pi_session_core::secrets::redact::{self, Target};
use pi_session_core::secrets::{self, Acks};
use pi_session_core::sync::{sync, Action, Kind, Options, Report, SecretPolicy};

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
