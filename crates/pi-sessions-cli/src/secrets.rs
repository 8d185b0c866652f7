//! `secrets`: an audit of credential-shaped strings in sessions (see `pi_session_core::secrets`),
//! and their acknowledgement.

use std::path::{Path, PathBuf};

use pi_session_core::json::Value;
use pi_session_core::listing;
use pi_session_core::secrets::{self, Acks, FileScan, Finding};

use crate::args::{Command, Opt, Parsed};
use crate::catalog::Scope;
use crate::error::{CliError, CliResult, EXIT_OK, EXIT_PROBLEMS};
use crate::jsonout::{arr, emit, num, obj, opt, s};
use crate::progress::Progress;
use crate::{resolve, text, Ctx};

pub const CMD: Command = Command {
    name: "secrets",
    summary: "credential-shaped strings in sessions (API keys, tokens, private keys, passwords)",
    usage: "[<id|path>…] [--all] [--cwd DIR] [--json] [--ack FINGERPRINT]… [--ack-all]",
    description:
        "Looks through every entry of the given sessions (or of this project's, or of all \
with --all) for credentials: provider API keys (Anthropic, OpenAI, OpenRouter, Groq, xAI, Google), \
AWS access key ids and the secret key next to one, GitHub, GitLab, Slack, Stripe live and npm \
tokens, Slack webhooks, PEM private keys, passwords in URLs, JWTs. Only shapes that real \
credentials have are reported, so prose, code, hashes and UUIDs do not trip it. Each finding is \
shown with its entry, where in the entry it is, its kind and a masked preview (never the secret \
whole), and a fingerprint: `--ack FINGERPRINT` acknowledges it (it is then no longer reported, \
and sync sends its session), storing only that hash in <agent dir>/.pi-session-native/. \
`pi-sessions redact` removes findings from a session. Exits with 1 when it finds \
unacknowledged secrets (or cannot read a session), 0 when clean.",
    opts: &[
        Opt {
            long: "all",
            short: Some('a'),
            value: None,
            help: "look at the sessions of every project",
        },
        Opt {
            long: "cwd",
            short: None,
            value: Some("DIR"),
            help: "look at the sessions of the project in DIR",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help:
                "print {scanned, findings, acknowledged, sessions: [{path, id, findings}]} as JSON",
        },
        Opt {
            long: "ack",
            short: None,
            value: Some("FINGERPRINT"),
            help: "acknowledge a finding (repeatable); nothing is scanned",
        },
        Opt {
            long: "ack-all",
            short: None,
            value: None,
            help: "acknowledge every finding in the sessions looked at",
        },
    ],
    min_pos: 0,
    max_pos: None,
    examples: &[
        "pi-sessions secrets --all",
        "pi-sessions secrets 0193f0a0 --json",
        "pi-sessions secrets --ack 3f2a9c0d1b7e5a44",
    ],
};

/// The session files named by the arguments, or the scope's.
fn files(ctx: &Ctx, p: &Parsed) -> Result<Vec<PathBuf>, CliError> {
    if !p.pos.is_empty() {
        return p.pos.iter().map(|a| resolve::session(ctx.env, a)).collect();
    }
    Ok(
        match Scope::from_flags(ctx.env, p.flag("all"), p.value("cwd")) {
            Scope::All => {
                listing::list_all_candidates(&ctx.env.sessions_root(), listing::NameOrder::Bytes)
                    .into_iter()
                    .map(|(f, _)| f)
                    .collect()
            }
            Scope::Project(cwd) => {
                listing::list_dir_files(&ctx.env.project_dir(&cwd)).unwrap_or_default()
            }
        },
    )
}

fn now_iso() -> String {
    pi_session_core::timefmt::now_iso().0
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let agent = PathBuf::from(ctx.env.agent_dir());
    let to_ack = p.values("ack");
    if !to_ack.is_empty() {
        let fps: Vec<(String, Option<secrets::Kind>)> = to_ack
            .iter()
            .map(|f| (f.to_ascii_lowercase(), None))
            .collect();
        let added = Acks::add(&agent, &fps, &now_iso())
            .map_err(|e| CliError::usage_in("secrets", e.message))?;
        writeln!(
            ctx.out,
            "Acknowledged {added} new fingerprint{} ({} given) in {}",
            if added == 1 { "" } else { "s" },
            fps.len(),
            Acks::file_in(&agent).display()
        )?;
        return Ok(EXIT_OK);
    }
    let acks = Acks::load(&agent).map_err(|e| CliError::failed(e.message))?;
    let paths = files(ctx, p)?;
    let mut bar = Progress::new(ctx.err, ctx.env.is_tty_err, "scanning", paths.len());
    let results = secrets::scan_files(&paths, &acks, &mut |n| bar.update(n));
    bar.finish();
    let mut scans = Vec::new();
    let mut unreadable = Vec::new();
    for (path, r) in paths.iter().zip(results) {
        match r {
            Ok(s) => scans.push(s),
            Err(e) => unreadable.push((path.clone(), e.message)),
        }
    }
    for (path, why) in &unreadable {
        writeln!(
            ctx.err,
            "pi-sessions: cannot read {}: {why}",
            path.display()
        )?;
    }
    if p.flag("ack-all") {
        return ack_all(ctx, &agent, &scans);
    }
    if p.flag("json") {
        emit(ctx.out, &report_json(&scans))?;
    } else {
        render(ctx, &scans)?;
    }
    let found = scans.iter().any(|s| !s.findings.is_empty());
    Ok(if found || !unreadable.is_empty() {
        EXIT_PROBLEMS
    } else {
        EXIT_OK
    })
}

