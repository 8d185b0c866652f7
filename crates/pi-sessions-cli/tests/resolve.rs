//! Session arguments: paths, full ids, unique prefixes, ambiguous and unknown ids.

mod common;
use common::*;

fn world() -> World {
    let w = World::new("resolve");
    let a = r#"{"type":"session","version":3,"id":"0193aaaa-1111-7000-8000-000000000001","timestamp":"2025-01-15T10:00:00.000Z","cwd":"/p"}"#;
    let b = r#"{"type":"session","version":3,"id":"0193aaaa-2222-7000-8000-000000000002","timestamp":"2025-01-15T10:00:00.000Z","cwd":"/q"}"#;
    let m = r#"{"type":"message","id":"x1","parentId":null,"timestamp":"2025-01-15T10:00:01.000Z","message":{"role":"user","content":"hello"}}"#;
    w.write("/p", "a.jsonl", &format!("{a}\n{m}\n"));
    w.write("/q", "b.jsonl", &format!("{b}\n{m}\n"));
    w
}

#[test]
fn a_unique_prefix_finds_the_session_in_any_project() {
    let w = world();
    let o = w.run(&["show", "0193aaaa-2", "--json"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(
        s(json(&o.out).get("id")).unwrap(),
        "0193aaaa-2222-7000-8000-000000000002"
    );
    let full = w.run(&["show", "0193aaaa-1111-7000-8000-000000000001", "--json"]);
    assert_eq!(full.code, 0);
}

#[test]
fn an_ambiguous_prefix_lists_the_candidates_and_exits_2() {
    let w = world();
    let o = w.run(&["show", "0193aaaa"]);
    assert_eq!(o.code, 2);
    assert!(o.err.contains("ambiguous: 2 sessions match"), "{}", o.err);
    assert!(o.err.contains("0193aaaa-1111-7000-8000-000000000001"));
    assert!(o.err.contains("0193aaaa-2222-7000-8000-000000000002"));
    assert!(o.err.contains("b.jsonl"));
}

#[test]
fn an_unknown_id_exits_3_naming_where_it_looked() {
    let w = world();
    let o = w.run(&["tree", "ffff"]);
    assert_eq!(o.code, 3);
    assert!(
        o.err.contains("no session with an id starting with ffff"),
        "{}",
        o.err
    );
    assert!(o.err.contains("sessions"));
}
