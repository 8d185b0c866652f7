"use strict";
// mergeSessions, the library form of `pi-sessions merge` (the core's merge, through
// src/merge_sessions.rs): this checks the arguments; the core expands the paths and writes the
// report.
const native = require("../native.js");
const { sessionError } = require("./errors.js");

/**
 * Join two copies of one session that grew apart. Written into `out` (a new file; an existing
 * one is refused with `EEXIST`), into `a` with `inPlace`, or returned as `text` when neither.
 * Throws `SESSION_MISMATCH` (nothing written) when the files are different sessions. Returns the
 * report `pi-sessions merge --json` prints (the core's `reports::merged`), with `text` added when
 * the result was written nowhere.
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
  return JSON.parse(r);
}

module.exports = { mergeSessions };
