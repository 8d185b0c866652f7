//! Ownership leases (`<file>.lock`): exclusive mode, default mode's respect for a live lease,
//! takeover of stale leases. Each scenario works in its own temp dir.

use std::fs;
use std::path::{Path, PathBuf};

use pi_session_core::lock::{self, lock_path};
use pi_session_core::{Error, ErrorCode, Session};

mod common;
use common::temp_dir;

type R = Result<(), Error>;

/// A session file with a header and one user message.
fn session_file(dir: &Path) -> PathBuf {
    let file = dir.join("s.jsonl");
    fs::write(
        &file,
        concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
            "\n"
        ),
    )
    .unwrap();
    file
}

fn manager(dir: &Path, exclusive: bool) -> Result<Session, Error> {
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true)?;
    s.set_exclusive(exclusive)?;
    Ok(s)
}

fn append(s: &mut Session) -> Result<String, Error> {
    let id = s.next_entry_id();
    let parent = s.leaf_key().unwrap_or("null").to_string();
    let line = format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2024-01-02T00:00:00.000Z","message":{{"role":"assistant","content":"ok"}}}}"#
    );
    s.append(line.as_bytes())?;
    Ok(id)
}

fn lease_text(pid: u32, host: &str, nonce: &str, proc_start: Option<u64>) -> String {
    let ps = proc_start
        .map(|p| format!(",\"procStart\":{p}"))
        .unwrap_or_default();
    format!(
        "{{\"pid\":{pid},\"hostname\":\"{host}\",\"startedAt\":\"2024-01-01T00:00:00.000Z\",\"nonce\":\"{nonce}\"{ps}}}\n"
    )
}

fn lease_pid(file: &Path) -> Option<u32> {
    let text = fs::read_to_string(lock_path(file)).ok()?;
    let rest = &text[text.find("\"pid\":")? + 6..];
    rest[..rest.find(',')?].parse().ok()
}

/// The pid of a process that has exited (and was reaped).
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn an_exclusive_manager_takes_the_lease_on_open_and_a_second_one_is_refused_with_the_pid() -> R {
    let dir = temp_dir("second");
    let file = session_file(&dir);
    let mut first = manager(&dir, true)?;
    first.set_session_file(file.clone())?;
    assert_eq!(lease_pid(&file), Some(std::process::id()));

    let mut second = manager(&dir, true)?;
    let err = second.set_session_file(file.clone()).unwrap_err();
    assert_eq!(err.code, ErrorCode::SessionLocked);
    assert_eq!(err.js_code(), "SESSION_LOCKED");
    assert!(
        err.message.contains(&format!("pid {}", std::process::id())),
        "{}",
        err.message
    );
    // The refused open changed nothing: the second manager is still on no file.
    assert_eq!(second.session_file(), None);
    append(&mut first)?;
    Ok(())
}

#[test]
fn a_default_manager_refuses_to_write_while_a_live_manager_holds_the_lease() -> R {
    let dir = temp_dir("default");
    let file = session_file(&dir);
    let mut holder = manager(&dir, true)?;
    holder.set_session_file(file.clone())?;

    // Opening is allowed (reading is not writing); the first write is refused and rolled back.
    let mut other = manager(&dir, false)?;
    other.set_session_file(file.clone())?;
    let (count, leaf) = (other.entry_count(), other.leaf());
    let err = append(&mut other).unwrap_err();
    assert_eq!(err.code, ErrorCode::SessionLocked);
    assert_eq!((other.entry_count(), other.leaf()), (count, leaf));

    holder.set_exclusive(false)?;
    assert!(
        !lock_path(&file).exists(),
        "leaving exclusive mode releases"
    );
    append(&mut other)?;
    Ok(())
}

#[test]
fn two_default_managers_share_a_file_and_take_no_lease() -> R {
    let dir = temp_dir("shared");
    let file = session_file(&dir);
    let mut a = manager(&dir, false)?;
    let mut b = manager(&dir, false)?;
    a.set_session_file(file.clone())?;
    b.set_session_file(file.clone())?;
    append(&mut a)?;
    append(&mut b)?;
    append(&mut a)?;
    assert!(!lock_path(&file).exists());
    assert_eq!(fs::read_to_string(&file).unwrap().lines().count(), 5);
    Ok(())
}

#[test]
fn a_lease_of_a_dead_pid_on_this_host_is_taken_over() -> R {
    let dir = temp_dir("stale");
    let file = session_file(&dir);
    let dead = dead_pid();
    fs::write(
        lock_path(&file),
        lease_text(dead, &lock::hostname(), "old", None),
    )
    .unwrap();
    assert_eq!(lock::live_holder(&file)?, None);
    let mut s = manager(&dir, true)?;
    s.set_session_file(file.clone())?;
    assert_eq!(lease_pid(&file), Some(std::process::id()));
    append(&mut s)?;
    Ok(())
}

