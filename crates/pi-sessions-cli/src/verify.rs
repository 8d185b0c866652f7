//! `verify`: check session files and report every problem with its line number.

use std::path::{Path, PathBuf};

use pi_session_core::inspect::{self, Finding, Inspection, Severity};
use pi_session_core::json::Value;

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK, EXIT_PROBLEMS};
use crate::jsonout::{self, arr, num, obj, s};
use crate::progress::Progress;
use crate::style::Style;
use crate::{text, Ctx};

pub const CMD: Command = Command {
    name: "verify",
    summary: "check session files: malformed lines, torn writes, broken links, cycles",
    usage: "[<path|dir>…] [--verbose] [--json]",
    description: "Reads each file (a directory means every .jsonl under it; no argument means \
<agent dir>/sessions) and reports, as file:line: severity: message, malformed lines, a torn last \
line, blank and non-object lines, header problems, duplicate ids, dangling parentId / \
firstKeptEntryId / targetId / fromId, parentId cycles, and records pi's readers throw on. Errors \
lose or hide data; warnings are things readers tolerate but pi never writes; notes (an old format \
version) are not problems. Exits with 1 when there is any error or warning. Files are only read. \
`pi-sessions repair` is suggested only for problems it fixes (found by repairing a copy in memory).",
    opts: &[
        Opt {
            long: "verbose",
            short: Some('v'),
            value: None,
            help: "also list the files without problems",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help: "print {files:[{path,ok,entries,version,findings,repairable}],checked,problems} as JSON",
        },
    ],
    min_pos: 0,
    max_pos: None,
    examples: &[
        "pi-sessions verify",
        "pi-sessions verify ~/.pi/agent/sessions/--home-me-proj--/",
    ],
};

