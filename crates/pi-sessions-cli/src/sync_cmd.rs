//! `sync`: keep this machine's sessions and a remote's as one history (see
//! `pi_session_core::sync`).

use std::path::PathBuf;

use pi_session_core::paths::{self, Style};
use pi_session_core::sync::{self, Kind, Options, Place, Report, SecretPolicy};
use pi_session_core::{reports, trash, ErrorCode};

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK, EXIT_PROBLEMS};
use crate::jsonout::emit;
use crate::progress::Progress;
use crate::Ctx;

pub const CMD: Command = Command {
    name: "sync",
    summary: "keep the sessions of several machines as one history",
    usage: "<remote> [--folder] [--branch NAME] [--paths FILE] [--purge ID|FILE]… [--dry-run] [--skip-secrets | --refuse-secrets | --send-secrets] [--json]",
    description: "The remote is a git repository (any URL git understands, or a bare repository \
on a shared disk; sessions on branch main, or --branch NAME) or, with --folder, a directory a \
file-sync tool keeps in step. A session new on one side is copied to the other; one changed on \
both is merged (every entry of both, the latest continuation last) and both sides get the result. \
A session deleted on one side since the last sync (by `pi-sessions rm`, pi's /resume, or any \
unlink) is deleted on the other: removed from the remote (git keeps it in its history), and on \
the other machines at their next sync moved to the trash when a `trash` command exists, else \
deleted. A session deleted on one side but continued on the other since is kept, with the other \
side's lines, and brought back where it was deleted. Syncthing and Dropbox conflict copies of a \
session are merged into it and removed. Project paths that differ between machines (a header's \
cwd, and a fork's parentSession) are mapped by <agent dir>/sync/paths (or --paths FILE), lines \
`<path on the remote> = <path here>`. A file pi appends to meanwhile keeps what it gained; one \
under a live writer lease is skipped. Sessions that cannot be synced (another session under the \
same name, an unmapped path) are reported (exit 1) and left as they were. Before anything leaves \
the machine, the sessions to send are scanned for credentials (see `pi-sessions secrets`): to a \
git remote reached over the network (https, ssh, git@host:) such sessions are held back and named \
once (later runs count them), to a local repository or folder they go with a warning; \
acknowledged or redacted ones always go. A session held back is left as it is on both sides, \
and what the remote lacks of it deletes nothing here. --skip-secrets, --refuse-secrets (nothing \
is sent, exit 1) and --send-secrets choose for yourself. --purge, after the sync, takes deleted \
sessions out of the git remote's history: every commit of the branch is rewritten without the \
file and the branch is force-pushed; the other machines follow the new history at their next \
sync, with no step by hand (a hosted remote keeps the old objects until its own garbage \
collection).",
    opts: &[
        Opt {
            long: "folder",
            short: None,
            value: None,
            help: "the remote is a shared folder, not a git repository",
        },
        Opt {
            long: "branch",
            short: None,
            value: Some("NAME"),
            help: "the git branch the sessions are kept on (default main)",
        },
        Opt {
            long: "paths",
            short: None,
            value: Some("FILE"),
            help: "the path map (default <agent dir>/sync/paths)",
        },
        Opt {
            long: "purge",
            short: None,
            value: Some("ID|FILE"),
            help: "after the sync, remove this deleted session from the git history (repeatable)",
        },
        Opt {
            long: "dry-run",
            short: Some('n'),
            value: None,
            help: "show what would change (deletions included), change nothing",
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
        "pi-sessions sync /mnt/share/pi-sessions.git --branch laptop-and-desktop",
        "pi-sessions sync ~/Sync/pi --folder",
        "pi-sessions rm 0193f0a0 --yes && pi-sessions sync /mnt/share/pi-sessions.git --purge 0193f0a0",
    ],
};

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
        remote: sync::transport::remote_arg(&p.pos[0], &ctx.env.cwd(), &paths::home()),
        kind: if p.flag("folder") {
            Kind::Folder
        } else {
            Kind::Git
        },
        dry_run: p.flag("dry-run"),
        path_map: p
            .value("paths")
            .map(|f| PathBuf::from(Style::HOST.resolve_input(&ctx.env.cwd(), f, &paths::home()))),
        branch: p.value("branch").map(str::to_owned),
        trash: trash::find(ctx.env.path_var.as_deref()),
        purge: p.values("purge").into_iter().map(str::to_owned).collect(),
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
    .map_err(|e| {
        let msg = format!("{} ({})", e.message, e.js_code());
        if e.code == ErrorCode::InvalidArgument {
            CliError::usage_in("sync", msg)
        } else {
            CliError::failed(format!("sync: {msg}"))
        }
    })?;
    if p.flag("json") {
        emit(ctx.out, &reports::synced(&report))?;
    } else {
        text(ctx, &report)?;
    }
    Ok(if report.problems.is_empty() {
        EXIT_OK
    } else {
        EXIT_PROBLEMS
    })
}