fn ack_all(ctx: &mut Ctx, agent: &Path, scans: &[FileScan]) -> CliResult {
    let fps: Vec<(String, Option<secrets::Kind>)> = scans
        .iter()
        .flat_map(|s| &s.findings)
        .map(|f| (f.fingerprint.clone(), Some(f.kind)))
        .collect();
    let added = Acks::add(agent, &fps, &now_iso()).map_err(|e| CliError::failed(e.message))?;
    writeln!(
        ctx.out,
        "Acknowledged {added} finding{} in {} session{}",
        if added == 1 { "" } else { "s" },
        scans.iter().filter(|s| !s.findings.is_empty()).count(),
        if scans.len() == 1 { "" } else { "s" }
    )?;
    Ok(EXIT_OK)
}

/// One row of the table (the header is a row of the column names).
fn row(cells: [&str; 6]) -> String {
    let [line, entry, place, kind, fp, preview] = cells;
    format!("  {line:<10} {entry:<12} {place:<12} {kind:<22} {fp:<16}  {preview}\n")
}

fn finding_line(f: &Finding) -> String {
    row([
        &format!("line {}", f.line),
        &text::truncate(f.entry_id.as_deref().unwrap_or("-"), 12),
        f.place.name(),
        f.kind.name(),
        &f.fingerprint,
        &text::sanitize(&f.preview),
    ])
}

fn render(ctx: &mut Ctx, scans: &[FileScan]) -> CliResult {
    let st = ctx.style;
    let mut o = String::new();
    let mut total = 0;
    let mut sessions = 0;
    for sc in scans.iter().filter(|s| !s.findings.is_empty()) {
        sessions += 1;
        total += sc.findings.len();
        o.push_str(&format!(
            "{}  {}\n",
            st.bold(&text::sanitize(&sc.path.to_string_lossy())),
            st.cyan(sc.session_id.as_deref().unwrap_or("(no header)"))
        ));
        o.push_str(&st.dim(&row([
            "line",
            "entry",
            "place",
            "kind",
            "fingerprint",
            "preview",
        ])));
        for f in &sc.findings {
            o.push_str(&finding_line(f));
        }
    }
    let acked: usize = scans.iter().map(|s| s.acknowledged).sum();
    let acked_note = if acked > 0 {
        format!(" ({acked} acknowledged, not shown)")
    } else {
        String::new()
    };
    if total == 0 {
        o.push_str(&format!(
            "No secrets in {} session{}{acked_note}.\n",
            scans.len(),
            if scans.len() == 1 { "" } else { "s" }
        ));
    } else {
        o.push_str(&format!(
            "\n{total} secret{} in {sessions} of {} session{}{acked_note}.\n",
            if total == 1 { "" } else { "s" },
            scans.len(),
            if scans.len() == 1 { "" } else { "s" }
        ));
        o.push_str(&st.dim(
            "Remove them with `pi-sessions redact <id> --in-place`, or acknowledge one that is \
no secret with `pi-sessions secrets --ack <fingerprint>`.\n",
        ));
    }
    ctx.out.write_all(o.as_bytes())?;
    Ok(EXIT_OK)
}

/// One finding as JSON (shared with `redact --json`).
pub fn finding_json(f: &Finding) -> Value {
    obj(vec![
        ("line", num(f.line as f64)),
        ("entryId", opt(f.entry_id.as_deref())),
        ("place", s(f.place.name())),
        ("kind", s(f.kind.name())),
        ("fingerprint", s(&f.fingerprint)),
        ("preview", s(&f.preview)),
    ])
}

/// `{scanned, findings, acknowledged, sessions: [{path, id, findings: [{line, entryId, place,
/// kind, fingerprint, preview}]}]}`; only sessions with findings are listed.
fn report_json(scans: &[FileScan]) -> Value {
    let sessions = scans
        .iter()
        .filter(|s| !s.findings.is_empty())
        .map(|sc| {
            obj(vec![
                ("path", s(&sc.path.to_string_lossy())),
                ("id", opt(sc.session_id.as_deref())),
                (
                    "findings",
                    arr(sc.findings.iter().map(finding_json).collect()),
                ),
            ])
        })
        .collect();
    obj(vec![
        ("scanned", num(scans.len() as f64)),
        (
            "findings",
            num(scans.iter().map(|s| s.findings.len()).sum::<usize>() as f64),
        ),
        (
            "acknowledged",
            num(scans.iter().map(|s| s.acknowledged).sum::<usize>() as f64),
        ),
        ("sessions", arr(sessions)),
    ])
}
