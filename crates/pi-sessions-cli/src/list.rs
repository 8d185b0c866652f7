//! `list`: the sessions of a project (or of all projects), newest activity first.

use pi_session_core::json::Value;

use crate::args::{Command, Opt, Parsed};
use crate::catalog::{self, Info, Scope};
use crate::error::{CliResult, EXIT_OK};
use crate::jsonout::{self, arr, num, obj, opt, s};
use crate::progress::Progress;
use crate::{fmt, text, Ctx};

pub const CMD: Command = Command {
    name: "list",
    summary: "sessions of this project (or of all projects), newest first",
    usage: "[--all] [--cwd DIR] [--json]",
    description:
        "Lists the sessions pi keeps for the current directory (the same files and order as \
SessionManager.list), or for every project with --all (SessionManager.listAll): the name or first \
message, message count, last activity, file size and a short id you can pass to the other commands.",
    opts: &[
        Opt {
            long: "all",
            short: Some('a'),
            value: None,
            help: "sessions of every project",
        },
        Opt {
            long: "cwd",
            short: None,
            value: Some("DIR"),
            help: "sessions of the project in DIR instead of the current directory",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help: "print an array of session summaries as JSON",
        },
    ],
    min_pos: 0,
    max_pos: Some(0),
    examples: &[
        "pi-sessions list",
        "pi-sessions list --all --json | jq '.[0].path'",
    ],
};

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let scope = Scope::from_flags(ctx.env, p.flag("all"), p.value("cwd"));
    let infos = load(ctx, &scope);
    if p.flag("json") {
        jsonout::emit(ctx.out, &arr(infos.iter().map(info_json).collect()))?;
        return Ok(EXIT_OK);
    }
    let mut out = String::new();
    if infos.is_empty() {
        out.push_str(&format!("No sessions in {}.\n", scope.describe(ctx.env)));
        if matches!(scope, Scope::Project(_)) {
            out.push_str(&ctx.style.dim(
                "Try `pi-sessions list --all` for every project, or `pi-sessions demo` for sample data.\n",
            ));
        }
    } else {
        table(ctx, &infos, matches!(scope, Scope::All), &mut out);
        out.push_str(&ctx.style.dim(&format!(
            "{} session{} in {}\n",
            infos.len(),
            if infos.len() == 1 { "" } else { "s" },
            scope.describe(ctx.env)
        )));
    }
    ctx.out.write_all(out.as_bytes())?;
    Ok(EXIT_OK)
}

/// Summaries for a scope, with a progress bar on a terminal.
pub fn load(ctx: &mut Ctx, scope: &Scope) -> Vec<Info> {
    let files = catalog::files(ctx.env, scope);
    let mut bar = Progress::new(ctx.err, ctx.env.is_tty_err, "loading sessions", files.len());
    catalog::summarize(&files, ctx.env.list_cache_file(), &mut bar)
}

/// One element of `list --json`.
pub fn info_json(i: &Info) -> Value {
    obj(vec![
        ("id", i.id.clone()),
        ("path", s(&i.path.to_string_lossy())),
        ("cwd", s(&i.cwd)),
        ("name", opt(i.name.as_deref())),
        ("parentSessionPath", i.parent_session.clone()),
        ("created", opt(i.created.and_then(fmt::iso).as_deref())),
        ("modified", opt(fmt::iso(i.modified).as_deref())),
        ("messageCount", num(i.message_count)),
        ("firstMessage", s(&i.first_message)),
        ("size", num(i.size as f64)),
    ])
}

fn table(ctx: &Ctx, infos: &[Info], all: bool, out: &mut String) {
    let st = ctx.style;
    let ids: Vec<String> = infos.iter().map(Info::id_text).collect();
    let id_w = catalog::unique_prefix_len(&ids, 8);
    let home = pi_session_core::paths::home();
    let projects: Vec<String> = infos
        .iter()
        .map(|i| match i.cwd.strip_prefix(&home) {
            Some(rest) if !home.is_empty() && home != "/" => format!("~{rest}"),
            _ => i.cwd.clone(),
        })
        .collect();
    let proj_w = if all {
        projects
            .iter()
            .map(|p| text::width(p))
            .max()
            .unwrap_or(0)
            .clamp(7, 28)
    } else {
        0
    };
    let when: Vec<String> = infos
        .iter()
        .map(|i| fmt::relative(i.modified, ctx.env.now_ms(), ctx.env.utc))
        .collect();
    let when_w = when.iter().map(|w| w.len()).max().unwrap_or(0).max(13);
    let msgs_w = 4;
    let size_w = 7;
    let fixed = 2 + msgs_w + 2 + when_w + 2 + size_w + 2 + id_w + if all { proj_w + 2 } else { 0 };
    let title_w = ctx.env.width().saturating_sub(fixed).max(20);
    let mut head = format!(
        "{}  {}  {}  {}  {}",
        text::pad("SESSION", title_w),
        text::pad_left("MSGS", msgs_w),
        text::pad("LAST ACTIVITY", when_w),
        text::pad_left("SIZE", size_w),
        text::pad("ID", id_w),
    );
    if all {
        head.push_str(&format!("  {}", "PROJECT"));
    }
    out.push_str(&st.dim(head.trim_end()));
    out.push('\n');
    for (k, i) in infos.iter().enumerate() {
        let t = text::truncate(&text::one_line(&text::sanitize(i.title())), title_w);
        let t = if i.name.is_some() {
            st.bold(&text::pad(&t, title_w))
        } else {
            text::pad(&t, title_w)
        };
        let mut line = format!(
            "{t}  {}  {}  {}  {}",
            text::pad_left(&fmt::thousands(i.message_count), msgs_w),
            text::pad(&when[k], when_w),
            text::pad_left(&fmt::size(i.size), size_w),
            st.cyan(&text::pad(&catalog::prefix(&ids[k], id_w), id_w)),
        );
        if all {
            line.push_str(&format!(
                "  {}",
                st.dim(&text::truncate_left(&projects[k], proj_w))
            ));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}
