//! The core's path rules, reachable from JS so that a test can hold them to Node's own
//! `path.win32` and `path.posix` on any OS (`__test__/path-rules.test.mjs`). The store itself
//! applies the rules of the platform it runs on; nothing in the JS shell calls this.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::paths::{self, Style};

use crate::error::js_error;

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
