"use strict";
// What each SessionManager factory does before there is a manager: where its session lives, the
// core session made for it (`NativeSession`), the JS state over that (lib/session-state.js) and
// what is loaded into it. Each returns a `Made`, the one thing the manager's constructor takes:
// every factory reaches a manager by that one path, and nothing outside this module can make one.
const native = require("../native.js");
const paths = require("./paths.js");
const places = require("./places.js");
const load = require("./load.js");
const { SessionState } = require("./session-state.js");

/** A manager's parts, made by one of the factories below. */
class Made {
  /** @param {import("../native.js").NativeSession} core @param {InstanceType<typeof SessionState>} state
   * @param {string} cwd @param {string} sessionDir @param {boolean} persist */
  constructor(core, state, cwd, sessionDir, persist) {
    this.core = core;
    this.state = state;
    this.cwd = cwd;
    this.sessionDir = sessionDir;
    this.persist = persist;
  }
}

/** An empty core session and its state (before anything is loaded into it).
 * @param {string} cwd @param {string} sessionDir @param {boolean} persist */
function blank(cwd, sessionDir, persist) {
  const resolved = paths.resolvePath(cwd);
  const dir = paths.normalizePath(sessionDir);
  const core = native.NativeSession.blank(resolved, dir, persist);
  return new Made(core, new SessionState(core), resolved, dir, persist);
}

/** `create(cwd, sessionDir?, options?)`: a new session. @param {string} cwd
 * @param {string | undefined} sessionDir @param {any} options */
function create(cwd, sessionDir, options) {
  const made = blank(cwd, places.sessionDirOf(cwd, sessionDir), true);
  load.startSession(made.state, made.cwd, options);
  return made;
}

/** `open(path, sessionDir?, cwdOverride?)`: one native call makes the core session, takes its
 * cwd (the override, else the header's) and loads the file. @param {string} filePath
 * @param {string | undefined} sessionDir @param {string | undefined} cwdOverride */
function open(filePath, sessionDir, cwdOverride) {
  const { cwd, dir, file } = places.openPlace(filePath, sessionDir, cwdOverride);
  const { core, info } = native.NativeSession.openFile(file, dir, cwd);
  const state = new SessionState(core, info.trackId);
  load.loaded(state, info);
  return new Made(core, state, info.cwd, dir, true);
}

/** `continueRecent(cwd, sessionDir?)`: the newest session of the directory, else a new one.
 * @param {string} cwd @param {string | undefined} sessionDir */
function continueRecent(cwd, sessionDir) {
  const { dir, file } = places.recentPlace(cwd, sessionDir);
  const made = blank(cwd, dir, true);
  if (file !== undefined) load.loadFile(made.state, file);
  else load.startSession(made.state, made.cwd, undefined);
  return made;
}

/** `inMemory(cwd?, options?, entries?)`: a session never written, of the caller's entries when
 * given. @param {string} cwd @param {any} options @param {any} entries */
function inMemory(cwd, options, entries) {
  const made = blank(cwd, "", false);
  const start = () => load.startSession(made.state, made.cwd, options);
  if (entries?.length) load.loadEntries(made.state, false, entries, start);
  else start();
  return made;
}

/** `forkFrom(sourcePath, targetCwd, sessionDir?, options?)`: the core writes the fork and opens
 * it in one step (without reading it again). @param {string} sourcePath @param {string} targetCwd
 * @param {string | undefined} sessionDir @param {any} options */
function forkFrom(sourcePath, targetCwd, sessionDir, options) {
  const { target, dir, source, id } = places.forkPlace(sourcePath, targetCwd, sessionDir, options);
  const normalized = paths.normalizePath(dir);
  const core = native.NativeSession.forkFrom(source, target, normalized, id);
  const state = new SessionState(core);
  state.replaced();
  return new Made(core, state, target, normalized, true);
}

module.exports = { Made, create, open, continueRecent, inMemory, forkFrom };
