"use strict";
// The transcript read model (not in the reference; the shape of upstream's proposal, see README
// "Additions beyond the reference"): what a person scrolls back through. Its items are the whole
// active branch, root to leaf, each entry as the messages sessionEntryToContextMessages makes of
// it, so a compaction adds its summary and erases nothing. The core counts and locates the items
// from its index (crates/pi-session-core/src/transcript.rs); this module checks what callers hand
// in, parses only the page's entries and builds the items and cursors.
//
// A cursor names a boundary between two items: an entry of the branch and how many of that
// entry's items come before the boundary, for one session id. It stays valid while its entry is
// on the active branch, so a page read before an append still continues after it.
const { sessionError } = require("./errors.js");
const { sessionEntryToContextMessages } = require("./context.js");
const { NONE, keyOf, valueOfKey, decodeTranscriptPage, PAGE_OK, PAGE_NOT_ON_BRANCH } = require("./wire.js");

/** The most items one transcript page may hold (upstream's value). */
const MAX_SESSION_TRANSCRIPT_PAGE_SIZE = 200;

const CURSOR_PREFIX = "pt1.";
const LIMIT = "Session transcript limit";

/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */

/** @param {string} sessionId @param {unknown} entryId @param {number} within */
function cursorOf(sessionId, entryId, within) {
  return CURSOR_PREFIX + Buffer.from(JSON.stringify([sessionId, entryId, within])).toString("base64url");
}

/** @param {unknown} cursor @returns {{ sessionId: string, entryId: unknown, within: number }} */
function decodeCursor(cursor) {
  if (typeof cursor === "string" && cursor.startsWith(CURSOR_PREFIX)) {
    let parts;
    try {
      parts = JSON.parse(Buffer.from(cursor.slice(CURSOR_PREFIX.length), "base64url").toString("utf8"));
    } catch {
      parts = null;
    }
    if (Array.isArray(parts) && parts.length === 3 && typeof parts[0] === "string" && Number.isInteger(parts[2]) && parts[2] >= 0) {
      return { sessionId: parts[0], entryId: parts[1], within: parts[2] };
    }
  }
  throw sessionError("TRANSCRIPT_CURSOR_INVALID", "Invalid session transcript cursor", TypeError);
}

/** A page size from 1 to the maximum, or a RangeError `TRANSCRIPT_PAGE_UNBOUNDED` saying `what`.
 * @param {unknown} value @param {string} what */
function checkSize(value, what) {
  if (!Number.isInteger(value) || /** @type {number} */ (value) < 1 || /** @type {number} */ (value) > MAX_SESSION_TRANSCRIPT_PAGE_SIZE) {
    throw sessionError("TRANSCRIPT_PAGE_UNBOUNDED", `${what} must be an integer from 1 to ${MAX_SESSION_TRANSCRIPT_PAGE_SIZE}`, RangeError);
  }
  return /** @type {number} */ (value);
}

/** readTranscriptPage(options): only the page's entries are parsed.
 * @param {SessionState} s @param {any} options */
function readPage(s, options) {
  if (options === null || typeof options !== "object") {
    checkSize(undefined, LIMIT);
  }
  const { limit, before, after } = options;
  checkSize(limit, LIMIT);
  if (before !== undefined && after !== undefined) {
    throw sessionError("TRANSCRIPT_CURSOR_AMBIGUOUS", "Use either before or after, not both", TypeError);
  }
  const cursor = before ?? after;
  if (cursor === undefined) return newestPage(s, limit);
  const { sessionId, entryId, within } = decodeCursor(cursor);
  if (sessionId !== s.core.sessionId()) {
    throw sessionError("TRANSCRIPT_CURSOR_FOREIGN", "Session transcript cursor belongs to a different session", RangeError);
  }
  const key = keyOf(entryId);
  const page = key === null ? null : decodeTranscriptPage(s.core.transcriptPage(key, within, limit, before !== undefined));
  if (page === null || page.status === PAGE_NOT_ON_BRANCH) {
    throw sessionError("TRANSCRIPT_CURSOR_STALE", "Session transcript cursor is not on the active branch");
  }
  if (page.status !== PAGE_OK) throw sessionError("TRANSCRIPT_CURSOR_INVALID", "Invalid session transcript cursor", TypeError);
  return pageOf(s, page);
}

/** The newest `limit` items (a reset's page). @param {SessionState} s @param {number} limit */
function newestPage(s, limit) {
  return pageOf(s, decodeTranscriptPage(s.core.transcriptPage(null, 0, limit, true)));
}

/** The branch's item counts, without a page. @param {SessionState} s */
function countsOf(s) {
  const page = decodeTranscriptPage(s.core.transcriptPage(null, 0, 0, true));
  return { totalItems: page.total, itemsAfterLatestCompaction: page.afterCompaction };
}

/** The page a transcriptPage answer names.
 * @param {SessionState} s @param {ReturnType<typeof decodeTranscriptPage>} page */
function pageOf(s, page) {
  const { count, start, total } = page;
  const want = new Uint32Array(count);
  for (let i = 0; i < count; i++) want[i] = page.entry(i);
  s.materialize(want, count);
  const sessionId = s.core.sessionId();
  const objs = s.objs;
  const items = new Array(count);
  // An entry's messages are made once, even when two of its items are on the page.
  let madeFor = -1;
  /** @type {any[]} */
  let made = [];
  for (let i = 0; i < count; i++) {
    const pos = page.entry(i);
    const entry = objs[pos];
    if (pos !== madeFor) {
      made = sessionEntryToContextMessages(entry);
      madeFor = pos;
    }
    items[i] = { id: entry.id, entryTimestamp: entry.timestamp, message: made[page.within(i)] };
  }
  const hasMoreBefore = count > 0 && start > 0;
  const hasMoreAfter = count > 0 && start + count < total;
  /** @type {string | null} */
  let afterCursor = null;
  if (hasMoreAfter) {
    afterCursor = cursorOf(sessionId, items[count - 1].id, page.within(count - 1) + 1);
  } else if (page.leaf !== NONE) {
    // Past everything: the leaf, with all its items before the boundary, where appends come.
    // (Its id is the last item's when the leaf made it, else the core's leaf key.)
    const leafIsLast = count > 0 && page.entry(count - 1) === page.leaf;
    const leafKey = leafIsLast ? null : s.core.leafKey();
    if (leafIsLast) afterCursor = cursorOf(sessionId, items[count - 1].id, page.leafItems);
    else if (leafKey !== null) afterCursor = cursorOf(sessionId, valueOfKey(leafKey), page.leafItems);
  }
  return {
    items,
    cursors: {
      before: count > 0 ? cursorOf(sessionId, items[0].id, page.within(0)) : null,
      after: afterCursor,
    },
    hasMoreBefore,
    hasMoreAfter,
    totalItems: total,
    itemsAfterLatestCompaction: page.afterCompaction,
  };
}

module.exports = { MAX_SESSION_TRANSCRIPT_PAGE_SIZE, checkSize, cursorOf, readPage, newestPage, countsOf };
