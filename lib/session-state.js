"use strict";
// What the JS shell keeps of a session, in one place: the entry objects it handed out (so the same
// entry is always the same object, `getEntries()[i] === getEntry(id)`), the leaf, and the answers
// of the hot getters, which would otherwise cost a native call each (~0.4 µs) where the
// reference's are field reads. Everything else is asked of the core when needed.
//
// One rule keeps these copies true: they change only through the three functions below, one per
// kind of change of the core's session, which every mutation of the manager ends in:
//   replaced(count)     the records were replaced (load, new session, prune, branched session,
//                       dispose): every object and answer goes at once (then syncLeaf() reads
//                       the new leaf from the core);
//   leafMoved(id, pos)  the leaf moved (branch, resetLeaf, branchWithSummary); the answers that
//                       depend on it are keyed on it (leafBranchPos) and follow;
//   appended(e, pos)    one record was appended: the answers are extended, which is what keeps
//                       an agent's append-then-getBranch loop from re-reading the branch.
// Code elsewhere reads these fields and fills a plain answer not asked for yet (a position, a
// count), nothing more. The tree plan, read rarely and big, is keyed on the core's generation() instead.
const native = require("../native.js");
const { NONE, BATCH_BYTES, CALL_BYTES, parseLines, valueOfKey, keyOf } = require("./wire.js");
const { TranscriptFeed } = require("./transcript-feed.js");
const { LazyLoad } = require("./lazy.js");
const { sessionError } = require("./errors.js");
const idle = require("./idle-parse.js");

/** The format version the core writes (its constant, not a copy). */
const CURRENT_SESSION_VERSION = native.CURRENT_SESSION_VERSION;
/** A cached position not asked for since the last change: not a position and not NONE (the
 * core's "no record"), so a cache slot tells the three apart. */
const NOT_ASKED = -1;

/**
 * Where entry objects come from: the record of a manager's session each was made from or written
 * as. Given such objects, `inMemory(cwd, options, entries)` takes the records from that session
 * instead of serializing every entry and parsing it again: pi builds one from
 * `[header, ...sm.getBranch()]` at each turn boundary when an extension listens, and serializing
 * a big session each time cost hundreds of ms where the reference needs a few.
 *
 * An origin is one manager's session, `{ id, live, positions, objs, pending }`: its native
 * session's tracking id (an id, so that entry objects never keep a session alive), whether that
 * manager still holds it, and a WeakMap from its objects to their positions. A header object
 * leads to its origin through HEADER_ORIGIN. One map per session rather than one for every
 * object: a WeakMap that grows with every entry ever made cost 1.5-2.5 µs per insert, a small
 * one ~0.3 µs.
 *
 * Objects made many at once (a resume makes every entry) go into the map later: their positions
 * wait in `pending`, over the session's `objs`, and are added when the event loop is idle (see
 * idle-parse.js) or when the map is read, whichever comes first. Adding them at once was 7-9 ms
 * of an 11 MB session's resume, which nobody needs before an `inMemory` of its entries.
 * @typedef {{ id: number, live: boolean, positions: WeakMap<object, number>, objs: any[], pending: number[] }} Origin
 * @type {WeakMap<object, Origin>}
 */
const HEADER_ORIGIN = new WeakMap();

/** The session and positions the objects `entries` were all made from (header first, current
 * version), or null. @param {unknown} entries */
function recordsOf(entries) {
  if (!Array.isArray(entries) || entries.length === 0) return null;
  const head = entries[0];
  if (head === null || typeof head !== "object" || head.type !== "session" || head.version !== CURRENT_SESSION_VERSION) return null;
  const origin = HEADER_ORIGIN.get(head);
  if (origin === undefined || !origin.live) return null;
  addPending(origin, Infinity);
  const map = origin.positions;
  const positions = new Uint32Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const pos = e !== null && typeof e === "object" ? map.get(e) : undefined;
    if (pos === undefined) return null;
    positions[i] = pos;
  }
  return { id: origin.id, positions };
}

/** Adds `origin`'s pending objects to its map, until `deadline` (a `performance.now()` time);
 * returns whether some are still pending. @param {Origin} origin @param {number} deadline */
function addPending(origin, deadline) {
  const { pending, objs, positions } = origin;
  while (pending.length > 0) {
    // A slice checks the clock every 256 objects.
    for (let n = 0; n < 256 && pending.length > 0; n++) {
      const pos = /** @type {number} */ (pending.pop());
      const obj = objs[pos];
      if (obj !== undefined) positions.set(obj, pos);
    }
    if (deadline !== Infinity && performance.now() >= deadline) break;
  }
  return pending.length > 0;
}