/// Every `.jsonl` file under `dir`, sorted.
pub fn jsonl_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen_dirs = 0usize;
    while let Some(d) = stack.pop() {
        seen_dirs += 1;
        if seen_dirs > 100_000 {
            break;
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            } else if ft.is_symlink() && p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The files named by the arguments (or the sessions root).
fn targets(ctx: &Ctx, pos: &[String]) -> Result<Vec<PathBuf>, CliError> {
    if pos.is_empty() {
        return Ok(jsonl_under(&ctx.env.sessions_root()));
    }
    let mut files = Vec::new();
    for a in pos {
        let p = Path::new(a);
        if p.is_dir() {
            files.extend(jsonl_under(p));
        } else if p.exists() {
            files.push(p.to_path_buf());
        } else {
            return Err(CliError::not_found(format!(
                "{a}: no such file or directory"
            )));
        }
    }
    Ok(files)
}

/// Inspect one file; an unreadable file is one error finding.
pub fn check(path: &Path) -> Inspection {
    match std::fs::read(path) {
        Ok(bytes) => inspect::inspect(&bytes),
        Err(e) => Inspection {
            findings: vec![Finding::error(
                "unreadable",
                None,
                format!("cannot read: {e}"),
            )],
            ..Inspection::default()
        },
    }
}

/// `file:line: severity: message`, coloured by severity.
pub fn finding_line(st: Style, path: &Path, f: &Finding) -> String {
    let loc = match f.line {
        Some(l) => format!("{}:{l}:", path.display()),
        None => format!("{}:", path.display()),
    };
    let sev = match f.severity {
        Severity::Error => st.bold_red("error:"),
        Severity::Warning => st.bold_yellow("warning:"),
        Severity::Note => st.bold_blue("note:"),
    };
    format!(
        "{} {sev} {} {}",
        st.bold(&loc),
        text::sanitize(&f.message),
        st.dim(&format!("[{}]", f.code))
    )
}

pub fn finding_json(f: &Finding) -> Value {
    obj(vec![
        ("severity", s(f.severity.as_str())),
        ("code", s(f.code)),
        ("line", f.line.map(|l| num(l as f64)).unwrap_or(Value::Null)),
        ("message", s(&f.message)),
    ])
}

/// How many of a file's problems `repair` fixes: its problems less those of a copy repaired in
/// memory. verify's advice rests on this, so it never sends anyone to `repair` for a problem
/// that repair leaves alone (a dangling label target, a non-object record, an extra header).
fn repairable(path: &Path, before: &Inspection) -> usize {
    if before.problems() == 0 {
        return 0;
    }
    let Ok(bytes) = std::fs::read(path) else {
        return 0;
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let after = inspect::inspect(&crate::repair_bytes(&bytes, name.as_deref()).bytes);
    before.problems().saturating_sub(after.problems())
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let files = targets(ctx, &p.pos)?;
    let mut bar = Progress::new(ctx.err, ctx.env.is_tty_err, "verifying", files.len());
    let checked = pi_session_core::pool::map(
        &files,
        |f| {
            let r = check(f);
            let fixable = repairable(f, &r);
            (r, fixable)
        },
        |n| bar.update(n),
    );
    bar.finish();
    let (results, fixable): (Vec<Inspection>, Vec<usize>) = checked.into_iter().unzip();
    let problems: usize = results.iter().map(Inspection::problems).sum();
    if p.flag("json") {
        emit_json(ctx, &files, &results, &fixable)?;
    } else {
        let verbose = p.flag("verbose") || files.len() == 1;
        render(ctx, &files, &results, verbose, fixable.iter().sum())?;
    }
    Ok(if problems > 0 { EXIT_PROBLEMS } else { EXIT_OK })
}

fn emit_json(
    ctx: &mut Ctx,
    files: &[PathBuf],
    results: &[Inspection],
    fixable: &[usize],
) -> std::io::Result<()> {
    let problems: usize = results.iter().map(Inspection::problems).sum();
    let docs = files
        .iter()
        .zip(results)
        .zip(fixable)
        .map(|((f, r), fixable)| {
            obj(vec![
                ("path", s(&f.to_string_lossy())),
                ("ok", Value::Bool(r.problems() == 0)),
                ("entries", num(r.entries as f64)),
                ("version", r.version.map(num).unwrap_or(Value::Null)),
                (
                    "findings",
                    arr(r.findings.iter().map(finding_json).collect()),
                ),
                ("repairable", num(*fixable as f64)),
            ])
        })
        .collect();
    jsonout::emit(
        ctx.out,
        &obj(vec![
            ("files", arr(docs)),
            ("checked", num(files.len() as f64)),
            ("problems", num(problems as f64)),
        ]),
    )
}

/// The findings as `file:line` lines (notes only when verbose), a line per clean file when
/// verbose, the summary, and what `repair` would do about the problems (`fixable` of them).
fn render(
    ctx: &mut Ctx,
    files: &[PathBuf],
    results: &[Inspection],
    verbose: bool,
    fixable: usize,
) -> std::io::Result<()> {
    let st = ctx.style;
    let mut out = String::new();
    for (f, r) in files.iter().zip(results) {
        for x in r
            .findings
            .iter()
            .filter(|x| verbose || x.severity != Severity::Note)
        {
            out.push_str(&finding_line(st, f, x));
            out.push('\n');
        }
        if r.problems() == 0 && verbose {
            out.push_str(&format!(
                "{} {}  {}\n",
                st.green("✓"),
                f.display(),
                st.dim(&format!(
                    "{} entries{}",
                    r.entries,
                    r.version
                        .map(|v| format!(", format v{v}"))
                        .unwrap_or_default()
                ))
            ));
        }
    }
    out.push_str(&summary(st, files.len(), results));
    out.push('\n');
    let problems: usize = results.iter().map(Inspection::problems).sum();
    out.push_str(&st.dim(&repair_advice(problems, fixable)));
    ctx.out.write_all(out.as_bytes())
}

/// The line about `repair` under the summary: suggested only for what it fixes.
fn repair_advice(problems: usize, fixable: usize) -> String {
    let copy = "`pi-sessions repair <file> --out FILE` writes a repaired copy";
    if problems == 0 {
        String::new()
    } else if fixable >= problems {
        format!("{copy}.\n")
    } else if fixable > 0 {
        format!(
            "{copy}: it fixes {fixable} of these {problems} problems and leaves the rest, \
which it cannot fix without dropping data.\n"
        )
    } else {
        "`pi-sessions repair` leaves these as they are: it cannot fix them without dropping data.\n"
            .to_owned()
    }
}

/// `3 files checked: 1 with problems (2 errors, 0 warnings)`, green when clean, red otherwise.
fn summary(st: Style, files: usize, results: &[Inspection]) -> String {
    let problems: usize = results.iter().map(Inspection::problems).sum();
    let errors: usize = results.iter().map(Inspection::errors).sum();
    let bad_files = results.iter().filter(|r| r.problems() > 0).count();
    let summary = if files == 0 {
        "no session files found".to_owned()
    } else if problems == 0 {
        format!(
            "{} file{} checked, no problems",
            files,
            if files == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "{} file{} checked: {} with problems ({} error{}, {} warning{})",
            files,
            if files == 1 { "" } else { "s" },
            bad_files,
            errors,
            if errors == 1 { "" } else { "s" },
            problems - errors,
            if problems - errors == 1 { "" } else { "s" },
        )
    };
    if problems == 0 {
        st.green(&summary)
    } else {
        st.bold_red(&summary)
    }
}
