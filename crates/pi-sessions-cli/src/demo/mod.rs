//! `demo`: build a small agent directory with realistic sessions — written through the core's
//! `Session`, so the files are exactly what pi writes — and run `list`, `tree`, `show` and `stats`
//! on it. For a first look on a machine without pi sessions.

use std::path::{Path, PathBuf};

use pi_session_core::json::{self, Value};
use pi_session_core::session::header_line;
use pi_session_core::{fsio, ids, paths, timefmt, Session};

use crate::args::{Command, Opt, Parsed};
use crate::catalog;
use crate::env::CliEnv;
use crate::error::{CliError, CliResult, EXIT_OK};
use crate::jsonout::{arr, num, obj, s};
use crate::Ctx;

mod sessions;

use sessions::*;

pub const CMD: Command = Command {
    name: "demo",
    summary: "build sample sessions in a temp dir and run list, tree, show and stats on them",
    usage: "[--dir DIR]",
    description: "Creates an agent directory with three sessions in two projects: one with a \
branch left behind (and its branch summary), a compaction, labels, an extension state entry, an \
extension message, a model change, usage records and a name. The files are written by the same \
Rust store the package exports. Then runs list, tree, show and stats on it. The directory is kept \
so you can try the other commands (the last lines tell you how).",
    opts: &[Opt {
        long: "dir",
        short: None,
        value: Some("DIR"),
        help: "create the sample data in DIR (must not exist yet) instead of a temp dir",
    }],
    min_pos: 0,
    max_pos: Some(0),
    examples: &["pi-sessions demo", "pi-sessions demo --dir /tmp/pi-demo"],
};

/// Appends entries as `SessionManager`'s append methods write them.
/// Create the sample agent directory under `root`, its sessions ending before `now_ms`; returns
/// (agent dir, project cwd, main file).
pub fn build(root: &Path, now_ms: f64) -> Result<(PathBuf, String, PathBuf), CliError> {
    let agent = root.join("agent");
    let project = root.join("weather-app");
    let other = root.join("notes-cli");
    for d in [&agent, &project, &other] {
        std::fs::create_dir_all(d)
            .map_err(|e| CliError::failed(format!("{}: {e}", d.display())))?;
    }
    let sessions = paths::join(&agent.to_string_lossy(), "sessions");
    let dir_of = |cwd: &Path| {
        PathBuf::from(paths::join(
            &sessions,
            &paths::encode_cwd(&cwd.to_string_lossy()),
        ))
    };
    let cwd = project.to_string_lossy().into_owned();
    short_session(
        &dir_of(&other),
        &other.to_string_lossy(),
        (now_ms, 30.0 * 3_600_000.0),
        "Rename the --out flag to --output and keep --out as an alias.",
        "Renamed it in src/cli.ts; `--out` still works and prints a deprecation hint.",
    )?;
    short_session(
        &dir_of(&project),
        &cwd,
        (now_ms, 3.0 * 3_600_000.0),
        "How do I run only the weather tests?",
        "Use `npm test -- weather`: vitest filters test files by that pattern.",
    )?;
    let main = weather_session(&dir_of(&project), &cwd, now_ms)?;
    Ok((agent, cwd, main.file()))
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let root = PathBuf::from(paths::resolve(&demo_root(p)?.to_string_lossy()));
    let (agent, cwd, main) = build(&root, ctx.env.now_ms() as f64)?;
    let env = demo_env(ctx.env, &agent, &cwd);
    let ids: Vec<String> = verify_ids(&env);
    let main_id = crate::resolve::header_id(&main).unwrap_or_default();
    let short = catalog::prefix(&main_id, catalog::unique_prefix_len(&ids, 8));
    let st = ctx.style;
    writeln!(
        ctx.out,
        "{}",
        st.bold(&format!("Sample pi sessions written to {}", root.display()))
    )?;
    writeln!(
        ctx.out,
        "{}",
        st.dim("(three sessions in two projects, created by the same Rust store that pi-session-native exports)")
    )?;
    let steps: Vec<Vec<String>> = vec![
        vec!["list".into()],
        vec!["tree".into(), short.clone()],
        vec!["show".into(), short.clone()],
        vec!["stats".into()],
    ];
    let mut code = EXIT_OK;
    for step in steps {
        writeln!(ctx.out)?;
        writeln!(
            ctx.out,
            "{}",
            st.bold_blue(&format!("$ pi-sessions {}", step.join(" ")))
        )?;
        ctx.out.flush()?;
        let mut sub = Ctx {
            env: &env,
            out: &mut *ctx.out,
            err: &mut *ctx.err,
            style: ctx.style,
            err_style: ctx.err_style,
        };
        let c = crate::dispatch(&mut sub, &step);
        code = code.max(c);
    }
    writeln!(ctx.out)?;
    writeln!(ctx.out, "{}", st.bold("Try it yourself:"))?;
    let q = |p: &Path| shell_quote(&p.to_string_lossy());
    let cmd = ctx.env.command();
    writeln!(
        ctx.out,
        "  export PI_CODING_AGENT_DIR={}\n  {cmd} list --all\n  {cmd} show {short} --full\n  {cmd} search cache --all\n  {cmd} export {short} --format html --out session.html\n  {cmd} verify\n  rm -r {}   # when you are done",
        q(&agent),
        q(&root)
    )?;
    Ok(code)
}

/// Where the sample goes: `--dir` (which must not exist yet), else a new temp directory.
fn demo_root(p: &Parsed) -> Result<PathBuf, CliError> {
    Ok(match p.value("dir") {
        Some(d) => {
            let d = PathBuf::from(d);
            if d.exists() {
                return Err(CliError::usage_in(
                    "demo",
                    format!("{} exists: give a new directory", d.display()),
                ));
            }
            d
        }
        None => std::env::temp_dir().join(format!(
            "pi-sessions-demo-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        )),
    })
}

/// The environment the demo's commands run in: this one's terminal, the sample's agent dir and
/// project.
fn demo_env(env: &CliEnv, agent: &Path, cwd: &str) -> CliEnv {
    CliEnv {
        is_tty_out: env.is_tty_out,
        is_tty_err: env.is_tty_err,
        is_tty_in: false,
        no_color: env.no_color,
        agent_dir: Some(agent.to_string_lossy().into_owned()),
        cwd: Some(cwd.to_owned()),
        width: env.width,
        now_ms: env.now_ms,
        utc: env.utc,
        path_var: env.path_var.clone(),
        stdin: std::sync::Mutex::new(Box::new(std::io::empty())),
        list_cache: env.list_cache,
        session_config: env.session_config,
        command: env.command.clone(),
    }
}

fn verify_ids(env: &CliEnv) -> Vec<String> {
    pi_session_core::listing::list_all_candidates(
        &env.sessions_root(),
        pi_session_core::listing::NameOrder::Bytes,
    )
    .into_iter()
    .filter_map(|(p, _)| crate::resolve::header_id(&p))
    .collect()
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
