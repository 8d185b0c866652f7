//! Profile target: `Session::append` of a 450-byte assistant line, in memory.
use std::time::Instant;

fn main() {
    let mut s = pi_session_core::Session::blank("/w".into(), String::new(), false).unwrap();
    s.new_session(None, None).unwrap();
    let n = 200_000u32;
    let big = format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":"{}"}}],"provider":"p","model":"m","usage":{{"input":1,"output":2}},"timestamp":2}}"#,
        "hello ".repeat(50)
    );
    let lines: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"type":"message","id":"{i:08x}","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{big}}}"#))
        .collect();
    let t = Instant::now();
    for l in &lines {
        s.append(l.as_bytes()).unwrap();
    }
    println!("append 450B: {:?}/op", t.elapsed() / n);
}
