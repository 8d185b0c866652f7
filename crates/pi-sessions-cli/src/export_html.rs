//! The conversation as one self-contained HTML page: inline CSS, no scripts (a Content-Security-Policy
//! forbids them), every piece of session text escaped.

use crate::export_page::{escape, Meta};
use crate::fmt;
use pi_session_core::json::Value;

use crate::conversation::{self, Block, Item, Role};

const CSS: &str = r#"
:root { --fg:#1f2328; --muted:#656d76; --line:#d8dee4; --bg:#ffffff; --panel:#f6f8fa;
  --user:#1a7f37; --assistant:#0969da; --tool:#9a6700; --summary:#8250df; --custom:#0550ae; --err:#cf222e; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font: 15px/1.55 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
main { max-width: 860px; margin: 0 auto; padding: 32px 24px 64px; }
header h1 { font-size: 26px; margin: 0 0 8px; line-height: 1.25; }
dl.meta { display:grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 24px;
  color: var(--muted); font-size: 13px; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin:0; overflow-wrap:anywhere; }
code, pre, .id { font-family: ui-monospace, SFMono-Regular, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
article { border: 1px solid var(--line); border-left: 4px solid var(--role, var(--line)); border-radius: 8px;
  padding: 10px 16px 12px; margin: 14px 0; background: var(--bg); }
article.user { --role: var(--user); } article.assistant { --role: var(--assistant); }
article.tool { --role: var(--tool); background: var(--panel); } article.summary { --role: var(--summary); background:#fbf8ff; }
article.custom { --role: var(--custom); } article.system { --role: var(--muted); }
.head { display:flex; flex-wrap:wrap; align-items:baseline; gap: 4px 12px; margin-bottom: 6px; font-size: 13px; }
.role { font-weight: 700; color: var(--role); text-transform: capitalize; font-size: 14px; }
.detail, time { color: var(--muted); }
.id { color: var(--muted); font-size: 12px; }
.label { background:#fff8c5; border:1px solid #d4a72c; color:#7d4e00; border-radius: 10px; padding: 0 8px; font-size: 12px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
.summary .text { border-left: 3px solid #d8b9ff; padding-left: 10px; color: #3b2a63; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 6px 0;
  overflow-x: auto; font-size: 12.5px; line-height: 1.45; white-space: pre-wrap; overflow-wrap: anywhere; }
article.tool pre { background: #fff; }
pre.error { border-color: #ffcecb; background: #ffebe9; color: var(--err); }
details { margin: 6px 0; } summary { cursor: pointer; color: var(--muted); font-size: 13px; }
.call { margin: 8px 0; } .call .name { font-weight: 600; color: var(--tool); font-family: ui-monospace, monospace; }
table.args { border-collapse: collapse; width: 100%; margin: 4px 0; font-size: 13px; }
table.args th { text-align: left; vertical-align: top; color: var(--muted); font: 600 12.5px ui-monospace, SFMono-Regular, "DejaVu Sans Mono", monospace;
  padding: 5px 12px 3px 0; white-space: nowrap; width: 1%; }
table.args td { padding: 2px 0; } table.args td pre { margin: 2px 0; }
table.args code { background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: 1px 5px; font-size: 12.5px; }
p.note { color: var(--muted); font-size: 13px; margin: 6px 4px; }
p.note .id { margin-left: 8px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); padding-top: 10px; }
"#;

pub fn render(meta: &Meta, items: &[Item], utc: bool) -> String {
    let mut o = String::with_capacity(8192 + items.len() * 512);
    o.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n");
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    o.push_str(&format!("<title>{}</title>\n", escape(meta.title)));
    o.push_str(&format!("<style>{CSS}</style>\n</head>\n<body>\n<main>\n"));
    o.push_str(&format!(
        "<header>\n<h1>{}</h1>\n<dl class=\"meta\">\n",
        escape(meta.title)
    ));
    let mut row = |k: &str, v: &str| {
        o.push_str(&format!("<dt>{k}</dt><dd>{}</dd>\n", escape(v)));
    };
    row("Session", meta.id);
    row("Project", meta.cwd);
    row("File", meta.path);
    if let Some(c) = meta.created {
        row("Created", &fmt::date_time(c, utc));
    }
    row("Entries", &format!("{} on this branch", items.len()));
    o.push_str("</dl>\n</header>\n");
    for it in items {
        item(&mut o, it, utc);
    }
    o.push_str(
        "<footer>Exported by pi-sessions from the active branch of a pi session.</footer>\n",
    );
    o.push_str("</main>\n</body>\n</html>\n");
    o
}

fn item(o: &mut String, it: &Item, utc: bool) {
    if it.role == Role::Meta {
        o.push_str(&format!(
            "<p class=\"note\">{}<span class=\"id\">{}</span>{}</p>\n",
            escape(&it.title),
            escape(&it.id),
            it.label
                .as_ref()
                .map(|l| format!(" <span class=\"label\">{}</span>", escape(l)))
                .unwrap_or_default()
        ));
        return;
    }
    o.push_str(&format!(
        "<article class=\"{}\" id=\"entry-{}\">\n<div class=\"head\"><span class=\"role\">{}</span>",
        it.role.css(),
        escape(&it.id),
        escape(&it.title)
    ));
    if let Some(d) = &it.detail {
        o.push_str(&format!("<span class=\"detail\">{}</span>", escape(d)));
    }
    if let Some(t) = it.time {
        o.push_str(&format!(
            "<time datetime=\"{}\">{}</time>",
            fmt::iso(t).unwrap_or_default(),
            fmt::date_time(t, utc)
        ));
    }
    o.push_str(&format!("<span class=\"id\">{}</span>", escape(&it.id)));
    if let Some(l) = &it.label {
        o.push_str(&format!("<span class=\"label\">{}</span>", escape(l)));
    }
    o.push_str("</div>\n");
    for b in &it.blocks {
        match b {
            Block::Text(t) => {
                if !t.trim().is_empty() {
                    o.push_str(&format!("<div class=\"text\">{}</div>\n", escape(t.trim_end())));
                }
            }
            Block::Thinking(t) => o.push_str(&format!(
                "<details class=\"thinking\"><summary>Thinking · {} line{}</summary><pre>{}</pre></details>\n",
                t.lines().count(),
                if t.lines().count() == 1 { "" } else { "s" },
                escape(t)
            )),
            Block::ToolCall { name, args } => {
                o.push_str(&format!(
                    "<div class=\"call\"><span class=\"name\">⚙ {}</span>",
                    escape(name)
                ));
                args_html(o, args);
                o.push_str("</div>\n");
            }
            Block::Output { text, error } => {
                let n = text.lines().count();
                let open = if n <= 12 { " open" } else { "" };
                o.push_str(&format!(
                    "<details class=\"output\"{open}><summary>{} · {n} line{}</summary><pre{}>{}</pre></details>\n",
                    if *error { "Error" } else { "Output" },
                    if n == 1 { "" } else { "s" },
                    if *error { " class=\"error\"" } else { "" },
                    escape(text)
                ));
            }
            Block::Image(m) => o.push_str(&format!("<p class=\"note\">[{}]</p>\n", escape(m))),
        }
    }
    o.push_str("</article>\n");
}

/// Tool arguments: an object as a key/value table with strings shown as text (multi-line ones in
/// a block), anything else as indented JSON.
fn args_html(o: &mut String, args: &Value) {
    let Value::Object(map) = args else {
        o.push_str(&format!(
            "<pre>{}</pre>",
            escape(&conversation::pretty(args))
        ));
        return;
    };
    if map.is_empty() {
        return;
    }
    o.push_str("<table class=\"args\">");
    for (k, v) in map.iter() {
        let cell = match v {
            Value::String(s) => {
                let t = s.to_string_lossy();
                if t.contains('\n') || t.chars().count() > 90 {
                    format!("<pre>{}</pre>", escape(&t))
                } else {
                    format!("<code>{}</code>", escape(&t))
                }
            }
            other => format!("<pre>{}</pre>", escape(&conversation::pretty(other))),
        };
        o.push_str(&format!(
            "<tr><th>{}</th><td>{cell}</td></tr>",
            escape(&k.to_string_lossy())
        ));
    }
    o.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(escape("a\u{1b}[31m"), "a\u{FFFD}[31m");
    }
}
