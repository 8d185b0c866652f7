//! Secrets in sessions: every kind is found in every place an entry holds text, through JSON
//! escapes, at the right bytes; ordinary sessions, code and prose report nothing; signature
//! fields and ids are never touched; an acknowledged finding is no longer reported; a redaction
//! changes only the secret bytes, keeps the file's mode, backs it up privately and refuses a
//! session under a live lease.

use std::fs;
use std::path::Path;

use pi_session_core::json;
use pi_session_core::secrets::redact::{self, Target};
use pi_session_core::secrets::{self, scan_bytes, Acks, Finding};

mod common;
#[path = "secrets/fakes.rs"]
mod fakes;
use fakes::*;

type R = Result<(), Box<dyn std::error::Error>>;

/// The decoded text of a raw range of JSON string content.
fn decoded(raw: &[u8]) -> String {
    let quoted = [b"\"", raw, b"\""].concat();
    match json::parse(&quoted) {
        Ok(json::Value::String(ref s)) => s.to_string_lossy(),
        _ => panic!("not string content: {}", String::from_utf8_lossy(raw)),
    }
}

fn kinds(found: &[Finding]) -> Vec<&'static str> {
    found.iter().map(|f| f.kind.name()).collect()
}

#[test]
fn every_kind_is_found_in_every_place_an_entry_holds_text() -> R {
    let mut r = Rng::new(7);
    for fake in all_kinds(&mut r) {
        for (place, line, entry) in placements(&fake.text) {
            let file = session("sess-1", &[line]);
            let found = scan_bytes(file.as_bytes());
            assert_eq!(
                found.len(),
                fake.secrets.len(),
                "{} in {place}: {found:?}",
                fake.kind
            );
            for (f, (kind, secret)) in found.iter().zip(&fake.secrets) {
                assert_eq!(f.kind.name(), *kind, "{place}");
                assert_eq!(f.place.name(), place, "{kind}");
                assert_eq!(f.line, 2, "{kind} in {place}");
                assert_eq!(f.entry_id.as_deref(), Some(entry));
                assert_eq!(
                    &decoded(&file.as_bytes()[f.range.clone()]),
                    secret,
                    "{kind} in {place}"
                );
                assert_eq!(f.fingerprint, secrets::fingerprint(secret.as_bytes()));
                assert!(!f.preview.contains(secret.as_str()), "{}", f.preview);
            }
        }
    }
    Ok(())
}

#[test]
fn a_key_inside_json_text_inside_a_tool_output_is_found_at_its_escaped_bytes() -> R {
    let mut r = Rng::new(11);
    let fakes = all_kinds(&mut r);
    for fake in &fakes {
        // The tool printed a JSON file holding the secret: escaped twice in the session line.
        let inner = format!("{{\"credentials\":{{\"value\":{}}}}}", js(&fake.text));
        let line = &placements(&inner)[5].1;
        let file = session("s", std::slice::from_ref(line));
        let found = scan_bytes(file.as_bytes());
        assert_eq!(
            kinds(&found),
            fake.secrets.iter().map(|s| s.0).collect::<Vec<_>>()
        );
        for f in &found {
            assert_eq!(f.place.name(), "tool-output");
        }
    }
    // A PEM key of a service-account JSON: its newlines are `\n` text inside the decoded string.
    let pem = fakes.iter().find(|f| f.kind == "private-key").unwrap();
    let sa = format!(
        "{{\"type\":\"service_account\",\"private_key\":{}}}",
        js(&pem.text)
    );
    let file = session("s", &[placements(&sa)[0].1.clone()]);
    assert_eq!(kinds(&scan_bytes(file.as_bytes())), ["private-key"]);
    Ok(())
}

