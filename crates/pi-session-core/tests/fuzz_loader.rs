//! Property test of the loader over damaged session files, with a seeded PRNG (no extra crates).
//!
//! Every fixture (`fixtures/**/*.jsonl`) is damaged in 1–3 random ways (truncation, byte flips,
//! NUL bytes, invalid UTF-8, CRLF, a BOM, duplicated / dropped / swapped lines, rewired parents
//! that make cycles or dangle, garbage and deeply nested lines) and opened. Properties:
//! - open never panics and never hangs (each case runs on a worker watched with a timeout);
//! - it either loads or refuses a non-session file (`INVALID_SESSION_FILE`), nothing else;
//! - no byte of the file is lost: it is unchanged, gets exactly one `\n` (torn last line), or is
//!   migrated with the original kept byte for byte as `<file>.bak`;
//! - every structural query (paths, context, tree, children) terminates, and an append after the
//!   damage is found again on reopen.
//!
//! `PI_FUZZ_SEED` (default 1) and `PI_FUZZ_CASES` (default 1500) choose the run; it also stops after
//! `PI_FUZZ_SECS` seconds (default 20) so CI stays bounded. A failure prints the seed and the
//! case's recipe.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pi_session_core::{context, tree, ErrorCode, Session};

mod common;
use common::temp_dir;

#[path = "fuzz/damage.rs"]
mod damage;
use damage::{env_num, make_cases, Case};

fn blank(dir: &Path) -> Session {
    Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap()
}

fn bak_of(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".bak");
    PathBuf::from(name)
}

/// Exercise every structural query; they must terminate.
fn walk_everything(s: &Session) {
    let entries = s.entry_positions();
    for &p in &entries {
        let _ = s.line(p);
        let _ = s.path_to(p);
        let id = s.meta(p).id.clone();
        let _ = s.children(&id);
        let _ = s.branch_from(Some(&id));
    }
    let path = s.context_path();
    let _ = context::select(s, &path);
    let _ = context::plan(s, &path);
    let _ = tree::tree(s);
    let _ = s.labels().count();
    let _ = (s.leaf_pos(), s.session_name_pos(), s.header_pos());
}

/// Open one damaged file and check the properties; `Err` describes a violation.
fn check_case(dir: &Path, case: &Case) -> Result<(), String> {
    let file = dir.join(format!("case-{}.jsonl", case.n));
    fs::write(&file, &case.bytes).unwrap();
    let mut s = blank(dir);
    match s.set_session_file(file.clone()) {
        Err(e) if e.code == ErrorCode::InvalidSessionFile => {
            if fs::read(&file).unwrap() != case.bytes {
                return Err("a refused file was modified".into());
            }
            return Ok(());
        }
        Err(e) => return Err(format!("unexpected error {:?}: {}", e.code, e.message)),
        Ok(_) => {}
    }
    let after = fs::read(&file).unwrap();
    let backup = bak_of(&file);
    if backup.exists() {
        // The original bytes, after the one-newline repair of a torn last line.
        let mut repaired = case.bytes.clone();
        if !repaired.ends_with(b"\n") {
            repaired.push(b'\n');
        }
        let kept = fs::read(&backup).unwrap();
        if kept != case.bytes && kept != repaired {
            return Err("the migration backup differs from the original".into());
        }
    } else if case.bytes.is_empty() {
        if !after.starts_with(b"{\"type\":\"session\"") {
            return Err("an empty file did not get a header".into());
        }
    } else if after != case.bytes {
        let repaired = after.len() == case.bytes.len() + 1
            && after.starts_with(&case.bytes)
            && after.ends_with(b"\n")
            && !case.bytes.ends_with(b"\n");
        if !repaired {
            return Err("open changed the file other than by appending one newline".into());
        }
    }
    walk_everything(&s);

    // Appending after the damage works and survives a reopen.
    if case.append_after {
        let count = s.entry_count();
        let id = s.next_entry_id();
        // The empty key is an id-less leaf (`undefined` in JS, which JSON.stringify writes as null).
        let parent = match s.leaf_key() {
            Some(k) if !k.is_empty() => k.to_string(),
            _ => "null".to_string(),
        };
        let line = format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2024-01-02T00:00:00.000Z","message":{{"role":"user","content":"after"}}}}"#
        );
        s.append(line.as_bytes())
            .map_err(|e| format!("append after damage failed: {}", e.message))?;
        drop(s);
        let mut again = blank(dir);
        again
            .set_session_file(file.clone())
            .map_err(|e| format!("reopen after append failed: {}", e.message))?;
        let key = pi_session_core::record::string_key(&id);
        if again.lookup(&key).is_none() {
            return Err("the appended entry is missing after reopen".into());
        }
        if again.entry_count() != count + 1 {
            return Err(format!(
                "entry count after reopen {} != {} + 1",
                again.entry_count(),
                count
            ));
        }
        walk_everything(&again);
    }
    let _ = fs::remove_file(&file);
    let _ = fs::remove_file(&backup);
    Ok(())
}

