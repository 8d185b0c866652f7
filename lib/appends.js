"use strict";
// Appends: an entry object is built by the SessionManager method (the reference's members, in its
// order), serialized here (so `JSON.stringify` writes exactly what the reference writes) and
// handed to the core, which gives it its record; the object itself becomes the session's entry.
const native = require("../native.js");
const { sessionError, withCode } = require("./errors.js");
const { utf8, skeletonOf, goesWhole, keyOf } = require("./wire.js");

/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */
/** appendMessage's options, checked. @typedef {{ id: string | undefined, flush: boolean }} AppendHow */

// Clock text for entry timestamps: formatting a Date costs more than an append's bookkeeping, and
// several entries are often stamped within the same millisecond.
let isoMs = -1;
let isoText = "";
function nowIso() {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

// Entry ids: the core's rule (crates/pi-session-core/src/ids.rs). A new entry takes the next of a
// batch of random ids the core drew (one native call per ID_BATCH entries); when the session has
// it, the core gives one it has not (`freshEntryId`).
const ID_BATCH = 512;
let idPool = "";
let idPoolAt = 0;
function randomEntryId() {
  if (idPoolAt >= idPool.length) {
    idPool = native.randomEntryIds(ID_BATCH);
    idPoolAt = 0;
  }
  const id = idPool.slice(idPoolAt, idPoolAt + 8);
  idPoolAt += 8;
  return id;
}

/**
 * Append `entry` to the session: `persist` (a persisted session) sends it whole, an `inMemory`
 * one as its skeleton. When its random id is taken, the core gives another (`retarget` hears of it);
 * `how` is appendMessage's options (undefined on the hot path). Returns the entry.
 * @template {{ type: string, id: string }} E
 * @param {SessionState} s @param {boolean} persist @param {E} entry
 * @param {((id: string) => void) | undefined} [retarget] @param {AppendHow} [how]
 * @returns {E}
 */
function appendEntry(s, persist, entry, retarget, how) {
  const whole = persist || goesWhole(entry);
  const lineOf = whole ? JSON.stringify : skeletonOf;
  let line;
  try {
    line = lineOf(entry);
  } catch (err) {
    throw withCode(err, "INVALID_ARGUMENT");
  }
  const core = s.core;
  let pos;
  for (;;) {
    try {
      // encode() may replace `utf8.bytes` with a larger buffer: it must run before that is read.
      const length = utf8.encode(line);
      if (how === undefined) pos = whole ? core.appendUtf8(utf8.bytes, length) : core.appendSkeletonUtf8(utf8.bytes, length);
      else pos = core.appendWithUtf8(utf8.bytes, length, !whole, how.id !== undefined, how.flush);
      break;
    } catch (err) {
      // A reserved id is never replaced (the core refuses it with its own code).
      if (/** @type {any} */ (err).code !== "ID_TAKEN" || how?.id !== undefined) throw err;
      // The random id is already in the session: the core picks one it has not.
      const id = core.freshEntryId();
      entry.id = id;
      retarget?.(id);
      line = lineOf(entry);
    }
  }
  s.appended(entry, pos);
  return entry;
}

/** appendMessage's options `{ id?, flush? }`, checked: `id` a non-empty string (a reserved id, which
 * the core checks), `flush` a boolean. @param {unknown} options @returns {AppendHow} */
function appendOptions(options) {
  if (options === null || typeof options !== "object") {
    throw sessionError("INVALID_ARGUMENT", "appendMessage(message, options) expects options to be an object", TypeError);
  }
  const { id, flush } = /** @type {{ id?: unknown, flush?: unknown }} */ (options);
  if (id !== undefined && (typeof id !== "string" || id.length === 0)) {
    throw sessionError("INVALID_ENTRY_ID", `appendMessage options.id must be a reserved entry id (a non-empty string), got ${describeValue(id)}`, TypeError);
  }
  if (flush !== undefined && typeof flush !== "boolean") {
    throw sessionError("INVALID_ARGUMENT", "appendMessage options.flush must be a boolean", TypeError);
  }
  return { id, flush: flush === true };
}

/**
 * appendContextEdit's checks: the core makes them (session/edit.rs: the rules, their order, their
 * messages and codes) from what this reads off the values. That reading stays here because the
 * reference reads live objects, which JSON does not carry: `in` sees inherited and `undefined`
 * members, a getter runs at each read, `undefined` and functions have no JSON, `toJSON` and
 * String objects would change the shape, and a message that is no object throws where its role is
 * read. Returns the replacement as stored (the caller's object, or a text block for string
 * content where the core says so).
 * @param {SessionState} s @param {unknown} targetId @param {any} replacement
 */
function contextEditReplacement(s, targetId, replacement) {
  const shape = replacementShape(replacement);
  s.core.checkContextEditReplacement(shape);
  // The id is shown in a message only once the replacement passed, as the reference shows it
  // (`${targetId}` throws for a Symbol, as there); an id that can be no key is in no session.
  const key = keyOf(targetId);
  const display = `${targetId}`;
  const pos = s.core.contextEditTarget(key, display);
  const target = s.entry(pos);
  const type = target.type;
  const role = type === "message" ? target.message.role : undefined;
  const wraps = s.core.contextEditWrapsText(display, typeof type === "string" ? type : null, typeof role === "string" ? role : null, shape);
  // The content is read again, as the reference reads it again.
  return wraps && typeof replacement.content === "string" ? { content: [{ type: "text", text: replacement.content }] } : replacement;
}

/** The replacement as the reference's first check sees it. @param {any} r */
function replacementShape(r) {
  if (r === null) return "null";
  if (typeof r !== "object") return "notObject";
  if (!("content" in r)) return "noContent";
  if (typeof r.content === "string") return "text";
  return Array.isArray(r.content) ? "blocks" : "otherContent";
}

/** A value as an error message shows it. @param {unknown} v */
function describeValue(v) {
  try {
    return typeof v === "string" ? JSON.stringify(v) : typeof v === "symbol" || (typeof v === "object" && v !== null) ? typeof v : String(v);
  } catch {
    return typeof v;
  }
}

module.exports = { nowIso, randomEntryId, appendEntry, appendOptions, contextEditReplacement, describeValue };
