//! `search`: case-insensitive matches with snippets, exit 1 without a match.

mod common;
use common::*;

#[test]
fn search_finds_sessions_with_snippets_ignoring_case() {
    let w = World::new("search");
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    w.add(FIXTURE_CWD, "torn-last-line.jsonl", "b.jsonl");
    let o = w.run(&["search", "TWO FILES"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.starts_with("Listing files  0193f0a0"), "{}", o.out);
    assert!(
        o.out
            .contains("assistant e0000007: There are two files: a.ts and b.ts."),
        "{}",
        o.out
    );
    assert!(o.out.contains("1 session in"));
    let j = json(&w.run(&["search", "ls src", "--json"]).out);
    let hits = arr(&j);
    assert_eq!(hits.len(), 1);
    assert_eq!(n(hits[0].get("matches")), Some(1.0));
    let sn = &arr(hits[0].get("snippets").unwrap())[0];
    assert_eq!(s(sn.get("entryId")).unwrap(), "e0000005");
    assert!(s(sn.get("text")).unwrap().contains("ls src"));
}

#[test]
fn search_reaches_tool_output_summaries_and_extension_messages() {
    let w = World::new("search-kinds");
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    for (q, id) in [
        ("b.ts", "e0000006"),
        ("alternative reply", "e0000011"),
        ("run tests", "e0000015"),
    ] {
        let j = json(&w.run(&["search", q, "--json"]).out);
        let ids: Vec<String> = arr(arr(&j)[0].get("snippets").unwrap())
            .iter()
            .map(|x| s(x.get("entryId")).unwrap())
            .collect();
        assert!(ids.contains(&id.to_owned()), "{q}: {ids:?}");
    }
}

#[test]
fn no_match_exits_with_3_not_found() {
    let w = World::new("search-none");
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    let o = w.run(&["search", "nothing like this"]);
    assert_eq!(o.code, 3);
    assert!(o.out.contains("No session in"));
    let j = w.run(&["search", "nothing like this", "--json"]);
    assert_eq!((j.code, j.out.as_str()), (3, "[]\n"));
    assert_eq!(w.run(&["search"]).code, 2);
}

#[test]
fn unicode_case_folding_and_snippet_bounds_hold() {
    let w = World::new("search-unicode");
    w.write(
        FIXTURE_CWD,
        "u.jsonl",
        concat!(
            r#"{"type":"session","version":3,"id":"u","timestamp":"2025-01-15T10:00:00.000Z","cwd":"/tmp/pi-fixture-project"}"#,
            "\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-15T10:00:01.000Z","message":{"role":"user","content":"Straße in İstanbul, ÄRGER über Ünicode — sehr lange Zeile mit viel Text davor und danach damit der Ausschnitt gekürzt wird"}}"#,
            "\n"
        ),
    );
    let o = w.run(&["search", "ärger"]);
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.contains("ÄRGER"), "{}", o.out);
    assert!(o.out.contains('…'));
}

#[test]
fn search_finds_an_entry_glued_after_a_torn_record() {
    let w = World::new("search-glued");
    let dir = w.project_dir(FIXTURE_CWD);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("g.jsonl"), glued_session().0).unwrap();
    let j = json(&w.run(&["search", "glued reply", "--json"]).out);
    let hits = arr(&j);
    assert_eq!(hits.len(), 1);
    let sn = &arr(hits[0].get("snippets").unwrap())[0];
    assert_eq!(s(sn.get("entryId")).unwrap(), "b");
}
