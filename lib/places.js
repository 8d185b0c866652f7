"use strict";
// The module's functions and the SessionManager factories' work before a manager exists: where a
// session lives (directories, the file to continue or open, its cwd), and the checks of what the
// caller asked for. Each factory returns the constructor's arguments; the class makes the manager.
const path = require("node:path");
const native = require("../native.js");
const paths = require("./paths.js");

/** Throws INVALID_SESSION_ID unless `id` (as a string, like the reference's pattern test) is a
 * valid session id; the rule and its message are the core's (ids.rs `check_session_id`).
 * @param {unknown} id */
function assertValidSessionId(id) {
  native.assertValidSessionId(`${id}`);
}

/** The newest session file in `sessionDir` (of `cwd` when given), or null.
 * @param {string} sessionDir @param {string} [cwd] */
function findMostRecentSession(sessionDir, cwd) {
  const dir = paths.normalizePath(sessionDir);
  const resolvedCwd = cwd ? paths.resolvePath(cwd) : null;
  const found = native.findMostRecent(dir, resolvedCwd);
  return found === null ? null : path.join(dir, path.basename(found));
}

/** @param {string} filePath @returns {any[]} */
function loadEntriesFromFile(filePath) {
  return JSON.parse(native.loadEntriesJson(paths.normalizePath(filePath)));
}

/** The session directory a factory uses: the one given, or the default one of `cwd`.
 * @param {string} cwd @param {string | undefined} sessionDir */
function sessionDirOf(cwd, sessionDir) {
  return sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDir(cwd);
}

/** Whether a factory given `sessionDir` keeps to `cwd`'s sessions (a shared, non-default dir).
 * @param {string} cwd @param {string | undefined} sessionDir @param {string} dir */
function filtersCwd(cwd, sessionDir, dir) {
  return sessionDir !== undefined && !paths.pathsEqual(dir, paths.getDefaultSessionDirPath(cwd));
}

/** open(filePath, sessionDir, cwdOverride): what only Node's path rules decide, before the core
 * reads the file (and, without an override, takes the manager's cwd from its header: see the
 * core's `Session::open`). The override is resolved here, so a value that is not a path fails as
 * the reference's does.
 * @param {string} filePath @param {string | undefined} sessionDir @param {string | undefined} cwdOverride */
function openPlace(filePath, sessionDir, cwdOverride) {
  const file = paths.resolvePath(filePath);
  const cwd = cwdOverride === undefined ? null : paths.resolvePath(cwdOverride);
  const dir = sessionDir ? paths.normalizePath(sessionDir) : path.resolve(file, "..");
  return { cwd, dir, file };
}

/** continueRecent(cwd, sessionDir): the directory and the file to continue (undefined: none).
 * @param {string} cwd @param {string | undefined} sessionDir */
function recentPlace(cwd, sessionDir) {
  const dir = sessionDirOf(cwd, sessionDir);
  const mostRecent = findMostRecentSession(dir, filtersCwd(cwd, sessionDir, dir) ? cwd : undefined);
  return { dir, file: mostRecent ?? undefined };
}

/** forkFrom(sourcePath, targetCwd, sessionDir, options): what the core's fork needs.
 * @param {string} sourcePath @param {string} targetCwd @param {string | undefined} sessionDir @param {any} options */
function forkPlace(sourcePath, targetCwd, sessionDir, options) {
  const source = paths.resolvePath(sourcePath);
  const target = paths.resolvePath(targetCwd);
  const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDirPath(target);
  // The id is checked by the core after the source is read and the directory exists, like the
  // reference.
  const id = options?.id === undefined ? null : String(options.id);
  return { target, dir, source, id };
}

/** findById(cwd, id, sessionDir). @param {string} cwd @param {unknown} id @param {string | undefined} sessionDir */
function findById(cwd, id, sessionDir) {
  const dir = sessionDirOf(cwd, sessionDir);
  const filterCwd = filtersCwd(cwd, sessionDir, dir);
  if (typeof id !== "string") return undefined;
  const found = native.findById(dir, id, filterCwd ? paths.resolvePath(cwd) : null);
  return found === null ? undefined : path.join(dir, path.basename(found));
}

module.exports = {
  assertValidSessionId,
  findMostRecentSession,
  loadEntriesFromFile,
  sessionDirOf,
  openPlace,
  recentPlace,
  forkPlace,
  findById,
};