enum Report {
    Started(usize),
    Failed(usize, String),
    Done,
}

#[test]
fn damaged_files_never_panic_hang_or_lose_bytes() {
    let seed = env_num("PI_FUZZ_SEED", 1);
    let count = env_num("PI_FUZZ_CASES", 1500);
    let budget = Duration::from_secs(env_num("PI_FUZZ_SECS", 20));
    // Generous: a debug build on a loaded CI machine; a hang is forever.
    let per_case = Duration::from_secs(30);
    let cases = make_cases(seed, count);
    let recipes: Vec<String> = cases.iter().map(|c| c.recipe.clone()).collect();
    let dir = temp_dir("loader");
    let (tx, rx) = mpsc::channel();
    let worker_dir = dir.clone();
    std::thread::Builder::new()
        .name("fuzz-worker".into())
        .spawn(move || {
            let started = Instant::now();
            for (i, case) in cases.iter().enumerate() {
                if started.elapsed() > budget {
                    break;
                }
                let _ = tx.send(Report::Started(i));
                match catch_unwind(AssertUnwindSafe(|| check_case(&worker_dir, case))) {
                    Ok(Ok(())) => {}
                    Ok(Err(msg)) => {
                        let kept =
                            std::env::temp_dir().join(format!("pi-fuzz-failed-{seed}-{i}.jsonl"));
                        let _ = fs::write(&kept, &case.bytes);
                        let _ = tx.send(Report::Failed(
                            i,
                            format!("{msg} (bytes in {})", kept.display()),
                        ));
                    }
                    Err(p) => {
                        let msg = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        let _ = tx.send(Report::Failed(i, format!("PANIC: {msg}")));
                    }
                }
            }
            let _ = tx.send(Report::Done);
        })
        .unwrap();
    let mut current = None;
    let mut failures = Vec::new();
    let mut ran = 0;
    loop {
        match rx.recv_timeout(per_case) {
            Ok(Report::Started(i)) => {
                current = Some(i);
                ran += 1;
            }
            Ok(Report::Failed(i, msg)) => {
                failures.push(format!("case {i} [{}]: {msg}", recipes[i]))
            }
            Ok(Report::Done) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let i = current.unwrap_or(0);
                panic!(
                    "seed {seed}: case {i} [{}] did not finish within {per_case:?} (hang?)",
                    recipes[i]
                );
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let _ = fs::remove_dir_all(&dir);
    assert!(ran >= 100.min(count as usize), "only {ran} cases ran");
    assert!(
        failures.is_empty(),
        "seed {seed}, {ran} cases, {} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("fuzz_loader: seed {seed}, {ran} cases passed");
}

#[test]
fn a_100_mb_single_line_opens_in_bounded_time_and_a_torn_one_is_repaired() {
    let dir = temp_dir("huge");
    let file = dir.join("huge.jsonl");
    let header = br#"{"type":"session","version":3,"id":"h","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let head = br#"{"type":"message","id":"big","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":""#;
    let tail = b"\"}}\n";
    let size = 100 << 20;
    let mut bytes = Vec::with_capacity(size + 300);
    bytes.extend_from_slice(header);
    bytes.push(b'\n');
    bytes.extend_from_slice(head);
    bytes.resize(bytes.len() + size, b'x');
    bytes.extend_from_slice(tail);
    fs::write(&file, &bytes).unwrap();
    let limit = Duration::from_secs(60);

    let t = Instant::now();
    let mut s = blank(&dir);
    s.set_session_file(file.clone()).unwrap();
    assert_eq!(s.entry_count(), 1);
    walk_everything(&s);
    drop(s);
    let took = t.elapsed();
    assert!(took < limit, "100 MB line took {took:?}");

    // Torn inside the huge string: not an entry, and one newline makes later appends start clean.
    let torn_len = bytes.len() as u64 - 10;
    fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(torn_len)
        .unwrap();
    let t = Instant::now();
    let mut s = blank(&dir);
    s.set_session_file(file.clone()).unwrap();
    assert_eq!(s.entry_count(), 0);
    assert_eq!(fs::metadata(&file).unwrap().len(), torn_len + 1);
    walk_everything(&s);
    let took_torn = t.elapsed();
    assert!(took_torn < limit, "torn 100 MB line took {took_torn:?}");
    drop(s);
    let _ = fs::remove_dir_all(&dir);
    eprintln!("100 MB line: open {took:?}, torn {took_torn:?}");
}
