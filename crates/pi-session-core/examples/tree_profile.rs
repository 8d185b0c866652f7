//! Time `tree::tree_plan` (the core of `getTree()`): `cargo run --release --example tree_profile -- FILE`.
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
            n += tree::tree_plan(&s).len();
        }
        println!("tree_plan: {:?} per call ({n})", t.elapsed() / 200);
    }
}
