//! The configuration each new `NativeSession` is given (see the core's `config`): the documented
//! product variables, read from the process environment when the manager is made, and the size
//! thresholds, which only [`set_tuning`] changes.
//!
//! The variables are read per manager, at the time it is made, as before the core took its
//! configuration as a value: a program (or a test) that sets `process.env.PI_SESSION_FSYNC` at
//! run time sees the next manager follow it. They are read from JS's `process.env`, not from the
//! C environment: Node writes `process.env` through to the latter, Bun does not, and the
//! program's own view is the one to follow on both. The parsing itself is the core's
//! (`Config::from_vars`), the one place for both the binding and the CLI; JS asks
//! [`exclusive_from_env`] rather than parsing `PI_SESSION_EXCLUSIVE` again.

use std::sync::Mutex;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{Config, Error as CoreError, Tuning};

use crate::error::ForJs;

/// The thresholds of managers made from now on (process-wide; [`set_tuning`]).
static TUNING: Mutex<Tuning> = Mutex::new(Tuning::PRODUCT);

fn tuning() -> Tuning {
    *TUNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// From which size a file opened now is scanned and left on disk.
pub(crate) fn lazy_file_bytes() -> u64 {
    tuning().lazy_file_bytes
}

/// `process.env`, as the JS program has it now.
fn js_vars(env: &Env) -> Option<Object<'_>> {
    let process: Object = env.get_global().ok()?.get_named_property("process").ok()?;
    process.get_named_property("env").ok()
}

/// `process.env[name]`: a variable as the JS program sees it now.
pub(crate) fn js_var(env: &Env, name: &str) -> Option<String> {
    var_of(js_vars(env).as_ref(), name)
}

fn var_of(vars: Option<&Object<'_>>, name: &str) -> Option<String> {
    vars?
        .get_named_property::<Option<String>>(name)
        .ok()
        .flatten()
}

fn from_env(env: &Env) -> Config {
    // `process.env` is looked up once for the four variables (each manager made reads them).
    let vars = js_vars(env);
    Config::from_vars(|name| var_of(vars.as_ref(), name))
}

/// The configuration of a manager made now: the product variables as `process.env` has them
/// now, and the current thresholds.
pub(crate) fn for_new_manager(env: &Env) -> Config {
    Config {
        tuning: tuning(),
        ..from_env(env)
    }
}

/// The agent directory `process.env` names now (`PI_CODING_AGENT_DIR`, tilde and file URL
/// expanded, not made absolute), else `~/.pi/agent`: read at each call, as the reference reads it.
pub(crate) fn agent_dir(env: &Env) -> String {
    let var = js_var(env, pi_session_core::paths::AGENT_DIR_VAR);
    pi_session_core::paths::agent_dir(var.as_deref(), &pi_session_core::paths::home())
}

/// Size thresholds of managers made from now on; an omitted one is the shipped default.
#[napi(object)]
pub struct TuningOptions {
    /// Files of at least this many bytes are read in one streaming pass and their lines left on
    /// disk until asked for (default 64 MiB).
    pub lazy_file_bytes: Option<i64>,
    /// Appended lines of at least this many bytes are read back from the session file instead of
    /// being kept in memory (default 1024).
    pub backed_line_bytes: Option<i64>,
}

fn non_negative(value: Option<i64>, name: &str) -> pi_session_core::Result<Option<u64>> {
    value
        .map(|v| {
            u64::try_from(v).map_err(|_| {
                CoreError::invalid_argument(format!("setTuning: {name} must not be negative"))
            })
        })
        .transpose()
}

/// Internal, for tests and benchmarks, not part of the package's API: the size thresholds of
/// every manager made from now on in this process (`setTuning({ lazyFileBytes: 0 })` makes every
/// file opened count as big). Omitted fields, or no argument, restore the shipped defaults.
#[napi(catch_unwind)]
pub fn set_tuning(env: Env, options: Option<TuningOptions>) -> Result<()> {
    let options = options.unwrap_or(TuningOptions {
        lazy_file_bytes: None,
        backed_line_bytes: None,
    });
    let lazy = non_negative(options.lazy_file_bytes, "lazyFileBytes").for_js(&env)?;
    let backed = non_negative(options.backed_line_bytes, "backedLineBytes").for_js(&env)?;
    let product = Tuning::PRODUCT;
    *TUNING.lock().unwrap_or_else(|e| e.into_inner()) = Tuning {
        lazy_file_bytes: lazy.unwrap_or(product.lazy_file_bytes),
        backed_line_bytes: backed.map_or(product.backed_line_bytes, |b| {
            usize::try_from(b).unwrap_or(usize::MAX)
        }),
    };
    Ok(())
}

/// Whether `PI_SESSION_EXCLUSIVE`, as the environment has it now, puts new managers in exclusive
/// mode (the binding's reading of it, so that JS does not parse it again).
#[napi(catch_unwind)]
pub fn exclusive_from_env(env: Env) -> bool {
    from_env(&env).exclusive
}

/// Whether `PI_SESSION_PRIVATE` asks for private session files and directories now (JS makes a
/// project's session directory itself, as the reference does, and asks this for its mode).
#[napi(catch_unwind)]
pub fn private_files_from_env(env: Env) -> bool {
    from_env(&env).private_files
}
