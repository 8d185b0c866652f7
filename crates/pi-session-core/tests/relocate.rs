//! `relocate`: a moved set with a `parentSession` inside and one outside it, the re-run no-op,
//! resuming after a crash (destination written, old file kept and grown), a destination that is
//! another session, and a file under a live writer lease.

use std::fs;
use std::path::{Path, PathBuf};

use pi_session_core::lock;
use pi_session_core::paths;
use pi_session_core::relocate::{apply, plan, Action, Done, Skip};

const OLD: &str = "/tmp/pi-reloc-old";
const NEW: &str = "/tmp/pi-reloc-new";
const ENTRY: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#;
const MORE: &str = r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":"yo"}}"#;

fn agent(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pi-relocate-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn dir(agent: &Path, cwd: &str) -> PathBuf {
    paths::default_session_dir(&agent.to_string_lossy(), cwd)
}

fn header(id: &str, cwd: &str, parent: Option<&str>) -> String {
    let p = parent.map_or(String::new(), |p| format!(r#","parentSession":"{p}""#));
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{cwd}"{p}}}"#
    )
}

fn put(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn run(agent: &Path) -> Vec<Done> {
    let p = plan(&agent.to_string_lossy(), OLD, NEW).unwrap();
    apply(&p)
}

#[test]
fn a_set_moves_with_its_inner_parent_link_rewritten_and_the_outer_one_kept() {
    let a = agent("set");
    let old = dir(&a, OLD);
    let new = dir(&a, NEW);
    let parent = old.join("p.jsonl");
    let outside = "/elsewhere/x.jsonl";
    put(
        &parent,
        &format!("{}\n{ENTRY}\n{{broken\n", header("p", OLD, None)),
    );
    let child_text = format!(
        "{}\n{ENTRY}\r\n{MORE}\n",
        header("c", OLD, Some(&parent.to_string_lossy()))
    );
    put(&old.join("c.jsonl"), &child_text);
    put(
        &old.join("o.jsonl"),
        &format!("{}\n{ENTRY}\n", header("o", OLD, Some(outside))),
    );

    let p = plan(&a.to_string_lossy(), OLD, NEW).unwrap();
    assert_eq!(p.files.len(), 3);
    assert!(p.files.iter().all(|f| f.action == Action::Move));
    let c = p
        .files
        .iter()
        .find(|f| f.from.ends_with("c.jsonl"))
        .unwrap();
    assert_eq!(c.to, new.join("c.jsonl"));
    let fields: Vec<&str> = c.rewrites.iter().map(|r| r.field).collect();
    assert_eq!(fields, ["cwd", "parentSession"]);
    let o = p
        .files
        .iter()
        .find(|f| f.from.ends_with("o.jsonl"))
        .unwrap();
    assert_eq!(o.rewrites.len(), 1);
    // A plan changes nothing.
    assert!(!new.exists());

    let done = apply(&p);
    assert!(
        done.iter()
            .all(|d| matches!(d, Done::Moved { tail: 0, .. })),
        "{done:?}"
    );
    assert!(fs::read_dir(&old).unwrap().next().is_none());
    let new_parent = new.join("p.jsonl");
    assert_eq!(
        fs::read_to_string(&new_parent).unwrap(),
        format!("{}\n{ENTRY}\n{{broken\n", header("p", NEW, None))
    );
    assert_eq!(
        fs::read_to_string(new.join("c.jsonl")).unwrap(),
        format!(
            "{}\n{ENTRY}\r\n{MORE}\n",
            header("c", NEW, Some(&new_parent.to_string_lossy()))
        )
    );
    assert_eq!(
        fs::read_to_string(new.join("o.jsonl")).unwrap(),
        format!("{}\n{ENTRY}\n", header("o", NEW, Some(outside)))
    );

    // Once done, a second run finds nothing to move.
    let again = plan(&a.to_string_lossy(), OLD, NEW).unwrap();
    assert!(again.files.is_empty());
    assert!(apply(&again).is_empty());
    let _ = fs::remove_dir_all(&a);
}

#[test]
fn a_crashed_move_is_completed_with_what_the_old_file_gained_meanwhile() {
    let a = agent("resume");
    let old = dir(&a, OLD).join("s.jsonl");
    let new = dir(&a, NEW).join("s.jsonl");
    // The crash: the destination was written, the old file not removed, and pi appended to it.
    put(
        &old,
        &format!("{}\n{ENTRY}\n{MORE}\n", header("s", OLD, None)),
    );
    put(&new, &format!("{}\n{ENTRY}\n", header("s", NEW, None)));

    let p = plan(&a.to_string_lossy(), OLD, NEW).unwrap();
    assert_eq!(
        p.files[0].action,
        Action::Resume {
            tail: MORE.len() as u64 + 1
        }
    );
    let done = run(&a);
    assert!(matches!(done[..], [Done::Moved { tail, .. }] if tail == MORE.len() as u64 + 1));
    assert!(!old.exists());
    assert_eq!(
        fs::read_to_string(&new).unwrap(),
        format!("{}\n{ENTRY}\n{MORE}\n", header("s", NEW, None))
    );

    // A crash with nothing appended since: only the old file goes.
    put(
        &old,
        &format!("{}\n{ENTRY}\n{MORE}\n", header("s", OLD, None)),
    );
    let done = run(&a);
    assert!(
        matches!(done[..], [Done::Moved { tail: 0, .. }]),
        "{done:?}"
    );
    assert!(!old.exists());
    assert_eq!(
        fs::read_to_string(&new).unwrap(),
        format!("{}\n{ENTRY}\n{MORE}\n", header("s", NEW, None))
    );
    let _ = fs::remove_dir_all(&a);
}

#[test]
fn a_destination_of_another_session_or_grown_apart_is_left_and_the_others_move() {
    let a = agent("conflict");
    let old = dir(&a, OLD);
    let new = dir(&a, NEW);
    put(
        &old.join("x.jsonl"),
        &format!("{}\n{ENTRY}\n", header("x", OLD, None)),
    );
    put(
        &new.join("x.jsonl"),
        &format!("{}\n{ENTRY}\n", header("other", NEW, None)),
    );
    put(
        &old.join("d.jsonl"),
        &format!("{}\n{ENTRY}\n{MORE}\n", header("d", OLD, None)),
    );
    put(
        &new.join("d.jsonl"),
        &format!("{}\n{MORE}\n", header("d", NEW, None)),
    );
    put(
        &old.join("y.jsonl"),
        &format!("{}\n{ENTRY}\n", header("y", OLD, None)),
    );

    let done = run(&a);
    assert!(
        matches!(&done[0], Done::Skipped(Skip::Diverged)),
        "{done:?}"
    );
    assert!(
        matches!(&done[1], Done::Skipped(Skip::OtherSession { dest_id }) if dest_id.as_deref() == Some("other")),
        "{done:?}"
    );
    assert!(matches!(done[2], Done::Moved { .. }));
    assert!(old.join("x.jsonl").exists() && old.join("d.jsonl").exists());
    assert!(fs::read_to_string(new.join("x.jsonl"))
        .unwrap()
        .contains("\"other\""));
    assert!(!old.join("y.jsonl").exists() && new.join("y.jsonl").exists());
    let _ = fs::remove_dir_all(&a);
}

#[test]
fn a_file_under_a_live_writer_lease_is_skipped() {
    let a = agent("lease");
    let old = dir(&a, OLD);
    let held = old.join("h.jsonl");
    put(&held, &format!("{}\n{ENTRY}\n", header("h", OLD, None)));
    put(
        &old.join("f.jsonl"),
        &format!("{}\n{ENTRY}\n", header("f", OLD, None)),
    );
    let lease = lock::acquire(&held).unwrap();

    let p = plan(&a.to_string_lossy(), OLD, NEW).unwrap();
    assert!(
        matches!(p.files[1].action, Action::Skip(Skip::Locked { pid, .. }) if pid == std::process::id())
    );
    let done = apply(&p);
    assert!(
        matches!(&done[1], Done::Skipped(Skip::Locked { .. })),
        "{done:?}"
    );
    assert!(matches!(done[0], Done::Moved { .. }));
    assert!(held.exists());
    assert!(!dir(&a, NEW).join("h.jsonl").exists());

    drop(lease);
    let done = run(&a);
    assert!(matches!(done[..], [Done::Moved { .. }]), "{done:?}");
    assert!(!held.exists() && !lock::lock_path(&held).exists());
    let _ = fs::remove_dir_all(&a);
}

#[test]
fn what_pi_appends_during_the_copy_is_carried_over_and_a_kill_before_the_link_loses_nothing() {
    use pi_session_core::fault::{self, Point};
    use std::panic::{catch_unwind, AssertUnwindSafe};

    let a = agent("grow");
    let old = dir(&a, OLD).join("g.jsonl");
    let new = dir(&a, NEW).join("g.jsonl");
    put(&old, &format!("{}\n{ENTRY}\n", header("g", OLD, None)));

    // Killed with the copy complete but not yet in place: the old file is untouched.
    {
        let _guard = fault::set_hook(|p, _| {
            if p == Point::BeforeLink {
                panic!("simulated kill at {p:?}");
            }
            Ok(())
        });
        assert!(catch_unwind(AssertUnwindSafe(|| run(&a))).is_err());
    }
    assert!(!new.exists());
    assert_eq!(
        fs::read_to_string(&old).unwrap(),
        format!("{}\n{ENTRY}\n", header("g", OLD, None))
    );

    // Stock pi appends (reopening the path) while the copy is written.
    let grow = old.clone();
    let done = {
        let _guard = fault::set_hook(move |p, _| {
            if p == Point::BeforeLink {
                let mut f = fs::OpenOptions::new().append(true).open(&grow).unwrap();
                std::io::Write::write_all(&mut f, format!("{MORE}\n").as_bytes()).unwrap();
            }
            Ok(())
        });
        run(&a)
    };
    assert!(
        matches!(done[..], [Done::Moved { tail, .. }] if tail == MORE.len() as u64 + 1),
        "{done:?}"
    );
    assert!(!old.exists());
    assert_eq!(
        fs::read_to_string(&new).unwrap(),
        format!("{}\n{ENTRY}\n{MORE}\n", header("g", NEW, None))
    );
    let _ = fs::remove_dir_all(&a);
}

/// Appends one line the way stock pi does (open the path, append, close; the file is made when
/// missing), and says it was written.
fn pi_append(path: &Path, line: &str) -> bool {
    use std::io::Write;
    fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()))
        .is_ok()
}

#[test]
fn every_line_pi_appends_while_the_old_file_is_retired_is_kept() {
    for round in 0..6 {
        let a = agent(&format!("retire-{round}"));
        let old = dir(&a, OLD);
        let new = dir(&a, NEW);
        // Other sessions first, so the writer runs while the whole set moves.
        for i in 0..12 {
            put(
                &old.join(format!("a{i:02}.jsonl")),
                &format!("{}\n{ENTRY}\n", header(&format!("a{i}"), OLD, None)),
            );
        }
        let live = old.join("z-live.jsonl");
        put(&live, &format!("{}\n{ENTRY}\n", header("live", OLD, None)));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (live, stop) = (live.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let line =
                        format!(r#"{{"type":"custom","id":"w{n}","parentId":"a1","n":{n}}}"#);
                    if pi_append(&live, &line) {
                        acked.push(line);
                    }
                    n += 1;
                    std::thread::sleep(std::time::Duration::from_micros(200 + 150 * round));
                }
                acked
            })
        };
        let done = run(&a);
        std::thread::sleep(std::time::Duration::from_millis(10));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let acked = writer.join().unwrap();
        assert!(
            done.iter().all(|d| matches!(d, Done::Moved { .. })),
            "{done:?}"
        );
        let moved = fs::read_to_string(new.join("z-live.jsonl")).unwrap();
        assert!(moved.starts_with(&header("live", NEW, None)));
        // Lines pi wrote after the move made a new file at the old path: kept, not lost.
        let late = fs::read_to_string(&live).unwrap_or_default();
        let mut seen: Vec<&str> = moved.lines().chain(late.lines()).collect();
        for line in &acked {
            let at = seen.iter().position(|l| l == line);
            assert!(at.is_some(), "round {round}: {line} was lost");
            seen.remove(at.unwrap());
        }
        assert!(acked.len() > 20, "the writer ran during the move");
        let _ = fs::remove_dir_all(&a);
    }
}
