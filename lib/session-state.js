"use strict";
// What the JS shell keeps of a session, in one place: the entry objects it handed out (so the same
// entry is always the same object, `getEntries()[i] === getEntry(id)`), the leaf, and the answers
// of the hot getters, which would otherwise cost a native call each (~0.4 µs) where the
// reference's are field reads. Everything else is asked of the core when needed.
//
// One rule keeps these copies true: they change only through the three functions below, one per
// kind of change of the core's session, which every mutation of the manager ends in:
//   replaced(count, leaf)  the records were replaced (load, new session, preload, prune, branched
//                          session, dispose): every object and answer goes at once, and the leaf
//                          is the core's new one;
//   leafMoved(id, pos)     the leaf moved (branch, resetLeaf, branchWithSummary); the answers that
//                          depend on it are keyed on it (leafBranchPos) and follow;
//   appended(e, pos)       one record was appended: the answers are extended, which is what keeps
//                          an agent's append-then-getBranch loop from re-reading the branch.
// The answers are private to this class and filled by its own methods (header(), entryCount(),
// ...), each asking the core once after a change; every answer not asked for yet is NOT_ASKED.
// The tree plan, read rarely and big, is keyed on the core's generation() instead.
const { NONE, BATCH_BYTES, CALL_BYTES, parseHeld, valueOfKey, keyOf } = require("./wire.js");
const { TranscriptFeed } = require("./transcript-feed.js");
const { LazyLoad } = require("./lazy.js");
const columns = require("./columns.js");
const { sessionError } = require("./errors.js");
const { coded } = require("./error-boundary.js");
const origins = require("./origins.js");
const idle = require("./idle-parse.js");

/** A cached answer not asked for since the last change: no position, count, generation, file
 * name, list or map is this value, so a slot tells it from every answer, NONE and `undefined`
 * (no file) included. */
const NOT_ASKED = Symbol("not asked");

