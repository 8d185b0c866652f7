//! `sync`: keep this machine's sessions and a remote's as one history (see
//! `pi_session_core::sync`).

use std::path::PathBuf;

use pi_session_core::json::Value;
use pi_session_core::paths::{self, Style};
use pi_session_core::sync::{self, Kind, Options, Report, SecretPolicy};

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK, EXIT_PROBLEMS};
use crate::jsonout::{arr, emit, num, obj, opt, s};
use crate::progress::Progress;
use crate::Ctx;

pub const CMD: Command = Command {
    name: "sync",
    summary: "keep the sessions of several machines as one history",
    usage: "<remote> [--folder] [--paths FILE] [--dry-run] [--skip-secrets | --refuse-secrets | --send-secrets] [--json]",
    description: "The remote is a git repository (any URL git understands, or a bare repository \
on a shared disk) or, with --folder, a directory a file-sync tool keeps in step. A session new on \
one side is copied to the other; one changed on both is merged (every entry of both, the latest \
continuation last) and both sides get the result. Syncthing and Dropbox conflict copies of a \
session are merged into it and removed. Project paths that differ between machines are mapped by \
<agent dir>/sync/paths (or --paths FILE), lines `<path on the remote> = <path here>`. A file pi \
appends to meanwhile keeps what it gained; one under a live writer lease is skipped. Sessions that \
cannot be synced (another session under the same name, an unmapped path) are reported (exit 1) \
and left as they were. Nothing is ever deleted except merged conflict copies. Before anything \
leaves the machine, the sessions to send are scanned for credentials (see `pi-sessions secrets`): \
to a git remote reached over the network (https, ssh, git@host:) such sessions are held back and \
named once (later runs count them), to a local repository or folder they go with a warning; \
acknowledged or redacted ones always go. --skip-secrets, --refuse-secrets (nothing is sent, exit \
1) and --send-secrets choose for yourself.",
    opts: &[
        Opt {
            long: "folder",
            short: None,
            value: None,
            help: "the remote is a shared folder, not a git repository",
        },
        Opt {
            long: "paths",
            short: None,
            value: Some("FILE"),
            help: "the path map (default <agent dir>/sync/paths)",
        },
        Opt {
            long: "dry-run",
            short: Some('n'),
            value: None,
            help: "show what would change, change nothing",
        },
        Opt {
            long: "skip-secrets",
            short: None,
            value: None,
            help: "hold back sessions with unacknowledged credentials (default for a network remote)",
        },
        Opt {
            long: "refuse-secrets",
            short: None,
            value: None,
            help: "send nothing when any session to send holds credentials (exit 1)",
        },
        Opt {
            long: "send-secrets",
            short: None,
            value: None,
            help: "send them with a warning (default for a local repository or folder)",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help: "report as JSON",
        },
    ],
    min_pos: 1,
    max_pos: Some(1),
    examples: &[
        "pi-sessions sync git@github.com:ana/pi-sessions.git",
        "pi-sessions sync /mnt/share/pi-sessions.git",
        "pi-sessions sync ~/Sync/pi --folder",
    ],
};

/// A URL (`https://…`, `git@host:path`) stays as given; a path is resolved against the cwd.
fn remote_arg(ctx: &Ctx, raw: &str) -> String {
    let scp_like = raw
        .split_once(':')
        .is_some_and(|(host, _)| host.len() > 1 && !host.contains(['/', '\\']));
    if raw.contains("://") || scp_like {
        raw.to_owned()
    } else {
        Style::HOST.resolve_input(&ctx.env.cwd(), raw, &paths::home())
    }
}

/// The secrets policy the flags ask for; more than one is a usage error.
fn policy(p: &Parsed) -> Result<SecretPolicy, CliError> {
    let chosen: Vec<SecretPolicy> = [
        ("skip-secrets", SecretPolicy::Skip),
        ("refuse-secrets", SecretPolicy::Refuse),
        ("send-secrets", SecretPolicy::Warn),
    ]
    .into_iter()
    .filter(|(f, _)| p.flag(f))
    .map(|(_, x)| x)
    .collect();
    match chosen[..] {
        [] => Ok(SecretPolicy::Auto),
        [one] => Ok(one),
        _ => Err(CliError::usage_in(
            "sync",
            "give one of --skip-secrets, --refuse-secrets, --send-secrets",
        )),
    }
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let opts = Options {
        secrets: policy(p)?,
        agent_dir: ctx.env.agent_dir(),
        remote: remote_arg(ctx, &p.pos[0]),
        kind: if p.flag("folder") {
            Kind::Folder
        } else {
            Kind::Git
        },
        dry_run: p.flag("dry-run"),
        path_map: p
            .value("paths")
            .map(|f| PathBuf::from(Style::HOST.resolve_input(&ctx.env.cwd(), f, &paths::home()))),
    };
    let tty = ctx.env.is_tty_err;
    let report = {
        let mut bar: Option<Progress> = None;
        let err = &mut *ctx.err;
        let mut err = Some(err);
        let r = sync::sync(&opts, &mut |done, total| {
            if bar.is_none() {
                if let Some(e) = err.take() {
                    bar = Some(Progress::new(e, tty, "Syncing", total));
                }
            }
            if let Some(b) = bar.as_mut() {
                b.update(done);
            }
        });
        if let Some(b) = bar.as_mut() {
            b.finish();
        }
        r
    }
    .map_err(|e| CliError::failed(format!("sync: {} ({})", e.message, e.js_code())))?;
    if p.flag("json") {
        emit(ctx.out, &report_json(&report))?;
    } else {
        text(ctx, &report)?;
    }
    Ok(if report.problems.is_empty() {
        EXIT_OK
    } else {
        EXIT_PROBLEMS
    })
}

