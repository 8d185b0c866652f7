//! `export`: the active branch as Markdown, a self-contained HTML page, or JSON.

use pi_session_core::secrets;

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK};
use crate::export_page::Meta;
use crate::jsonout::str_of;
use crate::{conversation, export_html, export_md, fmt, loaded, resolve, show, Ctx};

pub const CMD: Command = Command {
    name: "export",
    summary: "the active branch as Markdown, a self-contained HTML page, or JSON",
    usage: "<id|path> [--format md|html|json] [--out FILE] [--branch ENTRY] [--no-redact | --redact]",
    description: "Writes the branch from the root to the leaf (or to --branch) in the chosen format \
(Markdown by default) to FILE, or to stdout. HTML is one file with inline styles and no scripts; all \
session text is escaped. JSON is the document of `show --json`. Markdown and HTML are made to be \
shared, so credentials (what `pi-sessions secrets` finds and nobody acknowledged) are replaced by \
[REDACTED:<kind>] unless --no-redact is given; JSON stays the faithful copy unless --redact is \
given. FILE is created private (0600 on Unix).",
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
            long: "no-redact",
            short: None,
            value: None,
            help: "Markdown and HTML: keep credentials as they are",
        },
        Opt {
            long: "redact",
            short: None,
            value: None,
            help: "JSON: replace credentials by [REDACTED:kind] too",
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
    let redact = if format == "json" {
        p.flag("redact")
    } else {
        !p.flag("no-redact")
    };
    let (l, redacted) = open(ctx, &path, redact)?;
    let branch = show::branch_of(&l, p.value("branch"))?;
    let body = if format == "json" {
        let mut t = pi_session_core::json::to_json(&show::document(&l, &branch));
        t.push('\n');
        t
    } else {
        let items = conversation::items(&l, &branch);
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
            pi_session_core::fsio::replace_private(std::path::Path::new(o), body.as_bytes())
                .map_err(|e| CliError::failed(format!("{o}: cannot write: {}", e.message)))?;
            writeln!(
                ctx.out,
                "Exported {} entries of {} to {o}",
                branch.len(),
                path.display()
            )?;
        }
        None => ctx.out.write_all(body.as_bytes())?,
    }
    if redacted > 0 {
        writeln!(
            ctx.err,
            "pi-sessions: {redacted} secret{} of the session replaced by [REDACTED:kind]{}",
            if redacted == 1 { "" } else { "s" },
            if format == "json" {
                ""
            } else {
                " (--no-redact keeps them)"
            }
        )?;
    }
    Ok(EXIT_OK)
}

/// The session, with its unacknowledged secrets replaced when `redact`; how many were.
fn open(
    ctx: &Ctx,
    path: &std::path::Path,
    redact: bool,
) -> Result<(loaded::Loaded, usize), CliError> {
    if !redact {
        return Ok((loaded::open(path)?, 0));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::failed(format!("{}: cannot read: {e}", path.display())))?;
    let acks = secrets::Acks::load(std::path::Path::new(&ctx.env.agent_dir()))
        .map_err(|e| CliError::failed(e.message))?;
    let scan = secrets::scan_read(path, &bytes, &acks);
    let n = scan.findings.len();
    let bytes = secrets::redact::redact_bytes(&bytes, &scan.findings);
    Ok((loaded::open_bytes(path, bytes)?, n))
}
