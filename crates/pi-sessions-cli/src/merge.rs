//! `merge`: join two copies of one session that grew apart (see `pi_session_core::merge`).

use std::path::Path;

use pi_session_core::merge::{merge_bytes, Merged};
use pi_session_core::{fsio, reports};

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK};
use crate::jsonout::emit;
use crate::style::Style;
use crate::{resolve, Ctx};

pub const CMD: Command = Command {
    name: "merge",
    summary: "join two copies of one session that grew apart",
    usage: "<a> <b> [--out FILE | --in-place] [--json]",
    description: "Writes a's header and every entry of both files once. An entry of b whose id a \
uses for other content is kept as a sibling under a new id, with \"mergedFrom\" naming the old \
one (a conflict). Parents come before children and the continuation with the latest timestamp \
ends the file, so pi resumes there. Lines that are no entry are kept. The two files must be the \
same session (same header id). The result goes to FILE with --out (which must not exist), into a \
with --in-place, or to stdout otherwise (the report then goes to stderr).",
    opts: &[
        Opt {
            long: "out",
            short: Some('o'),
            value: Some("FILE"),
            help: "write the merged session to FILE (a new file)",
        },
        Opt {
            long: "in-place",
            short: None,
            value: None,
            help: "write the merged session into <a>",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help: "report as JSON (needs --out or --in-place)",
        },
    ],
    min_pos: 2,
    max_pos: Some(2),
    examples: &[
        "pi-sessions merge laptop.jsonl desktop.jsonl --out merged.jsonl",
        "pi-sessions merge ~/.pi/agent/sessions/--p--/x.jsonl other/x.jsonl --in-place",
    ],
};

fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path)
        .map_err(|e| CliError::failed(format!("{}: cannot read: {e}", path.display())))
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let a = resolve::session(ctx.env, &p.pos[0])?;
    let b = resolve::session(ctx.env, &p.pos[1])?;
    let in_place = p.flag("in-place");
    let json = p.flag("json");
    let out_path = p.value("out").map(Path::new);
    if in_place && out_path.is_some() {
        return Err(CliError::usage_in(
            "merge",
            "give either --out or --in-place, not both",
        ));
    }
    if json && !in_place && out_path.is_none() {
        return Err(CliError::usage_in(
            "merge",
            "--json reports on stdout: give --out or --in-place for the merged session",
        ));
    }
    if let Some(o) = out_path {
        if o.exists() {
            return Err(CliError::usage_in(
                "merge",
                format!(
                    "{} exists: choose a new file for --out (or use --in-place to write into a)",
                    o.display()
                ),
            ));
        }
    }
    let m = merge_bytes(&read(&a)?, &read(&b)?).map_err(|e| {
        CliError::failed(format!(
            "cannot merge {} and {}: {} ({})",
            a.display(),
            b.display(),
            e.message,
            e.js_code()
        ))
    })?;
    let written_to = if let Some(o) = out_path {
        fsio::create_new_atomic(o, &m.bytes)
            .map_err(|e| CliError::failed(format!("{}: {}", o.display(), e.message)))?;
        Some(o.to_path_buf())
    } else if in_place {
        fsio::replace_atomic(&a, &m.bytes)
            .map_err(|e| CliError::failed(format!("{}: {}", a.display(), e.message)))?;
        Some(a.clone())
    } else {
        ctx.out.write_all(&m.bytes)?;
        None
    };
    if json {
        emit(
            ctx.out,
            &reports::merged(
                &m,
                written_to
                    .map(|p| p.to_string_lossy().into_owned())
                    .as_deref(),
            ),
        )?;
        return Ok(EXIT_OK);
    }
    let st = if written_to.is_some() {
        ctx.style
    } else {
        ctx.err_style
    };
    let report = report(st, &a, &b, &m, written_to.as_deref());
    if written_to.is_some() {
        ctx.out.write_all(report.as_bytes())?;
    } else {
        ctx.err.write_all(report.as_bytes())?;
    }
    Ok(EXIT_OK)
}

/// What was merged: each conflict, and the counts (with where the result was written).
fn report(st: Style, a: &Path, b: &Path, m: &Merged, written_to: Option<&Path>) -> String {
    let mut report = String::new();
    report.push_str(&st.bold(&format!("Merging {} and {}\n", a.display(), b.display())));
    for c in &m.conflicts {
        report.push_str(&format!(
            "  {} entry {} differs: b's is kept as {} (mergedFrom {})\n",
            st.yellow("conflict:"),
            crate::text::sanitize(&c.id),
            c.new_id,
            crate::text::sanitize(&c.id)
        ));
    }
    let summary = format!(
        "{} entr{}, {} conflict{}, {} kept line{}",
        m.entries,
        if m.entries == 1 { "y" } else { "ies" },
        m.conflicts.len(),
        if m.conflicts.len() == 1 { "" } else { "s" },
        m.kept_lines,
        if m.kept_lines == 1 { "" } else { "s" },
    );
    match written_to {
        Some(w) => report.push_str(&format!("Wrote {}: {summary}\n", w.display())),
        None => report.push_str(&format!("{summary}\n")),
    }
    report
}
