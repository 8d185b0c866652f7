//! `secrets`, `redact` and export's redaction: findings listed masked with their place, exit 1
//! until acknowledged, redaction in place (backup, lock refusal) and as a copy, Markdown and HTML
//! redacted by default, JSON only on request, and the files made private.

use std::fs;

mod common;
use common::*;
#[path = "../../pi-session-core/tests/secrets/fakes.rs"]
mod fakes;

/// A session of the fixture project whose user prompt holds `text`, and a later tool output.
fn with_secret(w: &World, name: &str, text: &str) -> std::path::PathBuf {
    let lines = fakes::placements(text);
    let user = lines[0].1.clone();
    let tool = lines[5]
        .1
        .replace(r#""parentId":null"#, r#""parentId":"e-user""#);
    let body = format!(
        "{}\n{user}\n{tool}\n",
        fakes::header(name).replace("\"/w\"", &format!("\"{FIXTURE_CWD}\""))
    );
    w.write(FIXTURE_CWD, &format!("{name}.jsonl"), &body)
}

fn anthropic(seed: u64) -> String {
    fakes::all_kinds(&mut fakes::Rng::new(seed)).remove(0).text
}

#[test]
fn secrets_lists_each_finding_masked_and_exits_1_until_acknowledged() {
    let w = World::new("secrets-list");
    let key = anthropic(1);
    with_secret(&w, "s-1", &key);
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "clean.jsonl");
    let o = w.run(&["secrets"]);
    assert_eq!(o.code, 1, "{}", o.err);
    assert!(!o.out.contains(&key), "never the secret whole: {}", o.out);
    assert!(
        o.out.contains("anthropic-api-key") && o.out.contains("user"),
        "{}",
        o.out
    );
    assert!(
        o.out.contains("tool-output") && o.out.contains("e-res"),
        "{}",
        o.out
    );
    assert!(o.out.contains("2 secrets in 1 of 2 sessions"), "{}", o.out);

    let j = w.run(&["secrets", "--json"]);
    let v = json(&j.out);
    assert_eq!(n(v.get("scanned")), Some(2.0));
    let sess = arr(v.get("sessions").unwrap());
    assert_eq!(sess.len(), 1);
    assert_eq!(s(sess[0].get("id")).as_deref(), Some("s-1"));
    let f = &arr(sess[0].get("findings").unwrap())[0];
    assert_eq!(s(f.get("entryId")).as_deref(), Some("e-user"));
    assert_eq!(n(f.get("line")), Some(2.0));
    let fp = s(f.get("fingerprint")).unwrap();

    let a = w.run(&["secrets", "--ack", &fp]);
    assert_eq!(a.code, 0, "{}", a.err);
    let store =
        fs::read_to_string(w.agent.join(".pi-session-native/secrets-acknowledged")).unwrap();
    assert!(store.contains(&fp) && !store.contains(&key));
    let clean = w.run(&["secrets"]);
    assert_eq!(clean.code, 0, "{}", clean.out);
    assert!(
        clean
            .out
            .contains("No secrets in 2 sessions (2 acknowledged, not shown)"),
        "{}",
        clean.out
    );
    let bad = w.run(&["secrets", "--ack", "not-a-fingerprint"]);
    assert_eq!(bad.code, 2);
}

