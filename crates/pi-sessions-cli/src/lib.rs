//! `pi-sessions`: look into, check and repair pi session files, over the same Rust store that
//! `pi-session-native` exports. All logic lives here; the npm `bin` only hands over its arguments
//! (`runCli(args)` in the addon) and exits with the code [`run`] returns.
//!
//! # Commands
//! `list`, `show`, `tree`, `stats`, `search`, `secrets`, `verify`, `repair`, `merge`, `move`, `sync`,
//! `export`, `redact`, `rm`, `prune`, `demo`; each takes `--help`. Sessions are read from `<agent dir>/sessions`
//! (`PI_CODING_AGENT_DIR`, else `~/.pi/agent`). A session argument is a file path or a session id;
//! a unique id prefix is enough (an ambiguous one is a usage error that lists the candidates). Only
//! `repair --in-place`, `merge --in-place`, `redact --in-place`, `move --yes`, `sync` (without
//! `--dry-run`), `prune --yes` and `rm` change session files (`--out` only creates one; `secrets
//! --ack` writes the acknowledgement store); everything else only reads (no newline repair, no
//! migration rewrite). Files the tool creates besides sessions (exports, redacted copies, backups,
//! the acknowledgement store, sync's state) are private: 0600 (directories 0700) on Unix.
//!
//! # Exit codes
//! - `0`: done, nothing wrong.
//! - `1`: problems found (`verify`, problems left by `repair`, unacknowledged findings of
//!   `secrets`, sessions `sync` could not sync or refused to send) or the command failed (an
//!   unreadable or invalid session file, `redact --in-place` of a session under a live writer
//!   lease).
//! - `2`: usage: unknown command or option, missing or extra argument, an ambiguous id or prefix.
//! - `3`: not found: no such session file, no session or entry with that id, no sessions of that
//!   project to move, nothing that matches the search.
//!
//! # `--json` output (stable: fields are only ever added)
//! Every `--json` output is one JSON document on one line. Times are ISO strings
//! (`toISOString()`), absent values `null`.
//! - `list --json`: `[{id, path, cwd, name, parentSessionPath, created, modified, messageCount,
//!   firstMessage, size}]`, newest `modified` first. These are the `SessionInfo` fields of
//!   `SessionManager.list(cwd)` (or `listAll()` with `--all`) for the same files in the same order,
//!   minus `allMessagesText`, plus `size` in bytes. `id` is the header's id value.
//! - `show --json` and `export --format json`: `{path, id, name, cwd, leafId, labels: {entryId:
//!   label}, entries: [entry…]}` where `entries` are the entry objects of the branch, root first,
//!   exactly as stored, and `labels` covers the entries of that branch.
//! - `stats --json`: `{sessions, messages: {total, user, assistant, toolResult, other}, toolCalls,
//!   models: [{provider, model, input, output, cacheRead, cacheWrite, tokens, cost}], total:
//!   {input, output, cacheRead, cacheWrite, tokens, cost}}`; `tokens` = input + output + cacheRead
//!   + cacheWrite, `cost` = sum of `usage.cost.total`; models sorted by cost, then tokens.
//! - `search --json`: `[{path, id, name, firstMessage, modified, matches, snippets: [{entryId,
//!   role, text}]}]`.
//! - `secrets --json`: `{scanned, findings, acknowledged, sessions: [{path, id, findings: [{line,
//!   entryId, place, kind, fingerprint, preview}]}]}`; only sessions with unacknowledged findings
//!   are listed; `place` is `user`, `tool-output`, `tool-args`, `assistant`, `thinking`, `custom`,
//!   `summary` or `other`, `kind` a stable name (`anthropic-api-key`, `aws-access-key-id`,
//!   `private-key`, `url-password`, `jwt`, …), `preview` masked.
//! - `redact --json`: `{path, out, backup, tail, redacted: [finding]}`; `out` is `null` when
//!   nothing was found.
//! - `verify --json`: `{files: [{path, ok, entries, version, findings: [{severity, code, line,
//!   message}], repairable}], checked, problems}`; `severity` is `error`, `warning` or `note`,
//!   `code` a stable name (`malformed-line`, `torn-last-line`, `torn-record`, `duplicate-id`,
//!   `dangling-parent`, `cycle`, …; see `pi_session_core::inspect`), `line` 1-based or `null`;
//!   `repairable` how many of the file's problems `repair` fixes.
//! - `merge --json`: `{session, out, entries, conflicts: [{id, newId}], keptLines, leafId}`;
//!   `out` is the file written, `leafId` the merged file's last entry.
//! - `move --json`: `{from, to, oldDir, newDir, applied, files: [{from, to, id, action, status,
//!   rewrites: [{field, from, to}], tail, reason, message}], moved, skipped}`; `action` is `move`,
//!   `resume` (an earlier run wrote the destination) or `skip`, `status` `planned` (without
//!   `--yes`), `moved`, `skipped` or `failed`, `reason` a stable name (`locked`, `other-session`,
//!   `diverged`, `not-a-session`) or `null`, `tail` the bytes carried over beyond the first copy.
//! - `sync --json`: `{remote, transport, branch, dryRun, rounds, rewritten, synced: [{id, local,
//!   remote, action, conflicts, copiesRemoved, tail, restored}], deleted: [{id, local, remote,
//!   from, how}], purged: [{id, remote}], pushed, pulled, merged, restored, unchanged, problems:
//!   [{code, id, path, message}], secretsPolicy, secrets: [{id, path, kinds, findings, sent,
//!   first}]}`; `transport` is `git` or `folder`, `branch` the git branch (`null` for a folder),
//!   `action` `push`, `pull` or `merge`, `restored` `here` or `remote` (the side that had deleted
//!   a session continued on the other, where it is back now) or `null`, `deleted[].from` the side
//!   this sync removed the session from (`remote`: deleted here; `here`: deleted on the remote),
//!   `how` `trash` or `removed`, `rewritten` whether the remote's history had been rewritten by a
//!   purge elsewhere, `remote` the file's name on the remote, `code` a stable name
//!   (`SESSION_MISMATCH`, `SYNC_UNMAPPED_PATH`, `SESSION_LOCKED`, `SYNC_DUPLICATE_SESSION`,
//!   `INVALID_SESSION_FILE`, `INVALID_ARGUMENT` for a `--purge` that names no deleted session, an
//!   errno name). A remote that is no git repository (`SYNC_REMOTE_NOT_GIT`) or no folder
//!   (`SYNC_REMOTE_NOT_FOLDER`) fails the command (exit 1) before anything is written; a bad
//!   `--branch` is a usage error (exit 2). `secretsPolicy` is `skip` or `warn` (the default
//!   resolved: `skip` for a network git remote) or `refuse`; `secrets` lists the sessions to send
//!   that hold unacknowledged credentials, `sent` false for one held back (left as it is on both
//!   sides, and never deleted on account of what the remote lacks), `first` true when this run
//!   reported it first. With `--refuse-secrets` such sessions fail the command
//!   (`SYNC_SECRETS_FOUND`, exit 1) before anything is written.