#[test]
fn a_lease_left_by_an_earlier_process_with_our_pid_is_taken_over() -> R {
    let dir = temp_dir("ourpid");
    let file = session_file(&dir);
    fs::write(
        lock_path(&file),
        lease_text(std::process::id(), &lock::hostname(), "not-ours", None),
    )
    .unwrap();
    let mut s = manager(&dir, true)?;
    s.set_session_file(file.clone())?;
    assert!(fs::read_to_string(lock_path(&file))
        .unwrap()
        .contains(&format!("\"pid\":{}", std::process::id())));
    assert!(!fs::read_to_string(lock_path(&file))
        .unwrap()
        .contains("not-ours"));
    Ok(())
}

#[cfg(target_os = "linux")]
#[test]
fn a_lease_whose_pid_now_belongs_to_a_later_process_is_taken_over() -> R {
    let dir = temp_dir("reused");
    let file = session_file(&dir);
    // pid 1 is alive, but it did not start at tick 1 of the clock after boot... unless it did.
    let fake_start = 987_654_321_u64;
    fs::write(
        lock_path(&file),
        lease_text(1, &lock::hostname(), "reused", Some(fake_start)),
    )
    .unwrap();
    let mut s = manager(&dir, true)?;
    s.set_session_file(file.clone())?;
    assert_eq!(lease_pid(&file), Some(std::process::id()));
    Ok(())
}

#[test]
fn a_lease_from_another_host_is_never_taken_over() -> R {
    let dir = temp_dir("remote");
    let file = session_file(&dir);
    fs::write(
        lock_path(&file),
        lease_text(dead_pid(), "some-other-host.example", "remote", None),
    )
    .unwrap();
    let mut s = manager(&dir, true)?;
    let err = s.set_session_file(file.clone()).unwrap_err();
    assert_eq!(err.code, ErrorCode::SessionLocked);
    assert!(err.message.contains("some-other-host.example"));
    Ok(())
}

#[test]
fn an_unreadable_lease_blocks_only_while_it_is_fresh() -> R {
    let dir = temp_dir("garbage");
    let file = session_file(&dir);
    fs::write(lock_path(&file), "").unwrap();
    let mut s = manager(&dir, true)?;
    let err = s.set_session_file(file.clone()).unwrap_err();
    assert_eq!(err.code, ErrorCode::SessionLocked);
    assert!(err.message.contains("pid unknown"), "{}", err.message);
    // Backdate it: garbage older than a few seconds is taken over.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    fs::File::options()
        .write(true)
        .open(lock_path(&file))
        .unwrap()
        .set_modified(old)
        .unwrap();
    s.set_session_file(file.clone())?;
    assert_eq!(lease_pid(&file), Some(std::process::id()));
    Ok(())
}

#[test]
fn the_lease_follows_the_session_and_is_released_on_drop() -> R {
    let dir = temp_dir("follow");
    let file = session_file(&dir);
    let mut s = manager(&dir, true)?;
    s.set_session_file(file.clone())?;
    assert!(lock_path(&file).exists());

    // A new session releases the old file's lease; the new file's is taken at its first write.
    let new_file = s.new_session(None, None)?.file.unwrap();
    assert!(!lock_path(&file).exists());
    assert!(!lock_path(&new_file).exists());
    let id = s.next_entry_id();
    s.append(format!(r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2024-01-02T00:00:00.000Z","message":{{"role":"user","content":"go"}}}}"#).as_bytes())?;
    assert!(new_file.exists());
    assert_eq!(lease_pid(&new_file), Some(std::process::id()));
    drop(s);
    assert!(
        !lock_path(&new_file).exists(),
        "dropping the manager releases"
    );
    Ok(())
}

#[test]
fn a_lease_taken_over_by_someone_else_is_not_removed_by_its_former_holder() -> R {
    let dir = temp_dir("notours");
    let file = session_file(&dir);
    let mut s = manager(&dir, true)?;
    s.set_session_file(file.clone())?;
    // Someone deleted our lease by hand and another process took the file.
    let theirs = lease_text(1, "elsewhere.example", "theirs", None);
    fs::write(lock_path(&file), &theirs).unwrap();
    drop(s);
    assert_eq!(fs::read_to_string(lock_path(&file)).unwrap(), theirs);
    Ok(())
}

#[test]
fn exclusive_mode_on_an_existing_file_takes_the_lease_at_once_and_stays_on_when_refused() -> R {
    let dir = temp_dir("seton");
    let file = session_file(&dir);
    let mut holder = manager(&dir, false)?;
    holder.set_session_file(file.clone())?;
    holder.set_exclusive(true)?;
    assert_eq!(lease_pid(&file), Some(std::process::id()));

    let mut late = manager(&dir, false)?;
    late.set_session_file(file.clone())?;
    assert_eq!(
        late.set_exclusive(true).unwrap_err().code,
        ErrorCode::SessionLocked
    );
    assert!(late.is_exclusive());
    assert_eq!(
        append(&mut late).unwrap_err().code,
        ErrorCode::SessionLocked
    );
    drop(holder);
    append(&mut late)?;
    assert_eq!(lease_pid(&file), Some(std::process::id()));
    Ok(())
}
