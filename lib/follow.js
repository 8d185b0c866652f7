"use strict";
// mergeSessions: the library form of `pi-sessions merge` (the core's merge module, through
// `native.mergeSessions`), with the report `pi-sessions merge --json` prints.
const native = require("../native.js");
const paths = require("./paths.js");
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
  const r = native.mergeSessions(
    paths.normalizePath(a),
    paths.normalizePath(b),
    out == null ? null : paths.normalizePath(out),
    Boolean(inPlace),
  );
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

module.exports = { mergeSessions };
