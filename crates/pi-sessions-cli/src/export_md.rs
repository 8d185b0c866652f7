//! The conversation as Markdown: headings per message, thinking and tool output in `<details>`,
//! code fences longer than any backtick run inside them.

use crate::conversation::{self, Block, Item, Role};
use crate::export_page::{escape, Meta};
use crate::fmt;

/// A fence of backticks longer than any run in `s` (at least three).
fn fence(s: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn code(out: &mut String, lang: &str, body: &str) {
    let f = fence(body);
    out.push_str(&format!(
        "{f}{lang}\n{}\n{f}\n",
        body.trim_end_matches('\n')
    ));
}

/// Inline text safe in a heading: no line breaks, Markdown punctuation escaped.
fn inline(s: &str) -> String {
    let mut o = String::new();
    for c in crate::text::one_line(s).chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|'
        ) {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

pub fn render(meta: &Meta, items: &[Item], utc: bool) -> String {
    let mut out = format!("# {}\n\n", inline(meta.title));
    out.push_str(&format!(
        "- Session: `{}`\n- Project: `{}`\n- File: `{}`\n",
        meta.id.replace('`', "'"),
        meta.cwd.replace('`', "'"),
        meta.path.replace('`', "'")
    ));
    if let Some(c) = meta.created {
        out.push_str(&format!("- Created: {}\n", fmt::date_time(c, utc)));
    }
    out.push_str(&format!("- Entries on this branch: {}\n", items.len()));
    for it in items {
        out.push('\n');
        if it.role == Role::Meta {
            out.push_str(&format!(
                "*{}* <sub>{}</sub>\n",
                inline(&it.title),
                inline(&it.id)
            ));
            continue;
        }
        let mut h = format!("## {}", inline(&capitalize(&it.title)));
        if let Some(d) = &it.detail {
            h.push_str(&format!(" · {}", inline(d)));
        }
        out.push_str(&h);
        out.push('\n');
        let mut sub = Vec::new();
        if let Some(t) = it.time {
            sub.push(fmt::date_time(t, utc));
        }
        sub.push(format!("`{}`", it.id.replace('`', "'")));
        if let Some(l) = &it.label {
            sub.push(format!("label **{}**", inline(l)));
        }
        out.push_str(&format!("<sub>{}</sub>\n\n", sub.join(" · ")));
        for b in &it.blocks {
            block(&mut out, it.role, b);
        }
    }
    out
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn block(out: &mut String, role: Role, b: &Block) {
    match b {
        Block::Text(t) => {
            if role == Role::Summary {
                for line in t.trim_end().lines() {
                    out.push_str(&format!("> {line}\n"));
                }
            } else {
                out.push_str(t.trim_end());
                out.push('\n');
            }
            out.push('\n');
        }
        Block::Thinking(t) => {
            out.push_str("<details><summary>Thinking</summary>\n\n");
            code(out, "", t);
            out.push_str("\n</details>\n\n");
        }
        Block::ToolCall { name, args } => {
            out.push_str(&format!("**Tool call** `{}`\n\n", name.replace('`', "'")));
            code(out, "json", &conversation::pretty(args));
            out.push('\n');
        }
        Block::Output { text, error } => {
            let n = text.lines().count();
            out.push_str(&format!(
                "<details><summary>{} ({} line{})</summary>\n\n",
                if *error { "Error output" } else { "Output" },
                n,
                if n == 1 { "" } else { "s" }
            ));
            code(out, "", text);
            out.push_str("\n</details>\n\n");
        }
        Block::Image(m) => out.push_str(&format!("*[{}]*\n\n", escape(m))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_backtick_runs() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
        assert_eq!(inline("a *b* [c]\nd"), "a \\*b\\* \\[c\\] d");
    }
}