class SessionState {
  // The answers derived from the records, all NOT_ASKED after forgetAnswers().
  /** All non-header entries in order (extended on append). @type {any[] | typeof NOT_ASKED} */
  #all = NOT_ASKED;
  /** The header's position, or NONE. @type {number | typeof NOT_ASKED} */
  #headerPos = NOT_ASKED;
  /** The session file, or undefined (none). @type {string | undefined | typeof NOT_ASKED} */
  #file = NOT_ASKED;
  /** @type {number | typeof NOT_ASKED} */
  #entryCount = NOT_ASKED;
  /** The labels of string ids: a Map of the labelled ids only, like the reference's, since a
   * lookup in a Map of every id asked for measured several times slower.
   * @type {Map<unknown, unknown> | typeof NOT_ASKED} */
  #labels = NOT_ASKED;
  /** The latest session_info record's position, or NONE. @type {number | typeof NOT_ASKED} */
  #namePos = NOT_ASKED;
  /** getBranch()'s answer for the leaf record at #leafBranchPos (valid while the leaf is there).
   * @type {any[] | typeof NOT_ASKED} */
  #leafBranch = NOT_ASKED;
  /** @type {number} */
  #leafBranchPos = NONE;
  /** getTree's plan from the core, and the core's generation it belongs to.
   * @type {Uint32Array | typeof NOT_ASKED} */
  #treePlan = NOT_ASKED;
  /** @type {number | typeof NOT_ASKED} */
  #treeGeneration = NOT_ASKED;

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
    /** This session as the origin of its entry objects (lib/origins.js), made when first needed.
     * @type {import("./origins.js").Origin | null} */
    this.origin = null;
    /** The caller's preloaded array, which the reference keeps appending to. @type {any[] | null} */
    this.callerList = null;
    /** Where the lazy values of this load's entries are read from (lib/lazy.js), once an entry
     * with some was made. @type {InstanceType<typeof LazyLoad> | null} */
    this.lazy = null;
    /** @type {unknown} */
    this.leafId = null;
    this.leafPos = NONE;
    /** Idle parsing's progress while pending (see idle-parse.js). @type {import("./idle-parse.js").Warm | null} */
    this.warm = null;
    this.feed = new TranscriptFeed(this);
  }

  // ----- the three changes ------------------------------------------------------------------

  /** The core's records were replaced: nothing kept so far stands (objects included), and the
   * leaf is the core's (its key, null for none, and position), asked of it when not given.
   * @param {number} [recordCount] @param {string | null} [leafKey] @param {number} [leafPos] */
  replaced(recordCount = this.core.recordCount(), leafKey = this.core.leafKey(), leafPos = this.core.leafPos()) {
    this.callerList = null;
    // Objects made before keep reading their lazy values from their own load.
    this.lazy = null;
    // Sized up front: assigning far past the end of an empty array would make V8 switch it to
    // slow dictionary elements.
    this.objs = new Array(recordCount);
    this.posById = new Map();
    this.entryById = new Map();
    this.forgetAnswers();
    this.leafId = leafKey === null ? null : valueOfKey(leafKey);
    this.leafPos = leafPos;
    this.warm = null;
    if (this.origin !== null) this.origin.live = false;
    this.origin = null;
    this.feed.reset("session");
  }

  /** The answers derived from the records, all not asked for yet (replaced() calls this: they are
   * forgotten together, so a new one cannot be left out). */
  forgetAnswers() {
    this.#all = NOT_ASKED;
    this.#headerPos = NOT_ASKED;
    this.#file = NOT_ASKED;
    this.#entryCount = NOT_ASKED;
    this.#labels = NOT_ASKED;
    this.#namePos = NOT_ASKED;
    this.#leafBranch = NOT_ASKED;
    this.#leafBranchPos = NONE;
    this.#treePlan = NOT_ASKED;
    this.#treeGeneration = NOT_ASKED;
  }

  /** The leaf moved to `id`, the record at `pos` (NONE: none): transcript readers start over.
   * @param {unknown} id @param {number} pos */
  leafMoved(id, pos) {
    this.leafId = id;
    this.leafPos = pos;
    this.feed.reset("branch");
    this.feed.settle();
  }

  /** `entry` was appended as the record at `pos` (the new leaf). @param {any} entry @param {number} pos */
  appended(entry, pos) {
    // The id caches are filled when an id is first asked for: a Map insert here (two of them, in
    // maps as big as the session) cost more than the rest of an append's bookkeeping.
    this.adopt(entry, pos);
    // The new entry's parent is the record the leaf was on: a branch kept for it grows by one.
    if (this.#leafBranch !== NOT_ASKED && this.#leafBranchPos === this.leafPos && this.leafPos !== NONE) {
      this.#leafBranch.push(entry);
      this.#leafBranchPos = pos;
    }
    this.leafId = entry.id;
    this.leafPos = pos;
    if (this.#entryCount !== NOT_ASKED) this.#entryCount++; // a new id, always
    if (entry.type === "label") this.#labels = NOT_ASKED;
    else if (entry.type === "session_info") this.#namePos = pos;
    if (this.#all !== NOT_ASKED) this.#all.push(entry);
    this.callerList?.push(entry);
    this.feed.appended(entry, pos);
  }

  /** The session file changed without the records (a load that was refused after the core took
   * its path): the file is asked for again. */
  fileChanged() {
    this.#file = NOT_ASKED;
  }

  // ----- answers kept between changes -------------------------------------------------------

  /** getHeader(): the header entry, or null. */
  header() {
    let pos = this.#headerPos;
    if (pos === NOT_ASKED) pos = this.#headerPos = this.core.headerPos();
    return pos === NONE ? null : this.entry(pos);
  }

  /** getSessionFile(): the file, or undefined (none yet, or in memory). */
  sessionFile() {
    let file = this.#file;
    if (file === NOT_ASKED) file = this.#file = this.core.sessionFile() ?? undefined;
    return file;
  }

  /** getEntryCount(). */
  entryCount() {
    let count = this.#entryCount;
    if (count === NOT_ASKED) count = this.#entryCount = this.core.entryCount();
    return count;
  }

  /** Every non-header entry in order: the list kept (callers copy it). */
  allEntries() {
    let all = this.#all;
    if (all === NOT_ASKED) all = this.#all = this.entries(this.core.entryPositions());
    return all;
  }

  /** Whether every entry has its object already (getEntries() was answered). */
  hasAllEntries() {
    return this.#all !== NOT_ASKED;
  }

  /** getSessionName(): pi's footer asks on every frame, so the position is kept and the name
   * read from the entry. */
  sessionName() {
    let pos = this.#namePos;
    if (pos === NOT_ASKED) pos = this.#namePos = this.core.sessionNamePos();
    return pos !== NONE ? this.entry(pos).name?.trim() || undefined : undefined;
  }

  /** getLabel(id): a field read once the labels of string ids are kept; errors of the native part
   * are coded here (getLabel is not wrapped by the error guard: a wrapper would cost more than the
   * lookup). @param {unknown} id */
  label(id) {
    const labels = this.#labels;
    if (labels !== NOT_ASKED && typeof id === "string") return labels.get(id);
    try {
      return this.findLabel(id);
    } catch (err) {
      throw coded(err);
    }
  }

  /** getTree's plan: read, never written, so kept until the core's generation changes. */
  treePlan() {
    const generation = this.core.generation();
    let plan = this.#treePlan;
    if (this.#treeGeneration !== generation || plan === NOT_ASKED) {
      plan = this.#treePlan = this.core.treePlan();
      this.#treeGeneration = generation;
    }
    return plan;
  }

  /** getBranch(fromId): the path to `fromId` (the leaf when null or undefined), root first; the
   * leaf's is kept until the leaf moves. @param {unknown} fromId */
  branch(fromId) {
    const start = fromId ?? this.leafId;
    if (!start) return [];
    const ofLeaf = fromId === undefined || fromId === null;
    if (ofLeaf && this.#leafBranch !== NOT_ASKED && this.#leafBranchPos === this.leafPos) return this.#leafBranch.slice();
    const key = keyOf(start);
    if (key === null) return [];
    const path = this.entries(this.core.branchPath(key));
    if (ofLeaf) {
      // A copy: the caller owns the array returned.
      this.#leafBranch = path.slice();
      this.#leafBranchPos = this.leafPos;
    }
    return path;
  }

  /** getEntriesSince(count), count checked already. @param {number} count */
  entriesSince(count) {
    const all = this.#all;
    if (all !== NOT_ASKED) {
      if (count > all.length) throw entriesPastEnd(count, all.length);
      return all.slice(count);
    }
    const positions = this.core.entryPositionsSince(count);
    if (positions === null) throw entriesPastEnd(count, this.core.entryPositions().length);
    return this.entries(positions);
  }

  /** label(id) when the labels of string ids are not kept yet (it keeps them) or `id` is not a
   * string (ids read from a file are looked up by their key). @param {unknown} id */
  findLabel(id) {
    if (typeof id === "string") {
      const labels = new Map();
      for (const e of this.entries(this.core.labelPositions())) if (typeof e.targetId === "string") labels.set(e.targetId, e.label);
      this.#labels = labels;
      return labels.get(id);
    }
    const key = keyOf(id);
    if (key === null) return undefined;
    const pos = this.core.labelPos(key);
    return pos !== NONE ? this.entry(pos).label : undefined;
  }

  // ----- entry objects ----------------------------------------------------------------------

  /** `obj` is the entry object of the record at `pos` from now on (an appended entry, a caller's
   * preloaded one, one carried over a rewrite, a header made here). @param {any} obj @param {number} pos */
  adopt(obj, pos) {
    this.objs[pos] = obj;
    this.mark(obj, pos);
  }

  /** `obj` stands for the record at `pos` (its JSON is that line, up to formatting, or the line is
   * its skeleton; the preview taking the record is in memory too, and keeps the object).
   * @param {any} obj @param {number} pos */
  mark(obj, pos) {
    // (Not for a scalar line of an old file, nor for an untracked session, found by no id.)
    if (obj === null || typeof obj !== "object" || this.trackId === 0) return;
    origins.place(this.origin ?? this.newOrigin(), obj, pos);
  }

  /** adopt() for one of many objects made or handed over at once: its mark joins the map when
   * the map is read (see lib/origins.js), or before, when the event loop is idle, if `whenIdle`.
   * @param {any} obj @param {number} pos @param {boolean} [whenIdle] */
  adoptLater(obj, pos, whenIdle = true) {
    this.objs[pos] = obj;
    // What mark() leaves out, and a header, which leads to its origin at once.
    if (obj === null || typeof obj !== "object" || this.trackId === 0 || obj.type === "session") return this.mark(obj, pos);
    const origin = this.origin ?? this.newOrigin();
    if (whenIdle && origin.pending.length === 0) idle.markWhenIdle(this);
    origin.pending.push(pos);
  }

  /** `obj` no longer stands for its record (its value was changed). @param {any} obj */
  unmark(obj) {
    const origin = this.origin;
    if (origin === null) return;
    origins.addPending(origin, Infinity);
    origin.positions.delete(obj);
  }

  /** Adds pending marks until `deadline`; whether some are still pending. @param {number} deadline */
  addPendingMarks(deadline) {
    return this.origin !== null && origins.addPending(this.origin, deadline);
  }

  newOrigin() {
    return (this.origin = origins.newOrigin(this.trackId, this.objs));
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
    const missing = missingOf(objs, positions, out);
    if (missing !== null) {
      const { want, at } = missing;
      // In batches of at most ~1 MB of JSON text (a JS string could not hold a huge session
      // anyway), up to CALL_BYTES of them per call, prepared by the core on other threads while
      // this one parses the batch before. The callback must not call into the native session.
      let done = 0;
      // Made before the batches: their callback must not call into the native session.
      const lazy = this.lazyLoad();
      const place = (/** @type {any[]} */ parsed) => {
        for (let j = 0; j < parsed.length; j++) {
          const p = want[done + j];
          // Two requests for one position in the same call must yield one object.
          let o = objs[p];
          if (o === undefined) this.adoptLater((o = parsed[j]), p);
          out[at === null ? done + j : at[done + j]] = o;
        }
        done += parsed.length;
      };
      const take = (/** @type {import("./wire.js").Batch} */ batch, /** @type {Uint32Array} */ holders) => {
        const parsed = parseHeld(batch, lazy.file);
        if (holders.length > 0) lazy.adopt(parsed, holders, want, done);
        place(parsed);
      };
      const build = (/** @type {import("./wire.js").Batch} */ batch, /** @type {Uint32Array} */ holders, /** @type {Uint32Array} */ refs, /** @type {string[]} */ sigs) => {
        const { items, whole } = columns.buildBatch(parseHeld(batch, lazy.file)[0], refs, sigs);
        if (holders.length > 0) lazy.adoptBuilt(items, holders, want, done, whole);
        place(items);
      };
      while (done < want.length) {
        const covered = this.core.eachSkeletons(want.subarray(done), BATCH_BYTES, CALL_BYTES, columns.CODEGEN, columns.CODEGEN ? build : take);
        if (covered === 0) {
          throw sessionError("INTERNAL_ERROR", `no entry lines were read for record ${want[done]}`);
        }
      }
    }
    return out;
  }

  /** The lazy values of this load (made when its first entry with some is). */
  lazyLoad() {
    return (this.lazy ??= new LazyLoad(this.core.lazyValues(), this.objs, this.sessionFile()));
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

  /** The header object of a session the core has just started (newSession, a missing or empty
   * file, a branched session), made from the core's header line so that the members and their
   * order are the core's: the reference's header always has a `parentSession` member, which is
   * `parent` when the caller gave one (its own value, which the line holds as JSON), else the
   * line's, else undefined (a key JSON cannot carry). `line` is the header line when the caller
   * has it (newSession returns it: a new session's header is its first record), else it is asked
   * of the core. @param {unknown} [parent] @param {string} [line] */
  adoptHeader(parent, line) {
    const pos = line === undefined ? this.core.headerPos() : 0;
    if (pos === NONE) return;
    const h = line === undefined ? parseHeld(this.core.line(pos), this.sessionFile())[0] : JSON.parse(line);
    if (parent !== undefined || !("parentSession" in h)) h.parentSession = parent;
    this.adopt(h, pos);
  }
}

/** Calls for at least this many positions first ask whether the load has any object yet: one
 * pass of V8's own over the cache (~1.5 ns a record) instead of a lookup per position, which on
 * the first call after an open runs once, in the interpreter (~1 ms for 18,000 positions). */
const MANY = 1024;
/** @param {unknown} o */
const isMade = (o) => o !== undefined;

/**
 * Which of `positions` have no object in `objs` yet, the others put in `out` at their index:
 * null when none is missing, else their positions (`want`) and their indexes in `positions`
 * (`at`), null when they are all of them in order.
 * @param {any[]} objs @param {ArrayLike<number>} positions @param {any[]} out
 * @returns {{ want: Uint32Array, at: number[] | null } | null}
 */
function missingOf(objs, positions, out) {
  if (positions.length >= MANY && !objs.some(isMade)) {
    return { want: positions instanceof Uint32Array ? positions : Uint32Array.from(positions), at: null };
  }
  /** @type {number[] | null} */
  let at = null;
  for (let i = 0; i < positions.length; i++) {
    const o = objs[positions[i]];
    if (o === undefined) (at ??= []).push(i);
    else out[i] = o;
  }
  if (at === null) return null;
  const want = new Uint32Array(at.length);
  for (let j = 0; j < at.length; j++) want[j] = positions[at[j]];
  return { want, at };
}

/** @param {number} count @param {number} total */
function entriesPastEnd(count, total) {
  return sessionError("ENTRY_COUNT_OUT_OF_RANGE", `getEntriesSince(${count}): the session has only ${total} entries`, RangeError);
}

module.exports = { SessionState, NOT_ASKED };
