//! `prune`: delete an abandoned side branch of a session (the entry, everything under it and the
//! labels naming them; see the core's `pruneBranch`). A dry run unless `--yes` is given.

use pi_session_core::Session;

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK};
use crate::{fmt, loaded, resolve, Ctx};

pub const CMD: Command = Command {
    name: "prune",
    summary: "delete an abandoned side branch of a session (dry run without --yes)",
    usage: "<id|path> <entry> [--yes]",
    description: "Removes <entry> (an id or a unique id prefix) and everything under it, with the \
labels naming them, and reports the bytes saved. The branch you are on (the path to the last \
entry) cannot be pruned. Without --yes nothing is written; with it the file is replaced \
atomically (temp file, fsync, rename).",
    opts: &[Opt {
        long: "yes",
        short: Some('y'),
        value: None,
        help: "rewrite the file (otherwise only report what would go)",
    }],
    min_pos: 2,
    max_pos: Some(2),
    examples: &[
        "pi-sessions prune 0193f0a0 b41c2e",
        "pi-sessions prune ./s.jsonl b41c2e --yes",
    ],
};

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let path = resolve::session(ctx.env, &p.pos[0])?;
    // The dry run prunes a copy held in memory (a session that never writes).
    let mut l = loaded::open(&path)?;
    let pos = l.find_entry(&p.pos[1])?;
    let key = l.session.meta(pos).id.clone();
    let shown = l.id_text(pos);
    let failed =
        |e: pi_session_core::Error| CliError::failed(format!("{}: {}", path.display(), e.message));
    let mut report = l.session.prune_branch(Some(&key), &shown).map_err(failed)?;
    let yes = p.flag("yes");
    if yes {
        // Now for real, through a session that writes (and so takes pi's writer lease).
        let dir = path
            .parent()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        let config = ctx.env.session_config;
        let mut s = Session::with_config(String::new(), dir, true, config).map_err(failed)?;
        s.set_session_file(path.clone()).map_err(failed)?;
        report = s.prune_branch(Some(&key), &shown).map_err(failed)?;
    }
    let saved = report.bytes_before.saturating_sub(report.bytes_after);
    writeln!(
        ctx.out,
        "{} {} entr{} under {shown}{} from {}: {} → {} (saves {})",
        if yes { "Removed" } else { "Would remove" },
        report.removed,
        if report.removed == 1 { "y" } else { "ies" },
        match report.labels_dropped {
            0 => String::new(),
            1 => " and 1 label".to_owned(),
            n => format!(" and {n} labels"),
        },
        path.display(),
        fmt::size(report.bytes_before),
        fmt::size(report.bytes_after),
        fmt::size(saved),
    )?;
    if !yes {
        writeln!(ctx.out, "Nothing written: pass --yes to prune.")?;
    }
    Ok(EXIT_OK)
}
