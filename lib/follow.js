"use strict";
// The library forms of `pi-sessions merge`, `sync` and `move` (the core's merge, sync and
// relocate modules, through `native.mergeSessions`, `native.syncSessions`, `native.moveSessions`),
// each returning the report its command prints with `--json`.
const native = require("../native.js");
const { sessionError } = require("./errors.js");

/**
 * Join two copies of one session that grew apart. Written into `out` (a new file; an existing
 * one is refused with `EEXIST`), into `a` with `inPlace`, or returned as `text` when neither.
 * Throws `SESSION_MISMATCH` (nothing written) when the files are different sessions.
 * @param {string} a @param {string} b
 * @param {{ out?: string | null, inPlace?: boolean }} [options]
 */
function mergeSessions(a, b, options = {}) {
  if (typeof a !== "string" || typeof b !== "string") {
    throw sessionError("INVALID_ARGUMENT", "mergeSessions: a and b must be file paths", TypeError);
  }
  const { out = null, inPlace = false } = options ?? {};
  if (out !== null && out !== undefined && typeof out !== "string") {
    throw sessionError("INVALID_ARGUMENT", "mergeSessions: out must be a file path", TypeError);
  }
  // The core expands the paths (tilde, file URL).
  const r = native.mergeSessions(a, b, out ?? null, Boolean(inPlace));
  const report = {
    session: r.session,
    out: r.out ?? null,
    entries: r.entries,
    conflicts: r.conflicts.map((c) => ({ id: c.id, newId: c.newId })),
    keptLines: r.keptLines,
    leafId: r.leafId ?? null,
  };
  if (r.text !== undefined && r.text !== null) report.text = r.text;
  return report;
}

/** A path option as given (the core resolves it), or undefined when absent (napi refuses null in
 * an options object). */
function optionalPath(value, name, fn) {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== "string") {
    throw sessionError("INVALID_ARGUMENT", `${fn}: ${name} must be a path`, TypeError);
  }
  return value;
}

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
  const agent = optionalPath(agentDir, "agentDir", "syncSessions") ?? null;
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
    paths: optionalPath(pathMap, "paths", "syncSessions"),
    branch: branch ?? undefined,
    purge,
    secrets,
  });
  return {
    remote: r.remote,
    transport: r.transport,
    branch: r.branch ?? null,
    dryRun: r.dryRun,
    rounds: r.rounds,
    rewritten: r.rewritten,
    synced: r.synced.map((x) => ({
      id: x.id,
      local: x.local,
      remote: x.remote,
      action: x.action,
      conflicts: x.conflicts,
      copiesRemoved: x.copiesRemoved,
      tail: x.tail,
      restored: x.restored ?? null,
    })),
    deleted: r.deleted.map((d) => ({ id: d.id, local: d.local, remote: d.remote, from: d.from, how: d.how })),
    purged: r.purged.map((p) => ({ id: p.id, remote: p.remote })),
    pushed: r.pushed,
    pulled: r.pulled,
    merged: r.merged,
    restored: r.restored,
    unchanged: r.unchanged,
    problems: r.problems.map((p) => ({ code: p.code, id: p.id ?? null, path: p.path, message: p.message })),
    secretsPolicy: r.secretsPolicy,
    secrets: r.secrets.map((f) => ({
      id: f.id,
      path: f.path,
      kinds: f.kinds,
      findings: f.findings,
      sent: f.sent,
      first: f.first,
    })),
  };
}

/**
 * Carry a renamed or moved project's sessions to its new directory's session dir (`pi-sessions
 * move`): only the plan unless `apply`. Returns the `move --json` report.
 * @param {string} oldDir @param {string} newDir
 * @param {{ apply?: boolean, agentDir?: string }} [options]
 */
function moveSessions(oldDir, newDir, options = {}) {
  if (typeof oldDir !== "string" || typeof newDir !== "string") {
    throw sessionError("INVALID_ARGUMENT", "moveSessions: oldDir and newDir must be paths", TypeError);
  }
  const { apply = false, agentDir } = options ?? {};
  const agent = optionalPath(agentDir, "agentDir", "moveSessions") ?? null;
  const r = native.moveSessions(agent, oldDir, newDir, Boolean(apply));
  return {
    from: r.from,
    to: r.to,
    oldDir: r.oldDir,
    newDir: r.newDir,
    applied: r.applied,
    files: r.files.map((f) => ({
      from: f.from,
      to: f.to,
      id: f.id ?? null,
      action: f.action,
      status: f.status,
      rewrites: f.rewrites.map((w) => ({ field: w.field, from: w.from ?? null, to: w.to })),
      tail: f.tail,
      reason: f.reason ?? null,
      message: f.message ?? null,
    })),
    moved: r.moved,
    skipped: r.skipped,
  };
}

module.exports = { mergeSessions, syncSessions, moveSessions };
