//! `redact`: a session with its secrets replaced by `[REDACTED:<kind>]`, every other byte kept
//! (see `pi_session_core::secrets::redact`).

use std::path::{Path, PathBuf};

use pi_session_core::secrets::redact::{self, Target};
use pi_session_core::secrets::{self, Acks};

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK};
use crate::jsonout::{arr, emit, num, obj, opt, s};
use crate::{resolve, secrets as secrets_cmd, Ctx};

pub const CMD: Command = Command {
    name: "redact",
    summary: "a session with its secrets replaced by [REDACTED:kind], every other byte kept",
    usage: "<id|path> [--in-place [--no-backup] | --out FILE] [--json]",
    description: "Replaces each unacknowledged finding of `pi-sessions secrets` by \
[REDACTED:<kind>] and changes nothing else: ids, the tree, signature fields and every other byte \
stay, so pi opens the result to the same entries. With --in-place the session is rewritten \
atomically (temp file, fsync, rename) after its original is kept as <file>.bak (private; it \
still holds the secrets: delete it once you are sure); a session pi holds under a writer lease is \
refused (exit 1). With --out the redacted copy goes to FILE (a new file, private), otherwise to \
stdout.",
    opts: &[
        Opt {
            long: "in-place",
            short: None,
            value: None,
            help: "rewrite the session itself, keeping the original as <file>.bak",
        },
        Opt {
            long: "no-backup",
            short: None,
            value: None,
            help: "with --in-place: keep no .bak of the original",
        },
        Opt {
            long: "out",
            short: Some('o'),
            value: Some("FILE"),
            help: "write the redacted copy to FILE (a new file)",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help: "report {path, out, backup, tail, redacted: [finding]} as JSON",
        },
    ],
    min_pos: 1,
    max_pos: Some(1),
    examples: &[
        "pi-sessions redact 0193f0a0 --in-place",
        "pi-sessions redact ./s.jsonl --out s.redacted.jsonl",
    ],
};

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let path = resolve::session(ctx.env, &p.pos[0])?;
    let acks =
        Acks::load(Path::new(&ctx.env.agent_dir())).map_err(|e| CliError::failed(e.message))?;
    let target = match (p.flag("in-place"), p.value("out")) {
        (true, Some(_)) => {
            return Err(CliError::usage_in(
                "redact",
                "give either --out or --in-place, not both",
            ))
        }
        (false, None) => return to_stdout(ctx, &path, &acks),
        (true, None) => Target::InPlace {
            backup: !p.flag("no-backup"),
        },
        (false, Some(o)) => Target::Out(PathBuf::from(o)),
    };
    let done = redact::redact(&path, &target, &acks).map_err(|e| {
        CliError::failed(format!(
            "{}: {} ({})",
            path.display(),
            e.message,
            e.js_code()
        ))
    })?;
    if p.flag("json") {
        emit(ctx.out, &report_json(&path, &done))?;
        return Ok(EXIT_OK);
    }
    report_text(ctx, &path, &done)
}

/// `{path, out, backup, tail, redacted: [finding]}`.
fn report_json(path: &Path, done: &redact::Redacted) -> pi_session_core::json::Value {
    obj(vec![
        ("path", s(&path.to_string_lossy())),
        (
            "out",
            opt(done
                .written
                .as_ref()
                .map(|w| w.to_string_lossy())
                .as_deref()),
        ),
        (
            "backup",
            opt(done.backup.as_ref().map(|b| b.to_string_lossy()).as_deref()),
        ),
        ("tail", num(done.tail as f64)),
        (
            "redacted",
            arr(done
                .findings
                .iter()
                .map(secrets_cmd::finding_json)
                .collect()),
        ),
    ])
}

fn report_text(ctx: &mut Ctx, path: &Path, done: &redact::Redacted) -> CliResult {
    let Some(written) = &done.written else {
        writeln!(ctx.out, "Nothing to redact in {}", path.display())?;
        return Ok(EXIT_OK);
    };
    let n = done.findings.len();
    writeln!(
        ctx.out,
        "Redacted {n} secret{} of {} into {}",
        if n == 1 { "" } else { "s" },
        path.display(),
        written.display()
    )?;
    if let Some(b) = &done.backup {
        writeln!(
            ctx.out,
            "The original is kept as {} (it still holds the secrets: delete it once you are sure)",
            b.display()
        )?;
    }
    if done.tail > 0 {
        writeln!(
            ctx.out,
            "{} bytes appended meanwhile were carried over as written: run redact again to look at them",
            done.tail
        )?;
    }
    Ok(EXIT_OK)
}

fn to_stdout(ctx: &mut Ctx, path: &Path, acks: &Acks) -> CliResult {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::failed(format!("{}: cannot read: {e}", path.display())))?;
    let scan = secrets::scan_read(path, &bytes, acks);
    ctx.out
        .write_all(&redact::redact_bytes(&bytes, &scan.findings))?;
    Ok(EXIT_OK)
}
