//! `syncSessions`, the library form of `pi-sessions sync`: the core's sync of this machine's
//! sessions with a remote, reported as `sync --json` reports it (the core's `reports::synced`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::{json, paths, reports, Error as CoreError};

use crate::error::ForJs;

/// The agent directory a library command works on: `agent_dir` when given, else the one
/// `process.env` names; resolved.
pub(crate) fn agent_dir_or_env(env: &Env, agent_dir: Option<String>) -> String {
    paths::resolve(&agent_dir.unwrap_or_else(|| crate::config::agent_dir(env)))
}

/// What `syncSessions` is asked, beyond the agent dir and the remote.
#[napi(object)]
pub struct SyncOptions {
    pub folder: bool,
    pub dry_run: bool,
    /// The path map file (default `<agentDir>/sync/paths`).
    pub paths: Option<String>,
    /// The git branch (default `main`).
    pub branch: Option<String>,
    /// Sessions (ids, id prefixes or file names) to take out of the git remote's history after
    /// the sync.
    pub purge: Vec<String>,
    /// `auto` (default), `skip`, `refuse` or `warn`: what happens to sessions holding
    /// unacknowledged credentials.
    pub secrets: Option<String>,
}

/// Sync the sessions of `agent_dir` (else the environment's) with `remote`: a git repository (a
/// URL as given, a path resolved), or a shared folder with `folder`. A session deleted on one side
/// since the last sync is deleted on the other (here through the `trash` command on `PATH` when
/// there is one). Returns the report's JSON text. Remote errors throw
/// (`SYNC_REMOTE_NOT_GIT`, `SYNC_REMOTE_NOT_FOLDER`, `SYNC_GIT_FAILED`, `INVALID_ARGUMENT` for a
/// bad branch or secrets policy, `SYNC_SECRETS_FOUND` when `refuse` finds credentials: nothing
/// sent); sessions left alone are in `problems`, those holding credentials in `secrets`.
#[napi(catch_unwind)]
pub fn sync_sessions(
    env: Env,
    agent_dir: Option<String>,
    remote: String,
    options: SyncOptions,
) -> Result<String> {
    use pi_session_core::sync::{self, Kind, Options, SecretPolicy};
    let policy = match options.secrets.as_deref() {
        None => Ok(SecretPolicy::Auto),
        Some(name) => SecretPolicy::from_name(name).ok_or_else(|| {
            CoreError::invalid_argument(format!(
                "syncSessions: secrets must be auto, skip, refuse or warn, not {name}"
            ))
        }),
    }
    .for_js(&env)?;
    let opts = Options {
        dry_run: options.dry_run,
        path_map: options.paths.map(|p| paths::resolve(&p).into()),
        branch: options.branch,
        // PATH as the JS program has it: Bun, unlike Node, does not hand an assignment to
        // `process.env` on to the process's own environment.
        trash: pi_session_core::trash::find(
            crate::config::js_var(&env, "PATH")
                .as_deref()
                .map(std::ffi::OsStr::new),
        ),
        purge: options.purge,
        secrets: policy,
        ..Options::new(
            agent_dir_or_env(&env, agent_dir),
            sync::transport::remote_arg(&remote, &paths::process_cwd(), &paths::home()),
            if options.folder {
                Kind::Folder
            } else {
                Kind::Git
            },
        )
    };
    sync::sync(&opts, &mut |_, _| {})
        .map(|r| json::to_json(&reports::synced(&r)))
        .for_js(&env)
}
