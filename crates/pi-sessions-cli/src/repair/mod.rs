//! `repair`: write a repaired copy of a session file (or repair it in place, keeping a backup).
//!
//! The rule: nothing that parsed is dropped. Lines readers skip anyway are removed (blank lines,
//! lines that are not JSON — including a torn last line — and `null`/`0`/`false`/`""`), every
//! other line is kept byte for byte unless a fix below changes it, and each change is reported.
//! A line holding a torn record with a whole entry glued after it (`pi_session_core::torn`) is
//! split: its torn bytes go, the entry stays, byte for byte. The fixes:
//! - a byte order mark, CRLF line ends and invalid UTF-8 become what readers already see;
//! - a missing header is added (id and time from the file name when it has them), a header that
//!   is not first is moved to the top, a non-string header id is replaced;
//! - from format v2 on: entries without an id get one; among records sharing an id, the earlier
//!   ones get fresh ids (readers resolve the id to the last one, so what they show is unchanged);
//!   a dangling `parentId` becomes `null` and a `parentId` cycle is cut at its first entry in file
//!   order (both are roots to readers already); a dangling `firstKeptEntryId` becomes the
//!   compaction's own id (retain nothing, as readers already do).
//!
//! Changed lines are written as `JSON.stringify` writes them; unchanged lines keep their bytes.
//!
//! Here: the command, and `repair_bytes` in its order: lines (read, then written), header, links.

mod header;
mod lines;
mod links;

use std::path::Path;

use pi_session_core::fsio;
use pi_session_core::inspect::{self, Inspection};
use pi_session_core::json::Value;

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK, EXIT_PROBLEMS};
use crate::style::Style;
use crate::{resolve, verify, Ctx};
use lines::{is_header, key_of, Line};

pub const CMD: Command = Command {
    name: "repair",
    summary: "write a repaired copy of a session file (nothing that parsed is dropped)",
    usage: "<path> [--out FILE | --in-place]",
    description:
        "Removes what readers skip anyway (blank lines, lines that are not JSON such as a \
torn last line, null/false/0/\"\" lines, the torn bytes a writer that died mid-line left before \
the whole entry another writer glued after them, which is kept), keeps every other record, and \
fixes the header, duplicate ids, dangling parentId / firstKeptEntryId and parentId cycles the way \
readers already interpret them. Every change is reported with its line number. The repaired file \
goes to FILE with --out (which must not exist), replaces the original with --in-place (the \
original is kept as <file>.bak), or to stdout otherwise. Exits with 1 when problems remain that \
repair leaves alone (records that are not objects, dangling label targets).",
    opts: &[
        Opt {
            long: "out",
            short: Some('o'),
            value: Some("FILE"),
            help: "write the repaired copy to FILE (a new file)",
        },
        Opt {
            long: "in-place",
            short: None,
            value: None,
            help: "replace the file, keeping the original as <file>.bak",
        },
    ],
    min_pos: 1,
    max_pos: Some(1),
    examples: &[
        "pi-sessions repair broken.jsonl --out fixed.jsonl",
        "pi-sessions repair ~/.pi/agent/sessions/--p--/x.jsonl --in-place",
    ],
};

/// One change, tied to a line of the original file when it is about one.
#[derive(Debug, Clone)]
pub struct Action {
    pub line: Option<usize>,
    pub what: String,
}

/// The repaired bytes and what was done.
#[derive(Debug, Clone)]
pub struct Repaired {
    pub bytes: Vec<u8>,
    pub actions: Vec<Action>,
    /// Records written (header included).
    pub kept: usize,
    /// Records written with changes.
    pub changed: usize,
    /// Lines removed.
    pub dropped: usize,
}

/// Repair a file's bytes. `file_name` supplies a header id and time if one must be made.
pub fn repair_bytes(bytes: &[u8], file_name: Option<&str>) -> Repaired {
    let mut actions = Vec::new();
    let mut act = |line: Option<usize>, what: String| actions.push(Action { line, what });
    let read = lines::read_lines(bytes, &mut act);
    let mut lines = read.lines;
    if read.crlf > 0 {
        act(None, format!("made {} CRLF line end(s) LF", read.crlf));
    }
    header::fix_header(&mut lines, file_name, &mut act);
    let version = match lines.first().and_then(|l| l.value.get("version")) {
        Some(Value::Number(v)) => *v,
        None => 1.0,
        Some(_) => 3.0,
    };
    if version >= 2.0 {
        links::fix_links(&mut lines, &mut act);
    }
    let (bytes_out, changed) = lines::write_lines(&lines, bytes.len() + 64);
    if let Some(last) = read.missing_newline {
        actions.push(Action {
            line: Some(last),
            what: "added the missing newline at the end".into(),
        });
    }
    Repaired {
        bytes: bytes_out,
        actions,
        kept: lines.len(),
        changed,
        dropped: read.dropped,
    }
}

