//! A crash during the migration rewrite of an old session file, simulated at each fault point of
//! the rewrite path (`pi_session_core::fault`): a hook that panics stops everything at that point,
//! as a kill would (no cleanup runs). Whatever the moment, the session file is the old one or the
//! new one, complete, and the next open succeeds.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use pi_session_core::fault::{self, Point};
use pi_session_core::{Error, ErrorCode};

mod common;
use common::{open, temp_dir};

type R = Result<(), Error>;

const V1: &str = concat!(
    "{\"type\":\"session\",\"id\":\"old\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
    "{\"type\":\"message\",\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n",
    "not json at all\n",
    "{\"type\":\"message\",\"timestamp\":\"2024-01-01T00:00:02.000Z\",\"message\":{\"role\":\"hookMessage\",\"content\":\"b\"}}\n",
    "{\"type\":\"compaction\",\"timestamp\":\"2024-01-01T00:00:03.000Z\",\"summary\":\"s\",\"firstKeptEntryIndex\":1,\"tokensBefore\":5}\n",
);

const V2: &str = concat!(
    "{\"type\":\"session\",\"version\":2,\"id\":\"old2\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
    "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2024-01-01T00:00:01.000Z\",\"message\":{\"role\":\"hookMessage\",\"content\":\"x\"}}\n",
    "{\"type\":\"message\",\"id\":\"a2\",\"parentId\":\"a1\",\"timestamp\":\"2024-01-01T00:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":\"y\"}}\n",
);

/// Open `file` with a hook that "kills" the process (panics) at `point` for `target`.
fn open_killed_at(dir: &Path, file: &Path, point: Point, target: PathBuf) -> bool {
    let _guard = fault::set_hook(move |p, t| {
        if p == point && t == target {
            panic!("simulated kill at {p:?}");
        }
        Ok(())
    });
    catch_unwind(AssertUnwindSafe(|| open(dir, file))).is_err()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn bak(file: &Path, n: u32) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(if n == 0 {
        ".bak".to_owned()
    } else {
        format!(".bak.{n}")
    });
    PathBuf::from(name)
}

/// Reopening after the crash migrates (again) and gives the full session.
fn reopens_migrated(dir: &Path, file: &Path, entries: usize) -> R {
    let s = open(dir, file)?;
    assert_eq!(s.entry_count(), entries);
    let text = fs::read_to_string(file).unwrap();
    assert!(text.lines().next().unwrap().contains("\"version\":3"));
    // Malformed lines stay where they were, through every rewrite.
    assert_eq!(
        text.lines().count(),
        fs::read_to_string(bak(file, 0)).unwrap().lines().count()
    );
    Ok(())
}

#[test]
fn a_kill_between_temp_write_and_rename_of_a_migration_leaves_the_old_file_intact() -> R {
    for (name, original, entries) in [("v1", V1, 3), ("v2", V2, 2)] {
        let dir = temp_dir(name);
        let file = dir.join("s.jsonl");
        fs::write(&file, original).unwrap();
        assert!(open_killed_at(
            &dir,
            &file,
            Point::BeforeRename,
            file.clone()
        ));

        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            original,
            "old file intact"
        );
        assert_eq!(
            fs::read_to_string(bak(&file, 0)).unwrap(),
            original,
            "backup complete"
        );
        // No partial target: the only other thing is the hidden, complete temp file of the
        // rewrite, which listing ignores (not `*.jsonl`).
        let others: Vec<String> = names(&dir)
            .into_iter()
            .filter(|n| n != "s.jsonl" && n != "s.jsonl.bak")
            .collect();
        assert_eq!(others.len(), 1, "{others:?}");
        assert!(others[0].starts_with(".s.jsonl.") && others[0].ends_with(".tmp"));
        let temp = fs::read_to_string(dir.join(&others[0])).unwrap();
        assert!(temp.starts_with("{\"type\":\"session\"") && temp.ends_with('\n'));
        assert!(temp.lines().next().unwrap().contains("\"version\":3"));

        reopens_migrated(&dir, &file, entries)?;
        assert_eq!(fs::read_to_string(bak(&file, 1)).unwrap(), original);
    }
    Ok(())
}

#[test]
fn a_kill_while_the_backup_is_written_leaves_the_old_file_and_no_backup() -> R {
    let dir = temp_dir("backup");
    let file = dir.join("s.jsonl");
    fs::write(&file, V1).unwrap();
    assert!(open_killed_at(
        &dir,
        &file,
        Point::BeforeLink,
        bak(&file, 0)
    ));
    assert_eq!(fs::read_to_string(&file).unwrap(), V1);
    assert!(
        !bak(&file, 0).exists(),
        "the backup appears complete or not at all"
    );
    assert!(names(&dir)
        .iter()
        .all(|n| n == "s.jsonl" || n.ends_with(".tmp")));
    reopens_migrated(&dir, &file, 3)
}

#[test]
fn a_kill_right_after_the_rename_leaves_the_complete_new_file_and_the_backup() -> R {
    let dir = temp_dir("after");
    let file = dir.join("s.jsonl");
    fs::write(&file, V1).unwrap();
    assert!(open_killed_at(
        &dir,
        &file,
        Point::AfterRename,
        file.clone()
    ));
    assert_eq!(fs::read_to_string(bak(&file, 0)).unwrap(), V1);
    assert_eq!(names(&dir), ["s.jsonl", "s.jsonl.bak"]);
    // Already v3: the next open loads it without another rewrite.
    let migrated = fs::read_to_string(&file).unwrap();
    let s = open(&dir, &file)?;
    assert_eq!(s.entry_count(), 3);
    assert_eq!(fs::read_to_string(&file).unwrap(), migrated);
    assert!(!bak(&file, 1).exists());
    Ok(())
}

#[test]
fn a_failed_migration_rewrite_cleans_up_and_leaves_the_old_file() -> R {
    let dir = temp_dir("failed");
    let file = dir.join("s.jsonl");
    fs::write(&file, V1).unwrap();
    let target = file.clone();
    let guard = fault::set_hook(move |p, t| {
        if p == Point::BeforeRename && t == target {
            return Err(Error::new(ErrorCode::Io, "simulated ENOSPC"));
        }
        Ok(())
    });
    let err = open(&dir, &file).expect_err("the rewrite failed");
    drop(guard);
    assert_eq!(err.message, "simulated ENOSPC");
    assert_eq!(fs::read_to_string(&file).unwrap(), V1);
    assert_eq!(names(&dir), ["s.jsonl", "s.jsonl.bak"], "no temp file left");
    reopens_migrated(&dir, &file, 3)
}
