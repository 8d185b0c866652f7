//! `forkFrom` and `createBranchedSession` write whole new files without fsync (as the reference),
//! through a temp file that is linked or renamed into place only once complete. These tests check
//! what that promises, at each fault point (`pi_session_core::fault`): a kill leaves the new file
//! complete or absent and the source untouched; a failed write leaves no file and (for
//! `createBranchedSession`) the manager as it was. They also check that the streaming paths used
//! for big sessions (records left in the file) write the same bytes and give the same state as the
//! in-memory paths, and that a big session's file changed behind its back is reported.
//!
//! Each scenario runs over [`CASES`]: small lines read eagerly, small lines read lazily, long lines
//! read lazily. The lazy threshold is the sessions' own [`Tuning`], so the scenarios run in
//! parallel; the fault hooks are per thread.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use pi_session_core::fault::{self, Point};
use pi_session_core::record::string_key;
use pi_session_core::{session, Config, Error, ErrorCode, Session, Tuning};

mod common;
use common::temp_dir;

type R = Result<(), Error>;

/// `(pad, lazy)`: the length of the two long messages of [`source_text`], and the sessions' lazy
/// file threshold (`u64::MAX`: never lazy; 0: always).
const CASES: [(usize, u64); 3] = [(10, u64::MAX), (10, 0), (300_000, 0)];

/// The threshold of the product, under which these small files are read eagerly.
const EAGER: u64 = Tuning::PRODUCT.lazy_file_bytes;

/// The configuration of a session reading files of `lazy` bytes or more lazily.
fn lazy_at(lazy: u64) -> Config {
    Config {
        tuning: Tuning {
            lazy_file_bytes: lazy,
            ..Tuning::PRODUCT
        },
        ..Config::default()
    }
}

/// A session with what the copies must handle: a branch left behind, labels on and off the path
/// (one between two entries, so the entry after it is re-chained), a compaction whose first kept
/// entry is that label, lines that are not canonical JSON (spacing, escapes, key order), malformed
/// lines, a second header, and a last line without newline.
fn source_text(pad: usize) -> String {
    let big = "x".repeat(pad);
    [
        r#"{"type":"session","version":3,"id":"src","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}"#.to_owned(),
        format!(r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{{"role":"user","content":"{big}"}}}}"#),
        "not json".to_owned(),
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"assistant","content":"b"}}"#.to_owned(),
        r#"{"type":"message","id":"z","parentId":"a","timestamp":"2024-01-01T00:00:03.000Z","message":{"role":"assistant","content":"other branch"}}"#.to_owned(),
        r#"{"type":"label","id":"l1","parentId":"b","timestamp":"2024-01-01T00:00:04.000Z","targetId":"a","label":"start"}"#.to_owned(),
        r#"{ "type": "message", "id": "c", "parentId": "l1", "timestamp": "2024-01-01T00:00:05.000Z", "message": {"role":"user","content":"\u0063 \/"} }"#.to_owned(),
        r#"{"type":"session","version":3,"id":"again","timestamp":"2024-01-01T00:00:05.500Z","cwd":"/w"}"#.to_owned(),
        format!(r#"{{"type":"message","id":"d","parentId":"c","timestamp":"2024-01-01T00:00:06.000Z","message":{{"role":"assistant","content":"{big}"}}}}"#),
        r#"{"type":"compaction","id":"e","parentId":"d","timestamp":"2024-01-01T00:00:07.000Z","summary":"s","firstKeptEntryId":"l1","tokensBefore":5}"#.to_owned(),
        r#"{"2":"two","type":"custom","1":"one","id":"f","parentId":"e","timestamp":"2024-01-01T00:00:08.000Z","customType":"k","data":{"n":1.0}}"#.to_owned(),
        r#"{"type":"label","id":"l2","parentId":"f","timestamp":"2024-01-01T00:00:09.000Z","targetId":"c","label":"mid"}"#.to_owned(),
        r#"{"type":"label","id":"l3","parentId":"l2","timestamp":"2024-01-01T00:00:09.500Z","targetId":"z","label":"off path"}"#.to_owned(),
        r#"{"type":"message","id":"g","parentId":"l3","timestamp":"2024-01-01T00:00:10.000Z","message":{"role":"user","content":"g"}}"#.to_owned(),
    ]
    .join("\n")
}

/// A temp dir holding `src.jsonl` with [`source_text`]; the dir, the file and its text.
fn with_source(name: &str, pad: usize) -> (PathBuf, PathBuf, String) {
    let dir = temp_dir(name);
    let src = dir.join("src.jsonl");
    let original = source_text(pad);
    fs::write(&src, &original).unwrap();
    (dir, src, original)
}