/// Where the repaired file goes.
#[derive(Clone, Copy)]
enum Dest<'a> {
    Stdout,
    Out(&'a Path),
    InPlace,
}

impl<'a> Dest<'a> {
    fn of(p: &'a Parsed) -> Result<Dest<'a>, CliError> {
        let in_place = p.flag("in-place");
        match p.value("out").map(Path::new) {
            Some(_) if in_place => Err(CliError::usage_in(
                "repair",
                "give either --out or --in-place, not both",
            )),
            Some(o) if o.exists() => Err(CliError::usage_in(
                "repair",
                format!(
                    "{} exists: choose a new file for --out (or use --in-place to replace the original)",
                    o.display()
                ),
            )),
            Some(o) => Ok(Dest::Out(o)),
            None if in_place => Ok(Dest::InPlace),
            None => Ok(Dest::Stdout),
        }
    }
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let path = resolve::session(ctx.env, &p.pos[0])?;
    let dest = Dest::of(p)?;
    let original = std::fs::read(&path)
        .map_err(|e| CliError::failed(format!("{}: cannot read: {e}", path.display())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let r = repair_bytes(&original, name.as_deref());
    let after = inspect::inspect(&r.bytes);
    let to_stdout = matches!(dest, Dest::Stdout);
    // The report goes to stderr when the repaired file itself goes to stdout.
    let st = if to_stdout { ctx.err_style } else { ctx.style };
    let mut report = String::new();
    report.push_str(&st.bold(&format!("Repairing {}\n", path.display())));
    for a in &r.actions {
        let loc = match a.line {
            Some(l) => format!("{}:{l}:", path.display()),
            None => format!("{}:", path.display()),
        };
        report.push_str(&format!(
            "  {} {}\n",
            st.dim(&loc),
            crate::text::sanitize(&a.what)
        ));
    }
    let unchanged = r.bytes == original;
    let in_place_unchanged = unchanged && matches!(dest, Dest::InPlace);
    let written_to = if in_place_unchanged {
        report.push_str("Nothing to repair: the file is left as it is.\n");
        None
    } else {
        write(ctx, dest, &path, &original, &r, &mut report)?
    };
    let summary = format!(
        "{} record{} kept ({} changed), {} line{} dropped",
        r.kept,
        if r.kept == 1 { "" } else { "s" },
        r.changed,
        r.dropped,
        if r.dropped == 1 { "" } else { "s" },
    );
    match written_to {
        Some(w) => report.push_str(&format!("Wrote {w}: {summary}\n")),
        None if !in_place_unchanged => report.push_str(&format!("{summary}\n")),
        None => {}
    }
    let problems = after.problems();
    report_left(&mut report, st, dest, &after);
    if to_stdout {
        ctx.err.write_all(report.as_bytes())?;
    } else {
        ctx.out.write_all(report.as_bytes())?;
    }
    Ok(if problems == 0 {
        EXIT_OK
    } else {
        EXIT_PROBLEMS
    })
}

/// Write the repaired file where it goes; the file written, unless it went to stdout.
fn write(
    ctx: &mut Ctx,
    dest: Dest,
    path: &Path,
    original: &[u8],
    r: &Repaired,
    report: &mut String,
) -> Result<Option<String>, CliError> {
    Ok(match dest {
        Dest::Out(o) => {
            fsio::create_new_atomic(o, &r.bytes)
                .map_err(|e| CliError::failed(format!("{}: {}", o.display(), e.message)))?;
            Some(o.display().to_string())
        }
        Dest::InPlace => {
            let bak = fsio::backup(path, original).map_err(|e| {
                CliError::failed(format!("{}: backup failed: {}", path.display(), e.message))
            })?;
            fsio::replace_atomic(path, &r.bytes)
                .map_err(|e| CliError::failed(format!("{}: {}", path.display(), e.message)))?;
            report.push_str(&format!("Kept the original as {}\n", bak.display()));
            Some(path.display().to_string())
        }
        Dest::Stdout => {
            ctx.out.write_all(&r.bytes)?;
            None
        }
    })
}

/// What the repaired file still has that repair leaves alone, or that it verifies clean.
fn report_left(report: &mut String, st: Style, dest: Dest, after: &Inspection) {
    if after.problems() == 0 {
        report.push_str(&st.green("✓ the repaired file verifies clean\n"));
        return;
    }
    report.push_str(
        &st.yellow("Left as they are (repair cannot fix these without dropping data):\n"),
    );
    let out_path = match dest {
        Dest::Out(o) => Some(o),
        _ => None,
    };
    let shown = Path::new(out_path.map_or("(repaired)", |o| o.to_str().unwrap_or("(repaired)")));
    for f in after
        .findings
        .iter()
        .filter(|f| f.severity != inspect::Severity::Note)
    {
        report.push_str(&format!("  {}\n", verify::finding_line(st, shown, f)));
    }
}