/// What a deleted or restored session's report line adds.
fn deletion_note(from: Place, how: sync::Removal) -> &'static str {
    match (from, how) {
        (Place::Remote, _) => "deleted here: removed from the remote",
        (Place::Here, sync::Removal::Trash) => "deleted on the remote: moved to the trash here",
        (Place::Here, sync::Removal::Removed) => "deleted on the remote: deleted here",
    }
}

fn restored_note(on: Place) -> &'static str {
    match on {
        Place::Here => "deleted here but continued on the remote: kept, with the remote's lines",
        Place::Remote => "deleted on the remote but continued here: kept, and back on the remote",
    }
}

fn synced_lines(o: &mut String, x: &sync::Synced) {
    o.push_str(&format!(
        "  {:<6} {}\n",
        x.action.name(),
        crate::text::sanitize(&x.local.to_string_lossy())
    ));
    if let Some(on) = x.restored {
        o.push_str(&format!("         {}\n", restored_note(on)));
    }
    if x.conflicts > 0 {
        o.push_str(&format!(
            "         {} entr{} kept beside a differing one (mergedFrom)\n",
            x.conflicts,
            if x.conflicts == 1 { "y" } else { "ies" }
        ));
    }
    for c in &x.copies_removed {
        o.push_str(&format!(
            "         conflict copy merged and removed: {}\n",
            c.display()
        ));
    }
    if x.tail > 0 {
        o.push_str(&format!(
            "         {} bytes appended meanwhile carried over\n",
            x.tail
        ));
    }
}

fn text(ctx: &mut Ctx, r: &Report) -> CliResult {
    let st = ctx.style;
    let mut o = String::new();
    let verb = if r.dry_run { "Would sync" } else { "Synced" };
    let on = r
        .branch
        .as_ref()
        .map_or(String::new(), |b| format!(", {b}"));
    o.push_str(&st.bold(&format!(
        "{verb} with {} ({}{on})\n",
        r.remote,
        r.kind.name()
    )));
    if r.rewritten {
        o.push_str("  the remote's history was rewritten (a purge): this machine follows it\n");
    }
    for x in &r.synced {
        synced_lines(&mut o, x);
    }
    for d in &r.deleted {
        o.push_str(&format!(
            "  {:<6} {}\n         {}\n",
            "delete",
            crate::text::sanitize(&d.local.to_string_lossy()),
            deletion_note(d.from, d.how)
        ));
    }
    for p in &r.purged {
        o.push_str(&format!(
            "  {:<6} {} ({}): removed from the remote's history\n",
            "purge",
            crate::text::sanitize(&p.remote),
            crate::text::sanitize(&p.id)
        ));
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
        "{} pushed, {} pulled, {} merged, {} deleted, {} restored, {} unchanged, {} skipped.{}\n",
        r.count(sync::Action::Pushed),
        r.count(sync::Action::Pulled),
        r.count(sync::Action::Merged),
        r.deleted.len(),
        r.restored(),
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
