//! `rm`: delete a session the way pi does: through a `trash` command when one is installed (the
//! file can be restored), else for good; after a confirmation on a terminal.

use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

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

/// An executable named `trash` on the search path.
fn find_trash(path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let var = match path_var {
        Some(v) => v.to_owned(),
        None => std::env::var_os("PATH")?,
    };
    std::env::split_paths(&var)
        .map(|d| d.join("trash"))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    let Ok(m) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        m.is_file() && m.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        m.is_file()
    }
}

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
    if let Some(trash) = find_trash(ctx.env.path_var.as_deref()) {
        let arg = path.as_os_str();
        let mut cmd = Process::new(&trash);
        if arg.to_string_lossy().starts_with('-') {
            cmd.arg("--");
        }
        let status = cmd
            .arg(arg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if status.is_ok_and(|s| s.success()) || !path.exists() {
            writeln!(ctx.out, "Moved to the trash: {}", path.display())?;
            return Ok(EXIT_OK);
        }
    }
    std::fs::remove_file(&path)
        .map_err(|e| CliError::failed(format!("{}: cannot delete: {e}", path.display())))?;
    writeln!(ctx.out, "Deleted {}", path.display())?;
    Ok(EXIT_OK)
}