class SessionState {
  // The answers derived from the records, set by forgetAnswers().
  /** All non-header entries in order, once someone asked for them (extended on append). @type {any[] | null} */
  all;
  /** The header's position (NOT_ASKED, or NONE). @type {number} */
  headerPos;
  /** The session file (null: not asked yet). @type {string | undefined | null} */
  file;
  /** The entry count (-1: not asked yet). @type {number} */
  entryCount;
  /** The labels of string ids (null: not asked yet): a Map of the labelled ids only, like the
   * reference's, since a lookup in a Map of every id asked for measured several times slower.
   * @type {Map<string, unknown> | null} */
  labels;
  /** The latest session_info record's position (NOT_ASKED, or NONE). @type {number} */
  namePos;
  /** getBranch()'s answer for the leaf record at leafBranchPos (valid while the leaf is there). @type {any[] | null} */
  leafBranch;
  /** @type {number} */
  leafBranchPos;
  /** getTree's plan from the core, and the core's generation it belongs to. @type {Uint32Array | null} */
  treePlan;
  /** @type {number} */
  treeGeneration;

  /** @param {import("../native.js").NativeSession} core @param {number} [trackId] its tracking
   * id when the core already tracks it (a manager made by `openFile`) */
  constructor(core, trackId) {
    this.core = core;
    /** The native session's tracking id (0: untracked), by which another session finds it. Its
     * state goes as soon as the GC has taken it, not when Node runs finalizers (after the running
     * JavaScript returns), so a loop reading session after session stays flat. */
    this.trackId = trackId ?? core.track();
    /** pos -> entry object (sparse until materialized). @type {any[]} */
    this.objs = [];
    /** id value -> pos, filled as ids are looked up. @type {Map<unknown, number>} */
    this.posById = new Map();
    /** id value -> entry object, for the hottest lookup (getEntry). @type {Map<unknown, any>} */
    this.entryById = new Map();
    /** This session as the origin of its entry objects, made when first needed. @type {Origin | null} */
    this.origin = null;
    /** The caller's preloaded array, which the reference keeps appending to. @type {any[] | null} */
    this.callerList = null;
    /** Where the lazy values of this load's entries are read from (lib/lazy.js), once an entry
     * with some was made. @type {InstanceType<typeof LazyLoad> | null} */
    this.lazy = null;
    /** @type {unknown} */
    this.leafId = null;
    this.leafPos = NONE;
    this.forgetAnswers();
    /** Idle parsing's progress while pending (see idle-parse.js). @type {import("./idle-parse.js").Warm | null} */
    this.warm = null;
    this.feed = new TranscriptFeed(this);
  }

  // ----- the three changes ------------------------------------------------------------------

  /** The core's records were replaced: nothing kept so far stands (objects included). */
  replaced(recordCount = this.core.recordCount()) {
    this.callerList = null;
    // Objects made before keep reading their lazy values from their own load.
    this.lazy = null;
    // Sized up front: assigning far past the end of an empty array would make V8 switch it to
    // slow dictionary elements.
    this.objs = new Array(recordCount);
    this.posById = new Map();
    this.entryById = new Map();
    this.forgetAnswers();
    this.leafId = null;
    this.leafPos = NONE;
    this.warm = null;
    if (this.origin !== null) this.origin.live = false;
    this.origin = null;
    this.feed.reset("session");
  }

  /** The answers derived from the records, all not asked for yet (the constructor and replaced()
   * call this: they are forgotten together, so a new one cannot be left out). */
  forgetAnswers() {
    this.all = null;
    this.headerPos = NOT_ASKED;
    this.file = null;
    this.entryCount = -1;
    this.labels = null;
    this.namePos = NOT_ASKED;
    this.leafBranch = null;
    this.leafBranchPos = NONE;
    this.treePlan = null;
    this.treeGeneration = -1;
  }

  /** The leaf moved to `id`, the record at `pos` (NONE: none): transcript readers start over.
   * @param {unknown} id @param {number} pos */
  leafMoved(id, pos) {
    this.leafId = id;
    this.leafPos = pos;
    this.feed.reset("branch");
    this.feed.settle();
  }

  /** After the records were replaced (or preloaded): the leaf, as the core has it now. */
  syncLeaf() {
    this.leafFromCore(this.core.leafKey(), this.core.leafPos());
  }

  /** The leaf as the core answered it: its key (null: none) and position.
   * @param {string | null} key @param {number} pos */
  leafFromCore(key, pos) {
    this.leafId = key === null ? null : valueOfKey(key);
    this.leafPos = pos;
  }

