//! Time `Session::append` on an in-memory session: `cargo run --release --example append_profile`.
use std::time::Instant;

fn main() {
    let mut s = pi_session_core::Session::blank("/w".into(), String::new(), false).unwrap();
    s.new_session(None, None).unwrap();
    let n = 20_000;
    let lines: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"type":"message","id":"id{i}","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{{"role":"user","content":"x"}}}}"#))
        .collect();
    let t = Instant::now();
    for l in &lines {
        s.append(l.as_bytes()).unwrap();
    }
    println!("append: {:?}/op", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        let _ = s.next_entry_id();
    }
    println!("next_entry_id: {:?}/op", t.elapsed() / n);
    let big = format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":"{}"}}],"provider":"p","model":"m","usage":{{"input":1,"output":2}},"timestamp":2}}"#,
        "hello ".repeat(50)
    );
    let lines: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"type":"message","id":"big{i}","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{big}}}"#))
        .collect();
    let t = Instant::now();
    for l in &lines {
        let _ = pi_session_core::record::read_meta(l.as_bytes());
    }
    println!("read_meta 450B: {:?}/op", t.elapsed() / n);
    let t = Instant::now();
    for l in &lines {
        s.append(l.as_bytes()).unwrap();
    }
    println!("append 450B: {:?}/op", t.elapsed() / n);
}
