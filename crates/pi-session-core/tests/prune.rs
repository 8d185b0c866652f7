//! `countSubtree` / `pruneBranch`: an abandoned side branch goes with everything under it and
//! the labels naming it; the active path, its context and the leaf stay; the file is rewritten
//! atomically, and a session not yet on disk stays in memory.

use std::fs;
use std::path::{Path, PathBuf};

use pi_session_core::record::Kind;
use pi_session_core::{ErrorCode, Session};

mod common;
use common::temp_dir;

const HEADER: &str = r#"{"type":"session","version":3,"id":"sess-prune","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

fn message(id: &str, parent: &str, role: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"{role}","content":"{id}"}}}}"#
    )
}

fn label(id: &str, parent: &str, target: &str) -> String {
    format!(
        r#"{{"type":"label","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:02.000Z","targetId":"{target}","label":"x"}}"#
    )
}

/// u1 ─ a1 ─ L1 ─ L2 ─ u2 ─ c ─ a3 (active; L1 labels b2, L2 labels b1, c keeps from L1)
///    └ b1 ─ b2 (side branch)
fn tree_file(dir: &Path) -> PathBuf {
    let lines = [
        HEADER.to_owned(),
        message("u1", "null", "user"),
        message("a1", "\"u1\"", "assistant"),
        message("b1", "\"u1\"", "assistant"),
        message("b2", "\"b1\"", "user"),
        label("L1", "a1", "b2"),
        label("L2", "L1", "b1"),
        message("u2", "\"L2\"", "user"),
        r#"{"type":"compaction","id":"c","parentId":"u2","timestamp":"2026-01-01T00:00:03.000Z","summary":"s","firstKeptEntryId":"L1","tokensBefore":9}"#.to_owned(),
        message("a3", "\"c\"", "assistant"),
    ];
    let p = dir.join("s.jsonl");
    fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

fn open(dir: &Path, file: &Path) -> Session {
    common::open(dir, file).unwrap()
}

fn key(id: &str) -> String {
    format!("\"{id}\"")
}

fn ids(s: &Session, path: &[u32]) -> Vec<String> {
    path.iter().map(|&p| s.meta(p).id.to_string()).collect()
}

/// The message and compaction ids of the active path (what the context is made of).
fn context_ids(s: &Session) -> Vec<String> {
    let path = s.context_path();
    path.iter()
        .filter(|&&p| matches!(s.meta(p).kind, Kind::Message | Kind::Compaction))
        .map(|&p| s.meta(p).id.to_string())
        .collect()
}

#[test]
fn count_subtree_counts_the_entry_and_everything_under_it() {
    let dir = temp_dir("prune-count");
    let s = open(&dir, &tree_file(&dir));
    assert_eq!(s.count_subtree(Some(&key("b1"))), 2);
    assert_eq!(s.count_subtree(Some(&key("b2"))), 1);
    assert_eq!(s.count_subtree(Some(&key("u1"))), 9);
}

#[test]
fn count_subtree_of_an_unknown_id_is_zero() {
    let dir = temp_dir("prune-count-unknown");
    let s = open(&dir, &tree_file(&dir));
    assert_eq!(s.count_subtree(Some(&key("nope"))), 0);
    assert_eq!(s.count_subtree(None), 0);
}

#[test]
fn pruning_a_side_branch_drops_it_its_labels_and_rewires_the_survivors(
) -> pi_session_core::Result<()> {
    let dir = temp_dir("prune-side");
    let file = tree_file(&dir);
    let mut s = open(&dir, &file);
    let context_before = context_ids(&s);
    let leaf_before = s.leaf_key().map(str::to_owned);
    let size_before = fs::metadata(&file).unwrap().len();
    let pruned = s.prune_branch(Some(&key("b1")), "b1")?;
    assert_eq!(pruned.removed, 2);
    assert_eq!(pruned.labels_dropped, 2);
    assert_eq!(pruned.rewired, 2, "u2 re-parented, c re-pointed");
    assert!(pruned.written);
    assert_eq!(pruned.bytes_before, size_before);
    assert_eq!(pruned.bytes_after, fs::metadata(&file).unwrap().len());
    assert_eq!(s.leaf_key().map(str::to_owned), leaf_before);
    assert_eq!(
        context_ids(&s),
        context_before,
        "the active context is unchanged"
    );
    for gone in ["b1", "b2", "L1", "L2"] {
        assert!(s.lookup(&key(gone)).is_none(), "{gone} is gone");
    }
    let u2 = s.lookup(&key("u2")).unwrap();
    assert_eq!(
        &*s.meta(u2).parent,
        "\"a1\"",
        "re-parented past the chained labels"
    );
    let c = s.lookup(&key("c")).unwrap();
    assert_eq!(
        &*s.meta(c).first_kept,
        "\"u2\"",
        "kept from the next survivor"
    );

    // The file says the same when read again.
    let again = open(&dir, &file);
    assert_eq!(
        ids(&again, &again.entry_positions()),
        ids(&s, &s.entry_positions())
    );
    assert_eq!(context_ids(&again), context_before);
    let text = fs::read_to_string(&file).unwrap();
    assert!(text.starts_with(HEADER));
    assert!(!text.contains("\"b1\"") && !text.contains("\"L1\""));
    let leftovers: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(leftovers, vec!["s.jsonl".to_owned()], "no temp file left");
    Ok(())
}

#[test]
fn the_active_path_and_unknown_ids_are_refused_and_nothing_changes() {
    let dir = temp_dir("prune-refuse");
    let file = tree_file(&dir);
    let before = fs::read(&file).unwrap();
    let mut s = open(&dir, &file);
    for id in ["u1", "a1", "L2", "a3"] {
        let err = s.prune_branch(Some(&key(id)), id).unwrap_err();
        assert_eq!(err.code, ErrorCode::OnActiveBranch, "{id}");
        assert_eq!(err.message, "Cannot delete the branch you are currently on");
    }
    let err = s.prune_branch(Some(&key("zz")), "zz").unwrap_err();
    assert_eq!(err.code, ErrorCode::EntryNotFound);
    assert_eq!(err.message, "Entry zz not found");
    assert_eq!(fs::read(&file).unwrap(), before);
    assert_eq!(s.entry_count(), 9);
}

#[test]
fn a_session_not_yet_on_disk_is_pruned_in_memory_only() -> pi_session_core::Result<()> {
    let dir = temp_dir("prune-lazy");
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true)?;
    s.new_session(None, None)?;
    // No user or assistant message yet: the reference would not write the file.
    let custom = |id: &str, parent: &str| {
        format!(
            r#"{{"type":"custom","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","customType":"t","data":1}}"#
        )
    };
    s.append(custom("u1", "null").as_bytes())?;
    s.append(custom("x1", "\"u1\"").as_bytes())?;
    s.branch(Some(&key("u1")), "u1")?;
    s.append(custom("y1", "\"u1\"").as_bytes())?;
    let file = s.session_file().unwrap().to_path_buf();
    assert!(!file.exists());
    let pruned = s.prune_branch(Some(&key("x1")), "x1")?;
    assert_eq!(pruned.removed, 1);
    assert!(!pruned.written);
    assert!(
        !file.exists(),
        "pruning does not write a session earlier than the reference"
    );
    assert!(s.lookup(&key("x1")).is_none());
    assert_eq!(s.leaf_key(), Some("\"y1\""));
    Ok(())
}