mod args;
mod catalog;
mod conversation;
mod demo;
mod env;
mod error;
mod export;
mod export_html;
mod export_md;
mod export_page;
mod fmt;
mod jsonout;
mod list;
mod loaded;
mod localtime;
mod merge;
mod move_cmd;
mod progress;
mod prune;
mod redact;
mod repair;
mod resolve;
mod rm;
mod search;
mod secrets;
mod show;
mod stats;
mod style;
mod sync_cmd;
mod text;
mod tree;
mod verify;

use std::io::Write;

pub use env::CliEnv;
pub use error::{EXIT_NOT_FOUND, EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE};
pub use repair::{repair_bytes, Repaired};

use args::Command;
use error::CliError;
use style::{ColorChoice, Style};

/// What a command runs with.
pub(crate) struct Ctx<'a> {
    pub env: &'a CliEnv,
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    /// Colours for `out`.
    pub style: Style,
    /// Colours for `err`.
    pub err_style: Style,
}

const COMMANDS: &[&Command] = &[
    &list::CMD,
    &show::CMD,
    &tree::CMD,
    &stats::CMD,
    &search::CMD,
    &secrets::CMD,
    &verify::CMD,
    &repair::CMD,
    &merge::CMD,
    &move_cmd::CMD,
    &sync_cmd::CMD,
    &export::CMD,
    &redact::CMD,
    &rm::CMD,
    &prune::CMD,
    &demo::CMD,
];

fn overview() -> String {
    let mut s = String::from(
        "pi-sessions — look into, check and repair pi coding agent sessions\n\n\
Usage: pi-sessions <command> [options]\n\nCommands:\n",
    );
    for c in COMMANDS {
        s.push_str(&format!("  {:<8} {}\n", c.name, c.summary));
    }
    s.push_str(
        "\nSessions are read from <agent dir>/sessions (PI_CODING_AGENT_DIR, else ~/.pi/agent).\n\
A session is given as a file path or an id (a unique prefix is enough).\n\
Without a command, `list` runs. `pi-sessions <command> --help` tells more.\n\
Exit codes: 0 ok, 1 problems found, 2 usage error, 3 not found (no such session, file or\n\
entry; no match). Colours on a terminal unless NO_COLOR is set (--color always|never|auto).\n\n\
New here? Run `pi-sessions demo`.\n",
    );
    s
}

