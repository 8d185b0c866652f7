"use strict";
// What each SessionManager factory does before there is a manager: where its session lives, the
// core session made for it (`NativeSession`), the JS state over that (lib/session-state.js) and
// what is loaded into it. Each returns a `Made`, the one thing the manager's constructor takes:
// every factory reaches a manager by that one path, and nothing outside this module can make one.
// Where the session lives is the core's decision (native.sessionPlace, and openFile's own).
const native = require("../native.js");
const load = require("./load.js");
const { findMostRecentSession } = require("./store.js");
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

/** An empty core session and its state (before anything is loaded into it), of a resolved cwd.
 * @param {string} cwd @param {string} sessionDir @param {boolean} persist */
function blank(cwd, sessionDir, persist) {
  const core = native.NativeSession.blank(cwd, sessionDir, persist);
  return new Made(core, new SessionState(core), cwd, sessionDir, persist);
}

/** `create(cwd, sessionDir?, options?)`: a new session. @param {string} cwd
 * @param {string | undefined} sessionDir @param {any} options */
function create(cwd, sessionDir, options) {
  const place = native.sessionPlace(cwd, sessionDir || null, true);
  const made = blank(place.cwd, place.dir, true);
  load.startSession(made.state, made.cwd, options);
  return made;
}

/** `open(path, sessionDir?, cwdOverride?)`: one native call makes the core session, takes its
 * cwd (the override, else the header's) and loads the file. @param {string} filePath
 * @param {string | undefined} sessionDir @param {string | undefined} cwdOverride */
function open(filePath, sessionDir, cwdOverride) {
  // A null override is no override, and takes the process's cwd, as the reference's `??` takes it.
  const override = cwdOverride === undefined ? null : (cwdOverride ?? process.cwd());
  const { core, info } = native.NativeSession.openFile(filePath, sessionDir || null, override, Date.now());
  const state = new SessionState(core, info.trackId);
  load.loaded(state, info);
  return new Made(core, state, info.cwd, info.sessionDir, true);
}

/** `continueRecent(cwd, sessionDir?)`: the newest session of the directory, else a new one.
 * @param {string} cwd @param {string | undefined} sessionDir */
function continueRecent(cwd, sessionDir) {
  const place = native.sessionPlace(cwd, sessionDir || null, true);
  const file = findMostRecentSession(place.dir, place.shared ? place.cwd : null);
  const made = blank(place.cwd, place.dir, true);
  if (file !== null) load.loadFile(made.state, file);
  else load.startSession(made.state, made.cwd, undefined);
  return made;
}

/** `inMemory(cwd?, options?, entries?)`: a session never written, of the caller's entries when
 * given. @param {string} cwd @param {any} options @param {any} entries */
function inMemory(cwd, options, entries) {
  const made = blank(native.resolvePath(cwd, null), "", false);
  const start = () => load.startSession(made.state, made.cwd, options);
  if (entries?.length) load.loadEntries(made.state, false, entries, start);
  else start();
  return made;
}

/** `forkFrom(sourcePath, targetCwd, sessionDir?, options?)`: the core writes the fork and opens
 * it in one step (without reading it again). @param {string} sourcePath @param {string} targetCwd
 * @param {string | undefined} sessionDir @param {any} options */
function forkFrom(sourcePath, targetCwd, sessionDir, options) {
  // The dir is made by the fork, once the source passed (the reference makes it first).
  const place = native.sessionPlace(targetCwd, sessionDir || null, false);
  // The id is checked by the core after the source is read and the directory exists, like the
  // reference.
  const id = options?.id === undefined ? null : String(options.id);
  const core = native.NativeSession.forkFrom(sourcePath, place.cwd, place.dir, id, Date.now());
  const state = new SessionState(core);
  state.replaced();
  return new Made(core, state, place.cwd, place.dir, true);
}

module.exports = { Made, create, open, continueRecent, inMemory, forkFrom };
