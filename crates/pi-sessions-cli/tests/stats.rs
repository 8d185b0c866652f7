//! `stats`: message counts, tokens and cost per model and in total.

mod common;
use common::*;

const HEADER: &str = r#"{"type":"session","version":3,"id":"stats-1","timestamp":"2025-01-15T10:00:00.000Z","cwd":"/tmp/pi-fixture-project"}"#;

fn usage(input: u32, output: u32, cost: f64) -> String {
    format!(
        r#"{{"input":{input},"output":{output},"cacheRead":10,"cacheWrite":5,"totalTokens":{},"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{cost}}}}}"#,
        input + output + 15
    )
}

/// Assistant usage on two models, a usage entry, a compaction and a branch summary with usage,
/// and a tool result carrying nested usage.
fn session() -> String {
    let lines = [
        HEADER.to_owned(),
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-15T10:00:01.000Z","message":{"role":"user","content":"hi"}}"#.to_owned(),
        format!(r#"{{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-15T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c","name":"bash","arguments":{{}}}}],"provider":"anthropic","model":"m1","usage":{}}}}}"#, usage(100, 10, 0.5)),
        format!(r#"{{"type":"message","id":"a3","parentId":"a2","timestamp":"2025-01-15T10:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[],"isError":false,"usage":{}}}}}"#, usage(7, 3, 0.25)),
        format!(r#"{{"type":"compaction","id":"a4","parentId":"a3","timestamp":"2025-01-15T10:00:04.000Z","summary":"s","firstKeptEntryId":"a3","tokensBefore":5,"usage":{}}}"#, usage(50, 5, 1.0)),
        r#"{"type":"model_change","id":"a5","parentId":"a4","timestamp":"2025-01-15T10:00:05.000Z","provider":"openai","modelId":"m2"}"#.to_owned(),
        format!(r#"{{"type":"branch_summary","id":"a6","parentId":"a5","timestamp":"2025-01-15T10:00:06.000Z","fromId":"a2","summary":"b","usage":{}}}"#, usage(20, 2, 0.125)),
        format!(r#"{{"type":"message","id":"a7","parentId":"a6","timestamp":"2025-01-15T10:00:07.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"ok"}}],"provider":"openai","model":"m2","usage":{}}}}}"#, usage(200, 20, 2.0)),
        format!(r#"{{"type":"usage","id":"a8","parentId":"a7","timestamp":"2025-01-15T10:00:08.000Z","kind":"cache_warm","provider":"anthropic","model":"m1","usage":{}}}"#, usage(1, 1, 0.0625)),
    ];
    lines.join("\n") + "\n"
}

#[test]
fn stats_count_every_kind_of_usage_per_model() {
    let w = World::new("stats-one");
    let p = w.write(FIXTURE_CWD, "s.jsonl", &session());
    let o = w.run(&["stats", p.to_str().unwrap(), "--json"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let d = json(&o.out);
    assert_eq!(n(d.get("sessions")), Some(1.0));
    let m = d.get("messages").unwrap();
    assert_eq!(n(m.get("total")), Some(4.0));
    assert_eq!(n(m.get("user")), Some(1.0));
    assert_eq!(n(m.get("assistant")), Some(2.0));
    assert_eq!(n(m.get("toolResult")), Some(1.0));
    assert_eq!(n(d.get("toolCalls")), Some(1.0));
    let models = arr(d.get("models").unwrap());
    let find = |p: &str, mo: &str| {
        models
            .iter()
            .find(|x| {
                s(x.get("provider")).as_deref() == Some(p)
                    && s(x.get("model")).as_deref() == Some(mo)
            })
            .unwrap_or_else(|| panic!("{p}/{mo} in {}", o.out))
    };
    // m1: assistant (100/10), tool result nested in m1's turn (7/3), compaction after it (50/5),
    // usage entry (1/1).
    let m1 = find("anthropic", "m1");
    assert_eq!(n(m1.get("input")), Some(158.0));
    assert_eq!(n(m1.get("output")), Some(19.0));
    assert_eq!(n(m1.get("cacheRead")), Some(40.0));
    assert_eq!(n(m1.get("cost")), Some(1.8125));
    // m2: the branch summary after the model change (20/2), and the assistant (200/20).
    let m2 = find("openai", "m2");
    assert_eq!(n(m2.get("input")), Some(220.0));
    assert_eq!(n(m2.get("cost")), Some(2.125));
    let total = d.get("total").unwrap();
    assert_eq!(n(total.get("input")), Some(378.0));
    assert_eq!(n(total.get("tokens")), Some(378.0 + 41.0 + 60.0 + 30.0));
    assert_eq!(n(total.get("cost")), Some(3.9375));
    // Sorted by cost.
    assert_eq!(s(models[0].get("model")).as_deref(), Some("m2"));
}

#[test]
fn stats_text_shows_a_table_with_a_total_row() {
    let w = World::new("stats-text");
    let o = w.run(&["stats", fixture("v3-conversation.jsonl").to_str().unwrap()]);
    assert_eq!(o.code, 0);
    assert!(o.out.starts_with("Listing files\n"), "{}", o.out);
    assert!(
        o.out
            .contains("7 messages: 3 user, 3 assistant, 1 tool result, 0 other · 1 tool call"),
        "{}",
        o.out
    );
    let row = o
        .out
        .lines()
        .find(|l| l.starts_with("anthropic/claude-sonnet-4-5"))
        .unwrap();
    assert!(row.contains("170") && row.contains("$0.0060"), "{row}");
    assert!(o
        .out
        .lines()
        .any(|l| l.starts_with("total") && l.contains("200")));
}

#[test]
fn stats_without_a_session_sum_the_project_or_everything() {
    let w = World::new("stats-many");
    w.write(FIXTURE_CWD, "s.jsonl", &session());
    w.add(FIXTURE_CWD, "v3-conversation.jsonl", "c.jsonl");
    w.add(FIXTURE_CWD, "not-a-session.jsonl", "x.jsonl");
    w.add("/elsewhere", "v3-conversation.jsonl", "d.jsonl");
    let here = json(&w.run(&["stats", "--json"]).out);
    assert_eq!(n(here.get("sessions")), Some(2.0));
    assert_eq!(
        n(here.get("total").unwrap().get("input")),
        Some(378.0 + 170.0)
    );
    let all = json(&w.run(&["stats", "--all", "--json"]).out);
    assert_eq!(n(all.get("sessions")), Some(3.0));
    let text = w.run(&["stats"]);
    assert!(
        text.out.contains("2 sessions, 1 file(s) skipped"),
        "{}",
        text.out
    );
}
