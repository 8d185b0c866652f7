//! `search`: sessions whose messages contain a text (case-insensitive), with snippets.

use std::path::Path;

use pi_session_core::inspect::split_lines;
use pi_session_core::json::{self, Value};
use pi_session_core::record::Kind;
use pi_session_core::torn;

use crate::args::{Command, Opt, Parsed};
use crate::catalog::{self, Info, Scope};
use crate::conversation::{self, Block};
use crate::error::{CliResult, EXIT_NOT_FOUND, EXIT_OK};
use crate::jsonout::{self, arr, num, obj, opt, s};
use crate::loaded::key_text;
use crate::progress::Progress;
use crate::{fmt, list, text, Ctx};

pub const CMD: Command = Command {
    name: "search",
    summary: "sessions whose messages contain a text, with snippets",
    usage: "<text> [--all] [--cwd DIR] [--json]",
    description: "Looks through every entry of every session of this project (or of all projects \
with --all): message text, tool calls and outputs, thinking, extension messages and summaries. The \
match ignores case. Sessions are listed newest first with up to three snippets each. Exits with 3 \
(not found) when nothing matches.",
    opts: &[
        Opt {
            long: "all",
            short: Some('a'),
            value: None,
            help: "search the sessions of every project",
        },
        Opt {
            long: "cwd",
            short: None,
            value: Some("DIR"),
            help: "search the sessions of the project in DIR",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help: "print [{path,id,name,firstMessage,modified,matches,snippets}] as JSON",
        },
    ],
    min_pos: 1,
    max_pos: Some(1),
    examples: &["pi-sessions search 'cargo test' --all"],
};

const SNIPPETS: usize = 3;
const CONTEXT: usize = 40;

/// One place the text was found.
#[derive(Debug, Clone)]
pub struct Snippet {
    pub entry_id: String,
    pub role: String,
    /// Text before the match, the match, text after (one line each).
    pub before: String,
    pub hit: String,
    pub after: String,
}

/// Matches in one file: how many entries matched, and the first few snippets.
pub fn search_file(path: &Path, needle: &str) -> (usize, Vec<Snippet>) {
    let Ok(bytes) = std::fs::read(path) else {
        return (0, Vec::new());
    };
    let lower_needle = needle.to_lowercase();
    // Raw-line prefilter: JSON text holds an ASCII needle literally unless it needs escaping.
    let prefilter = needle
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_control() && b != b'"' && b != b'\\');
    let finder = memchr::memmem::Finder::new(lower_needle.as_bytes());
    let mut buf = Vec::new();
    let mut count = 0;
    let mut snippets = Vec::new();
    // Entries glued after a torn record are read after the header, as the open reads them.
    let mut after_header = false;
    for (s, e) in split_lines(&bytes) {
        let line = &bytes[s..e];
        if prefilter && after_header {
            buf.clear();
            buf.extend(line.iter().map(u8::to_ascii_lowercase));
            if finder.find(&buf).is_none() {
                continue;
            }
        }
        let Some((skip, meta)) = torn::read_line(line, after_header) else {
            continue;
        };
        after_header |= meta.kind == Kind::Header;
        let line = &line[skip..];
        if !matches!(
            meta.kind,
            Kind::Message | Kind::CustomMessage | Kind::Compaction | Kind::BranchSummary
        ) {
            continue;
        }
        let Ok(v) = json::parse(line) else { continue };
        let item = conversation::entry_item(&v, meta.kind, key_text(&meta.id));
        let mut hit = None;
        for b in &item.blocks {
            let t = match b {
                Block::Text(t) | Block::Thinking(t) => t.clone(),
                Block::Output { text, .. } => text.clone(),
                Block::ToolCall { name, args } => format!("{name} {}", json::to_json(args)),
                Block::Image(_) => continue,
            };
            if let Some(sn) = find(&t, &lower_needle) {
                hit = Some(sn);
                break;
            }
        }
        if let Some((before, h, after)) = hit {
            count += 1;
            if snippets.len() < SNIPPETS {
                snippets.push(Snippet {
                    entry_id: item.id.clone(),
                    role: item.title.clone(),
                    before,
                    hit: h,
                    after,
                });
            }
        }
    }
    (count, snippets)
}

