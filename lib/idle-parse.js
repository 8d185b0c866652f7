"use strict";
// Idle work on the one session that asked for it last: parsing a session just loaded (a resume)
// into entry objects, and then adding the objects made many at once to the map of where they
// came from (SessionState.adoptLater). Done in slices of a few milliseconds, each run from the
// event loop when it has nothing else to do (an unref'd zero-delay timer: it never keeps a process
// alive). Only the session loaded last is held, and only until its idle work is done, so a
// program that drops its sessions still frees them (all but the last, a little later). The objects are the
// ones any accessor would have made later (the same cache); a slice that fails just stops, and
// the accessor that needs the entry reports it. Marks still pending on another session are
// added when its map is read.
/**
 * A session loaded from a file whose entries' skeletons (the entries without their big members,
 * which stay lazy: lib/lazy.js) are at most this many bytes of JSON is made into its entry
 * objects while the program waits on something else: pi asks for every entry right after a
 * resume (the branch, the context, the footer's usage over getEntries()), and between the open
 * and those calls it loads its extensions, models and settings, with the event loop idle in
 * between. A 128 MB text session's skeletons are ~7 MB; sessions with more stay as they are.
 */
const WARM_MAX_BYTES = 32 << 20;
/** Idle work starts this long after the last session was handed to it: a program that opens
 * session after session (a script over a directory, a benchmark's loop) drops each before it
 * would be worth making its objects; a resume has hundreds of ms before its first call. */
const WARM_DELAY_MS = 20;
/** One idle slice parses entries for about this long before it yields to the event loop. */
const WARM_SLICE_MS = 4;
/** Entries parsed per JSON.parse within a slice (bounded, so a slice of big skeletons stays
 * short; halved whenever one call overran a slice). */
const WARM_BATCH = 256;

/** While idle parsing is pending: the entry positions to parse (asked for by the first slice,
 * not by the open that waits), the next one to look at, and how many to parse per call (halved
 * whenever one call overran a slice: big entries).
 * @typedef {{ positions: Uint32Array | null, next: number, batch: number }} Warm */
/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */

// The session idle work is for: the one handed over last, held until its work is done (or
// another is handed over), never more than one. (A WeakRef held none of them in a synchronous
// loop, but creating one keeps its target alive until the job ends, and a loop of awaits never
// ends its job: a benchmark's loop of opens held every session it made.) Neither timer captures
// a session. An exclusive session is never held: its lease must go with it.
/** @type {SessionState | null} */
let target = null;
/** The next slice's timer. A timer, not an immediate: an unref'd immediate does not wake an
 * event loop that waits on something else (it runs only when other work wakes the loop), where
 * an unref'd timer does. @type {NodeJS.Timeout | null} */
let pending = null;

/** Make `s`'s entries when idle, if their skeletons (`bytes` of JSON) are small enough and no
 * lease is held or wanted (`exclusive`). @param {SessionState} s @param {number} bytes @param {boolean} exclusive */
function warmWhenIdle(s, bytes, exclusive) {
  if (bytes > WARM_MAX_BYTES || exclusive) return;
  s.warm = { positions: null, next: 0, batch: WARM_BATCH };
  hold(s);
}

/** Add `s`'s pending marks when idle (it just made many objects). @param {SessionState} s */
function markWhenIdle(s) {
  if (!s.core.isExclusive()) hold(s);
}

/** `s` is the session idle work is for; its work starts WARM_DELAY_MS from now (from its last
 * hand-over, so a burst of opens makes no objects for the sessions it drops). @param {SessionState} s */
function hold(s) {
  target = s;
  if (pending !== null) clearTimeout(pending);
  pending = setTimeout(tick, WARM_DELAY_MS).unref();
}

/** No idle parsing for `s` (it became exclusive). @param {SessionState} s */
function forget(s) {
  s.warm = null;
  if (target === s) target = null;
}

function tick() {
  pending = null;
  const s = target;
  if (s === null) return;
  if (!slice(s)) {
    if (target === s) target = null;
    return;
  }
  pending = setTimeout(tick, 0).unref();
}

/** Parses the next entries, or adds pending marks, for about WARM_SLICE_MS; false when nothing is
 * left to do. @param {SessionState} s */
function slice(s) {
  const w = s.warm;
  const deadline = performance.now() + WARM_SLICE_MS;
  if (w === null) return s.addPendingMarks(deadline);
  const objs = s.objs;
  try {
    const positions = (w.positions ??= s.core.entryPositions());
    do {
      const batch = [];
      while (w.next < positions.length && batch.length < w.batch) {
        const p = positions[w.next++];
        if (objs[p] === undefined) batch.push(p);
      }
      if (batch.length > 0) {
        const started = performance.now();
        s.entries(batch);
        if (performance.now() - started > WARM_SLICE_MS && w.batch > 1) w.batch >>= 1;
      }
    } while (w.next < positions.length && performance.now() < deadline);
  } catch {
    s.warm = null;
    return false;
  }
  if (w.positions !== null && w.next < w.positions.length) return true;
  s.warm = null;
  return true; // the marks of what was parsed
}

module.exports = { warmWhenIdle, markWhenIdle, forget };
