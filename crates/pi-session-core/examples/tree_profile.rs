//! Time `tree::tree` (the core of `getTree()`): `cargo run --release --example tree_profile -- FILE`.
use std::time::Instant;

use pi_session_core::{tree, Session};

fn main() {
    let path = std::env::args().nth(1).expect("usage: tree_profile FILE");
    let mut s = Session::blank("/w".into(), String::new(), false).unwrap();
    s.set_session_file(path.into()).unwrap();
    for _ in 0..5 {
        let t = Instant::now();
        let mut n = 0;
        for _ in 0..200 {
            n += tree::tree(&s).nodes.len();
        }
        println!("tree: {:?} per call ({n})", t.elapsed() / 200);
    }
}
