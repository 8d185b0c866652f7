//! `show`: the active branch (or the branch ending at `--branch`) as a readable transcript.

use pi_session_core::json::Value;

use crate::args::{Command, Opt, Parsed};
use crate::conversation::{self, Block, Item, Role};
use crate::error::{CliResult, EXIT_OK};
use crate::jsonout::{self, arr, obj, opt, s};
use crate::loaded::{self, Loaded};
use crate::{fmt, resolve, text, Ctx};

pub const CMD: Command = Command {
    name: "show",
    summary: "a session's active branch as a readable transcript",
    usage: "<id|path> [--branch ENTRY] [--full] [--json]",
    description: "Prints the branch from the root to the leaf (the entry pi continues from): \
roles in colour on a terminal, tool calls and results summarized, thinking folded, compactions and \
branch summaries marked, labels in brackets. <id|path> is a session file or a session id (a unique \
prefix is enough) under <agent dir>/sessions. The file is only read, never changed.",
    opts: &[
        Opt {
            long: "branch",
            short: Some('b'),
            value: Some("ENTRY"),
            help: "show the branch ending at this entry id (or unique prefix) instead",
        },
        Opt {
            long: "full",
            short: None,
            value: None,
            help: "unfold thinking, tool arguments and whole tool outputs",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help: "print {path,id,name,cwd,leafId,labels,entries} as JSON",
        },
    ],
    min_pos: 1,
    max_pos: Some(1),
    examples: &[
        "pi-sessions show 0193f0a0",
        "pi-sessions show ./session.jsonl --branch e0000011",
    ],
};

/// Tool output lines shown before folding.
const OUTPUT_LINES: usize = 6;

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let path = resolve::session(ctx.env, &p.pos[0])?;
    let l = loaded::open(&path)?;
    let branch = branch_of(&l, p.value("branch"))?;
    if p.flag("json") {
        jsonout::emit(ctx.out, &document(&l, &branch))?;
        return Ok(EXIT_OK);
    }
    let items = conversation::items(&l, &branch);
    let mut out = String::new();
    header(ctx, &l, &branch, &mut out);
    render(ctx, &items, p.flag("full"), &mut out);
    ctx.out.write_all(out.as_bytes())?;
    Ok(EXIT_OK)
}

/// The branch to show: ending at `--branch`, else the active one.
pub fn branch_of(l: &Loaded, at: Option<&str>) -> Result<Vec<u32>, crate::error::CliError> {
    Ok(match at {
        Some(id) => {
            let pos = l.find_entry(id)?;
            l.session.path_to(pos)
        }
        None => l.branch(),
    })
}

/// The JSON document of `show --json` and `export --format json`.
pub fn document(l: &Loaded, branch: &[u32]) -> Value {
    let mut labels = Vec::new();
    for &p in branch {
        if let Some(lbl) = l.label(p) {
            labels.push((l.id_text(p), lbl));
        }
    }
    let labels = obj(labels.iter().map(|(k, v)| (k.as_str(), s(v))).collect());
    let leaf = branch.last().map(|&p| l.id_text(p));
    obj(vec![
        ("path", s(&l.path.to_string_lossy())),
        ("id", s(&l.id())),
        ("name", opt(l.name().as_deref())),
        ("cwd", s(&l.cwd())),
        ("leafId", opt(leaf.as_deref())),
        ("labels", labels),
        ("entries", arr(branch.iter().map(|&p| l.value(p)).collect())),
    ])
}

/// A session's display title: its name, else its first user message, else its id.
pub fn title(l: &Loaded) -> String {
    if let Some(n) = l.name() {
        return n;
    }
    for pos in l.session.entry_positions() {
        let v = l.value(pos);
        if let Some(m) = v.get("message") {
            if matches!(m.get("role"), Some(Value::String(r)) if r.eq_str("user")) {
                let items = conversation::items(l, &[pos]);
                for b in &items[0].blocks {
                    if let Block::Text(t) = b {
                        if !t.trim().is_empty() {
                            return text::preview(t, 80);
                        }
                    }
                }
            }
        }
    }
    format!("session {}", l.id())
}

fn header(ctx: &Ctx, l: &Loaded, branch: &[u32], out: &mut String) {
    let st = ctx.style;
    let h = l.header();
    let created = jsonout::str_of(h.get("timestamp"))
        .and_then(|t| fmt::parse_time(&t))
        .map(|ms| fmt::date_time(ms, ctx.env.utc))
        .unwrap_or_else(|| "?".into());
    out.push_str(&st.bold(&text::sanitize(&title(l))));
    out.push('\n');
    out.push_str(&st.dim(&format!("{} · {} · created {created}\n", l.id(), l.cwd(),)));
    let leaf = branch
        .last()
        .map(|&p| l.id_text(p))
        .unwrap_or_else(|| "none".into());
    out.push_str(&st.dim(&format!(
        "{} of {} entries on this branch, leaf {leaf}",
        branch.len(),
        l.session.entry_positions().len(),
    )));
    out.push('\n');
    out.push_str(&st.dim(&l.path.display().to_string()));
    out.push('\n');
}

