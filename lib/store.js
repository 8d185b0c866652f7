"use strict";
// The module's functions over the session store that need no manager, and SessionManager.findById.
// Where sessions live is the core's decision (its places and paths rules, through the binding):
// these pass the caller's values on and give back what the core found.
const native = require("../native.js");

/** Throws INVALID_SESSION_ID unless `id` (as a string, like the reference's pattern test) is a
 * valid session id; the rule and its message are the core's (ids.rs `check_session_id`).
 * @param {unknown} id */
function assertValidSessionId(id) {
  native.assertValidSessionId(`${id}`);
}

/** Whether `readdirSync` gives a directory's names sorted by their bytes, as the lookups below
 * and listAll meet them (the first of two sessions with one id, of two equally recent ones):
 * Node's does off Windows (libuv sorts); Node's on Windows and Bun's give the system's order. */
const NAMES_SORTED = process.platform !== "win32" && typeof process.versions.bun !== "string";

/** The newest session file in `sessionDir` (of `cwd` when given), or null.
 * @param {string} sessionDir @param {string | null} [cwd] */
function findMostRecentSession(sessionDir, cwd) {
  return native.findMostRecent(sessionDir, cwd || null, NAMES_SORTED);
}

/** @param {string} filePath @returns {any[]} */
function loadEntriesFromFile(filePath) {
  return JSON.parse(native.loadEntriesJson(filePath));
}

/** findById(cwd, id, sessionDir): the session dir is made first (when it is the cwd's default
 * one), as the reference makes it, whatever the id. @param {string} cwd @param {unknown} id
 * @param {string | undefined} sessionDir */
function findById(cwd, id, sessionDir) {
  const place = native.sessionPlace(cwd, sessionDir || null, true);
  if (typeof id !== "string") return undefined;
  return native.findById(place.dir, id, place.shared ? place.cwd : null, NAMES_SORTED) ?? undefined;
}

module.exports = { NAMES_SORTED, assertValidSessionId, findMostRecentSession, loadEntriesFromFile, findById };