#[test]
fn an_anchor_spelled_with_escapes_is_still_found_and_its_range_covers_them() -> R {
    let mut r = Rng::new(13);
    let token = format!("{}{}", "gh", "p_") + &r.chars(ALNUM, 36);
    // `g` as \u0067, as a writer that escapes more than JSON.stringify might put it.
    let spelled = format!("token \\u0067{} end", &token[1..]);
    let line = format!(
        r#"{{"type":"message","id":"m1","parentId":null,"message":{{"role":"user","content":"{spelled}"}}}}"#
    );
    let file = session("s", &[line]);
    let found = scan_bytes(file.as_bytes());
    assert_eq!(kinds(&found), ["github-token"]);
    let raw = &file.as_bytes()[found[0].range.clone()];
    assert!(
        raw.starts_with(b"\\u0067"),
        "{}",
        String::from_utf8_lossy(raw)
    );
    assert_eq!(decoded(raw), token);
    // `\/` in a URL.
    let pass = r.chars(ALNUM, 16);
    let line = format!(
        r#"{{"type":"message","id":"m2","parentId":null,"message":{{"role":"user","content":"redis:\/\/user:{pass}@cache.local:6379"}}}}"#
    );
    let file = session("s", &[line]);
    let found = scan_bytes(file.as_bytes());
    assert_eq!(kinds(&found), ["url-password"]);
    assert_eq!(&file.as_bytes()[found[0].range.clone()], pass.as_bytes());
    Ok(())
}

/// Text that looks technical but holds no credential.
fn ordinary_texts(r: &mut Rng) -> Vec<String> {
    let image = {
        let bytes: Vec<u8> = (0..30_000).map(|_| r.next() as u8).collect();
        let b = b64url(&bytes).replace('-', "+").replace('_', "/");
        format!("{{\"type\":\"image\",\"data\":\"{b}\",\"mimeType\":\"image/png\"}}")
    };
    vec![
        "Please fix the failing test in src/main.rs; the risk-ant-colony model is fine.".into(),
        format!("commit {} and {}", r.chars(HEX, 40), r.chars(HEX, 64)),
        "uuid 0193f0a0-7c3e-7a41-9b2c-5d1e8f00aa11 and 550e8400-e29b-41d4-a716-446655440000".into(),
        "const key = process.env.ANTHROPIC_API_KEY; // e.g. sk-ant-... or sk-proj-...".into(),
        "export OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx".into(),
        format!(
            "AWS docs: {}IOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AKIA"
        ),
        format!("{}{}", "gh", "p_") + &"x".repeat(36),
        format!("{}{}", "gh", "p_") + "0123456789abcdefghijklmnopqrstuvwxyz",
        "postgres://user:password@localhost:5432/db and mysql://root:${DB_PASSWORD}@db/app".into(),
        "https://user:<password>@example.com, amqp://guest:guest@localhost, https://github.com/a/b"
            .into(),
        "git@github.com:ana/pi.git ssh://git@host/repo https://x.com/?a=b@c:d".into(),
        "-----BEGIN PRIVATE KEY-----\n...your key here...\n-----END PRIVATE KEY-----".into(),
        "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----".into(),
        "eyJhbGciOi is how a JWT header starts; a.b.c is not a token".into(),
        format!(
            "{}.{}.{}",
            b64url(b"{\"typ\":\"x\",\"n\":1}"),
            b64url(b"{\"a\":1}"),
            r.chars(B64URL, 20)
        ),
        "npm_config_cache=/home/a/.npm npm_lifecycle_event=test xoxb-your-token-here".into(),
        format!("sha512-{}", r.chars(B64URL, 86)),
        image,
    ]
}

#[test]
fn ordinary_sessions_code_hashes_and_placeholders_report_nothing() -> R {
    let mut r = Rng::new(17);
    for text in ordinary_texts(&mut r) {
        for (place, line, _) in placements(&text) {
            let file = session("s", &[line]);
            let found = scan_bytes(file.as_bytes());
            assert!(
                found.is_empty(),
                "{place}: {found:?} in {}",
                &text[..text.len().min(80)]
            );
        }
    }
    // The demo's sessions and the repository's fixtures are ordinary sessions too.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    for e in fs::read_dir(&fixtures)?.flatten() {
        if e.path().extension().is_some_and(|x| x == "jsonl") {
            let found = scan_bytes(&fs::read(e.path())?);
            assert!(found.is_empty(), "{}: {found:?}", e.path().display());
        }
    }
    Ok(())
}

