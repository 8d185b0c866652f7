//! Additions beyond the reference (see the README): each scenario writes real files in its own
//! temp dir and reopens what it wrote.

use std::fs;
use std::path::Path;

use pi_session_core::{Error, Session};

mod common;
use common::temp_dir;

type R = Result<(), Error>;

fn create(dir: &Path) -> Result<Session, Error> {
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true)?;
    s.new_session(None, None)?;
    Ok(s)
}

fn entry(s: &Session, id: &str, kind: &str, extra: &str) -> String {
    let parent = s.leaf_key().unwrap_or("null").to_string();
    format!(
        r#"{{"type":"{kind}","id":"{id}","parentId":{parent},"timestamp":"2024-01-02T00:00:00.000Z"{extra}}}"#
    )
}

fn append(s: &mut Session, kind: &str, extra: &str) -> Result<String, Error> {
    let id = s.next_entry_id();
    let line = entry(s, &id, kind, extra);
    s.append(line.as_bytes())?;
    Ok(id)
}

fn user(s: &mut Session, text: &str) -> Result<String, Error> {
    append(
        s,
        "message",
        &format!(r#","message":{{"role":"user","content":"{text}"}}"#),
    )
}

fn reopen(dir: &Path, file: &Path) -> Result<Session, Error> {
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true)?;
    s.set_session_file(file.to_path_buf())?;
    Ok(s)
}

