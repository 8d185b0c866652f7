//! Time `forkFrom` and `createBranchedSession` on a big file, and their building blocks:
//! `cargo run --release --example fork_profile -- FILE`.
use std::time::Instant;

use pi_session_core::{json, record, session, Session};

fn main() {
    let path = std::env::args().nth(1).expect("usage: fork_profile FILE");
    let dir = std::env::temp_dir().join(format!("fork-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = Instant::now();
    let bytes = std::fs::read(&path).unwrap();
    println!("read: {:?}", t.elapsed());
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let t = Instant::now();
    let n = lines.iter().filter(|l| json::validate(l)).count();
    println!("validate: {:?} ({n})", t.elapsed());
    let t = Instant::now();
    let n = lines.iter().filter(|l| json::is_canonical(l)).count();
    println!("is_canonical: {:?} ({n})", t.elapsed());
    let t = Instant::now();
    let n = lines
        .iter()
        .filter(|l| record::read_meta(l).is_some())
        .count();
    println!("read_meta: {:?} ({n})", t.elapsed());
    let t = Instant::now();
    let n = lines
        .iter()
        .filter(|l| record::read_meta_trusted(l).is_some())
        .count();
    println!("read_meta_trusted: {:?} ({n})", t.elapsed());
    drop(lines);
    drop(bytes);
    for round in 0..3 {
        let d = dir.join(format!("f{round}"));
        let t = Instant::now();
        let f = session::fork(path.as_ref(), "/tmp/x", &d, None, Default::default()).unwrap();
        let a = t.elapsed();
        let t = Instant::now();
        let mut s = Session::blank("/tmp/x".into(), d.to_string_lossy().into(), true).unwrap();
        s.set_session_file_forked(f).unwrap();
        println!("fork: {a:?}, open of the fork: {:?}", t.elapsed());
        let _ = std::fs::remove_dir_all(&d);
    }
    for round in 0..3 {
        let d = dir.join(format!("b{round}"));
        let mut s = Session::blank("/tmp/x".into(), d.to_string_lossy().into(), true).unwrap();
        s.set_session_file(path.clone().into()).unwrap();
        let leaf = s.leaf_key().map(str::to_owned);
        let t = Instant::now();
        s.create_branched_session(leaf.as_deref(), "leaf").unwrap();
        println!("create_branched_session: {:?}", t.elapsed());
        let _ = std::fs::remove_dir_all(&d);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
