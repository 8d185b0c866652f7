//! `rm`: confirmation rules, the `trash` command when there is one, plain deletion otherwise.

mod common;
use common::*;

use std::io::Cursor;
use std::sync::Mutex;

#[test]
fn without_a_terminal_rm_needs_yes() {
    let w = World::new("rm-yes");
    let p = w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    let o = w.run(&["rm", p.to_str().unwrap()]);
    assert_eq!(o.code, 2);
    assert!(o.err.contains("pass --yes"));
    assert!(p.exists());
    let y = w.run(&["rm", p.to_str().unwrap(), "--yes"]);
    assert_eq!(y.code, 0, "{}", y.err);
    assert!(y.out.starts_with("Deleted "));
    assert!(!p.exists());
}

#[test]
fn on_a_terminal_rm_asks_and_only_yes_deletes() {
    let w = World::new("rm-ask");
    let p = w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    let mut env = w.env();
    env.is_tty_in = true;
    env.stdin = Mutex::new(Box::new(Cursor::new(b"n\n".to_vec())));
    let no = w.run_with(&env, &["rm", "0193f0a0"]);
    assert_eq!(no.code, 0);
    assert!(no.err.contains("Delete “Listing files”"), "{}", no.err);
    assert!(no.out.starts_with("Kept"));
    assert!(p.exists());
    env.stdin = Mutex::new(Box::new(Cursor::new(b"y\n".to_vec())));
    let yes = w.run_with(&env, &["rm", "0193f0a0"]);
    assert_eq!(yes.code, 0);
    assert!(!p.exists());
}

#[cfg(unix)]
#[test]
fn a_trash_command_on_the_path_is_used() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new("rm-trash");
    let p = w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    let bin = w.root.join("bin");
    let can = w.root.join("can");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&can).unwrap();
    let script = bin.join("trash");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nmv \"$@\" '{}'/\n", can.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut env = w.env();
    env.path_var = Some(bin.into_os_string());
    let o = w.run_with(&env, &["rm", p.to_str().unwrap(), "-y"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.starts_with("Moved to the trash"), "{}", o.out);
    assert!(!p.exists());
    assert!(can.join("a.jsonl").exists());
}
