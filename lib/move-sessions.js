"use strict";
// moveSessions, the library form of `pi-sessions move` (the core's relocate, through
// src/move_sessions.rs): this checks the arguments; the core resolves the paths and writes the
// report.
const native = require("../native.js");
const { sessionError, pathOption } = require("./errors.js");

/**
 * Carry a renamed or moved project's sessions to its new directory's session dir (`pi-sessions
 * move`): only the plan unless `apply`. Returns the report `pi-sessions move --json` prints (the
 * core's `reports::moved`).
 * @param {string} oldDir @param {string} newDir
 * @param {{ apply?: boolean, agentDir?: string }} [options]
 */
function moveSessions(oldDir, newDir, options = {}) {
  if (typeof oldDir !== "string" || typeof newDir !== "string") {
    throw sessionError("INVALID_ARGUMENT", "moveSessions: oldDir and newDir must be paths", TypeError);
  }
  const { apply = false, agentDir } = options ?? {};
  const agent = pathOption(agentDir, "agentDir", "moveSessions") ?? null;
  const r = native.moveSessions(agent, oldDir, newDir, Boolean(apply));
  return JSON.parse(r);
}

module.exports = { moveSessions };
