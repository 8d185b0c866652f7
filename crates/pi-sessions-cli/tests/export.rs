//! `export`: Markdown, self-contained escaped HTML, and JSON of the active branch.

mod common;
use common::*;

fn hostile(w: &World) -> std::path::PathBuf {
    w.write(
        FIXTURE_CWD,
        "h.jsonl",
        concat!(
            r#"{"type":"session","version":3,"id":"hostile","timestamp":"2025-01-15T10:00:00.000Z","cwd":"/tmp/<b>proj</b>"}"#, "\n",
            r#"{"type":"message","id":"h1","parentId":null,"timestamp":"2025-01-15T10:00:01.000Z","message":{"role":"user","content":"<script>alert('x')</script> & \"quotes\" ```fence```"}}"#, "\n",
            r#"{"type":"message","id":"h2","parentId":"h1","timestamp":"2025-01-15T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"<img src=x onerror=alert(1)>"},{"type":"toolCall","id":"c","name":"<b>bash</b>","arguments":{"command":"echo '</pre><script>'"}}],"provider":"p","model":"m"}}"#, "\n",
            r#"{"type":"message","id":"h3","parentId":"h2","timestamp":"2025-01-15T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"</details><script>bad()</script> ``` end"}],"isError":true}}"#, "\n",
            r#"{"type":"label","id":"h4","parentId":"h3","timestamp":"2025-01-15T10:00:04.000Z","targetId":"h1","label":"<i>tag</i>"}"#, "\n",
        ),
    )
}

#[test]
fn html_is_self_contained_and_escapes_all_session_text() {
    let w = World::new("export-html");
    let p = hostile(&w);
    let o = w.run(&["export", p.to_str().unwrap(), "--format", "html"]);
    assert_eq!(o.code, 0, "{}", o.err);
    let h = &o.out;
    assert!(h.starts_with("<!doctype html>"));
    assert!(h.contains("Content-Security-Policy"));
    assert!(!h.contains("<script"), "no script element survives");
    assert!(!h.contains("<img"));
    assert!(!h.contains("<b>") && !h.contains("<i>"));
    assert!(h.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"));
    assert!(h.contains("&lt;/details&gt;&lt;script&gt;bad()&lt;/script&gt; ``` end"));
    assert!(h.contains("&lt;i&gt;tag&lt;/i&gt;"));
    assert!(
        !h.contains("http://") && !h.contains("https://"),
        "no external resources"
    );
    assert!(
        h.contains("<pre class=\"error\">"),
        "failed tool output marked"
    );
}

#[test]
fn markdown_has_a_heading_per_message_and_safe_fences() {
    let w = World::new("export-md");
    let o = w.run(&["export", fixture("v3-conversation.jsonl").to_str().unwrap()]);
    assert_eq!(o.code, 0);
    let m = &o.out;
    assert!(m.starts_with("# Listing files\n"), "{m}");
    assert!(m.contains("## User\n"));
    assert!(m.contains("## Assistant · anthropic/claude-sonnet-4-5\n"));
    assert!(m.contains("<details><summary>Thinking</summary>"));
    assert!(m.contains("**Tool call** `bash`"));
    assert!(m.contains("\"command\": \"ls src\""));
    assert!(
        m.contains("> Tried an alternative reply."),
        "summaries quoted"
    );
    let p = hostile(&w);
    let h = w.run(&["export", p.to_str().unwrap(), "--format", "md"]);
    // The tool output holds ```, so its fence is longer.
    assert!(h.out.contains("````"), "{}", h.out);
}

#[test]
fn json_export_equals_show_json_and_out_writes_a_file() {
    let w = World::new("export-json");
    let f = fixture("v3-conversation.jsonl");
    let e = w.run(&["export", f.to_str().unwrap(), "--format", "json"]);
    let s_ = w.run(&["show", f.to_str().unwrap(), "--json"]);
    assert_eq!(e.out, s_.out);
    let out = w.root.join("x.html");
    let o = w.run(&[
        "export",
        f.to_str().unwrap(),
        "-f",
        "html",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0);
    assert!(o.out.contains("Exported 17 entries"));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("There are two files"));
    let bad = w.run(&["export", f.to_str().unwrap(), "--format", "pdf"]);
    assert_eq!(bad.code, 2);
    assert!(bad.err.contains("unknown format pdf"));
}