#[test]
fn ids_and_signature_fields_are_never_findings() -> R {
    let mut r = Rng::new(19);
    let token = format!("{}{}", "gh", "p_") + &r.chars(ALNUM, 36);
    let line = format!(
        r#"{{"type":"message","id":"{token}","parentId":null,"message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"ok","thinkingSignature":"{token}"}},{{"type":"text","text":"hi","textSignature":"{token}"}}]}}}}"#
    );
    assert!(scan_bytes(session("s", &[line]).as_bytes()).is_empty());
    Ok(())
}

#[test]
fn a_line_that_is_not_json_is_scanned_as_text() -> R {
    let mut r = Rng::new(23);
    let key = format!("{}{}", "np", "m_") + &r.chars(ALNUM, 36);
    let file = format!("{}\n{{\"type\":\"message\",\"torn\":\"{key}\n", header("s"));
    let found = scan_bytes(file.as_bytes());
    assert_eq!(kinds(&found), ["npm-token"]);
    assert_eq!(
        (
            found[0].line,
            found[0].place.name(),
            found[0].entry_id.clone()
        ),
        (2, "other", None)
    );
    Ok(())
}

#[test]
fn an_acknowledged_finding_is_no_longer_reported() -> R {
    let dir = common::temp_dir("secrets-ack");
    let mut r = Rng::new(29);
    let fakes = all_kinds(&mut r);
    let lines: Vec<String> = fakes[..3]
        .iter()
        .map(|f| placements(&f.text)[0].1.clone())
        .collect();
    let file = dir.join("s.jsonl");
    fs::write(&file, session("s", &lines))?;
    let first = secrets::scan_file(&file, &Acks::load(&dir)?)?;
    assert_eq!(first.findings.len(), 3);
    assert_eq!(first.session_id.as_deref(), Some("s"));
    let fp = first.findings[1].fingerprint.clone();
    Acks::add(
        &dir,
        &[(fp.clone(), Some(first.findings[1].kind))],
        "2026-01-01T00:00:00.000Z",
    )?;
    let again = secrets::scan_file(&file, &Acks::load(&dir)?)?;
    assert_eq!(again.acknowledged, 1);
    assert!(again.findings.iter().all(|f| f.fingerprint != fp));
    assert_eq!(again.findings.len(), 2);
    let store = fs::read_to_string(Acks::file_in(&dir))?;
    assert!(
        !store.contains(&fakes[1].text),
        "the store never holds the secret"
    );
    Ok(())
}

#[test]
fn a_redaction_changes_only_the_secret_bytes() -> R {
    let mut r = Rng::new(31);
    let fakes = all_kinds(&mut r);
    let mut lines = Vec::new();
    for f in &fakes {
        for (_, l, _) in placements(&f.text) {
            lines.push(l);
        }
    }
    let file = session("s", &lines);
    let found = scan_bytes(file.as_bytes());
    let out = redact::redact_bytes(file.as_bytes(), &found);
    // Outside the ranges, byte for byte the same, in order.
    let mut at = 0;
    let mut o = 0;
    for f in &found {
        let keep = f.range.start - at;
        assert_eq!(&out[o..o + keep], &file.as_bytes()[at..f.range.start]);
        o += keep;
        let rep = redact::replacement(f.kind);
        assert_eq!(&out[o..o + rep.len()], rep.as_bytes());
        o += rep.len();
        at = f.range.end;
    }
    assert_eq!(&out[o..], &file.as_bytes()[at..]);
    // Every line still parses, to the same keys, and nothing is found any more.
    let text = String::from_utf8(out.clone())?;
    for (a, b) in file.lines().zip(text.lines()) {
        let (va, vb) = (json::parse(a.as_bytes())?, json::parse(b.as_bytes())?);
        let keys = |v: &json::Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
        assert_eq!(keys(&va), keys(&vb));
        assert_eq!(
            va.get("id").map(json::to_json),
            vb.get("id").map(json::to_json)
        );
    }
    assert!(scan_bytes(&out).is_empty());
    Ok(())
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn redacting_in_place_keeps_a_private_backup_and_the_file_mode() -> R {
    let dir = common::temp_dir("secrets-inplace");
    let mut r = Rng::new(37);
    let fake = &all_kinds(&mut r)[0];
    let file = dir.join("s.jsonl");
    let original = session("s", &[placements(&fake.text)[0].1.clone()]);
    fs::write(&file, &original)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&file, fs::Permissions::from_mode(0o640))?;
    }
    let done = redact::redact(&file, &Target::InPlace { backup: true }, &Acks::default())?;
    assert_eq!(done.findings.len(), 1);
    let bak = done.backup.clone().expect("a backup");
    assert_eq!(fs::read_to_string(&bak)?, original);
    let now = fs::read_to_string(&file)?;
    assert!(now.contains("[REDACTED:anthropic-api-key]") && !now.contains(&fake.text));
    #[cfg(unix)]
    assert_eq!((mode(&file), mode(&bak)), (0o640, 0o600));
    // Nothing left: a second run writes nothing.
    let again = redact::redact(&file, &Target::InPlace { backup: true }, &Acks::default())?;
    assert!(again.written.is_none() && again.backup.is_none());
    Ok(())
}

