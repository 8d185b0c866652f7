//! `move`: a project directory was renamed or moved; carry its sessions along (see
//! `pi_session_core::relocate`).

use pi_session_core::paths::{self, Style};
use pi_session_core::relocate::{self, Action, Done, FileMove, Plan};
use pi_session_core::reports;

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK, EXIT_PROBLEMS};
use crate::jsonout::emit;
use crate::Ctx;

pub const CMD: Command = Command {
    name: "move",
    summary: "carry a project's sessions over to its new directory",
    usage: "<old-project-dir> <new-project-dir> [--yes] [--json]",
    description: "For a project whose directory was renamed or moved: the sessions pi keeps for \
the old directory go to the session directory of the new one, each header's cwd set to the new \
directory and a parentSession that names a moved file pointed at its new path; every other line \
is copied as it is. Without --yes only the plan is shown. A file pi appends to meanwhile keeps \
what it gained; an interrupted move is completed by running it again. A file under a live writer \
lease, or whose destination is another session, is left in place and reported (exit 1). An old \
directory without sessions to move exits with 3 (not found).",
    opts: &[
        Opt {
            long: "yes",
            short: Some('y'),
            value: None,
            help: "move the files (without it: show the plan only)",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help: "report as JSON",
        },
    ],
    min_pos: 2,
    max_pos: Some(2),
    examples: &[
        "pi-sessions move ~/src/old-name ~/src/new-name",
        "pi-sessions move ~/src/old-name ~/src/new-name --yes",
    ],
};

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let cwd = ctx.env.cwd();
    let home = paths::home();
    let old = Style::HOST.resolve_input(&cwd, &p.pos[0], &home);
    let new = Style::HOST.resolve_input(&cwd, &p.pos[1], &home);
    let agent = ctx.env.agent_dir();
    if Style::HOST.same(&old, &new)
        || paths::default_session_dir(&agent, &old) == paths::default_session_dir(&agent, &new)
    {
        return Err(CliError::usage_in(
            "move",
            format!("{old} and {new} have the same session directory: nothing to move"),
        ));
    }
    let failed = |e: pi_session_core::Error| CliError::failed(e.message);
    let plan = relocate::plan(&agent, &old, &new).map_err(failed)?;
    let yes = p.flag("yes");
    let json = p.flag("json");
    if plan.files.is_empty() {
        if relocate::count_sessions(&agent, &new).map_err(failed)? == 0 {
            return Err(CliError::not_found(format!(
                "no sessions for {old} (looked in {})",
                plan.old_dir.display()
            )));
        }
        if json {
            emit(ctx.out, &reports::moved(&old, &plan, yes, None))?;
        } else {
            writeln!(
                ctx.out,
                "Nothing to move: the sessions of {old} are in {} already.",
                plan.new_dir.display()
            )?;
        }
        return Ok(EXIT_OK);
    }
    let done = yes.then(|| relocate::apply(&plan));
    if json {
        emit(ctx.out, &reports::moved(&old, &plan, yes, done.as_deref()))?;
    } else {
        text(ctx, &old, &plan, done.as_deref())?;
    }
    let problems = match &done {
        Some(d) => d.iter().any(|d| !matches!(d, Done::Moved { .. })),
        None => plan
            .files
            .iter()
            .any(|f| matches!(f.action, Action::Skip(_))),
    };
    Ok(if problems { EXIT_PROBLEMS } else { EXIT_OK })
}

fn text(ctx: &mut Ctx, old: &str, plan: &Plan, done: Option<&[Done]>) -> CliResult {
    let st = ctx.style;
    let mut o = String::new();
    o.push_str(&st.bold(&format!(
        "{} the sessions of {old} to {}{}\n",
        if done.is_some() {
            "Moving"
        } else {
            "Would move"
        },
        plan.new_cwd,
        if done.is_some() { "" } else { " (dry run)" }
    )));
    let (mut moved, mut skipped) = (0, 0);
    for (i, f) in plan.files.iter().enumerate() {
        let outcome = done.map(|d| &d[i]);
        let skip = match (outcome, &f.action) {
            (Some(Done::Skipped(sk)), _) | (None, Action::Skip(sk)) => Some(sk.message(&f.to)),
            (Some(Done::Failed(e)), _) => Some(format!("failed: {}", e.message)),
            _ => None,
        };
        if let Some(why) = skip {
            skipped += 1;
            o.push_str(&format!(
                "  {} {}: {why}\n",
                st.yellow("skip"),
                f.from.display()
            ));
            continue;
        }
        moved += 1;
        let verb = match (&f.action, outcome) {
            (Action::Resume { .. }, _) => "resume",
            _ => "move",
        };
        o.push_str(&format!(
            "  {verb} {}\n    -> {}\n",
            f.from.display(),
            f.to.display()
        ));
        moved_lines(&mut o, f, outcome);
    }
    let files = |n: usize| format!("{n} file{}", if n == 1 { "" } else { "s" });
    if done.is_some() {
        o.push_str(&format!(
            "Moved {}, skipped {}.\n",
            files(moved),
            files(skipped)
        ));
    } else {
        o.push_str(&format!(
            "{} to move, {} skipped. Nothing changed: run again with --yes to move.\n",
            files(moved),
            files(skipped)
        ));
    }
    ctx.out.write_all(o.as_bytes())?;
    Ok(EXIT_OK)
}

/// The lines under a file that moves (or would): what pi appended meanwhile, and the rewrites.
fn moved_lines(o: &mut String, f: &FileMove, outcome: Option<&Done>) {
    if let Some(Done::Moved {
        left_at_old: true, ..
    }) = outcome
    {
        o.push_str(&format!("    {}\n", relocate::LEFT_AT_OLD));
    }
    match (&f.action, outcome) {
        (_, Some(Done::Moved { tail, .. })) if *tail > 0 => o.push_str(&format!(
            "    {tail} bytes appended to the old file carried over\n"
        )),
        (Action::Resume { tail }, None) => o.push_str(&format!(
            "    an earlier move wrote it; {tail} bytes to carry over, then the old file goes\n"
        )),
        _ => {}
    }
    if !matches!(f.action, Action::Resume { .. }) {
        for r in &f.rewrites {
            o.push_str(&format!(
                "    {}: {} -> {}\n",
                r.field,
                crate::text::sanitize(r.from.as_deref().unwrap_or("(none)")),
                crate::text::sanitize(&r.to)
            ));
        }
    }
}
