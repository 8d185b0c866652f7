//! `export`: the active branch as Markdown, a self-contained HTML page, or JSON.

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK};
use crate::export_md::Meta;
use crate::jsonout::str_of;
use crate::{export_html, export_md, fmt, loaded, resolve, show, transcript, Ctx};

pub const CMD: Command = Command {
    name: "export",
    summary: "the active branch as Markdown, a self-contained HTML page, or JSON",
    usage: "<id|path> [--format md|html|json] [--out FILE] [--branch ENTRY]",
    description: "Writes the branch from the root to the leaf (or to --branch) in the chosen format \
(Markdown by default) to FILE, or to stdout. HTML is one file with inline styles and no scripts; all \
session text is escaped. JSON is the document of `show --json`.",
    opts: &[
        Opt {
            long: "format",
            short: Some('f'),
            value: Some("FORMAT"),
            help: "md (default), html or json",
        },
        Opt {
            long: "out",
            short: Some('o'),
            value: Some("FILE"),
            help: "write to FILE (replaced if it exists) instead of stdout",
        },
        Opt {
            long: "branch",
            short: Some('b'),
            value: Some("ENTRY"),
            help: "export the branch ending at this entry instead",
        },
    ],
    min_pos: 1,
    max_pos: Some(1),
    examples: &[
        "pi-sessions export 0193f0a0 --format html --out session.html",
        "pi-sessions export ./s.jsonl --format md > s.md",
    ],
};

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let format = p.value("format").unwrap_or("md");
    if !matches!(format, "md" | "markdown" | "html" | "json") {
        return Err(CliError::usage_in(
            "export",
            format!("unknown format {format}: use md, html or json"),
        ));
    }
    let path = resolve::session(ctx.env, &p.pos[0])?;
    let l = loaded::open(&path)?;
    let branch = show::branch_of(&l, p.value("branch"))?;
    let body = if format == "json" {
        let mut t = pi_session_core::json::to_json(&show::document(&l, &branch));
        t.push('\n');
        t
    } else {
        let items = transcript::items(&l, &branch);
        let title = show::title(&l);
        let (id, cwd, file) = (l.id(), l.cwd(), l.path.display().to_string());
        let created = str_of(l.header().get("timestamp")).and_then(|t| fmt::parse_time(&t));
        let meta = Meta {
            title: &title,
            id: &id,
            cwd: &cwd,
            path: &file,
            created,
        };
        if format == "html" {
            export_html::render(&meta, &items, ctx.env.utc)
        } else {
            export_md::render(&meta, &items, ctx.env.utc)
        }
    };
    match p.value("out") {
        Some(o) => {
            std::fs::write(o, body.as_bytes())
                .map_err(|e| CliError::failed(format!("{o}: cannot write: {e}")))?;
            writeln!(
                ctx.out,
                "Exported {} entries of {} to {o}",
                branch.len(),
                path.display()
            )?;
        }
        None => ctx.out.write_all(body.as_bytes())?,
    }
    Ok(EXIT_OK)
}
