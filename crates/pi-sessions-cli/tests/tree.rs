//! `tree`: branches drawn, labels, the active branch and leaf marked, long runs folded.

mod common;
use common::*;

#[test]
fn tree_draws_every_branch_with_labels_and_the_leaf() {
    let w = World::new("tree-text");
    let o = w.run(&[
        "tree",
        fixture("v3-conversation.jsonl").to_str().unwrap(),
        "--full",
    ]);
    assert_eq!(o.code, 0, "{}", o.err);
    let t = &o.out;
    assert!(
        t.contains("19 entries · 3 branch tips · leaf e0000019"),
        "{t}"
    );
    assert!(
        t.contains("● e0000004 user  List the files in src/\n"),
        "{t}"
    );
    // Children of e0000004 sorted by timestamp: the older sibling first, the abandoned reply last.
    let older = t.find("├─ ○ e0000003 user").expect("older sibling drawn");
    let active = t
        .find("├─ ● e0000005 assistant")
        .expect("active child drawn");
    let abandoned = t
        .find("└─ ○ e0000011 assistant")
        .expect("abandoned reply drawn");
    assert!(older < active && active < abandoned, "{t}");
    assert!(t.contains("│  ● e0000007 assistant  There are two files: a.ts and b.ts. [answer]"));
    assert!(t.contains("● e0000019 user  Thanks ◀ leaf"));
}

#[test]
fn long_unbranched_runs_fold_unless_full() {
    let w = World::new("tree-fold");
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"long","timestamp":"2025-01-15T10:00:00.000Z","cwd":"/tmp/pi-fixture-project"}"#,
    );
    text.push('\n');
    let mut parent = "null".to_owned();
    for i in 0..30 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        text.push_str(&format!(
            r#"{{"type":"message","id":"m{i:07}","parentId":{parent},"timestamp":"2025-01-15T10:00:{i:02}.000Z","message":{{"role":"{role}","content":"message {i}"}}}}"#
        ));
        text.push('\n');
        parent = format!("\"m{i:07}\"");
    }
    let p = w.write(FIXTURE_CWD, "long.jsonl", &text);
    let folded = w.run(&["tree", p.to_str().unwrap()]);
    assert!(folded.out.contains("┆ … 27 more entries"), "{}", folded.out);
    assert!(folded.out.contains("m0000000 user  message 0"));
    assert!(folded.out.contains("m0000029 assistant  message 29 ◀ leaf"));
    let full = w.run(&["tree", p.to_str().unwrap(), "--full"]);
    assert!(!full.out.contains("more entries"));
    assert_eq!(full.out.matches(" message ").count(), 30);
}

#[test]
fn a_dangling_parent_is_drawn_as_a_second_root() {
    let w = World::new("tree-orphan");
    let o = w.run(&["tree", fixture("dangling-parent.jsonl").to_str().unwrap()]);
    assert_eq!(o.code, 0);
    let roots: Vec<&str> = o
        .out
        .lines()
        .skip(2)
        .filter(|l| l.starts_with('●') || l.starts_with('○'))
        .collect();
    assert!(roots.len() >= 2, "{}", o.out);
}

#[test]
fn children_without_strict_timestamps_are_sorted_as_get_tree_sorts_them() {
    let w = World::new("tree-dates");
    let msg = |id: &str, parent: &str, ts: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":{ts},"message":{{"role":"assistant","content":"text of {id}"}}}}"#
        )
    };
    let lines = [
        r#"{"type":"session","version":3,"id":"dates","timestamp":"2026-01-02T03:04:05.600Z","cwd":"/tmp/pi-fixture-project"}"#.to_owned(),
        msg("a1", "null", r#""2026-01-02T03:04:05.600Z""#),
        msg("k1", r#""a1""#, r#""2026-01-02T03:04:09+00:00""#),
        msg("k2", r#""a1""#, r#""2026-01-02T03:04:07.600Z""#),
        msg("k3", r#""a1""#, r#""2026-01-02""#),
        msg("k4", r#""a1""#, r#""yesterday""#),
        msg("k5", r#""a1""#, "1767323046100"),
        msg("k6", r#""a1""#, r#""2026-01-02T03:04:08.000+00:00""#),
    ];
    let p = w.write(FIXTURE_CWD, "dates.jsonl", &(lines.join("\n") + "\n"));
    let o = w.run(&["tree", p.to_str().unwrap(), "--full"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let drawn: Vec<&str> = o
        .out
        .lines()
        .filter(|l| l.contains("text of"))
        .filter_map(|l| l.split_whitespace().find(|t| t.starts_with('k')))
        .collect();
    // What V8 makes of `children.sort((a, b) => new Date(a.entry.timestamp) - new Date(b...))`:
    // "yesterday" is NaN, which compares equal to everything, so k6 stays after it.
    assert_eq!(drawn, ["k3", "k5", "k2", "k1", "k4", "k6"], "{}", o.out);
}