/// Case-insensitive find; returns the context around the first match, on one line.
fn find(hay: &str, lower_needle: &str) -> Option<(String, String, String)> {
    if lower_needle.is_empty() {
        return None;
    }
    // Lower-case with a map back to the original byte offsets (lower-casing can change lengths).
    let mut lower = String::with_capacity(hay.len());
    let mut back: Vec<usize> = Vec::with_capacity(hay.len() + 1);
    for (i, c) in hay.char_indices() {
        for lc in c.to_lowercase() {
            let before = lower.len();
            lower.push(lc);
            back.extend(std::iter::repeat_n(i, lower.len() - before));
        }
    }
    back.push(hay.len());
    let at = lower.find(lower_needle)?;
    let start = back[at];
    let end_l = at + lower_needle.len();
    // The original char that produced the last matched byte ends the match.
    let last = back[end_l - 1];
    let end = last + hay[last..].chars().next().map_or(0, char::len_utf8);
    let before: String = {
        let chars: Vec<char> = hay[..start].chars().collect();
        let from = chars.len().saturating_sub(CONTEXT);
        let mut b: String = chars[from..].iter().collect();
        if from > 0 {
            b.insert(0, '…');
        }
        b
    };
    let after: String = {
        let mut a: String = hay[end..].chars().take(CONTEXT).collect();
        if hay[end..].chars().count() > CONTEXT {
            a.push('…');
        }
        a
    };
    let squash = |t: &str| {
        let o = text::one_line(t);
        // Keep the space that separates the snippet parts.
        let lead = if t.starts_with(char::is_whitespace) {
            " "
        } else {
            ""
        };
        let trail = if t.ends_with(char::is_whitespace) && !o.is_empty() {
            " "
        } else {
            ""
        };
        format!("{lead}{o}{trail}")
    };
    Some((
        squash(&before),
        text::one_line(&hay[start..end]),
        squash(&after),
    ))
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let needle = p.pos[0].clone();
    if needle.trim().is_empty() {
        return Err(crate::error::CliError::usage_in(
            "search",
            "the search text is empty",
        ));
    }
    let scope = Scope::from_flags(ctx.env, p.flag("all"), p.value("cwd"));
    let infos = list::load(ctx, &scope);
    let mut bar = Progress::new(ctx.err, ctx.env.is_tty_err, "searching", infos.len());
    let results =
        pi_session_core::pool::map(&infos, |i| search_file(&i.path, &needle), |n| bar.update(n));
    bar.finish();
    let found: Vec<(&Info, (usize, Vec<Snippet>))> = infos
        .iter()
        .zip(results)
        .filter(|(_, (n, _))| *n > 0)
        .collect();
    if p.flag("json") {
        return emit_json(ctx, &found);
    }
    render(ctx, &found, &scope, &needle)
}

/// A session that matches, with how many matches and the snippets shown.
type Found<'a> = (&'a Info, (usize, Vec<Snippet>));

fn emit_json(ctx: &mut Ctx, found: &[Found]) -> CliResult {
    let docs = found
        .iter()
        .map(|(i, (n, sn))| {
            obj(vec![
                ("path", s(&i.path.to_string_lossy())),
                ("id", i.id.clone()),
                ("name", opt(i.name.as_deref())),
                ("firstMessage", s(&i.first_message)),
                ("modified", opt(fmt::iso(i.modified).as_deref())),
                ("matches", num(*n as f64)),
                ("snippets", arr(sn.iter().map(snippet_json).collect())),
            ])
        })
        .collect();
    jsonout::emit(ctx.out, &arr(docs))?;
    Ok(if found.is_empty() {
        EXIT_NOT_FOUND
    } else {
        EXIT_OK
    })
}

fn render(ctx: &mut Ctx, found: &[Found], scope: &Scope, needle: &str) -> CliResult {
    let st = ctx.style;
    let mut out = String::new();
    if found.is_empty() {
        out.push_str(&format!(
            "No session in {} mentions “{}”.\n",
            scope.describe(ctx.env),
            text::sanitize(needle)
        ));
        ctx.out.write_all(out.as_bytes())?;
        return Ok(EXIT_NOT_FOUND);
    }
    let ids: Vec<String> = found.iter().map(|(i, _)| i.id_text()).collect();
    let id_w = catalog::unique_prefix_len(&ids, 8);
    let width = ctx.env.width();
    for (k, (i, (n, sn))) in found.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "{}  {}  {}\n",
            st.bold(&text::truncate(
                &text::sanitize(&text::one_line(i.title())),
                width.saturating_sub(40)
            )),
            st.cyan(&catalog::prefix(&ids[k], id_w)),
            st.dim(&format!(
                "{} · {} match{}",
                fmt::relative(i.modified, ctx.env.now_ms(), ctx.env.utc),
                n,
                if *n == 1 { "" } else { "es" }
            )),
        ));
        for x in sn {
            let head = format!("{} {}: ", x.role, x.entry_id);
            out.push_str(&format!(
                "  {}{}{}{}\n",
                st.dim(&text::sanitize(&head)),
                text::sanitize(&x.before),
                st.highlight(&text::sanitize(&x.hit)),
                text::sanitize(&x.after)
            ));
        }
        if *n > sn.len() {
            out.push_str(&st.dim(&format!("  … {} more\n", n - sn.len())));
        }
    }
    out.push_str(&st.dim(&format!(
        "\n{} session{} in {}\n",
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        scope.describe(ctx.env)
    )));
    ctx.out.write_all(out.as_bytes())?;
    Ok(EXIT_OK)
}

fn snippet_json(x: &Snippet) -> Value {
    obj(vec![
        ("entryId", s(&x.entry_id)),
        ("role", s(&x.role)),
        ("text", s(&format!("{}{}{}", x.before, x.hit, x.after))),
    ])
}
