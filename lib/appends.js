"use strict";
// Appends: an entry object is built by the SessionManager method (the reference's members, in its
// order), serialized here (so `JSON.stringify` writes exactly what the reference writes) and
// handed to the core, which gives it its record; the object itself becomes the session's entry.
const { randomUUID, randomFillSync } = require("node:crypto");
const { sessionError, withCode } = require("./errors.js");
const { utf8, skeletonOf, goesWhole } = require("./wire.js");

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

// Entry ids: 8 hex chars of fresh randomness (as the reference's `randomUUID().slice(0, 8)`), drawn
// from a pooled buffer refilled from the CSPRNG. The core refuses one already in use and
// appendEntry picks another.
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const idPool = new Uint8Array(4096);
let idPoolAt = idPool.length;
function randomEntryId() {
  if (idPoolAt + 4 > idPool.length) {
    randomFillSync(idPool);
    idPoolAt = 0;
  }
  const p = idPoolAt;
  idPoolAt += 4;
  return HEX[idPool[p]] + HEX[idPool[p + 1]] + HEX[idPool[p + 2]] + HEX[idPool[p + 3]];
}

/**
 * Append `entry` to the session: `persist` (a persisted session) sends it whole, an `inMemory`
 * one as its skeleton. When its random id is taken, another is drawn (`retarget` hears of it);
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
  const n = s.n;
  let pos;
  for (let attempt = 1; ; attempt++) {
    try {
      // encode() may replace `utf8.bytes` with a larger buffer: it must run before that is read.
      const length = utf8.encode(line);
      if (how === undefined) pos = whole ? n.appendUtf8(utf8.bytes, length) : n.appendSkeletonUtf8(utf8.bytes, length);
      else pos = n.appendWithUtf8(utf8.bytes, length, !whole, how.id !== undefined, how.flush);
      break;
    } catch (err) {
      // A reserved id is never replaced (the core refuses it with its own code).
      if (/** @type {any} */ (err).code !== "ID_TAKEN" || how?.id !== undefined) throw err;
      // The random id is already in the session: pick another (a full UUID after 100 tries).
      const id = attempt >= 100 ? randomUUID() : randomEntryId();
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
 * appendContextEdit's rules, checked here (the core declares NOT_ON_ACTIVE_BRANCH, NOT_EDITABLE
 * and INVALID_REPLACEMENT but does not check them yet): the replacement's shape, the target on
 * the active branch and contributing model content. Returns the replacement as stored (string
 * content of an assistant or tool result message becomes one text block).
 * @param {SessionState} s @param {unknown} targetId @param {any} replacement @param {() => any[]} branch
 */
function contextEditReplacement(s, targetId, replacement, branch) {
  if (
    replacement !== null &&
    (typeof replacement !== "object" ||
      !("content" in replacement) ||
      (typeof replacement.content !== "string" && !Array.isArray(replacement.content)))
  ) {
    throw sessionError("INVALID_REPLACEMENT", "Context edit replacement must be null or contain string/array content");
  }
  const pos = s.lookup(targetId);
  if (pos < 0) throw sessionError("ENTRY_NOT_FOUND", `Entry ${targetId} not found`);
  if (!branch().some((e) => e.id === targetId)) {
    throw sessionError("NOT_ON_ACTIVE_BRANCH", `Entry ${targetId} is not on the active branch`);
  }
  const target = s.entry(pos);
  const role = target.type === "message" ? target.message.role : "custom";
  const editable = target.type === "custom_message" || (target.type === "message" && (role === "user" || role === "assistant" || role === "toolResult"));
  if (!editable) throw sessionError("NOT_EDITABLE", `Entry ${targetId} does not contribute editable model content`);
  return replacement !== null && (role === "assistant" || role === "toolResult") && typeof replacement.content === "string"
    ? { content: [{ type: "text", text: replacement.content }] }
    : replacement;
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