/// Run one command of `args` (`args[0]` is the command, not the program name). Output goes to
/// `out`, messages and the progress bar to `err`. Returns the exit code.
pub fn run(args: &[String], env: &CliEnv, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    // `--color` may come anywhere before `--`.
    let mut color = ColorChoice::Auto;
    let mut rest: Vec<String> = Vec::with_capacity(args.len());
    let mut i = 0;
    let mut bad_color = None;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            rest.extend_from_slice(&args[i..]);
            break;
        }
        let value = if a == "--color" {
            i += 1;
            Some(args.get(i).cloned().unwrap_or_default())
        } else {
            a.strip_prefix("--color=").map(str::to_owned)
        };
        match value {
            Some(v) => match ColorChoice::parse(&v) {
                Some(c) => color = c,
                None => bad_color = Some(v),
            },
            None => rest.push(a.clone()),
        }
        i += 1;
    }
    let mut ctx = Ctx {
        env,
        out,
        err,
        style: color.style(env.is_tty_out, env.no_color),
        err_style: color.style(env.is_tty_err, env.no_color),
    };
    if let Some(v) = bad_color {
        return report(
            &mut ctx,
            CliError::usage(format!("--color takes auto, always or never, not '{v}'")),
        );
    }
    dispatch(&mut ctx, &rest)
}

/// Run a command line (without the program name) in a context.
pub(crate) fn dispatch(ctx: &mut Ctx, args: &[String]) -> i32 {
    let (name, rest): (&str, &[String]) = match args.split_first() {
        None => ("list", &[]),
        Some((first, rest)) => (first.as_str(), rest),
    };
    let result = match name {
        "-h" | "--help" | "help" => match rest.first() {
            Some(c) => match COMMANDS.iter().find(|x| x.name == c) {
                Some(cmd) => write_help(ctx, cmd),
                None => Err(CliError::usage(format!("unknown command '{c}'"))),
            },
            None => ctx
                .out
                .write_all(overview().as_bytes())
                .map(|_| EXIT_OK)
                .map_err(CliError::from),
        },
        "-V" | "--version" | "version" => {
            writeln!(ctx.out, "pi-sessions {}", env!("CARGO_PKG_VERSION"))
                .map(|_| EXIT_OK)
                .map_err(CliError::from)
        }
        _ => match COMMANDS.iter().find(|c| c.name == name) {
            Some(cmd) => match args::parse(cmd, rest) {
                Ok(None) => write_help(ctx, cmd),
                Ok(Some(p)) => run_command(ctx, cmd, &p),
                Err(e) => Err(e),
            },
            None if name.starts_with('-') => {
                // Options without a command belong to `list` (`pi-sessions --all`).
                match args::parse(&list::CMD, args) {
                    Ok(None) => write_help(ctx, &list::CMD),
                    Ok(Some(p)) => list::run(ctx, &p),
                    Err(e) => Err(e),
                }
            }
            None => Err(CliError::usage(format!(
                "unknown command '{name}' (commands: {})",
                COMMANDS
                    .iter()
                    .map(|c| c.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        },
    };
    match result {
        Ok(code) => {
            let _ = ctx.out.flush();
            code
        }
        Err(e) => report(ctx, e),
    }
}

fn run_command(ctx: &mut Ctx, cmd: &Command, p: &args::Parsed) -> error::CliResult {
    match cmd.name {
        "list" => list::run(ctx, p),
        "show" => show::run(ctx, p),
        "tree" => tree::run(ctx, p),
        "stats" => stats::run(ctx, p),
        "search" => search::run(ctx, p),
        "secrets" => secrets::run(ctx, p),
        "redact" => redact::run(ctx, p),
        "verify" => verify::run(ctx, p),
        "repair" => repair::run(ctx, p),
        "merge" => merge::run(ctx, p),
        "move" => move_cmd::run(ctx, p),
        "sync" => sync_cmd::run(ctx, p),
        "export" => export::run(ctx, p),
        "rm" => rm::run(ctx, p),
        "prune" => prune::run(ctx, p),
        "demo" => demo::run(ctx, p),
        other => Err(CliError::usage(format!("unknown command '{other}'"))),
    }
}

fn write_help(ctx: &mut Ctx, cmd: &Command) -> error::CliResult {
    ctx.out.write_all(args::help_text(cmd).as_bytes())?;
    Ok(EXIT_OK)
}

fn report(ctx: &mut Ctx, e: CliError) -> i32 {
    let _ = ctx.out.flush();
    let st = ctx.err_style;
    match &e {
        CliError::Closed => {}
        CliError::Usage { command, message } => {
            let _ = writeln!(ctx.err, "{} {message}", st.bold_red("pi-sessions:"));
            let hint = match command {
                Some(c) => format!("Try 'pi-sessions {c} --help'."),
                None => "Try 'pi-sessions --help'.".into(),
            };
            let _ = writeln!(ctx.err, "{}", st.dim(&hint));
        }
        CliError::NotFound(message) => {
            let _ = writeln!(ctx.err, "{} {message}", st.bold_red("pi-sessions:"));
        }
        CliError::Failed(message) => {
            let _ = writeln!(ctx.err, "{} {message}", st.bold_red("pi-sessions: error:"));
        }
    }
    let _ = ctx.err.flush();
    e.exit_code()
}
