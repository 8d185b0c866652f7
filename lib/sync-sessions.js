"use strict";
// syncSessions, the library form of `pi-sessions sync` (the core's sync, through
// src/sync_sessions.rs): this checks the arguments; the core resolves the paths (a URL stays as
// given) and writes the report.
const native = require("../native.js");
const { sessionError, pathOption } = require("./errors.js");

/**
 * Keep the sessions of this machine and a remote as one history (`pi-sessions sync`). `remote` is
 * a git URL or repository path (sessions on branch `main`, or `branch`), or a shared folder with
 * `folder: true`. A session deleted on one side since the last sync is deleted on the other (here
 * through a `trash` command on PATH when there is one); `purge` names deleted sessions to take out
 * of the git remote's history after the sync. Throws `SYNC_REMOTE_NOT_GIT`,
 * `SYNC_REMOTE_NOT_FOLDER`, `SYNC_GIT_FAILED`, `INVALID_ARGUMENT` (nothing written); sessions left
 * alone are listed in `problems` with their code.
 * `secrets` decides what happens to sessions holding unacknowledged credentials: `auto` (skip them
 * for a network git remote, warn for a local one), `skip`, `refuse` (throws `SYNC_SECRETS_FOUND`,
 * nothing sent) or `warn`; a session held back is left as it is on both sides and deletes nothing.
 * Returns the report `pi-sessions sync --json` prints (the core's `reports::synced`).
 * @param {string} remote
 * @param {{ agentDir?: string, folder?: boolean, dryRun?: boolean, paths?: string, branch?: string,
 *   purge?: string[], secrets?: string }} [options]
 */
function syncSessions(remote, options = {}) {
  if (typeof remote !== "string" || remote === "") {
    throw sessionError("INVALID_ARGUMENT", "syncSessions: remote must be a URL or a path", TypeError);
  }
  const { agentDir, folder = false, dryRun = false, paths: pathMap, branch, purge = [], secrets = "auto" } =
    options ?? {};
  if (!["auto", "skip", "refuse", "warn"].includes(secrets)) {
    throw sessionError("INVALID_ARGUMENT", "syncSessions: secrets must be auto, skip, refuse or warn", TypeError);
  }
  const agent = pathOption(agentDir, "agentDir", "syncSessions") ?? null;
  if (branch !== undefined && branch !== null && typeof branch !== "string") {
    throw sessionError("INVALID_ARGUMENT", "syncSessions: branch must be a string", TypeError);
  }
  if (!Array.isArray(purge) || purge.some((p) => typeof p !== "string")) {
    throw sessionError("INVALID_ARGUMENT", "syncSessions: purge must be an array of ids or file names", TypeError);
  }
  // The core keeps a URL (`https://…`, `git@host:path`) as given and resolves a path, as the CLI.
  // An absent optional field of a native options object is `undefined` (napi refuses `null`).
  const r = native.syncSessions(agent, remote, {
    folder: Boolean(folder),
    dryRun: Boolean(dryRun),
    paths: pathOption(pathMap, "paths", "syncSessions"),
    branch: branch ?? undefined,
    purge,
    secrets,
  });
  return JSON.parse(r);
}

module.exports = { syncSessions };
