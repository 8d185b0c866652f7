//! `moveSessions`, the library form of `pi-sessions move`: the core's relocation of a project's
//! sessions, reported as `move --json` reports it (the core's `reports::moved`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{json, paths, relocate, reports, Result as CoreResult};

use crate::error::ForJs;
use crate::sync_sessions::agent_dir_or_env;

fn run(agent_dir: &str, old: &str, new: &str, apply: bool) -> CoreResult<String> {
    let plan = relocate::plan(agent_dir, old, new)?;
    let done = apply.then(|| relocate::apply(&plan));
    Ok(json::to_json(&reports::moved(
        old,
        &plan,
        apply,
        done.as_deref(),
    )))
}

/// Move the sessions of project `old_dir` to project `new_dir` (both resolved here) under
/// `agent_dir` (else the environment's) (`pi-sessions move`); only the plan unless `apply`.
/// Returns the report's JSON text.
#[napi(catch_unwind)]
pub fn move_sessions(
    env: Env,
    agent_dir: Option<String>,
    old_dir: String,
    new_dir: String,
    apply: bool,
) -> Result<String> {
    let agent = agent_dir_or_env(&env, agent_dir);
    let (old, new) = (paths::resolve(&old_dir), paths::resolve(&new_dir));
    run(&agent, &old, &new, apply).for_js(&env)
}