#[test]
fn a_redacted_copy_is_a_new_private_file_and_the_session_is_untouched() -> R {
    let dir = common::temp_dir("secrets-out");
    let mut r = Rng::new(41);
    let fake = &all_kinds(&mut r)[3];
    let file = dir.join("s.jsonl");
    let original = session("s", &[placements(&fake.text)[2].1.clone()]);
    fs::write(&file, &original)?;
    let out = dir.join("copy.jsonl");
    redact::redact(&file, &Target::Out(out.clone()), &Acks::default())?;
    assert_eq!(fs::read_to_string(&file)?, original);
    assert!(fs::read_to_string(&out)?.contains("[REDACTED:openrouter-api-key]"));
    #[cfg(unix)]
    assert_eq!(mode(&out), 0o600);
    let e = redact::redact(&file, &Target::Out(out), &Acks::default()).unwrap_err();
    assert_eq!(e.js_code(), "EEXIST");
    Ok(())
}

#[test]
fn a_session_under_a_live_writer_lease_is_not_redacted() -> R {
    let dir = common::temp_dir("secrets-locked");
    let mut r = Rng::new(43);
    let fake = &all_kinds(&mut r)[0];
    let file = dir.join("s.jsonl");
    let original = session("s", &[placements(&fake.text)[0].1.clone()]);
    fs::write(&file, &original)?;
    let mut holder = common::open(&dir, &file)?;
    holder.set_exclusive(true)?;
    let e = redact::redact(&file, &Target::InPlace { backup: true }, &Acks::default()).unwrap_err();
    assert_eq!(e.js_code(), "SESSION_LOCKED");
    assert_eq!(fs::read_to_string(&file)?, original);
    drop(holder);
    Ok(())
}

#[test]
fn damaged_and_escaped_text_never_panics_and_ranges_stay_in_the_file() -> R {
    let mut r = Rng::new(47);
    let fakes = all_kinds(&mut r);
    let mut lines = Vec::new();
    for f in &fakes {
        lines.push(placements(&f.text)[5].1.clone());
    }
    let base = session("s", &lines).into_bytes();
    let pieces: [&[u8]; 10] = [
        b"\\",
        b"\"",
        b"\\u00",
        b"\\u0041",
        b"\\ud83d",
        b"\n",
        b"://a:b@",
        b"eyJ",
        b".",
        b"-----BEGIN ",
    ];
    for round in 0..3000 {
        let mut b = base.clone();
        for _ in 0..1 + r.next() % 4 {
            let at = (r.next() % (b.len() as u64 + 1)) as usize;
            match r.next() % 3 {
                0 => b.truncate(at),
                1 => {
                    let p = pieces[(r.next() % pieces.len() as u64) as usize];
                    b.splice(at..at, p.iter().copied());
                }
                _ => {
                    if at < b.len() {
                        b.remove(at);
                    }
                }
            }
        }
        let found = scan_bytes(&b);
        for f in &found {
            assert!(
                f.range.start < f.range.end && f.range.end <= b.len(),
                "round {round}: {f:?}"
            );
        }
        let _ = redact::redact_bytes(&b, &found);
    }
    Ok(())
}