#[test]
fn flush_writes_a_new_session_before_its_first_message_and_appends_continue_there() -> R {
    let dir = temp_dir("flush-early");
    let mut s = create(&dir)?;
    let model = append(&mut s, "model_change", r#","provider":"p","modelId":"m""#)?;
    let file = s.session_file().unwrap().to_path_buf();
    assert!(!file.exists());
    assert!(s.flush()?);
    let once = fs::read(&file).unwrap();
    assert_eq!(once.iter().filter(|&&b| b == b'\n').count(), 2);
    assert!(s.flush()?);
    assert_eq!(
        fs::read(&file).unwrap(),
        once,
        "a second flush changes nothing"
    );
    let question = user(&mut s, "hi")?;
    let back = reopen(&dir, &file)?;
    assert_eq!(back.entry_count(), 2);
    assert!(back.lookup(&format!("\"{model}\"")).is_some());
    assert_eq!(back.leaf_key(), Some(format!("\"{question}\"").as_str()));
    fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

#[test]
fn flush_of_an_in_memory_session_is_false_and_writes_nothing() -> R {
    let dir = temp_dir("flush-mem");
    let mut s = Session::blank("/w".into(), String::new(), false)?;
    s.new_session(None, None)?;
    user(&mut s, "hi")?;
    assert!(!s.flush()?);
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
    fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

#[test]
fn entry_positions_since_skips_the_first_entries_and_refuses_a_count_past_the_end() -> R {
    let dir = temp_dir("since");
    let mut s = create(&dir)?;
    for i in 0..4 {
        user(&mut s, &format!("m{i}"))?;
    }
    let all = s.entry_positions();
    assert_eq!(s.entry_positions_since(0), Some(all.clone()));
    assert_eq!(s.entry_positions_since(3), Some(all[3..].to_vec()));
    assert_eq!(s.entry_positions_since(4), Some(Vec::new()));
    assert_eq!(s.entry_positions_since(5), None);
    let back = reopen(&dir, s.session_file().unwrap())?;
    assert_eq!(back.entry_positions_since(2), Some(all[2..].to_vec()));
    fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

#[test]
fn a_reserved_id_is_taken_only_by_the_append_that_names_it() -> R {
    use pi_session_core::session::AppendHow;
    use pi_session_core::ErrorCode;
    let dir = temp_dir("reserve");
    let mut s = create(&dir)?;
    user(&mut s, "hi")?;
    let id = s.reserve_entry_id();
    let key = format!("\"{id}\"");
    assert!(s.lookup(&key).is_none());
    let line = entry(&s, &id, "custom", r#","customType":"x""#);
    // A plain append that happens to draw the reserved id is refused as taken (the binding
    // draws another).
    let err = s.append(line.as_bytes()).unwrap_err();
    assert_eq!(err.code, ErrorCode::IdTaken);
    let named = AppendHow {
        reserved: true,
        durable: false,
    };
    let pos = s.append_with(line.as_bytes(), false, named)?;
    assert_eq!(s.lookup(&key), Some(pos));
    // Used up: naming it again is a duplicate, and releasing it finds nothing.
    let again = entry(&s, &id, "custom", r#","customType":"y""#);
    let err = s.append_with(again.as_bytes(), false, named).unwrap_err();
    assert_eq!(err.code, ErrorCode::DuplicateEntryId);
    assert!(!s.release_entry_id(&key));
    let other = s.reserve_entry_id();
    let other_key = format!("\"{other}\"");
    assert!(s.release_entry_id(&other_key));
    let line = entry(&s, &other, "custom", r#","customType":"z""#);
    let err = s.append_with(line.as_bytes(), false, named).unwrap_err();
    assert_eq!(err.code, ErrorCode::EntryIdNotReserved);
    let back = reopen(&dir, s.session_file().unwrap())?;
    assert_eq!(back.leaf_key(), Some(key.as_str()));
    fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

#[test]
fn a_durable_append_writes_a_new_session_before_its_first_message() -> R {
    use pi_session_core::session::AppendHow;
    let dir = temp_dir("durable");
    let mut s = create(&dir)?;
    let id = s.next_entry_id();
    let line = entry(&s, &id, "model_change", r#","provider":"p","modelId":"m""#);
    let durable = AppendHow {
        reserved: false,
        durable: true,
    };
    s.append_with(line.as_bytes(), false, durable)?;
    let file = s.session_file().unwrap().to_path_buf();
    let back = reopen(&dir, &file)?;
    assert_eq!(back.entry_count(), 1);
    assert_eq!(back.leaf_key(), Some(format!("\"{id}\"").as_str()));
    fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

#[test]
fn restore_mode_writes_the_whole_session_back_after_its_directory_was_removed() -> R {
    let root = temp_dir("restore");
    let dir = root.join("sessions");
    let mut s = create(&dir)?;
    s.set_restore_missing(true);
    written_back_whole_after(&mut s, &dir, |_| fs::remove_dir_all(&dir).unwrap())?;
    fs::remove_dir_all(&root).unwrap();
    Ok(())
}

/// Two entries (the second long enough to be read back from the file rather than kept in
/// memory), then `take_away(file)`, then a third append: the file must hold what it held, then
/// the new line, and reopen with all three entries and the new leaf.
fn written_back_whole_after(s: &mut Session, dir: &Path, take_away: impl FnOnce(&Path)) -> R {
    user(s, "one")?;
    user(s, &"x".repeat(4096))?;
    let file = s.session_file().unwrap().to_path_buf();
    let written = fs::read(&file).unwrap();
    take_away(&file);
    let last = user(s, "three")?;
    let back = fs::read(&file).unwrap();
    assert_eq!(&back[..written.len()], &written[..]);
    let reopened = reopen(dir, &file)?;
    assert_eq!(reopened.entry_count(), 3);
    assert_eq!(reopened.leaf_key(), Some(format!("\"{last}\"").as_str()));
    Ok(())
}

#[test]
fn without_restore_mode_a_removed_directory_fails_the_append_with_enoent() -> R {
    let root = temp_dir("no-restore");
    let dir = root.join("sessions");
    let mut s = create(&dir)?;
    user(&mut s, "one")?;
    fs::remove_dir_all(&dir).unwrap();
    let err = user(&mut s, "two").unwrap_err();
    assert_eq!(err.js_code(), "ENOENT");
    assert!(!dir.exists());
    assert_eq!(s.entry_count(), 1);
    fs::remove_dir_all(&root).unwrap();
    Ok(())
}

#[test]
fn transcript_pages_tile_the_whole_branch_compaction_included() -> R {
    use pi_session_core::store::View;
    use pi_session_core::transcript::Transcript;
    let dir = temp_dir("transcript-pages");
    let mut s = create(&dir)?;
    let mut ids = Vec::new();
    for i in 0..7 {
        ids.push(user(&mut s, &format!("m{i}"))?);
    }
    // A compaction keeping the last three messages narrows the context, not the transcript.
    let kept = ids[4].clone();
    append(
        &mut s,
        "compaction",
        &format!(r#","summary":"s","firstKeptEntryId":"{kept}","tokensBefore":1"#),
    )?;
    append(
        &mut s,
        "label",
        &format!(r#","targetId":"{kept}","label":"x""#),
    )?;
    user(&mut s, "after")?;
    let view = View::from(&s);
    let t = Transcript::of(view, view.branch_from(view.leaf_key()));
    assert_eq!(
        t.total(),
        9,
        "seven messages, the summary, one more message; the label makes none"
    );
    assert_eq!(t.items_after_latest_compaction(), 1);
    let mut forward = Vec::new();
    let mut anchor = 0;
    loop {
        let page = t.page(Some(anchor), 2, false);
        if page.is_empty() {
            break;
        }
        anchor = page.end;
        forward.extend(page.map(|i| t.locate(i)));
    }
    let mut backward = Vec::new();
    let mut anchor = None;
    loop {
        let page = t.page(anchor, 2, true);
        let mut items: Vec<_> = page.clone().map(|i| t.locate(i)).collect();
        items.append(&mut backward);
        backward = items;
        if page.start == 0 {
            break;
        }
        anchor = Some(page.start);
    }
    assert_eq!(forward, backward);
    assert_eq!(forward.len(), 9);
    let positions: Vec<u32> = forward.iter().map(|&(p, _)| p).collect();
    let mut sorted = positions.clone();
    sorted.sort_unstable();
    assert_eq!(positions, sorted, "root to leaf, each item once");
    Ok(())
}

#[test]
fn a_deleted_session_file_is_written_back_whole_without_restore_mode() -> R {
    let dir = temp_dir("vanished-file");
    let mut s = create(&dir)?;
    assert!(!s.restores_missing());
    written_back_whole_after(&mut s, &dir, |file| fs::remove_file(file).unwrap())?;
    fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

#[test]
fn a_named_reservation_is_refused_for_an_id_in_use_with_upstreams_words() -> R {
    use pi_session_core::ErrorCode;
    let dir = temp_dir("reserve-named");
    let mut s = create(&dir)?;
    let id = user(&mut s, "hi")?;
    let err = s.reserve_named_entry_id(&format!("\"{id}\"")).unwrap_err();
    assert_eq!(err.code, ErrorCode::DuplicateEntryId);
    assert_eq!(
        err.message,
        format!("Session entry ID already exists: {id}")
    );
    s.reserve_named_entry_id("\"mine-1\"")?;
    let err = s.reserve_named_entry_id("\"mine-1\"").unwrap_err();
    assert_eq!(err.code, ErrorCode::DuplicateEntryId);
    assert!(s.release_entry_id("\"mine-1\""));
    fs::remove_dir_all(&dir).unwrap();
    Ok(())
}