  /** `entry` was appended as the record at `pos` (the new leaf). @param {any} entry @param {number} pos */
  appended(entry, pos) {
    // The id caches are filled when an id is first asked for: a Map insert here (two of them, in
    // maps as big as the session) cost more than the rest of an append's bookkeeping.
    this.objs[pos] = entry;
    this.mark(entry, pos);
    // The new entry's parent is the record the leaf was on: a branch kept for it grows by one.
    if (this.leafBranch !== null && this.leafBranchPos === this.leafPos && this.leafPos !== NONE) {
      this.leafBranch.push(entry);
      this.leafBranchPos = pos;
    }
    this.leafId = entry.id;
    this.leafPos = pos;
    if (this.entryCount >= 0) this.entryCount++; // a new id, always
    if (entry.type === "label") this.labels = null;
    else if (entry.type === "session_info") this.namePos = pos;
    this.all?.push(entry);
    this.callerList?.push(entry);
    this.feed.appended(entry);
  }

  // ----- answers kept between changes -------------------------------------------------------

  /** getBranch(fromId): the path to `fromId` (the leaf when null or undefined), root first; the
   * leaf's is kept until the leaf moves. @param {unknown} fromId */
  branch(fromId) {
    const start = fromId ?? this.leafId;
    if (!start) return [];
    const ofLeaf = fromId === undefined || fromId === null;
    if (ofLeaf && this.leafBranch !== null && this.leafBranchPos === this.leafPos) return this.leafBranch.slice();
    const key = keyOf(start);
    if (key === null) return [];
    const path = this.entries(this.core.branchPath(key));
    if (ofLeaf) {
      // A copy: the caller owns the array returned.
      this.leafBranch = path.slice();
      this.leafBranchPos = this.leafPos;
    }
    return path;
  }

  /** getEntriesSince(count), count checked already. @param {number} count */
  entriesSince(count) {
    const all = this.all;
    if (all !== null) {
      if (count > all.length) throw entriesPastEnd(count, all.length);
      return all.slice(count);
    }
    const positions = this.core.entryPositionsSince(count);
    if (positions === null) throw entriesPastEnd(count, this.core.entryPositions().length);
    return this.entries(positions);
  }

  /** getLabel(id) when the labels of string ids are not kept yet (it keeps them) or `id` is
   * not a string (ids read from a file are looked up by their key). @param {unknown} id */
  findLabel(id) {
    if (typeof id === "string") {
      const labels = new Map();
      for (const e of this.entries(this.core.labelPositions())) if (typeof e.targetId === "string") labels.set(e.targetId, e.label);
      this.labels = labels;
      return labels.get(id);
    }
    const key = keyOf(id);
    if (key === null) return undefined;
    const pos = this.core.labelPos(key);
    return pos !== NONE ? this.entry(pos).label : undefined;
  }

  // ----- entry objects ----------------------------------------------------------------------

  /** `obj` stands for the record at `pos` (its JSON is that line, up to formatting, or the line is
   * its skeleton; the preview taking the record is in memory too, and keeps the object).
   * @param {any} obj @param {number} pos */
  mark(obj, pos) {
    // (Not for a scalar line of an old file, nor for an untracked session, found by no id.)
    if (obj === null || typeof obj !== "object" || this.trackId === 0) return;
    const origin = this.origin ?? this.newOrigin();
    origin.positions.set(obj, pos);
    if (obj.type === "session") {
      // A header shared with a live session (a preview's, made from it) keeps leading there.
      const prev = HEADER_ORIGIN.get(obj);
      if (prev === undefined || !prev.live) HEADER_ORIGIN.set(obj, origin);
    }
  }

  /** mark() for one of many objects made at once (`objs[pos]` already): it joins the map when the
   * event loop is idle, or when the map is read (see Origin). @param {any} obj @param {number} pos */
  markLater(obj, pos) {
    // What mark() leaves out, and a header, which leads to its origin (HEADER_ORIGIN) at once.
    if (obj === null || typeof obj !== "object" || this.trackId === 0 || obj.type === "session") return this.mark(obj, pos);
    const origin = this.origin ?? this.newOrigin();
    if (origin.pending.length === 0) idle.markWhenIdle(this);
    origin.pending.push(pos);
  }

  /** `obj` no longer stands for its record (its value was changed). @param {any} obj */
  unmark(obj) {
    const origin = this.origin;
    if (origin === null) return;
    addPending(origin, Infinity);
    origin.positions.delete(obj);
  }

