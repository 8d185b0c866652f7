//! Time the phases of opening a session file: `cargo run --release --example load_profile -- FILE`.
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: load_profile FILE");
    let bytes = std::fs::read(&path).unwrap();
    let t = Instant::now();
    let mut n = 0;
    for line in bytes.split(|&b| b == b'\n') {
        if pi_session_core::json::validate(line) {
            n += 1;
        }
    }
    println!("validate all lines: {:?} ({n} lines)", t.elapsed());
    let t = Instant::now();
    for line in bytes.split(|&b| b == b'\n') {
        let _ = pi_session_core::json::top_level_members(line);
    }
    println!("top_level_members: {:?}", t.elapsed());
    let t = Instant::now();
    for line in bytes.split(|&b| b == b'\n') {
        let _ = pi_session_core::record::read_meta(line);
    }
    println!("read_meta: {:?}", t.elapsed());
    let t = Instant::now();
    let mut s = pi_session_core::Session::blank("/w".into(), "/tmp".into(), false).unwrap();
    s.set_session_file(path.clone().into()).unwrap();
    println!(
        "set_session_file: {:?} ({} entries)",
        t.elapsed(),
        s.entry_count()
    );
}