#[test]
fn records_before_the_header_survive_a_prune() -> pi_session_core::Result<()> {
    let dir = temp_dir("prune-title");
    let file = tree_file(&dir);
    let title = r#"{"type":"title","v":1,"title":"t"}"#;
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, format!("{title}\n{text}")).unwrap();
    let mut s = open(&dir, &file);
    s.prune_branch(Some(&key("b2")), "b2")?;
    let after = fs::read_to_string(&file).unwrap();
    assert!(after.starts_with(&format!("{title}\n{HEADER}\n")));
    assert_eq!(open(&dir, &file).meta(0).kind, Kind::Leading);
    Ok(())
}

#[test]
fn lines_that_hold_no_record_of_ours_stay_where_they_are() -> pi_session_core::Result<()> {
    let dir = temp_dir("prune-foreign-lines");
    let file = tree_file(&dir);
    let text = fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    // After a1: a line that is not JSON and a blank one; b2 glued after torn bytes (an
    // interrupted write); a3 (the leaf) ends with a carriage return.
    let torn = r#"{"type":"message","id":"t9","parentId":"a1","message":{"role":"user","con"#;
    let b2 = lines
        .iter()
        .position(|l| l.contains(r#""id":"b2""#))
        .unwrap();
    lines[b2] = format!("{torn}{}", lines[b2]);
    let a3 = lines.len() - 1;
    lines[a3].push('\r');
    lines.insert(3, "this line is not JSON".to_owned());
    lines.insert(4, String::new());
    fs::write(&file, lines.join("\n") + "\n").unwrap();
    let mut s = open(&dir, &file);
    assert!(s.lookup(&key("b2")).is_some(), "the glued entry is read");
    let pruned = s.prune_branch(Some(&key("b1")), "b1")?;
    assert_eq!(pruned.removed, 2);
    let after = fs::read_to_string(&file).unwrap();
    let after: Vec<&str> = after.split('\n').collect();
    assert_eq!(after[3], "this line is not JSON");
    assert_eq!(after[4], "");
    assert!(
        after.contains(&torn),
        "the torn bytes stay, on their own line"
    );
    assert_eq!(
        after[after.len() - 2],
        format!("{}\r", message("a3", "\"c\"", "assistant"))
    );
    assert!(!after
        .iter()
        .any(|l| l.contains(r#""id":"b1""#) || l.contains(r#""id":"b2""#)));
    // Read again, it is the session the manager holds; and it appends where it left off.
    let again = open(&dir, &file);
    assert_eq!(
        ids(&again, &again.entry_positions()),
        ids(&s, &s.entry_positions())
    );
    s.append(message("u3", "\"a3\"", "user").as_bytes())?;
    let again = open(&dir, &file);
    assert_eq!(again.leaf_key(), Some("\"u3\""));
    assert!(fs::read_to_string(&file)
        .unwrap()
        .contains("this line is not JSON"));
    Ok(())
}

#[test]
fn entries_another_writer_added_since_the_open_make_the_prune_refuse() -> pi_session_core::Result<()>
{
    let dir = temp_dir("prune-other-writer");
    let file = tree_file(&dir);
    let mut s = open(&dir, &file);
    s.append(message("u3", "\"a3\"", "user").as_bytes())?;
    let theirs = message("x1", "\"u3\"", "assistant");
    fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{theirs}\n").as_bytes()))
        .unwrap();
    // Ours again after theirs: the file ends where this manager left it, theirs is inside.
    s.append(message("u4", "\"u3\"", "user").as_bytes())?;
    let before = fs::read(&file).unwrap();
    let err = s.prune_branch(Some(&key("b1")), "b1").unwrap_err();
    assert_eq!(err.code, ErrorCode::FileChanged);
    assert!(err.message.contains("open it again"), "{}", err.message);
    assert_eq!(fs::read(&file).unwrap(), before, "the file is as it was");
    assert!(s.lookup(&key("b1")).is_some(), "and so is the session");
    assert_eq!(s.entry_count(), 11);
    // Opened again, the other writer's entry is known, and the prune goes through.
    let mut s = open(&dir, &file);
    s.prune_branch(Some(&key("b1")), "b1")?;
    assert!(fs::read_to_string(&file).unwrap().contains(&theirs));
    Ok(())
}

#[test]
fn a_file_cut_short_since_the_open_makes_the_prune_refuse() {
    let dir = temp_dir("prune-cut");
    let file = tree_file(&dir);
    let mut s = open(&dir, &file);
    let text = fs::read_to_string(&file).unwrap();
    let cut = &text[..text.trim_end().rfind('\n').unwrap() + 1];
    fs::write(&file, cut).unwrap();
    let err = s.prune_branch(Some(&key("b1")), "b1").unwrap_err();
    assert_eq!(err.code, ErrorCode::FileChanged);
    assert_eq!(fs::read_to_string(&file).unwrap(), cut);
}
