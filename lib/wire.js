"use strict";
// What crosses between the JS shell and the core (`NativeSession`), both ways: ids as keys, entry
// lines parsed back into objects, entry text encoded as UTF-8, and the skeletons an `inMemory`
// session gives the core instead of whole entries.
//
// Ids cross to the core as keys: the JSON text of the id (see crates/pi-session-core/src/record.rs).

/** "No position" in the core's position arrays (plans, pages): u32::MAX. */
const NONE = 0xffffffff;

/**
 * Upper bound of the JSON text fetched from the core in one call when materializing entries: the
 * text is garbage once parsed, so small batches keep a big materialization's peak near the size
 * of the objects themselves.
 */
const BATCH_BYTES = 1024 * 1024;

/**
 * The core's key for a JS id value, or null when no record can have it (objects, NaN, symbols).
 * @param {unknown} value
 * @returns {string | null}
 */
function keyOf(value) {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : null;
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
      return "undefined";
    case "object":
      return value === null ? "null" : null;
    default:
      return null;
  }
}

/** The id value a key stands for (the inverse of keyOf). @param {string} key */
function valueOfKey(key) {
  return key === "undefined" ? undefined : JSON.parse(key);
}

/**
 * Parses what the core's `line` / `linesJson` return: a JSON text, or `[text, ...cuts]` when long
 * strings were cut out of it (each replaced by 0 in the text): per cut, the item it belongs to,
 * the number of steps, the steps (names and indexes) and the string. The strings are put back
 * where they were, so the objects equal `JSON.parse` of the original lines, member order included
 * (assigning to an existing own property keeps its place; the core cuts nothing where a name
 * repeats). Returns an array of items; `single` means the text is one line, not an array.
 * @param {string | Array<string | number>} r
 * @param {boolean} single
 * @returns {any[]}
 */
function parseLines(r, single) {
  if (typeof r === "string") return single ? [JSON.parse(r)] : JSON.parse(r);
  const items = single ? [JSON.parse(/** @type {string} */ (r[0]))] : JSON.parse(/** @type {string} */ (r[0]));
  for (let i = 1; i < r.length; ) {
    let o = items[/** @type {number} */ (r[i++])];
    const depth = /** @type {number} */ (r[i++]);
    for (let d = 1; d < depth; d++) o = o[r[i++]];
    o[r[i++]] = r[i++];
  }
  return items;
}

// Entry text crosses to the core as UTF-8 in a reused buffer: TextEncoder.encodeInto is several
// times cheaper than passing a JS string through N-API.
const encoder = new TextEncoder();
const utf8 = {
  /** The buffer the last `encode` wrote (replaced by a larger one when a line does not fit). */
  bytes: new Uint8Array(1 << 16),
  /**
   * Writes `line` into `utf8.bytes` and returns its length in bytes. Read `utf8.bytes` after the
   * call: it may be a new buffer.
   * @param {string} line
   */
  encode(line) {
    let { read, written } = encoder.encodeInto(line, utf8.bytes);
    if (read < line.length) {
      utf8.bytes = new Uint8Array(Math.max(utf8.bytes.length * 2, Buffer.byteLength(line) + 16));
      ({ written } = encoder.encodeInto(line, utf8.bytes));
    }
    return written;
  },
};

/** An id-like member as the core may key it: JSON's own scalars pass, anything else (an object,
 * BigInt, NaN) can equal no id of the session, and is left out. @param {unknown} v */
function keyMember(v) {
  return typeof v === "string" || typeof v === "boolean" || v === null || (typeof v === "number" && Number.isFinite(v)) ? v : undefined;
}

/**
 * What an `inMemory` session gives the core for an entry: a skeleton of the members it reads
 * (record.rs `note_member`), while the entry itself stays the caller's object. The reference never
 * serializes such entries, so it takes values `JSON.stringify` refuses (BigInt, cycles, throwing
 * `toJSON`), and so does this, and an append costs no serialization of the payload. Not for
 * headers and labels (see goesWhole).
 * @param {any} entry
 * @returns {string}
 */
function skeletonOf(entry) {
  /** @type {Record<string, unknown>} */
  const s = { type: entry.type, id: entry.id, parentId: entry.parentId, timestamp: entry.timestamp };
  switch (entry.type) {
    case "message": {
      const m = entry.message;
      if (m !== null && (typeof m === "object" || typeof m === "function")) {
        let role;
        try {
          role = m.role;
        } catch {
          // As in the reference, a message whose role cannot be read fails where it is read.
        }
        s.message = { role: typeof role === "string" ? role : undefined };
      }
      break;
    }
    case "compaction":
      s.firstKeptEntryId = keyMember(entry.firstKeptEntryId);
      if (Array.isArray(entry.retainedTail)) s.retainedTail = [];
      break;
    case "context_edit":
      s.targetId = keyMember(entry.targetId);
      break;
  }
  return JSON.stringify(s);
}

/** Headers and labels reach the core whole even in an `inMemory` session: it copies their values
 * into a branched session (the core's `mark_skeletons` keeps to the same rule). @param {any} entry */
function goesWhole(entry) {
  return entry.type === "session" || entry.type === "label";
}

module.exports = { NONE, BATCH_BYTES, keyOf, valueOfKey, parseLines, utf8, skeletonOf, goesWhole };