/// A persisted session in `dir` that opened `file`, reading it lazily from `lazy` bytes on.
fn open(dir: &Path, file: &Path, lazy: u64) -> Result<Session, Error> {
    let dir = dir.to_string_lossy().into_owned();
    let mut s = Session::with_config("/w".into(), dir, true, lazy_at(lazy))?;
    s.set_session_file(file.to_path_buf())?;
    Ok(s)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn jsonl(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".jsonl"))
        .collect()
}

/// Every record's line, in order.
fn lines(s: &Session) -> Vec<String> {
    (0..s.record_count() as u32)
        .map(|p| String::from_utf8(s.line(p).unwrap().into_owned()).unwrap())
        .collect()
}

/// The text of a written session without its header line and with label ids (random) blanked.
fn comparable(text: &str) -> String {
    let mut out: Vec<String> = text.lines().skip(1).map(str::to_owned).collect();
    for l in &mut out {
        if !l.starts_with(r#"{"type":"label""#) {
            continue;
        }
        for key in [r#""id":""#, r#""parentId":""#] {
            if let Some(k) = l.find(key) {
                let at = k + key.len();
                let hex8 = l.get(at..at + 9).is_some_and(|v| {
                    v.ends_with('"') && v[..8].bytes().all(|c| c.is_ascii_hexdigit())
                });
                if hex8 {
                    l.replace_range(at..at + 8, "--------");
                }
            }
        }
    }
    out.join("\n")
}

fn branch(s: &mut Session) -> Result<Option<PathBuf>, Error> {
    let leaf = s.leaf_key().map(str::to_owned);
    s.create_branched_session(leaf.as_deref(), "leaf")
}