/// Paint items for a terminal.
pub fn render(ctx: &Ctx, items: &[Item], full: bool, out: &mut String) {
    let st = ctx.style;
    let width = ctx.env.width();
    let mut prev_meta = false;
    for it in items {
        if it.role == Role::Meta {
            if !prev_meta {
                out.push('\n');
            }
            // Cut the note, not its id.
            let room = width.saturating_sub(text::width(&it.id) + 4);
            let note = text::truncate(&text::sanitize(&it.title), room);
            out.push_str(&st.dim(&format!("· {note}  {}", it.id)));
            if let Some(l) = &it.label {
                out.push_str(&format!("  {}", st.yellow(&format!("[{l}]"))));
            }
            out.push('\n');
            prev_meta = true;
            continue;
        }
        prev_meta = false;
        out.push('\n');
        let (marker, name) = match it.role {
            Role::User => (st.green("●"), st.bold_green(&it.title)),
            Role::Assistant => (st.cyan("●"), st.bold_cyan(&it.title)),
            Role::Tool => (st.yellow("↳"), st.bold_yellow(&it.title)),
            Role::System => (st.gray("●"), st.bold(&it.title)),
            Role::Summary => (st.magenta("◆"), st.bold_magenta(&it.title)),
            Role::Custom => (st.blue("●"), st.bold_blue(&text::sanitize(&it.title))),
            Role::Meta => unreachable!("handled above"),
        };
        let mut head = format!("{marker} {name}");
        if let Some(d) = &it.detail {
            head.push_str(&format!("  {}", st.dim(&text::sanitize(d))));
        }
        if let Some(t) = it.time {
            head.push_str(&format!("  {}", st.dim(&fmt::clock(t, ctx.env.utc))));
        }
        head.push_str(&format!("  {}", st.gray(&it.id)));
        if let Some(l) = &it.label {
            head.push_str(&format!(
                "  {}",
                st.yellow(&format!("[{}]", text::sanitize(l)))
            ));
        }
        out.push_str(&head);
        out.push('\n');
        for b in &it.blocks {
            block(ctx, it.role, b, full, width, out);
        }
    }
}

fn indent(out: &mut String, body: &str, prefix: &str) {
    indent_with(out, body, prefix, str::to_owned);
}

/// Each line painted on its own, so a prefix's colour reset cannot cut a style short.
fn indent_with(out: &mut String, body: &str, prefix: &str, paint: impl Fn(&str) -> String) {
    for line in body.lines() {
        out.push_str(prefix);
        out.push_str(&paint(line));
        out.push('\n');
    }
}

fn block(ctx: &Ctx, role: Role, b: &Block, full: bool, width: usize, out: &mut String) {
    let st = ctx.style;
    match b {
        Block::Text(t) => {
            let t = text::sanitize(t.trim_end());
            let (prefix, room) = if role == Role::Summary {
                (format!("  {} ", st.magenta("│")), width.saturating_sub(4))
            } else {
                ("  ".to_owned(), width.saturating_sub(2))
            };
            // On a terminal, wrap at word boundaries so continuation lines keep the indent.
            let t = if ctx.env.is_tty_out {
                text::wrap(&t, room).join("\n")
            } else {
                t
            };
            indent(out, &t, &prefix);
        }
        Block::Thinking(t) => thinking(ctx, t, full, width, out),
        Block::ToolCall { name, args } => {
            if full {
                out.push_str(&format!("  {} {}\n", st.yellow("⚙"), st.bold(name)));
                indent_with(
                    out,
                    &text::sanitize(&conversation::pretty(args)),
                    "    ",
                    |l| st.dim(l),
                );
            } else {
                let room = width.saturating_sub(text::width(name) + 6);
                out.push_str(&format!(
                    "  {} {} {}\n",
                    st.yellow("⚙"),
                    st.bold(&text::sanitize(name)),
                    st.dim(&text::sanitize(&conversation::args_line(args, room)))
                ));
            }
        }
        Block::Output { text: t, error } => output(ctx, t, *error, full, width, out),
        Block::Image(mime) => out.push_str(&format!("  {}\n", st.dim(&format!("[{mime}]")))),
    }
}

/// Thinking: shown dimmed with `--full`, else folded to its line count.
fn thinking(ctx: &Ctx, t: &str, full: bool, width: usize, out: &mut String) {
    let st = ctx.style;
    let lines = t.lines().count();
    if full {
        let t = text::sanitize(t);
        let t = if ctx.env.is_tty_out {
            text::wrap(&t, width.saturating_sub(4)).join("\n")
        } else {
            t
        };
        indent_with(out, &t, &format!("  {} ", st.dim("┆")), |l| st.dim(l));
    } else {
        out.push_str(&format!(
            "  {}\n",
            st.dim(&format!(
                "▸ thinking, {lines} line{} folded",
                if lines == 1 { "" } else { "s" }
            ))
        ));
    }
}

/// A tool's output: the first lines (all with `--full`), red when it failed.
fn output(ctx: &Ctx, t: &str, error: bool, full: bool, width: usize, out: &mut String) {
    let st = ctx.style;
    let lines: Vec<&str> = t.lines().collect();
    let shown = if full {
        lines.len()
    } else {
        lines.len().min(OUTPUT_LINES)
    };
    for line in &lines[..shown] {
        let line = text::sanitize(line);
        let line = if full {
            line
        } else {
            text::truncate(&line, width.saturating_sub(4))
        };
        let painted = if error { st.red(&line) } else { st.dim(&line) };
        out.push_str(&format!("  {} {painted}\n", st.dim("│")));
    }
    if lines.is_empty() {
        out.push_str(&format!("  {} {}\n", st.dim("│"), st.dim("(no output)")));
    }
    if shown < lines.len() {
        out.push_str(&format!(
            "  {}\n",
            st.dim(&format!(
                "… {} more line{} (--full)",
                lines.len() - shown,
                if lines.len() - shown == 1 { "" } else { "s" }
            ))
        ));
    }
}