#[test]
fn secrets_ack_all_acknowledges_what_it_finds() {
    let w = World::new("secrets-ackall");
    let p = with_secret(&w, "s-1", &anthropic(2));
    assert_eq!(w.run(&["secrets", p.to_str().unwrap()]).code, 1);
    let o = w.run(&["secrets", "--all", "--ack-all"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.contains("Acknowledged 1 finding"), "{}", o.out);
    assert_eq!(w.run(&["secrets", "--all"]).code, 0);
}

#[cfg(unix)]
fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn redact_in_place_replaces_only_the_secrets_and_keeps_a_backup() {
    let w = World::new("redact-inplace");
    let key = anthropic(3);
    let p = with_secret(&w, "s-1", &key);
    let before = fs::read_to_string(&p).unwrap();
    let o = w.run(&["redact", "s-1", "--in-place"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.contains("Redacted 2 secrets"), "{}", o.out);
    let after = fs::read_to_string(&p).unwrap();
    assert_eq!(after, before.replace(&key, "[REDACTED:anthropic-api-key]"));
    let bak = std::path::PathBuf::from(format!("{}.bak", p.display()));
    assert_eq!(fs::read_to_string(&bak).unwrap(), before);
    #[cfg(unix)]
    assert_eq!(mode(&bak), 0o600);
    assert_eq!(w.run(&["secrets", "s-1"]).code, 0);
    let again = w.run(&["redact", "s-1", "--in-place"]);
    assert!(again.out.contains("Nothing to redact"), "{}", again.out);
}

#[test]
fn redact_refuses_a_session_under_a_live_writer_lease() {
    let w = World::new("redact-locked");
    let p = with_secret(&w, "s-1", &anthropic(4));
    let before = fs::read(&p).unwrap();
    let mut s = pi_session_core::Session::blank("/w".into(), String::new(), true).unwrap();
    s.set_session_file(p.clone()).unwrap();
    s.set_exclusive(true).unwrap();
    let o = w.run(&["redact", p.to_str().unwrap(), "--in-place"]);
    assert_eq!(o.code, 1);
    assert!(o.err.contains("SESSION_LOCKED"), "{}", o.err);
    assert_eq!(fs::read(&p).unwrap(), before);
}

#[test]
fn redact_out_writes_a_private_copy_and_stdout_gets_one_without_a_file() {
    let w = World::new("redact-out");
    let key = anthropic(5);
    let p = with_secret(&w, "s-1", &key);
    let out = w.root.join("copy.jsonl");
    let o = w.run(&["redact", "s-1", "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let v = json(&o.out);
    assert_eq!(arr(v.get("redacted").unwrap()).len(), 2);
    assert!(!fs::read_to_string(&out).unwrap().contains(&key));
    assert!(
        fs::read_to_string(&p).unwrap().contains(&key),
        "the session is untouched"
    );
    #[cfg(unix)]
    assert_eq!(mode(&out), 0o600);
    let o = w.run(&["redact", "s-1"]);
    assert_eq!(o.out, fs::read_to_string(&out).unwrap());
}

#[test]
fn markdown_and_html_exports_are_redacted_unless_asked_not_to_and_json_only_when_asked() {
    let w = World::new("export-redact");
    let key = anthropic(6);
    with_secret(&w, "s-1", &key);
    for format in ["md", "html"] {
        let o = w.run(&["export", "s-1", "--format", format]);
        assert_eq!(o.code, 0, "{}", o.err);
        assert!(!o.out.contains(&key), "{format}");
        assert!(o.out.contains("[REDACTED:anthropic-api-key]"), "{format}");
        assert!(o.err.contains("2 secrets"), "{}", o.err);
        let raw = w.run(&["export", "s-1", "--format", format, "--no-redact"]);
        assert!(raw.out.contains(&key), "{format}");
    }
    let j = w.run(&["export", "s-1", "--format", "json"]);
    assert!(j.out.contains(&key));
    let j = w.run(&["export", "s-1", "--format", "json", "--redact"]);
    assert!(!j.out.contains(&key) && j.out.contains("[REDACTED:anthropic-api-key]"));
    let file = w.root.join("s.html");
    let o = w.run(&[
        "export",
        "s-1",
        "--format",
        "html",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{}", o.err);
    #[cfg(unix)]
    assert_eq!(mode(&file), 0o600);
}

#[test]
fn sync_names_a_held_back_session_once_then_only_counts_it() {
    let w = World::new("secrets-sync");
    let remote = temp_dir("secrets-sync-remote").join("r.git");
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&remote)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let p = with_secret(&w, "s-1", &anthropic(8));
    let r = remote.to_str().unwrap();
    let first = w.run(&["sync", r, "--skip-secrets"]);
    assert_eq!(first.code, 0, "{}", first.err);
    assert!(
        first.out.contains("held") && first.out.contains(&p.display().to_string()),
        "{}",
        first.out
    );
    assert!(
        first.out.contains("anthropic-api-key") && first.out.contains("0 pushed"),
        "{}",
        first.out
    );
    let again = w.run(&["sync", r, "--skip-secrets"]);
    assert!(
        !again.out.contains(&p.display().to_string()),
        "{}",
        again.out
    );
    assert!(
        again.out.contains("1 session(s) still held back"),
        "{}",
        again.out
    );
    let refused = w.run(&["sync", r, "--refuse-secrets", "--json"]);
    assert_eq!(refused.code, 1);
    assert!(
        refused.err.contains("SYNC_SECRETS_FOUND"),
        "{}",
        refused.err
    );
    let both = w.run(&["sync", r, "--skip-secrets", "--send-secrets"]);
    assert_eq!(both.code, 2);
    let sent = w.run(&["sync", r, "--send-secrets", "--json"]);
    let v = json(&sent.out);
    assert_eq!(s(v.get("secretsPolicy")).as_deref(), Some("warn"));
    assert_eq!(n(v.get("pushed")), Some(1.0));
}