/// Run `f` with a hook that "kills" the process (panics) at `point`; true if it was killed.
fn killed_at<T>(point: Point, f: impl FnOnce() -> T) -> bool {
    let _guard = fault::set_hook(move |p, _| {
        if p == point {
            panic!("simulated kill at {p:?}");
        }
        Ok(())
    });
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

fn failing_at<T>(point: Point, f: impl FnOnce() -> T) -> T {
    let _guard = fault::set_hook(move |p, _| {
        if p == point {
            return Err(Error::new(ErrorCode::Io, "simulated ENOSPC"));
        }
        Ok(())
    });
    f()
}

#[test]
fn a_fork_writes_the_same_bytes_and_state_whether_read_lazily_or_not() -> R {
    for (pad, lazy) in CASES {
        let (dir, src, original) = with_source("fork", pad);
        let eager_dir = dir.join("eager");
        let eager = session::fork(&src, "/t", &eager_dir, None, Default::default())?;
        let eager_text = fs::read_to_string(&eager.file).unwrap();
        // As loadEntriesFromFile: the source gets its missing final newline, nothing else.
        assert_eq!(fs::read_to_string(&src).unwrap(), format!("{original}\n"));
        let eager_session = open(&eager_dir, &eager.file, EAGER)?;

        let lazy_dir = dir.join("lazy");
        let forked = session::fork(&src, "/t", &lazy_dir, None, Default::default())?;
        let file = forked.file.clone();
        let dir_name = lazy_dir.to_string_lossy().into_owned();
        let mut s = Session::with_config("/t".into(), dir_name, true, lazy_at(lazy))?;
        s.set_session_file_forked(forked)?;
        assert_eq!(s.session_file(), Some(file.as_path()));
        assert!(s.is_flushed());
        // What the fork learned about the new file is what reading it finds.
        let reread = open(&lazy_dir, &file, lazy)?;
        assert_eq!(lines(&s), lines(&reread));
        assert_eq!(s.leaf_key(), reread.leaf_key());
        assert_eq!(s.session_id(), reread.session_id());
        let lazy_text = fs::read_to_string(&file).unwrap();

        assert_eq!(comparable(&lazy_text), comparable(&eager_text));
        assert_eq!(lines(&s).len(), eager_session.record_count());
        assert!(!eager_text.contains("not json") && !eager_text.contains("\"again\""));
        assert!(eager_text.contains(r#""id":"c","parentId":"l1","timestamp":"2024-01-01T00:00:05.000Z","message":{"role":"user","content":"c /"}}"#));
        assert!(eager_text.contains(r#"{"1":"one","2":"two","type":"custom","id":"f""#));
        let _ = fs::remove_dir_all(&dir);
    }
    Ok(())
}

#[test]
fn a_fork_killed_before_the_link_leaves_no_target_and_a_failed_one_leaves_nothing() -> R {
    for (pad, _) in CASES {
        let (dir, src, _) = with_source("fork-fault", pad);
        // Killed before the link: no target, a hidden temp file at most.
        let kill_dir = dir.join("killed");
        assert!(killed_at(Point::BeforeLink, || {
            session::fork(&src, "/t", &kill_dir, None, Default::default())
        }));
        assert!(jsonl(&kill_dir).is_empty(), "{:?}", names(&kill_dir));
        assert!(names(&kill_dir).iter().all(|n| n.ends_with(".tmp")));
        // ... and failing there: nothing at all.
        let fail_dir = dir.join("failed");
        let err = failing_at(Point::BeforeLink, || {
            session::fork(&src, "/t", &fail_dir, None, Default::default())
        })
        .err()
        .expect("the fork failed");
        assert_eq!(err.message, "simulated ENOSPC");
        assert!(names(&fail_dir).is_empty(), "{:?}", names(&fail_dir));
        let _ = fs::remove_dir_all(&dir);
    }
    Ok(())
}

#[test]
fn a_branched_session_has_the_same_bytes_and_state_whether_read_lazily_or_not() -> R {
    for (pad, lazy) in CASES {
        let (dir, src, _) = with_source("branch", pad);
        let mut eager_s = open(&dir, &src, EAGER)?;
        let eager_new = branch(&mut eager_s)?.expect("persisted");
        let eager_branch = fs::read_to_string(&eager_new).unwrap();

        let mut s = open(&dir, &src, lazy)?;
        let new_file = branch(&mut s)?.expect("persisted");
        assert_eq!(s.session_file(), Some(new_file.as_path()));
        let reread = open(&dir, &new_file, lazy)?;
        assert_eq!(lines(&s), lines(&reread));
        assert_eq!(s.leaf_key(), reread.leaf_key());
        let lazy_branch = fs::read_to_string(&new_file).unwrap();

        assert_eq!(comparable(&lazy_branch), comparable(&eager_branch));
        assert_eq!(lines(&s).len(), eager_s.record_count());
        // Every line of a branched session is canonical (copied because it was, or written
        // here), and is known to be from now on: a second branch need not read them to find out.
        for pos in 0..s.record_count() as u32 {
            let line = String::from_utf8(s.view().line(pos)?.into_owned()).unwrap();
            assert!(s.meta(pos).canonical, "not known canonical: {line}");
            assert!(
                pi_session_core::json::is_canonical(line.as_bytes()),
                "{line}"
            );
        }
        // Branched again, the new session's bytes are those a fresh open of it branches to.
        let again = branch(&mut s)?.expect("persisted");
        let mut fresh = open(&dir, &new_file, lazy)?;
        let fresh_again = branch(&mut fresh)?.expect("persisted");
        assert_eq!(
            comparable(&fs::read_to_string(&again).unwrap()),
            comparable(&fs::read_to_string(&fresh_again).unwrap())
        );
        // Re-chained past the dropped labels, first kept entry moved off the label, labels last.
        assert!(!eager_branch.contains("other branch") && !eager_branch.contains("\"l1\""));
        assert!(eager_branch.contains(r#""id":"c","parentId":"b""#));
        assert!(eager_branch.contains(r#""firstKeptEntryId":"c""#));
        assert!(eager_branch.contains(r#""id":"g","parentId":"f""#));
        assert_eq!(
            eager_branch.matches(r#"{"type":"label""#).count(),
            2,
            "{eager_branch}"
        );
        let _ = fs::remove_dir_all(&dir);
    }
    Ok(())
}

#[test]
fn a_branch_killed_before_the_rename_leaves_the_old_file_and_a_failed_one_the_manager() -> R {
    for (pad, lazy) in CASES {
        let (dir, src, _) = with_source("branch-fault", pad);
        // Opened once first, so that the source's final newline is written before the snapshot.
        drop(open(&dir, &src, lazy)?);
        // Killed before the rename: the old file is untouched and no new session file appears.
        let before = jsonl(&dir);
        let src_bytes = fs::read(&src).unwrap();
        assert!(killed_at(Point::BeforeRename, || {
            let mut s = open(&dir, &src, lazy).unwrap();
            branch(&mut s)
        }));
        assert_eq!(jsonl(&dir), before);
        assert_eq!(fs::read(&src).unwrap(), src_bytes);
        // ... and failing there: no file, no temp file, the manager as it was.
        let tmps = names(&dir)
            .into_iter()
            .filter(|n| n.ends_with(".tmp"))
            .count();
        let mut s = open(&dir, &src, lazy)?;
        let leaf = s.leaf_key().map(str::to_owned);
        let before_lines = lines(&s);
        let err = failing_at(Point::BeforeRename, || branch(&mut s)).unwrap_err();
        assert_eq!(err.message, "simulated ENOSPC");
        assert_eq!(s.session_file(), Some(src.as_path()));
        assert_eq!(s.leaf_key(), leaf.as_deref());
        assert_eq!(lines(&s), before_lines);
        assert_eq!(jsonl(&dir), before);
        assert_eq!(
            names(&dir)
                .into_iter()
                .filter(|n| n.ends_with(".tmp"))
                .count(),
            tmps
        );
        let _ = fs::remove_dir_all(&dir);
    }
    Ok(())
}

#[test]
fn records_taken_from_an_opened_session_make_the_session_its_lines_preloaded_make() -> R {
    for (pad, lazy) in CASES {
        let (dir, src, _) = with_source("taken", pad);
        let mut s = open(&dir, &src, lazy)?;
        // An appended line too (held apart from the loaded ones).
        s.append(br#"{"type":"message","id":"z9","parentId":"g","timestamp":"2024-01-02T00:00:00.000Z","message":{"role":"user","content":"late"}}"#)?;
        let header = s.header_pos().expect("a header");
        let positions: Vec<u32> = std::iter::once(header)
            .chain(s.branch_from(s.leaf_key()))
            .collect();
        let mut taken = Session::blank("/w".into(), String::new(), false)?;
        taken.load_records_of(&mut s, &positions)?;
        let mut preloaded = Session::blank("/w".into(), String::new(), false)?;
        let texts: Vec<String> = positions
            .iter()
            .map(|&p| String::from_utf8(s.line(p).unwrap().into_owned()).unwrap())
            .collect();
        preloaded.load_preloaded(texts.clone(), false)?;
        assert_eq!(lines(&taken), texts);
        assert_eq!(lines(&taken), lines(&preloaded));
        assert_eq!(taken.session_id(), preloaded.session_id());
        assert_eq!(taken.leaf_key(), preloaded.leaf_key());
        assert_eq!(taken.entry_count(), preloaded.entry_count());
        assert_eq!(taken.branch_from(None), preloaded.branch_from(None));
        let labels = |x: &Session| {
            x.labels()
                .map(|(k, p)| (k.to_string(), p))
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(&taken), labels(&preloaded));
        // It outlives its source, and a position past the end is refused.
        drop(s);
        assert_eq!(lines(&taken), texts);
        let mut refused = Session::blank("/w".into(), String::new(), false)?;
        let err = refused
            .load_records_of(&mut preloaded, &[0, 9_999])
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        let _ = fs::remove_dir_all(&dir);
    }
    Ok(())
}

#[test]
fn a_big_session_whose_file_changed_in_place_refuses_to_branch_and_writes_nothing() -> R {
    for (pad, _) in CASES.into_iter().filter(|&(_, lazy)| lazy == 0) {
        let (dir, file, _) = with_source("changed", pad);
        let mut s = open(&dir, &file, 0)?;
        let text = fs::read_to_string(&file).unwrap();
        fs::write(
            &file,
            text.replace("\"content\":\"b\"", "\"content\":\"B\""),
        )
        .unwrap();
        let before = jsonl(&dir);
        let err = s
            .create_branched_session(Some(&string_key("g")), "g")
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::FileChanged);
        assert_eq!(jsonl(&dir), before);
        assert_eq!(s.session_file(), Some(file.as_path()));
        let _ = fs::remove_dir_all(&dir);
    }
    Ok(())
}

#[test]
fn a_big_session_whose_line_no_longer_parses_refuses_to_branch_and_writes_nothing() -> R {
    // The middle of a long line, where the open's check of the line (its length and its ends)
    // does not look, changed in place so that it is no longer JSON: the branch must not write
    // something else in its place.
    let (dir, file, _) = with_source("unparsable", 300_000);
    let mut s = open(&dir, &file, 0)?;
    // (As the open left it: it ended the last line.)
    let mut bytes = fs::read(&file).unwrap();
    let d = memchr::memmem::find(&bytes, br#""id":"d""#).unwrap();
    let middle = d + 150_000;
    assert_eq!(bytes[middle], b'x');
    bytes[middle] = b'"';
    fs::write(&file, &bytes).unwrap();
    let before = jsonl(&dir);
    let err = s
        .create_branched_session(Some(&string_key("g")), "g")
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::FileChanged, "{}", err.message);
    assert_eq!(jsonl(&dir), before);
    assert_eq!(s.session_file(), Some(file.as_path()));
    let _ = fs::remove_dir_all(&dir);
    Ok(())
}
