//! Where sessions live, as the core decides it for the JS shell: the paths a factory or a module
//! function is given, resolved and expanded with the core's rules of this platform
//! ([`resolve_path`], [`normalize_path`]), the agent directory ([`agent_dir`]) and a factory's
//! session directory ([`session_place`]). The shell keeps no path rule of its own but the one the
//! package exports (`getDefaultSessionDir`, held to [`session_place`] by a test).
//!
//! [`path_rule`] reaches the core's rules of either platform, so that a test can hold them to
//! Node's own `path.win32` and `path.posix` on any OS (`__test__/path-rules.test.mjs`).

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::paths::{self, Style};
use pi_session_core::places;

use crate::config;
use crate::error::{js_error, ForJs};

/// The reference's `resolvePath(input, base?)`: tilde and file URL expanded, then resolved
/// against `base` (itself expanded) or the process's cwd.
#[napi(catch_unwind)]
pub fn resolve_path(input: String, base: Option<String>) -> String {
    match base {
        None => paths::resolve(&input),
        Some(base) => {
            let cwd = paths::process_cwd();
            let home = paths::home();
            let style = Style::HOST;
            style.resolve_parts(
                &cwd,
                &[&style.expand(&base, &home), &style.expand(&input, &home)],
            )
        }
    }
}

/// The reference's `normalizePath`: tilde and file URL expanded, not resolved.
#[napi(catch_unwind)]
pub fn normalize_path(input: String) -> String {
    paths::normalize(&input)
}

/// The agent directory `process.env` names now (`PI_CODING_AGENT_DIR`), else `~/.pi/agent`.
#[napi(catch_unwind)]
pub fn agent_dir(env: Env) -> String {
    config::agent_dir(&env)
}

/// `<agentDir>/sessions`, which `listAll()` reads.
#[napi(catch_unwind)]
pub fn sessions_root(env: Env) -> String {
    paths::sessions_root(&config::agent_dir(&env))
}

/// Where a factory's sessions live (see the core's `places::Place`).
#[napi(object)]
pub struct SessionPlace {
    /// The cwd, resolved.
    pub cwd: String,
    pub dir: String,
    /// A given directory that is not the cwd's default one: finding and listing keep to the cwd's
    /// sessions in it.
    pub shared: bool,
}

/// The place of `cwd` with `session_dir` (when given and not empty) or the cwd's default session
/// directory under the agent directory `process.env` names now, which is made when `make`
/// (private to the user under `PI_SESSION_PRIVATE=1`), as the reference's factories make it.
#[napi(catch_unwind)]
pub fn session_place(
    env: Env,
    cwd: String,
    session_dir: Option<String>,
    make: bool,
) -> Result<SessionPlace> {
    let p = places::session_place(&cwd, session_dir.as_deref(), &config::agent_dir(&env));
    if make && p.default {
        let private = config::private_files_from_env(env);
        pi_session_core::fsio::ensure_session_dir(Path::new(&p.dir), private).for_js(&env)?;
    }
    Ok(SessionPlace {
        cwd: p.cwd,
        dir: p.dir,
        shared: p.shared,
    })
}

/// `style` (`"posix"` or `"win32"`) applied to `args` by `op`: `normalize(p)`, `join(a, b)`,
/// `isAbsolute(p)` (`"true"`/`"false"`), `resolve(...parts)` against `process.cwd()`, `expand(p,
/// home)` (the reference's `normalizePath`: shell drive paths, tilde, `file://` URLs) or
/// `encodeCwd(resolvedCwd)` (the session directory's name).
#[napi(catch_unwind)]
pub fn path_rule(env: Env, style: String, op: String, args: Vec<String>) -> Result<String> {
    let bad = |what: String| js_error(&env, pi_session_core::Error::invalid_argument(what));
    let style = Style::named(&style).ok_or_else(|| bad(format!("Unknown path style: {style}")))?;
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    Ok(match (op.as_str(), a.as_slice()) {
        ("normalize", [p]) => style.normalize(p),
        ("join", [x, y]) => style.join(x, y),
        ("isAbsolute", [p]) => style.is_absolute(p).to_string(),
        ("resolve", parts) => style.resolve_parts(&cwd_for(style), parts),
        ("expand", [p, home]) => style.expand(p, home),
        ("encodeCwd", [p]) => paths::encode_cwd(p),
        _ => {
            return Err(bad(format!(
                "Unknown path rule: {op} of {} arguments",
                a.len()
            )))
        }
    })
}

/// `process.cwd()` as Node's `path` of `style` sees it: `path.posix` on Windows takes the cwd from
/// its first separator on, with `/` for `\` (`C:\work\x` is `/work/x`).
fn cwd_for(style: Style) -> String {
    let cwd = paths::process_cwd();
    if cfg!(windows) && style == Style::Posix {
        let slashed = cwd.replace('\\', "/");
        return match slashed.find('/') {
            Some(i) => slashed[i..].to_owned(),
            None => slashed,
        };
    }
    cwd
}
