//! `rm`: delete a session the way pi does: through a `trash` command when one is installed (the
//! file can be restored), else for good; after a confirmation on a terminal.

use pi_session_core::trash::{self, Removal};

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK};
use crate::{loaded, resolve, show, text, Ctx};

pub const CMD: Command = Command {
    name: "rm",
    summary: "delete a session (to the trash when a `trash` command exists)",
    usage: "<id|path> [--yes]",
    description: "Moves the session file to the trash with the `trash` command when it is on PATH \
(as pi does), else deletes it. On a terminal it asks first; elsewhere --yes is required.",
    opts: &[Opt {
        long: "yes",
        short: Some('y'),
        value: None,
        help: "do not ask for confirmation",
    }],
    min_pos: 1,
    max_pos: Some(1),
    examples: &[
        "pi-sessions rm 0193f0a0",
        "pi-sessions rm ./old.jsonl --yes",
    ],
};

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let path = resolve::session(ctx.env, &p.pos[0])?;
    let title = loaded::open(&path)
        .map(|l| show::title(&l))
        .unwrap_or_else(|_| "(not a valid session)".into());
    if !p.flag("yes") {
        if !ctx.env.is_tty_in {
            return Err(CliError::usage_in(
                "rm",
                format!(
                    "refusing to delete {} without confirmation: pass --yes",
                    path.display()
                ),
            ));
        }
        write!(
            ctx.err,
            "Delete “{}” ({})? [y/N] ",
            text::sanitize(&text::truncate(&title, 60)),
            path.display()
        )?;
        ctx.err.flush()?;
        let answer = ctx.env.read_answer().to_lowercase();
        if answer != "y" && answer != "yes" {
            writeln!(ctx.out, "Kept {}", path.display())?;
            return Ok(EXIT_OK);
        }
    }
    let trash = trash::find(ctx.env.path_var.as_deref());
    let how = trash::remove(&path, trash.as_deref()).map_err(|e| {
        CliError::failed(format!("{}: cannot delete: {}", path.display(), e.message))
    })?;
    match how {
        Removal::Trash => writeln!(ctx.out, "Moved to the trash: {}", path.display())?,
        Removal::Removed => writeln!(ctx.out, "Deleted {}", path.display())?,
    }
    Ok(EXIT_OK)
}
