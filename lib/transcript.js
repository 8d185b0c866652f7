"use strict";
// The transcript read model's cursors and page limits (not in the reference; see README
// "Additions beyond the reference"). A transcript is the active branch's projected context: the
// entries buildSessionProjection() lists, in order. A cursor names a boundary between two of them,
// for one manager and one state of its branch; the SessionManager pages and projects (with the
// projection it uses for buildSessionContext), this module only checks what callers hand in.
const { randomFillSync } = require("node:crypto");
const { sessionError } = require("./errors.js");

/** The most entries one transcript page may hold. */
const MAX_SESSION_TRANSCRIPT_PAGE_SIZE = 500;

// A cursor reads `t1.<manager tag>.<epoch>.<index>`. The tag is unique to each manager of this
// process (a random prefix keeps another process's cursors from matching by chance); the epoch
// counts the manager's branch changes.
const PROCESS_TAG = randomFillSync(Buffer.alloc(4)).toString("hex");
let managers = 0;
const CURSOR_PATTERN = /^t1\.([0-9a-f]{8}-\d+)\.(\d+)\.(\d+)$/;

function newManagerTag() {
  return `${PROCESS_TAG}-${++managers}`;
}

function cursorOf(tag, epoch, index) {
  return `t1.${tag}.${epoch}.${index}`;
}

/** The page size asked for, or a RangeError `TRANSCRIPT_PAGE_UNBOUNDED`. */
function checkLimit(limit) {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SESSION_TRANSCRIPT_PAGE_SIZE) {
    throw sessionError(
      "TRANSCRIPT_PAGE_UNBOUNDED",
      `readTranscriptPage() needs a limit from 1 to ${MAX_SESSION_TRANSCRIPT_PAGE_SIZE} (MAX_SESSION_TRANSCRIPT_PAGE_SIZE), got ${describe(limit)}`,
      RangeError,
    );
  }
  return limit;
}

/** The boundary index a cursor names, checked against this manager's tag and epoch. */
function indexOf(cursor, tag, epoch) {
  const m = typeof cursor === "string" ? CURSOR_PATTERN.exec(cursor) : null;
  if (m === null) {
    throw sessionError("TRANSCRIPT_CURSOR_INVALID", `Not a transcript cursor: ${describe(cursor)}`, TypeError);
  }
  if (m[1] !== tag) {
    throw sessionError("TRANSCRIPT_CURSOR_FOREIGN", `Transcript cursor ${cursor} belongs to another session manager`, RangeError);
  }
  if (Number(m[2]) !== epoch) {
    throw sessionError(
      "TRANSCRIPT_CURSOR_STALE",
      `Transcript cursor ${cursor} is from before the branch or session changed; read the latest page again`,
    );
  }
  return Number(m[3]);
}

/** Where a page sits: `{ limit, anchor, backward }`, anchor null for the newest page. */
function pageRequest(options, tag, epoch) {
  if (options === null || typeof options !== "object") {
    throw sessionError("TRANSCRIPT_PAGE_UNBOUNDED", `readTranscriptPage() needs { limit }, got ${describe(options)}`, RangeError);
  }
  const { limit, before, after } = options;
  checkLimit(limit);
  if (before !== undefined && after !== undefined) {
    throw sessionError("TRANSCRIPT_CURSOR_AMBIGUOUS", "readTranscriptPage() takes `before` or `after`, not both", TypeError);
  }
  if (after !== undefined) return { limit, anchor: indexOf(after, tag, epoch), backward: false };
  if (before !== undefined) return { limit, anchor: indexOf(before, tag, epoch), backward: true };
  return { limit, anchor: null, backward: true };
}

function describe(value) {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "bigint") return `${value}n`;
  if (value === null || typeof value !== "object") return String(value);
  return Array.isArray(value) ? "an array" : "an object";
}

module.exports = { MAX_SESSION_TRANSCRIPT_PAGE_SIZE, newManagerTag, cursorOf, pageRequest };
