"use strict";
// How a manager's session gets its records: a file (setSessionFile), a new session (newSession),
// or entry objects the caller holds (`inMemory(cwd, options, entries)`). Each that succeeds goes
// through the state's replaced(): no object or answer of the session before survives.
const { withCode } = require("./errors.js");
const idle = require("./idle-parse.js");
const { skeletonOf, goesWhole } = require("./wire.js");
const native = require("../native.js");
const { NONE } = require("./wire.js");
const { recordsOf } = require("./origins.js");
const { migrateSessionEntries } = require("./migrate.js");
const { assertValidSessionId } = require("./store.js");

/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */

/** setSessionFile(sessionFile) (the core resolves the path). @param {SessionState} s @param {string} sessionFile */
function loadFile(s, sessionFile) {
  const before = s.core.sessionId();
  let info;
  try {
    info = s.core.setSessionFile(sessionFile, Date.now());
  } catch (err) {
    // A refused file leaves the session as it was (objects included), unless the core had
    // already started a fresh one (an empty file whose header could not be written).
    if (s.core.sessionId() !== before) {
      s.replaced();
      s.adoptHeader();
    }
    // The path is taken before the file is read (as in the reference), refused or not.
    s.fileChanged();
    throw err;
  }
  loaded(s, info);
}

/** The core has just loaded a file into `s.core` (open, setSessionFile), and `info` says what
 * came of it: the records, the leaf, and whether it is worth parsing while idle.
 * @param {SessionState} s @param {import("../native.js").LoadInfo} info */
function loaded(s, info) {
  s.replaced(info.recordCount, info.leafKey ?? null, info.leafPos); // an absent key: no leaf
  if (!info.loaded) s.adoptHeader();
  else idle.warmWhenIdle(s, info.skeletonBytes, info.exclusive);
}

/** newSession(options): returns the new file (undefined in memory, or until it is written).
 * @param {SessionState} s @param {string} cwd @param {any} options */
function startSession(s, cwd, options) {
  // Checked before the parent is serialized (the reference checks the id first); the core's
  // newSession would refuse it too, but only after that.
  if (options?.id !== undefined) assertValidSessionId(options.id);
  const parent = options?.parentSession;
  const parentJson = parent === undefined ? null : (JSON.stringify(parent) ?? null);
  // The id is written as a string: a non-string id that passes the pattern (5, ["a"]) is written
  // as its string (the reference writes the value itself and then refuses to open its own file).
  const info = s.core.newSession(options?.id === undefined ? null : String(options.id), parentJson, Date.now());
  s.replaced(1, null, NONE); // the header alone, and no leaf
  s.adoptHeader(parent, info.header);
  return info.file ?? undefined;
}

/**
 * inMemory(cwd, options, entries): load `entries` into `s`. Where the entries map 1:1 to
 * records, the caller's objects are the session's entries (as in the reference), and with a
 * header the caller's array is the session's list (appends land in it). `startNew()` starts a fresh session (header only) for entries without
 * a header.
 * @param {SessionState} s @param {boolean} persist @param {any[]} entries @param {() => void} startNew
 */
function loadEntries(s, persist, entries, startNew) {
  const hasHeader = entries.some((e) => e?.type === "session");
  // Old versions are migrated on the caller's own objects, in place, as the reference does.
  if (hasHeader) migrateSessionEntries(entries);
  const from = hasHeader ? recordsOf(entries) : null;
  let alike;
  if (from !== null && s.takeRecords(from)) {
    s.replaced();
    alike = true; // one record per entry, each an object (recordsOf)
  } else {
    let skeletons;
    try {
      // When every entry is a plain object of the current version, each becomes a record that
      // keeps it, and the core gets skeletons (see skeletonOf), as for appends.
      skeletons =
        !persist &&
        Array.prototype.every.call(entries, (e) => e !== null && typeof e === "object" && !Array.isArray(e) && (e.type !== "session" || e.version === native.CURRENT_SESSION_VERSION));
    } catch (err) {
      throw withCode(err, "INVALID_ARGUMENT");
    }
    preload(s, entries, hasHeader, skeletons, startNew);
    alike = isAlike(s, entries, hasHeader);
    // A skeleton is never read back: should an entry not have become one record (a `toJSON`
    // that makes a header or label vanish), the entries go whole.
    if (skeletons && !alike) {
      preload(s, entries, hasHeader, false, startNew);
      alike = isAlike(s, entries, hasHeader);
    }
  }
  // The caller's objects are the entries (as in the reference) when they map 1:1 to records.
  const offset = hasHeader ? 0 : 1;
  if (alike) {
    // Their marks wait until the map is read (an inMemory of these entries in turn), not even for
    // idle time, which stays with the session that has work: pi makes such a manager of a branch
    // at each turn boundary an extension listens to, and drops it unread.
    for (let i = 0; i < entries.length; i++) s.adoptLater(entries[i], i + offset, false);
    // With a header, the caller's array is the session's list: appends land in it too.
    if (hasHeader) s.callerList = entries;
  }
}

/** Each preloaded entry is one record (so the records can be the caller's objects).
 * @param {SessionState} s @param {any[]} entries @param {boolean} hasHeader */
function isAlike(s, entries, hasHeader) {
  return s.core.recordCount() === entries.length + (hasHeader ? 0 : 1) && entries.every((e) => e !== null && typeof e === "object");
}

/** @param {SessionState} s @param {any[]} entries @param {boolean} hasHeader @param {boolean} skeletons
 * @param {() => void} startNew */
function preload(s, entries, hasHeader, skeletons, startNew) {
  /** @type {string[]} */
  let lines;
  try {
    // Any array-like (a typed array too) gives an Array of JSON texts; a value JSON cannot
    // write (a function, a symbol) becomes "null", a record the core skips.
    lines = /** @type {string[]} */ (
      Array.prototype.map.call(entries, (e) => (skeletons && !goesWhole(e) ? skeletonOf(e) : (JSON.stringify(e) ?? "null")))
    );
  } catch (err) {
    throw withCode(err, "INVALID_ARGUMENT");
  }
  if (hasHeader) {
    s.core.loadPreloaded(lines, skeletons);
    s.replaced();
  } else {
    // A new session, then the entries after its header: the records are replaced once more, and
    // the header made for the new session stays its object.
    startNew();
    const header = s.objs[0];
    s.core.pushPreloaded(lines, skeletons);
    s.replaced();
    s.adopt(header, 0);
  }
}

module.exports = { loadFile, loaded, startSession, loadEntries };