fn text(ctx: &mut Ctx, r: &Report) -> CliResult {
    let st = ctx.style;
    let mut o = String::new();
    let verb = if r.dry_run { "Would sync" } else { "Synced" };
    o.push_str(&st.bold(&format!("{verb} with {} ({})\n", r.remote, r.kind.name())));
    for x in &r.synced {
        o.push_str(&format!(
            "  {:<5} {}\n",
            x.action.name(),
            crate::text::sanitize(&x.local.to_string_lossy())
        ));
        if x.conflicts > 0 {
            o.push_str(&format!(
                "        {} entr{} kept beside a differing one (mergedFrom)\n",
                x.conflicts,
                if x.conflicts == 1 { "y" } else { "ies" }
            ));
        }
        for c in &x.copies_removed {
            o.push_str(&format!(
                "        conflict copy merged and removed: {}\n",
                c.display()
            ));
        }
        if x.tail > 0 {
            o.push_str(&format!(
                "        {} bytes appended meanwhile carried over\n",
                x.tail
            ));
        }
    }
    secrets_text(&mut o, st, r);
    for pr in &r.problems {
        o.push_str(&format!(
            "  {} {}: {} ({})\n",
            st.yellow("skip"),
            pr.path.display(),
            crate::text::sanitize(&pr.message),
            pr.code
        ));
    }
    o.push_str(&format!(
        "{} pushed, {} pulled, {} merged, {} unchanged, {} skipped.{}\n",
        r.count(sync::Action::Pushed),
        r.count(sync::Action::Pulled),
        r.count(sync::Action::Merged),
        r.unchanged,
        r.problems.len(),
        if r.dry_run {
            " Nothing changed (dry run)."
        } else {
            ""
        }
    ));
    ctx.out.write_all(o.as_bytes())?;
    Ok(EXIT_OK)
}

/// The sessions holding credentials: each named the first time it is held back or sent with
/// them, the rest counted.
fn secrets_text(o: &mut String, st: crate::style::Style, r: &Report) {
    let mut quiet = 0;
    for f in &r.secrets {
        if !f.first {
            quiet += 1;
            continue;
        }
        let kinds: Vec<&str> = f.kinds.iter().map(|k| k.name()).collect();
        let (tag, what) = if f.sent {
            (st.yellow("warn"), "sent with")
        } else {
            (st.yellow("held"), "not sent: it holds")
        };
        o.push_str(&format!(
            "  {tag}  {}: {what} {} credential{} ({})\n",
            f.path.display(),
            f.findings,
            if f.findings == 1 { "" } else { "s" },
            kinds.join(", ")
        ));
    }
    if quiet > 0 {
        let verb = if r.secrets_policy == SecretPolicy::Warn {
            "sent with"
        } else {
            "still held back for"
        };
        o.push_str(&format!(
            "  {quiet} session(s) {verb} credentials, as reported before\n"
        ));
    }
    if r.secrets.iter().any(|f| f.first) {
        o.push_str(&st.dim(
            "  (`pi-sessions secrets --all` lists them; `pi-sessions redact <id> --in-place` removes them, \
`pi-sessions secrets --ack <fingerprint>` lets one go)\n",
        ));
    }
}

/// `{remote, transport, dryRun, rounds, synced: [{id, local, remote, action, conflicts,
/// copiesRemoved, tail}], pushed, pulled, merged, unchanged, problems: [{code, id, path,
/// message}], secretsPolicy, secrets: [{id, path, kinds, findings, sent, first}]}`.
fn report_json(r: &Report) -> Value {
    let synced = r
        .synced
        .iter()
        .map(|x| {
            obj(vec![
                ("id", s(&x.id)),
                ("local", s(&x.local.to_string_lossy())),
                ("remote", s(&x.remote)),
                ("action", s(x.action.name())),
                ("conflicts", num(x.conflicts as f64)),
                (
                    "copiesRemoved",
                    arr(x
                        .copies_removed
                        .iter()
                        .map(|c| s(&c.to_string_lossy()))
                        .collect()),
                ),
                ("tail", num(x.tail as f64)),
            ])
        })
        .collect();
    let problems = r
        .problems
        .iter()
        .map(|p| {
            obj(vec![
                ("code", s(p.code)),
                ("id", opt(p.id.as_deref())),
                ("path", s(&p.path.to_string_lossy())),
                ("message", s(&p.message)),
            ])
        })
        .collect();
    obj(vec![
        ("remote", s(&r.remote)),
        ("transport", s(r.kind.name())),
        ("dryRun", Value::Bool(r.dry_run)),
        ("rounds", num(f64::from(r.rounds))),
        ("synced", arr(synced)),
        ("pushed", num(r.count(sync::Action::Pushed) as f64)),
        ("pulled", num(r.count(sync::Action::Pulled) as f64)),
        ("merged", num(r.count(sync::Action::Merged) as f64)),
        ("unchanged", num(r.unchanged as f64)),
        ("problems", arr(problems)),
        ("secretsPolicy", s(r.secrets_policy.name())),
        (
            "secrets",
            arr(r
                .secrets
                .iter()
                .map(|f| {
                    obj(vec![
                        ("id", s(&f.id)),
                        ("path", s(&f.path.to_string_lossy())),
                        ("kinds", arr(f.kinds.iter().map(|k| s(k.name())).collect())),
                        ("findings", num(f.findings as f64)),
                        ("sent", Value::Bool(f.sent)),
                        ("first", Value::Bool(f.first)),
                    ])
                })
                .collect()),
        ),
    ])
}