  /** Adds pending marks until `deadline`; whether some are still pending. @param {number} deadline */
  addPendingMarks(deadline) {
    return this.origin !== null && addPending(this.origin, deadline);
  }

  /** @returns {Origin} */
  newOrigin() {
    return (this.origin = { id: this.trackId, live: true, positions: new WeakMap(), objs: this.objs, pending: [] });
  }

  /** The object of the record at `pos`, made when first asked for. @param {number} pos */
  entry(pos) {
    const o = this.objs[pos];
    return o !== undefined ? o : this.entries(Uint32Array.of(pos))[0];
  }

  /** Entry objects for many positions, the missing ones made from their skeletons (their big
   * values read when first read: lib/lazy.js), parsed in batches.
   * @param {ArrayLike<number>} positions @returns {any[]} */
  entries(positions) {
    const objs = this.objs;
    const out = new Array(positions.length);
    /** @type {number[] | null} */
    let missing = null;
    for (let i = 0; i < positions.length; i++) {
      const o = objs[positions[i]];
      if (o === undefined) (missing ??= []).push(i);
      else out[i] = o;
    }
    if (missing !== null) {
      const want = new Uint32Array(missing.length);
      for (let j = 0; j < missing.length; j++) want[j] = positions[missing[j]];
      // In batches of at most ~1 MB of JSON text (a JS string could not hold a huge session
      // anyway), up to CALL_BYTES of them per call, prepared by the core on other threads while
      // this one parses the batch before. The callback must not call into the native session.
      let done = 0;
      // Made before the batches: their callback must not call into the native session.
      const lazy = this.lazyLoad();
      const take = (/** @type {import("./wire.js").Batch} */ batch, /** @type {Uint32Array} */ holders) => {
        const parsed = parseLines(batch);
        if (holders.length > 0) lazy.adopt(parsed, holders, want, done);
        for (let j = 0; j < parsed.length; j++) {
          const p = want[done + j];
          // Two requests for one position in the same call must yield one object.
          let o = objs[p];
          if (o === undefined) {
            o = objs[p] = parsed[j];
            this.markLater(o, p);
          }
          out[missing[done + j]] = o;
        }
        done += parsed.length;
      };
      while (done < want.length) {
        if (this.core.eachSkeletonsJson(want.subarray(done), BATCH_BYTES, CALL_BYTES, take) === 0) {
          throw sessionError("INTERNAL_ERROR", `no entry lines were read for record ${want[done]}`);
        }
      }
    }
    return out;
  }

  /** The lazy values of this load (made when its first entry with some is). */
  lazyLoad() {
    return (this.lazy ??= new LazyLoad(this.core.lazyValues(), this.objs));
  }

  /** Makes sure the first `count` positions of `want` have objects, parsed at once, and only when
   * some are missing (after the first call, none are). @param {Uint32Array} want @param {number} count */
  materialize(want, count) {
    const objs = this.objs;
    for (let k = 0; k < count; k++) {
      if (objs[want[k]] === undefined) {
        this.entries(want.subarray(k, count));
        return;
      }
    }
  }

  /** The position of the record with id `id`, or NONE. @param {unknown} id */
  lookup(id) {
    const cached = this.posById.get(id);
    if (cached !== undefined) return cached;
    const key = keyOf(id);
    if (key === null) return NONE;
    const pos = this.core.lookup(key);
    if (pos !== NONE) this.posById.set(id, pos);
    return pos;
  }

  /** Take the records `from` names from their session; false when it is gone.
   * @param {{ id: number, positions: Uint32Array }} from */
  takeRecords(from) {
    try {
      this.core.loadRecordsOf(from.id, from.positions);
      return true;
    } catch {
      return false; // the state is unchanged: the caller serializes the entries instead
    }
  }

  /** After the core started a session itself (missing or empty file), the header object mirrors
   * the one the reference builds, with its `parentSession: undefined` key. */
  seedFreshHeader() {
    const pos = this.core.headerPos();
    if (pos === NONE) return;
    const h = parseLines(this.core.line(pos))[0];
    if (!("parentSession" in h)) h.parentSession = undefined;
    this.objs[pos] = h;
    this.mark(h, pos);
  }
}

/** @param {number} count @param {number} total */
function entriesPastEnd(count, total) {
  return sessionError("ENTRY_COUNT_OUT_OF_RANGE", `getEntriesSince(${count}): the session has only ${total} entries`, RangeError);
}

module.exports = { SessionState, recordsOf, CURRENT_SESSION_VERSION, NOT_ASKED };
