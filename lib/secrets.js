"use strict";
// The library form of `pi-sessions secrets` (the core's secrets module, through
// `native.scanSecrets`): masked findings only, never a secret.
const native = require("../native.js");
const { sessionError } = require("./errors.js");

/**
 * Scan session files for credential-shaped strings. `target` is a path, an array of paths, or
 * `{ all: true }` for every session under `<agentDir>/sessions`.
 * @param {string | string[] | { all: true }} target
 * @param {{ agentDir?: string, includeAcknowledged?: boolean }} [options]
 */
function scanSecrets(target, options = {}) {
  let files = [];
  let all = false;
  if (typeof target === "string") files = [target];
  else if (Array.isArray(target) && target.every((p) => typeof p === "string")) files = target;
  else if (target && typeof target === "object" && !Array.isArray(target) && target.all === true) all = true;
  else {
    throw sessionError(
      "INVALID_ARGUMENT",
      "scanSecrets: give a path, an array of paths, or { all: true }",
      TypeError,
    );
  }
  const { agentDir, includeAcknowledged = false } = options ?? {};
  if (agentDir !== undefined && agentDir !== null && typeof agentDir !== "string") {
    throw sessionError("INVALID_ARGUMENT", "scanSecrets: agentDir must be a path", TypeError);
  }
  // The core resolves the agent dir (the environment's when none is given) and the files.
  const scans = native.scanSecrets(agentDir ?? null, files, all, Boolean(includeAcknowledged));
  const sessions = scans
    .filter((s) => s.findings.length > 0 || s.error != null)
    .map((s) => ({
      path: s.path,
      id: s.id ?? null,
      findings: s.findings.map((f) => ({
        line: f.line,
        entryId: f.entryId ?? null,
        place: f.place,
        kind: f.kind,
        fingerprint: f.fingerprint,
        preview: f.preview,
        start: f.start,
        end: f.end,
      })),
      acknowledged: s.acknowledged,
      error: s.error ?? null,
    }));
  return {
    scanned: scans.length,
    findings: scans.reduce((n, s) => n + s.findings.length, 0),
    acknowledged: scans.reduce((n, s) => n + s.acknowledged, 0),
    sessions,
  };
}

module.exports = { scanSecrets };
