"use strict";
// The SessionManager class: a thin JS shell over the Rust core (`NativeSession`).
//
// The core owns the session: records, id index, leaf, labels, persistence and every structural
// computation (paths, context selection, tree shape). This shell keeps what only JS can:
//   - entry objects: built here on append (so `JSON.stringify` writes exactly what the reference
//     writes) or parsed lazily from the core's lines, and cached so the same entry is always the
//     same object;
//   - the message objects of contexts, built from those entries.
// Ids cross to the core as keys: the JSON text of the id (see crates/pi-session-core/src/record.rs).
const fs = require("node:fs");
const path = require("node:path");
const { randomUUID, randomFillSync } = require("node:crypto");
const native = require("../native.js");
const { sessionError, withCode } = require("./errors.js");
const paths = require("./paths.js");
const ctx = require("./context.js");
const listing = require("./listing.js");
const { releaseLocksAtExit } = require("./locks.js");
const { guardErrors, coded } = require("./guard.js");
const transcript = require("./transcript.js");

const CURRENT_SESSION_VERSION = 3;
const NONE = 0xffffffff;
const UNKNOWN = Symbol("unknown");
/**
 * Upper bound of the JSON text fetched from the core in one call when materializing entries: the
 * text is garbage once parsed, so small batches keep a big materialization's peak near the size
 * of the objects themselves.
 */
const BATCH_BYTES = 1024 * 1024;
/**
 * A session loaded from a file of at most this many bytes is parsed into its entry objects while
 * the program waits on something else (see `#warmSlice`): pi asks for every entry right after a
 * resume (the branch, the context, the footer's usage over getEntries()), and between the open
 * and those calls it loads its extensions, models and settings, with the event loop idle in
 * between. Bigger sessions stay lazy: their point is not to hold everything.
 */
const WARM_MAX_BYTES = 32 << 20;
/** One idle slice parses entries for about this long before it yields to the event loop. */
const WARM_SLICE_MS = 4;
/** Entries parsed per JSON.parse within a slice (bounded, so a slice of big lines stays short). */
const WARM_BATCH = 32;
const SESSION_ID_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const SESSION_ID_MESSAGE =
  "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";

function assertValidSessionId(id) {
  if (!SESSION_ID_PATTERN.test(id)) throw sessionError("INVALID_SESSION_ID", SESSION_ID_MESSAGE);
}

/** The core's key for a JS id value, or null when no record can have it (objects, NaN, symbols). */
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

function valueOfKey(key) {
  return key === "undefined" ? undefined : JSON.parse(key);
}

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
// from a pooled buffer refilled from the CSPRNG.
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
 * Parses what the core's `line` / `linesJson` return: a JSON text, or `[text, ...cuts]` when long
 * strings were cut out of it (each replaced by 0 in the text): per cut, the item it belongs to,
 * the number of steps, the steps (names and indexes) and the string. The strings are put back
 * where they were, so the objects equal `JSON.parse` of the original lines, member order included
 * (assigning to an existing own property keeps its place; the core cuts nothing where a name
 * repeats). Returns an array of items; `single` means the text is one line, not an array.
 */
function parseLines(r, single) {
  if (typeof r === "string") return single ? [JSON.parse(r)] : JSON.parse(r);
  const items = single ? [JSON.parse(r[0])] : JSON.parse(r[0]);
  for (let i = 1; i < r.length; ) {
    let o = items[r[i++]];
    const depth = r[i++];
    for (let d = 1; d < depth; d++) o = o[r[i++]];
    o[r[i++]] = r[i++];
  }
  return items;
}

// Entry text crosses to the core as UTF-8 in a reused buffer: TextEncoder.encodeInto is several
// times cheaper than passing a JS string through N-API.
const encoder = new TextEncoder();
let scratch = new Uint8Array(1 << 16);
function encode(line) {
  let { read, written } = encoder.encodeInto(line, scratch);
  if (read < line.length) {
    scratch = new Uint8Array(Math.max(scratch.length * 2, Buffer.byteLength(line) + 16));
    ({ written } = encoder.encodeInto(line, scratch));
  }
  return written;
}

/** An id-like member as the core may key it: JSON's own scalars pass, anything else (an object,
 * BigInt, NaN) can equal no id of the session, and is left out. */
function keyMember(v) {
  return typeof v === "string" || typeof v === "boolean" || v === null || (typeof v === "number" && Number.isFinite(v)) ? v : undefined;
}

/**
 * What an `inMemory` session gives the core for an entry: a skeleton of the members it reads
 * (record.rs `note_member`), while the entry itself stays the caller's object. The reference never
 * serializes such entries, so it takes values `JSON.stringify` refuses (BigInt, cycles, throwing
 * `toJSON`), and so does this, and an append costs no serialization of the payload. Not for
 * headers and labels (see goesWhole).
 */
function skeletonOf(entry) {
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
 * into a branched session (the core's `mark_skeletons` keeps to the same rule). */
function goesWhole(entry) {
  return entry.type === "session" || entry.type === "label";
}

/**
 * Where entry objects come from: the record of a manager's session each was made from or written
 * as. Given such objects, `inMemory(cwd, options, entries)` takes the records from that session
 * instead of serializing every entry and parsing it again: pi builds one from
 * `[header, ...sm.getBranch()]` at each turn boundary when an extension listens, and serializing
 * a big session each time cost hundreds of ms where the reference needs a few.
 *
 * An origin is one manager's session, `{ id, live, positions }`: its native session's tracking id
 * (an id, so that entry objects never keep a session alive), whether that manager still holds
 * it, and a WeakMap from its objects to their positions. A header object leads to its origin
 * through HEADER_ORIGIN. One map per session rather than one for every object: a WeakMap that
 * grows with every entry ever made cost 1.5-2.5 µs per insert, a small one ~0.3 µs.
 */
const HEADER_ORIGIN = new WeakMap();

/** The session and positions the objects `entries` were all made from (header first, current
 * version), or null. */
function recordsOf(entries) {
  if (!Array.isArray(entries) || entries.length === 0) return null;
  const head = entries[0];
  if (head === null || typeof head !== "object" || head.type !== "session" || head.version !== CURRENT_SESSION_VERSION) return null;
  const origin = HEADER_ORIGIN.get(head);
  if (origin === undefined || !origin.live) return null;
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

/** Marker letting static factories reach the constructor with preloaded state. */
const PRIVATE = Symbol("SessionManager.private");

class SessionManager {
  #n;
  #cwd;
  #sessionDir;
  #persist;
  /** pos -> entry object (sparse until materialized). */
  #objs = [];
  /** id value -> pos, filled as ids are looked up or appended. */
  #posById = new Map();
  /** id value -> entry object, for the hottest lookup (getEntry). */
  #entryById = new Map();
  /** All non-header entries in order, once someone asked for them (kept current on append). */
  #all = null;
  #leafId = null;
  #leafPos = -1;
  /** getLeafEntry()'s answer, or UNKNOWN until asked after the leaf moved. */
  #leafEntry = UNKNOWN;
  /** The caller's preloaded array, which the reference keeps appending to. */
  #callerList = null;
  /** Answers that change only when the session is replaced (#resetCaches) or by an append, kept
   * so that these getters are field reads, as in the reference, not a native call each (~0.4 µs):
   * the header's position, the file, the entry count (-1: not asked yet) and the labels of string
   * ids (null: not asked yet; a Map of the labelled ids only, like the reference's, since a
   * lookup in a Map of every id asked for measured several times slower). */
  #headerPos = UNKNOWN;
  #file = UNKNOWN;
  #entryCount = -1;
  #labels = null;
  /** The latest session_info record's position (-1: none), or UNKNOWN until asked. */
  #namePos = UNKNOWN;
  /** getBranch()'s answer for the leaf record at #branchPos (null: none kept). An append extends
   * it, since the new entry's parent is the record the leaf was on. */
  #branch = null;
  #branchPos = -1;
  /** This session as the origin of its entry objects (see HEADER_ORIGIN), made when first needed. */
  #origin = null;
  /** The native session's tracking id (0: untracked), by which another session finds it. */
  #trackId = 0;
  /** While idle parsing is pending: the entry positions to parse, the next one to look at, and
   * how many to parse per call (halved whenever one call overran a slice: big entries). */
  #warm = null;
  /** getTree's plan from the core, and the core's generation it belongs to. */
  #treePlan = null;
  #treeGeneration = -1;
  /** The transcript read model (see readTranscriptPage): this manager's cursor tag, the count of
   * branch changes that cursors must match, the subscribers (null: none) and the transcript's
   * length while known (-1: not asked, or changed by a reset). */
  #transcriptTag = transcript.newManagerTag();
  #transcriptEpoch = 0;
  #transcriptListeners = null;
  #transcriptTotal = -1;

  constructor(cwd, sessionDir, sessionFile, persist, newSessionOptions, preloadedFileEntries) {
    this.#cwd = paths.resolvePath(cwd);
    this.#sessionDir = paths.normalizePath(sessionDir);
    this.#persist = persist;
    if (sessionFile === PRIVATE) {
      // forkFrom: the core writes the fork and opens it in one step (without reading it again).
      const { source, id } = newSessionOptions;
      this.#n = native.NativeSession.forkFrom(source, this.#cwd, this.#sessionDir, id);
      this.#trackId = this.#n.track();
      this.#resetCaches();
      this.#syncLeaf();
      return;
    }
    this.#n = native.NativeSession.blank(this.#cwd, this.#sessionDir, persist);
    // Its state goes as soon as the GC has taken it, not when Node runs finalizers (after the
    // running JavaScript returns), so a loop reading session after session stays flat.
    this.#trackId = this.#n.track();
    if (sessionFile) {
      this.#setSessionFile(sessionFile);
    } else if (preloadedFileEntries?.length) {
      this.#loadEntries(preloadedFileEntries, newSessionOptions);
    } else {
      this.newSession(newSessionOptions);
    }
  }

  // ----- entry objects ------------------------------------------------------------------------

  #resetCaches(recordCount = this.#n.recordCount()) {
    this.#callerList = null;
    // Sized up front: assigning far past the end of an empty array would make V8 switch it to
    // slow dictionary elements.
    this.#objs = new Array(recordCount);
    this.#posById = new Map();
    this.#entryById = new Map();
    this.#all = null;
    this.#headerPos = UNKNOWN;
    this.#file = UNKNOWN;
    this.#entryCount = -1;
    this.#labels = null;
    this.#namePos = UNKNOWN;
    this.#branch = null;
    this.#warm = null;
    if (this.#origin !== null) this.#origin.live = false;
    this.#origin = null;
    this.#transcriptReset("session");
  }

  /** Take the records `from` names from their session; false when it is gone. */
  #takeRecords(from) {
    try {
      this.#n.loadRecordsOf(from.id, from.positions);
      return true;
    } catch {
      return false; // the state is unchanged: the caller serializes the entries instead
    }
  }

  /** `obj` stands for the record at `pos` (its JSON is that line, up to formatting, or the line is
   * its skeleton; the preview taking the record is in memory too, and keeps the object). */
  #mark(obj, pos) {
    // (Not for a scalar line of an old file, nor for an untracked session, found by no id.)
    if (obj === null || typeof obj !== "object" || this.#trackId === 0) return;
    let origin = this.#origin;
    if (origin === null) origin = this.#origin = { id: this.#trackId, live: true, positions: new WeakMap() };
    origin.positions.set(obj, pos);
    if (obj.type === "session") {
      // A header shared with a live session (a preview's, made from it) keeps leading there.
      const prev = HEADER_ORIGIN.get(obj);
      if (prev === undefined || !prev.live) HEADER_ORIGIN.set(obj, origin);
    }
  }

  #syncLeaf() {
    const key = this.#n.leafKey();
    this.#leafId = key === null ? null : valueOfKey(key);
    this.#leafPos = this.#n.leafPos();
    this.#leafEntry = UNKNOWN;
  }

  #entry(pos) {
    let o = this.#objs[pos];
    if (o === undefined) {
      o = parseLines(this.#n.line(pos), true)[0];
      this.#objs[pos] = o;
      this.#mark(o, pos);
    }
    return o;
  }

  /** Entry objects for many positions, parsing the missing ones in one JSON.parse. */
  #entries(positions) {
    const objs = this.#objs;
    const out = new Array(positions.length);
    let missing = null;
    for (let i = 0; i < positions.length; i++) {
      const o = objs[positions[i]];
      if (o === undefined) (missing ??= []).push(i);
      else out[i] = o;
    }
    if (missing !== null) {
      const want = new Uint32Array(missing.length);
      for (let j = 0; j < missing.length; j++) want[j] = positions[missing[j]];
      // In batches of at most ~1 MB of JSON text (a JS string could not hold a huge session anyway).
      for (let done = 0; done < want.length; ) {
        const parsed = parseLines(this.#n.linesJson(want.subarray(done), BATCH_BYTES), false);
        for (let j = 0; j < parsed.length; j++) {
          const p = want[done + j];
          // Two requests for one position in the same call must yield one object.
          let o = objs[p];
          if (o === undefined) {
            o = objs[p] = parsed[j];
            this.#mark(o, p);
          }
          out[missing[done + j]] = o;
        }
        done += parsed.length;
      }
    }
    return out;
  }

  #lookup(id) {
    const cached = this.#posById.get(id);
    if (cached !== undefined) return cached;
    const key = keyOf(id);
    if (key === null) return -1;
    const pos = this.#n.lookup(key);
    if (pos >= 0) this.#posById.set(id, pos);
    return pos;
  }

  /** `how` (appendMessage's options, see appendOptions): undefined on the hot path. */
  #append(entry, retarget, how) {
    const whole = this.#persist || goesWhole(entry);
    const lineOf = whole ? JSON.stringify : skeletonOf;
    let line;
    try {
      line = lineOf(entry);
    } catch (err) {
      throw withCode(err, "INVALID_ARGUMENT");
    }
    let pos;
    for (let attempt = 1; ; attempt++) {
      try {
        // encode() may replace `scratch` with a larger buffer: it must run before `scratch` is read.
        const length = encode(line);
        if (how === undefined) pos = whole ? this.#n.appendUtf8(scratch, length) : this.#n.appendSkeletonUtf8(scratch, length);
        else pos = this.#n.appendWithUtf8(scratch, length, !whole, how.id !== undefined, how.flush);
        break;
      } catch (err) {
        // A reserved id is never replaced (the core refuses it with its own code).
        if (err.code !== "ID_TAKEN" || how?.id !== undefined) throw err;
        // The random id is already in the session: pick another (a full UUID after 100 tries).
        const id = attempt >= 100 ? randomUUID() : randomEntryId();
        entry.id = id;
        retarget?.(id);
        line = lineOf(entry);
      }
    }
    // The id caches are filled when an id is first asked for: a Map insert here (two of them, in
    // maps as big as the session) cost more than the rest of an append's bookkeeping.
    this.#objs[pos] = entry;
    this.#mark(entry, pos);
    if (this.#branch !== null && this.#branchPos === this.#leafPos && this.#leafPos >= 0) {
      this.#branch.push(entry);
      this.#branchPos = pos;
    }
    this.#leafId = entry.id;
    this.#leafPos = pos;
    this.#leafEntry = entry;
    if (this.#entryCount >= 0) this.#entryCount++; // a new id, always
    if (entry.type === "label") this.#labels = null;
    else if (entry.type === "session_info") this.#namePos = pos;
    this.#all?.push(entry);
    this.#callerList?.push(entry);
    // Committed: the transcript hears of it. A compaction or a context edit re-projects entries
    // already read, so its readers start over instead.
    if (entry.type === "compaction" || entry.type === "context_edit") this.#transcriptReset("projection");
    else if (this.#transcriptTotal >= 0 || this.#transcriptListeners !== null) this.#transcriptAppended(entry);
    return entry;
  }

  /** A fresh 8-hex entry id; the core refuses one already in use and #append picks another. */
  #newId() {
    return randomEntryId();
  }

  // ----- loading ------------------------------------------------------------------------------

  setSessionFile(sessionFile) {
    this.#setSessionFile(sessionFile);
  }

  #setSessionFile(sessionFile) {
    const resolved = paths.resolvePath(sessionFile);
    const before = this.#n.sessionId();
    let loaded;
    try {
      loaded = this.#n.setSessionFile(resolved);
    } catch (err) {
      // A refused file leaves the session as it was (objects included), unless the core had
      // already started a fresh one (an empty file whose header could not be written).
      if (this.#n.sessionId() !== before) {
        this.#resetCaches();
        this.#syncLeaf();
        this.#seedFreshHeader();
      }
      // The path is taken before the file is read (as in the reference), refused or not.
      this.#file = UNKNOWN;
      throw err;
    }
    this.#resetCaches();
    this.#syncLeaf();
    if (!loaded) this.#seedFreshHeader();
    else this.#warmWhenIdle(resolved);
  }

  // ----- idle parsing -------------------------------------------------------------------------
  // The one session loaded last (a resume) is parsed into entry objects in slices of a few
  // milliseconds, each run from the event loop when it has nothing else to do (an unref'd
  // setImmediate: it never keeps a process alive). Held by a WeakRef, so a session nobody keeps
  // is still collected. The objects are the ones any accessor would have made later (the same
  // cache); a slice that fails just stops, and the accessor that needs the entry reports it.

  // Until the running job ends the session loaded last is held strongly (one session, so a
  // synchronous loop of opens still frees the others), then by a WeakRef: creating a WeakRef
  // keeps its target alive until the job ends, which would hold every session of such a loop.
  // Neither the microtask nor the immediate captures a manager. An exclusive manager is never
  // held: its lease must go with it.
  static #warmStrong = null;
  static #warmRef = null;
  static #warmHandOffQueued = false;
  static #warmPending = null;

  #warmWhenIdle(file) {
    let size;
    try {
      size = fs.statSync(file).size;
    } catch {
      return;
    }
    if (size > WARM_MAX_BYTES || this.#n.isExclusive()) return;
    this.#warm = { positions: this.#n.entryPositions(), next: 0, batch: WARM_BATCH };
    SessionManager.#warmStrong = this;
    SessionManager.#warmRef = null;
    if (!SessionManager.#warmHandOffQueued) {
      SessionManager.#warmHandOffQueued = true;
      queueMicrotask(SessionManager.#warmHandOff);
    }
  }

  /** No idle parsing for this manager (it became exclusive). */
  #warmForget() {
    this.#warm = null;
    if (SessionManager.#warmStrong === this) SessionManager.#warmStrong = null;
  }

  static #warmHandOff() {
    SessionManager.#warmHandOffQueued = false;
    const sm = SessionManager.#warmStrong;
    SessionManager.#warmStrong = null;
    if (sm === null || sm.#warm === null) return;
    SessionManager.#warmRef = new WeakRef(sm);
    if (SessionManager.#warmPending === null) SessionManager.#warmPending = setImmediate(SessionManager.#warmTick).unref();
  }

  static #warmTick() {
    SessionManager.#warmPending = null;
    const sm = SessionManager.#warmRef?.deref();
    if (sm === undefined || !sm.#warmSlice()) {
      SessionManager.#warmRef = null;
      return;
    }
    SessionManager.#warmPending = setImmediate(SessionManager.#warmTick).unref();
  }

  /** Parses the next entries for about WARM_SLICE_MS; false when nothing is left to do. */
  #warmSlice() {
    const w = this.#warm;
    if (w === null) return false;
    const { positions } = w;
    const objs = this.#objs;
    const deadline = performance.now() + WARM_SLICE_MS;
    try {
      do {
        const batch = [];
        while (w.next < positions.length && batch.length < w.batch) {
          const p = positions[w.next++];
          if (objs[p] === undefined) batch.push(p);
        }
        if (batch.length > 0) {
          const started = performance.now();
          this.#entries(batch);
          if (performance.now() - started > WARM_SLICE_MS && w.batch > 1) w.batch >>= 1;
        }
      } while (w.next < positions.length && performance.now() < deadline);
    } catch {
      this.#warm = null;
      return false;
    }
    if (w.next < positions.length) return true;
    this.#warm = null;
    return false;
  }

  /** After the core started a session itself (missing or empty file), the header object mirrors
   * the one the reference builds, with its `parentSession: undefined` key. */
  #seedFreshHeader() {
    const pos = this.#n.headerPos();
    if (pos < 0) return;
    const h = parseLines(this.#n.line(pos), true)[0];
    if (!("parentSession" in h)) h.parentSession = undefined;
    this.#objs[pos] = h;
    this.#mark(h, pos);
  }

  #loadEntries(entries, options) {
    const hasHeader = entries.some((e) => e?.type === "session");
    // Old versions are migrated on the caller's own objects, in place, as the reference does.
    if (hasHeader) migrateSessionEntries(entries);
    const from = hasHeader ? recordsOf(entries) : null;
    let alike;
    if (from !== null && this.#takeRecords(from)) {
      this.#resetCaches();
      alike = true; // one record per entry, each an object (recordsOf)
    } else {
      let skeletons;
      try {
        // When every entry is a plain object of the current version, each becomes a record that
        // keeps it, and the core gets skeletons (see skeletonOf), as for appends.
        skeletons =
          !this.#persist &&
          Array.prototype.every.call(entries, (e) => e !== null && typeof e === "object" && !Array.isArray(e) && (e.type !== "session" || e.version === CURRENT_SESSION_VERSION));
      } catch (err) {
        throw withCode(err, "INVALID_ARGUMENT");
      }
      this.#preload(entries, hasHeader, options, skeletons);
      alike = this.#alike(entries, hasHeader);
      // A skeleton is never read back: should an entry not have become one record (a `toJSON`
      // that makes a header or label vanish), the entries go whole.
      if (skeletons && !alike) {
        this.#preload(entries, hasHeader, options, false);
        alike = this.#alike(entries, hasHeader);
      }
    }
    // The caller's objects are the entries (as in the reference) when they map 1:1 to records.
    const offset = hasHeader ? 0 : 1;
    if (alike) {
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i];
        this.#objs[i + offset] = e;
        this.#mark(e, i + offset);
      }
      // With a header, the caller's array is the session's list: appends land in it too.
      if (hasHeader) this.#callerList = entries;
    }
    this.#syncLeaf();
  }

  /** Each preloaded entry is one record (so the records can be the caller's objects). */
  #alike(entries, hasHeader) {
    return this.#n.recordCount() === entries.length + (hasHeader ? 0 : 1) && entries.every((e) => e !== null && typeof e === "object");
  }

  #preload(entries, hasHeader, options, skeletons) {
    let lines;
    try {
      // Any array-like (a typed array too) gives an Array of JSON texts; a value JSON cannot
      // write (a function, a symbol) becomes "null", a record the core skips.
      lines = Array.prototype.map.call(entries, (e) =>
        skeletons && !goesWhole(e) ? skeletonOf(e) : (JSON.stringify(e) ?? "null"),
      );
    } catch (err) {
      throw withCode(err, "INVALID_ARGUMENT");
    }
    if (hasHeader) {
      this.#n.loadPreloaded(lines, skeletons);
      this.#resetCaches();
    } else {
      this.newSession(options);
      this.#n.pushPreloaded(lines, skeletons);
    }
  }

  newSession(options) {
    if (options?.id !== undefined) assertValidSessionId(options.id);
    const parent = options?.parentSession;
    const parentJson = parent === undefined ? null : (JSON.stringify(parent) ?? null);
    const info = this.#n.newSession(options?.id === undefined ? null : String(options.id), parentJson);
    this.#resetCaches(1); // the header alone
    const header = (this.#objs[0] = {
      type: "session",
      version: CURRENT_SESSION_VERSION,
      // The id as written: a non-string id that passes the pattern (5, ["a"]) is written as its
      // string (the reference writes the value itself and then refuses to open its own file).
      id: options?.id === undefined ? info.id : String(options.id),
      timestamp: info.timestamp,
      cwd: this.#cwd,
      parentSession: parent,
    });
    this.#mark(header, 0);
    this.#leafId = null;
    this.#leafPos = -1;
    this.#leafEntry = UNKNOWN;
    return info.file ?? undefined;
  }

  // ----- accessors ----------------------------------------------------------------------------

  isPersisted() {
    return this.#persist;
  }
  getCwd() {
    return this.#cwd;
  }
  getSessionDir() {
    return this.#sessionDir;
  }
  usesDefaultSessionDir() {
    return paths.pathsEqual(this.#sessionDir, paths.getDefaultSessionDirPath(this.#cwd));
  }
  getSessionId() {
    const h = this.getHeader();
    return h !== null && typeof h.id === "string" ? h.id : this.#n.sessionId();
  }
  getSessionFile() {
    if (this.#file === UNKNOWN) this.#file = this.#n.sessionFile() ?? undefined;
    return this.#file;
  }
  getHeader() {
    if (this.#headerPos === UNKNOWN) this.#headerPos = this.#n.headerPos();
    const pos = this.#headerPos;
    return pos < 0 ? null : this.#entry(pos);
  }
  getEntryCount() {
    if (this.#entryCount < 0) this.#entryCount = this.#n.entryCount();
    return this.#entryCount;
  }
  getEntries() {
    if (this.#all === null) this.#all = this.#entries(this.#n.entryPositions());
    return this.#all.slice();
  }
  /** The entries after the first `count` of getEntries(), the same objects (an addition). */
  getEntriesSince(count) {
    if (!Number.isInteger(count) || count < 0 || count > NONE) {
      throw sessionError("INVALID_ARGUMENT", `getEntriesSince(count) expects a non-negative integer count, got ${describeValue(count)}`, RangeError);
    }
    const all = this.#all;
    const positions = all === null ? this.#n.entryPositionsSince(count) : null;
    if (all === null ? positions === null : count > all.length) {
      const total = all === null ? this.#n.entryPositions().length : all.length;
      throw sessionError("ENTRY_COUNT_OUT_OF_RANGE", `getEntriesSince(${count}): the session has only ${total} entries`, RangeError);
    }
    return all === null ? this.#entries(positions) : all.slice(count);
  }
  getLeafId() {
    return this.#leafId;
  }
  getLeafEntry() {
    const leaf = this.#leafEntry;
    return leaf !== UNKNOWN ? leaf : this.#findLeafEntry();
  }

  #findLeafEntry() {
    const leaf = this.#leafPos >= 0 ? this.#entry(this.#leafPos) : undefined;
    this.#leafEntry = leaf;
    return leaf;
  }
  getEntry(id) {
    const hit = this.#entryById.get(id);
    if (hit !== undefined) return hit;
    const pos = this.#lookup(id);
    if (pos < 0) return undefined;
    const entry = this.#entry(pos);
    this.#entryById.set(id, entry);
    return entry;
  }
  getChildren(parentId) {
    const key = keyOf(parentId);
    return key === null ? [] : this.#entries(this.#n.children(key));
  }
  getLabel(id) {
    // Not wrapped by the guard (a wrapper would cost more than the lookup): errors of the native
    // part are coded here.
    const labels = this.#labels;
    return labels !== null && typeof id === "string" ? labels.get(id) : this.#findLabel(id);
  }

  #findLabel(id) {
    try {
      if (typeof id === "string") {
        const labels = new Map();
        for (const e of this.#entries(this.#n.labelPositions())) if (typeof e.targetId === "string") labels.set(e.targetId, e.label);
        this.#labels = labels;
        return labels.get(id);
      }
      // Ids of other types (read from a file) are looked up by their key.
      const key = keyOf(id);
      if (key === null) return undefined;
      const pos = this.#n.labelPos(key);
      return pos >= 0 ? this.#entry(pos).label : undefined;
    } catch (err) {
      throw coded(err);
    }
  }
  getSessionName() {
    // pi's footer asks on every frame: the position is kept, the name read from the entry.
    let pos = this.#namePos;
    if (pos === UNKNOWN) pos = this.#namePos = this.#n.sessionNamePos();
    return pos >= 0 ? this.#entry(pos).name?.trim() || undefined : undefined;
  }
  getBranch(fromId) {
    const start = fromId ?? this.#leafId;
    if (!start) return [];
    const ofLeaf = fromId === undefined || fromId === null;
    if (ofLeaf && this.#branch !== null && this.#branchPos === this.#leafPos) return this.#branch.slice();
    const key = keyOf(start);
    if (key === null) return [];
    const path = this.#entries(this.#n.branchPath(key));
    if (ofLeaf) {
      // A copy: the caller owns the array returned.
      this.#branch = path.slice();
      this.#branchPos = this.#leafPos;
    }
    return path;
  }

  // ----- context ------------------------------------------------------------------------------

  buildContextEntries() {
    return this.#entries(this.#n.contextEntries());
  }

  /** Objects for the records a plan (or a page of one) names: its `count` items from `at` on,
   * each with its context edit, and the settings records when `withSettings`. Parsed at once,
   * and only when some are missing (after the first call, none are). */
  #materializePlan(plan, at, count, withSettings) {
    const want = new Uint32Array(count * 2 + 2);
    let w = 0;
    if (withSettings) {
      if (plan[0] !== NONE) want[w++] = plan[0];
      if (plan[1] !== NONE) want[w++] = plan[1];
    }
    for (let i = 0; i < count; i++) {
      const k = at + i * 3;
      want[w++] = plan[k];
      if (plan[k + 1] !== NONE) want[w++] = plan[k + 1];
    }
    const objs = this.#objs;
    for (let k = 0; k < w; k++) {
      if (objs[want[k]] === undefined) {
        this.#entries(want.subarray(k, w));
        break;
      }
    }
  }

  /** Messages (and optionally per-entry items) from the core's projection plan. */
  #project(withEntries) {
    const plan = this.#n.projectionPlan();
    const count = plan[2];
    this.#materializePlan(plan, 3, count, true);
    const objs = this.#objs;
    const { thinkingLevel, model } = ctx.settingsFrom(
      plan[0] === NONE ? undefined : objs[plan[0]],
      plan[1] === NONE ? undefined : objs[plan[1]],
    );
    const messages = [];
    const entries = withEntries ? new Array(count) : null;
    for (let i = 0; i < count; i++) {
      const at = 3 + i * 3;
      const sourceEntry = objs[plan[at]];
      const m = projectItem(sourceEntry, plan[at + 1] === NONE ? undefined : objs[plan[at + 1]], plan[at + 2]);
      for (let k = 0; k < m.length; k++) messages.push(m[k]);
      if (entries !== null) entries[i] = { sourceEntry, messages: m };
    }
    return withEntries ? { entries, messages, thinkingLevel, model } : { messages, thinkingLevel, model };
  }

  buildSessionProjection() {
    return this.#project(true);
  }

  buildSessionContext() {
    return this.#project(false);
  }

  // ----- transcript read model (an addition; see lib/transcript.js) ----------------------------

  /** One page of the active branch's projected context; only the page's entries are parsed. */
  readTranscriptPage(options) {
    const { limit, anchor, backward } = transcript.pageRequest(options, this.#transcriptTag, this.#transcriptEpoch);
    const page = this.#n.projectionPage(anchor === null ? NONE : anchor, limit, backward);
    const total = page[2];
    const start = page[3];
    const count = (page.length - 4) / 3;
    if (anchor !== null && anchor > total) {
      // Not reachable through our own cursors (every change that shortens the transcript resets it).
      throw sessionError("TRANSCRIPT_CURSOR_STALE", `Transcript cursor ${options.before ?? options.after} is past the end of the transcript`);
    }
    this.#transcriptTotal = total;
    this.#materializePlan(page, 4, count, false);
    const objs = this.#objs;
    const entries = new Array(count);
    for (let i = 0; i < count; i++) {
      const at = 4 + i * 3;
      const sourceEntry = objs[page[at]];
      entries[i] = { sourceEntry, messages: projectItem(sourceEntry, page[at + 1] === NONE ? undefined : objs[page[at + 1]], page[at + 2]) };
    }
    const end = start + count;
    return {
      entries,
      before: transcript.cursorOf(this.#transcriptTag, this.#transcriptEpoch, start),
      after: transcript.cursorOf(this.#transcriptTag, this.#transcriptEpoch, end),
      hasBefore: start > 0,
      hasAfter: end < total,
      total,
    };
  }

  /** Call `listener` after each committed append and on each branch or session change. */
  subscribeTranscript(listener) {
    if (typeof listener !== "function") {
      throw sessionError("INVALID_ARGUMENT", "subscribeTranscript(listener) expects a function", TypeError);
    }
    // A wrapper per subscription, so that one function subscribed twice is called twice.
    const subscription = { listener };
    (this.#transcriptListeners ??= new Set()).add(subscription);
    return () => {
      const set = this.#transcriptListeners;
      if (set === null || !set.delete(subscription)) return;
      if (set.size === 0) this.#transcriptListeners = null;
    };
  }

  #transcriptAppended(entry) {
    let total = this.#transcriptTotal;
    if (total >= 0) this.#transcriptTotal = ++total;
    if (this.#transcriptListeners === null) return;
    // The core's count, once: it includes the entry just committed.
    if (total < 0) total = this.#transcriptTotal = this.#n.projectionPage(NONE, 0, true)[2];
    const tag = this.#transcriptTag;
    const epoch = this.#transcriptEpoch;
    this.#emitTranscript({
      type: "append",
      entries: [{ sourceEntry: entry, messages: projectItem(entry, undefined, 0) }],
      before: transcript.cursorOf(tag, epoch, total - 1),
      after: transcript.cursorOf(tag, epoch, total),
      total,
    });
  }

  /** The branch, the session or the projection changed: every cursor given out so far is stale. */
  #transcriptReset(reason) {
    this.#transcriptEpoch++;
    this.#transcriptTotal = -1;
    if (this.#transcriptListeners !== null) this.#emitTranscript({ type: "reset", reason });
  }

  #emitTranscript(event) {
    for (const { listener } of Array.from(this.#transcriptListeners)) {
      try {
        listener(event);
      } catch (err) {
        // The change is committed already: a failing listener must not make it look failed to
        // the caller, nor keep the others from hearing of it, nor end the process. It is reported.
        process.emitWarning("A subscribeTranscript listener threw; the change it was told of stands", {
          type: "TranscriptListenerWarning",
          code: "TRANSCRIPT_LISTENER_THREW",
          detail: String(err?.stack ?? err),
        });
      }
    }
  }

  getTree() {
    // The plan is read, never written, so it is kept until the session changes.
    const generation = this.#n.generation();
    if (this.#treeGeneration !== generation) {
      this.#treePlan = this.#n.treePlan();
      this.#treeGeneration = generation;
    }
    const plan = this.#treePlan;
    let i = 0;
    const rootCount = plan[i++];
    const rootAt = i;
    i += rootCount;
    const nodeCount = plan[i++];
    const nodeAt = i;
    // First pass: which records become nodes (and which label records they show), parsed at once.
    const want = new Uint32Array(nodeCount * 2);
    let w = 0;
    for (let k = 0, j = nodeAt; k < nodeCount; k++) {
      want[w++] = plan[j];
      if (plan[j + 1] !== NONE) want[w++] = plan[j + 1];
      j += 4 + plan[j + 3];
    }
    const objs = this.#objs;
    // Parsed at once, and only when some are missing (after the first call, none are).
    for (let k = 0; k < w; k++) {
      if (objs[want[k]] === undefined) {
        this.#entries(want.subarray(k, w));
        break;
      }
    }
    const nodeAtPos = new Array(this.#n.recordCount());
    for (let k = 0, j = nodeAt; k < nodeCount; k++) {
      const labelEntry = plan[j + 1] === NONE ? undefined : objs[plan[j + 1]];
      nodeAtPos[plan[j]] = { entry: objs[plan[j]], children: null, label: labelEntry?.label, labelTimestamp: labelEntry?.timestamp };
      j += 4 + plan[j + 3];
    }
    // Children arrays are made at their final size (most nodes have one child): pushing into an
    // empty array would allocate room for 17 and make the garbage collector work for it.
    for (let k = 0, j = nodeAt; k < nodeCount; k++) {
      const cc = plan[j + 3];
      const node = nodeAtPos[plan[j]];
      if (cc === 0) node.children = [];
      else if (cc === 1) node.children = [nodeAtPos[plan[j + 4]]];
      else {
        const children = [nodeAtPos[plan[j + 4]], nodeAtPos[plan[j + 5]]];
        for (let c = 2; c < cc; c++) children.push(nodeAtPos[plan[j + 4 + c]]);
        if (plan[j + 2] === 1) children.sort((a, b) => new Date(a.entry.timestamp).getTime() - new Date(b.entry.timestamp).getTime());
        node.children = children;
      }
      j += 4 + cc;
    }
    const roots = new Array(rootCount);
    for (let r = 0; r < rootCount; r++) roots[r] = nodeAtPos[plan[rootAt + r]];
    return roots;
  }

  // ----- appends ------------------------------------------------------------------------------

  _persist(entry) {
    let line;
    try {
      line = JSON.stringify(entry);
    } catch (err) {
      throw withCode(err, "INVALID_ARGUMENT");
    }
    this.#n.persistExternal(line ?? "null");
  }

  /** Make the session durable now: a new session not written yet gets its file (header and
   * every entry so far), then the file is fsynced. true for a persisted session, false for an
   * in-memory one. (An addition: the reference has no flush.) */
  flush() {
    return this.#n.flush();
  }

  /** Release what this manager holds now (descriptors, the lease, native memory, entry caches)
   * instead of when it is garbage-collected. Every later call of any method throws
   * `SESSION_DISPOSED`; a second dispose() does nothing. (An addition.) */
  dispose() {
    this.#transcriptListeners = null;
    this.#n.dispose();
    this.#resetCaches(0);
    this.#trackId = 0;
    this.#leafEntry = UNKNOWN;
    this.#treePlan = null;
    // The methods of a disposed manager are the ones below, which throw: no check on the hot
    // paths of live managers.
    Object.setPrototypeOf(this, DISPOSED);
  }

  /** Exclusive mode: hold the session file's lease (`<file>.lock`) so that no other process writes
   * to it; throws `SESSION_LOCKED` (naming the holder's pid) while another process holds it. */
  setExclusive(on) {
    if (typeof on !== "boolean") throw sessionError("INVALID_ARGUMENT", "setExclusive(on) expects a boolean", TypeError);
    if (on) {
      releaseLocksAtExit();
      this.#warmForget();
    }
    this.#n.setExclusive(on);
  }

  /** Restore mode (an addition): a session directory or file that vanished is made again at the
   * next write instead of failing with ENOENT, and a vanished file is written back whole. */
  setRestoreMissing(on) {
    if (typeof on !== "boolean") throw sessionError("INVALID_ARGUMENT", "setRestoreMissing(on) expects a boolean", TypeError);
    this.#n.setRestoreMissing(on);
  }

  /** fsync after every write of this session (as `PI_SESSION_FSYNC=1` does for all). */
  setFsync(on) {
    if (typeof on !== "boolean") throw sessionError("INVALID_ARGUMENT", "setFsync(on) expects a boolean", TypeError);
    this.#n.setFsync(on);
  }

  appendMessage(message, options) {
    if (options === undefined) return this.#append({ type: "message", id: this.#newId(), parentId: this.#leafId, timestamp: nowIso(), message }).id;
    const how = appendOptions(options);
    const entry = { type: "message", id: how.id ?? this.#newId(), parentId: this.#leafId, timestamp: nowIso(), message };
    return this.#append(entry, undefined, how).id;
  }

  /** A new entry id that no entry has and that is not reserved, reserved for
   * `appendMessage(message, { id })` (an addition). */
  reserveEntryId() {
    return this.#n.reserveEntryId();
  }

  /** Give up a reservation; false when `id` was not reserved (an addition). */
  releaseEntryId(id) {
    if (typeof id !== "string") throw sessionError("INVALID_ENTRY_ID", `releaseEntryId(id) expects a string id, got ${typeof id}`, TypeError);
    return this.#n.releaseEntryId(keyOf(id));
  }

  appendThinkingLevelChange(thinkingLevel) {
    return this.#append({ type: "thinking_level_change", id: this.#newId(), parentId: this.#leafId, timestamp: nowIso(), thinkingLevel }).id;
  }

  appendModelChange(provider, modelId) {
    return this.#append({ type: "model_change", id: this.#newId(), parentId: this.#leafId, timestamp: nowIso(), provider, modelId }).id;
  }

  appendUsage(kind, provider, model, usage, note) {
    return this.#append({
      type: "usage",
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
      kind,
      provider,
      model,
      usage,
      ...(note ? { note } : {}),
    });
  }

  appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, usage, retainedTail) {
    const timestamp = nowIso();
    const systemMessage = ctx.foldSystemMessages(this.#project(false).messages);
    const id = this.#newId();
    const entry = {
      type: "compaction",
      id,
      parentId: this.#leafId,
      timestamp,
      summary,
      firstKeptEntryId: firstKeptEntryId ?? id,
      tokensBefore,
      details,
      usage,
      fromHook,
      ...(systemMessage ? { systemMessage: { ...systemMessage, timestamp: new Date(timestamp).getTime() } } : {}),
    };
    if (Array.isArray(retainedTail)) entry.retainedTail = retainedTail;
    const selfKept = firstKeptEntryId == null;
    return this.#append(entry, (newId) => {
      if (selfKept) entry.firstKeptEntryId = newId;
    }).id;
  }

  appendCustomEntry(customType, data) {
    return this.#append({ type: "custom", customType, data, id: this.#newId(), parentId: this.#leafId, timestamp: nowIso() }).id;
  }

  appendSessionInfo(name) {
    let sanitized;
    try {
      sanitized = name.replace(/[\r\n]+/g, " ").trim();
    } catch (err) {
      throw withCode(err, "INVALID_ARGUMENT");
    }
    return this.#append({ type: "session_info", id: this.#newId(), parentId: this.#leafId, timestamp: nowIso(), name: sanitized }).id;
  }

  appendCustomMessageEntry(customType, content, display, details) {
    return this.#append({
      type: "custom_message",
      customType,
      content,
      display,
      details,
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
    }).id;
  }

  appendContextEdit(targetId, replacement) {
    if (
      replacement !== null &&
      (typeof replacement !== "object" ||
        !("content" in replacement) ||
        (typeof replacement.content !== "string" && !Array.isArray(replacement.content)))
    ) {
      throw sessionError("INVALID_REPLACEMENT", "Context edit replacement must be null or contain string/array content");
    }
    const pos = this.#lookup(targetId);
    if (pos < 0) throw sessionError("ENTRY_NOT_FOUND", `Entry ${targetId} not found`);
    if (!this.getBranch().some((e) => e.id === targetId)) {
      throw sessionError("NOT_ON_ACTIVE_BRANCH", `Entry ${targetId} is not on the active branch`);
    }
    const target = this.#entry(pos);
    const role = target.type === "message" ? target.message.role : "custom";
    const editable = target.type === "custom_message" || (target.type === "message" && (role === "user" || role === "assistant" || role === "toolResult"));
    if (!editable) throw sessionError("NOT_EDITABLE", `Entry ${targetId} does not contribute editable model content`);
    const normalized =
      replacement !== null && (role === "assistant" || role === "toolResult") && typeof replacement.content === "string"
        ? { content: [{ type: "text", text: replacement.content }] }
        : replacement;
    return this.#append({
      type: "context_edit",
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
      targetId,
      replacement: normalized,
    }).id;
  }

  appendLabelChange(targetId, label) {
    if (this.#lookup(targetId) < 0) throw sessionError("ENTRY_NOT_FOUND", `Entry ${targetId} not found`);
    return this.#append({ type: "label", id: this.#newId(), parentId: this.#leafId, timestamp: nowIso(), targetId, label }).id;
  }

  // ----- branching ----------------------------------------------------------------------------

  branch(branchFromId) {
    const pos = this.#lookup(branchFromId);
    if (pos < 0) throw sessionError("ENTRY_NOT_FOUND", `Entry ${branchFromId} not found`);
    this.#n.setLeafKey(keyOf(branchFromId));
    this.#leafId = branchFromId;
    this.#leafPos = pos; // the leaf is the record the id resolves to
    this.#leafEntry = UNKNOWN;
    this.#transcriptReset("branch");
  }

  resetLeaf() {
    this.#n.resetLeaf();
    this.#leafId = null;
    this.#leafPos = -1;
    this.#leafEntry = UNKNOWN;
    this.#transcriptReset("branch");
  }

  branchWithSummary(branchFromId, summary, details, fromHook, usage) {
    if (branchFromId !== null && this.#lookup(branchFromId) < 0) {
      throw sessionError("ENTRY_NOT_FOUND", `Entry ${branchFromId} not found`);
    }
    const fromId = this.#leafId ?? "root";
    // The leaf moves first (so after a failed write it rests on branchFromId, as in the reference).
    this.#n.setLeafKey(branchFromId === null ? null : keyOf(branchFromId));
    this.#leafId = branchFromId;
    this.#leafPos = this.#n.leafPos();
    this.#leafEntry = UNKNOWN;
    // Readers start over at the new leaf, then hear of the summary as an append.
    this.#transcriptReset("branch");
    return this.#append({
      type: "branch_summary",
      id: this.#newId(),
      parentId: branchFromId,
      timestamp: nowIso(),
      fromId,
      summary,
      details,
      usage,
      fromHook,
    }).id;
  }

  /** How many entries `pruneBranch(entryId)` would delete: the entry and everything under it. */
  countSubtree(entryId) {
    if (this.#lookup(entryId) < 0) throw sessionError("ENTRY_NOT_FOUND", `Entry ${entryId} not found`);
    return this.#n.countSubtree(keyOf(entryId), String(entryId));
  }

  /** Delete an abandoned side branch: `entryId`, everything under it and the labels naming them
   * (not in the reference; see README "Pruning a branch"). The active path is refused. A session
   * on disk is rewritten atomically; one not yet written stays in memory. Surviving entry objects
   * stay the same objects (a re-parented one gets its new `parentId` / `firstKeptEntryId`). */
  pruneBranch(entryId) {
    if (this.#lookup(entryId) < 0) throw sessionError("ENTRY_NOT_FOUND", `Entry ${entryId} not found`);
    const objs = this.#objs;
    const r = this.#n.pruneBranch(keyOf(entryId), String(entryId));
    const kept = r.kept;
    this.#resetCaches(kept.length);
    for (let i = 0; i < kept.length; i++) {
      const o = objs[kept[i]];
      if (o !== undefined) {
        this.#objs[i] = o;
        this.#mark(o, i);
      }
    }
    for (let k = 0; k < r.editPos.length; k++) {
      const o = this.#objs[r.editPos[k]];
      if (o !== null && typeof o === "object") o[r.editMember[k]] = JSON.parse(r.editJson[k]);
    }
    this.#syncLeaf();
    return { removed: r.removed, labelsDropped: r.labelsDropped, bytesBefore: r.bytesBefore, bytesAfter: r.bytesAfter, written: r.written };
  }

  createBranchedSession(leafId) {
    const start = leafId ?? this.#leafId;
    const key = start ? keyOf(start) : null;
    // The new entries are shallow copies of the old objects (nested values shared), as the
    // reference keeps them. That is only observable for entries already turned into objects: when
    // the whole path is, we copy them; otherwise the new entries are parsed lazily from the lines
    // the core wrote (equal values), which spares parsing a huge session just to copy it.
    const pathPos = key === null ? new Uint32Array(0) : this.#n.branchPath(key);
    const objs = this.#objs;
    // An in-memory session's entries may be held by JS alone (see skeletonOf): its path is always
    // copied from objects.
    const path = pathPos.every((p) => objs[p] !== undefined) ? Array.from(pathPos, (p) => objs[p]) : this.#persist ? [] : this.#entries(pathPos);
    const oldLabels = [];
    for (const e of path) {
      if (e.type === "label") continue;
      const pos = this.#n.labelPos(keyOf(e.id) ?? "null");
      if (pos >= 0) oldLabels.push(this.#entry(pos));
    }
    const file = this.#n.createBranchedSession(key, `${leafId}`);
    this.#resetCaches();
    let pos = 1;
    let parentId = null;
    const replacement = new Map();
    let pending = [];
    for (const entry of path) {
      if (entry.type === "label") {
        pending.push(entry.id);
        continue;
      }
      for (const id of pending) replacement.set(id, entry.id);
      pending = [];
      this.#objs[pos++] =
        entry.type === "compaction"
          ? {
              ...entry,
              parentId,
              firstKeptEntryId:
                entry.firstKeptEntryId === entry.id ? entry.id : (replacement.get(entry.firstKeptEntryId) ?? entry.firstKeptEntryId),
            }
          : { ...entry, parentId };
      parentId = entry.id;
    }
    // Re-created label records carry the original label values.
    const total = oldLabels.length > 0 ? this.#n.recordCount() : 0;
    for (; pos < total; pos++) {
      const label = this.#entry(pos);
      const original = oldLabels.find((l) => l.targetId === label.targetId);
      if (original !== undefined) {
        label.label = original.label;
        this.#origin?.positions.delete(label); // no longer what its line says, maybe
      }
    }
    this.#syncLeaf();
    const header = this.getHeader();
    if (header !== null && !this.#persist) header.parentSession = undefined;
    else if (header !== null && !("parentSession" in header)) header.parentSession = undefined;
    return file ?? undefined;
  }

  // ----- factories ----------------------------------------------------------------------------

  static create(cwd, sessionDir, options) {
    const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDir(cwd);
    return new SessionManager(cwd, dir, undefined, true, options);
  }

  static open(filePath, sessionDir, cwdOverride) {
    const resolved = paths.resolvePath(filePath);
    let headerCwd;
    if (cwdOverride === undefined && fs.existsSync(resolved)) {
      const scan = native.scanHeader(resolved);
      if (scan.kind === "header") headerCwd = scan.cwd ?? undefined;
      else if (scan.kind === "limit") {
        // The bounded scan is only a shortcut; a full read stays authoritative.
        // The header is the first `session` record (records may lead it, see README).
        const first = JSON.parse(native.loadEntriesJson(resolved)).find((e) => e?.type === "session");
        if (first?.type === "session" && typeof first.cwd === "string") headerCwd = first.cwd;
      }
    }
    const cwd = cwdOverride ?? headerCwd ?? process.cwd();
    const dir = sessionDir ? paths.normalizePath(sessionDir) : path.resolve(resolved, "..");
    return new SessionManager(cwd, dir, resolved, true);
  }

  static continueRecent(cwd, sessionDir) {
    const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDir(cwd);
    const filterCwd = sessionDir !== undefined && !paths.pathsEqual(dir, paths.getDefaultSessionDirPath(cwd));
    const mostRecent = findMostRecentSession(dir, filterCwd ? cwd : undefined);
    return new SessionManager(cwd, dir, mostRecent ?? undefined, true);
  }

  static inMemory(cwd = process.cwd(), options, entries) {
    return new SessionManager(cwd, "", undefined, false, options, entries);
  }

  static forkFrom(sourcePath, targetCwd, sessionDir, options) {
    const source = paths.resolvePath(sourcePath);
    const target = paths.resolvePath(targetCwd);
    const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDirPath(target);
    // The id is checked by the core after the source is read and the directory exists, like the
    // reference.
    const id = options?.id === undefined ? null : String(options.id);
    return new SessionManager(target, dir, PRIVATE, true, { source, id });
  }

  static findById(cwd, id, sessionDir) {
    const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDir(cwd);
    const filterCwd = sessionDir !== undefined && !paths.pathsEqual(dir, paths.getDefaultSessionDirPath(cwd));
    if (typeof id !== "string") return undefined;
    const found = native.findById(dir, id, filterCwd ? paths.resolvePath(cwd) : null);
    return found === null ? undefined : path.join(dir, path.basename(found));
  }

  static list(cwd, sessionDir, onProgress, signal) {
    return listing.list(cwd, sessionDir, onProgress, signal, paths);
  }

  static listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
    return listing.listAll(sessionDirOrOnProgress, onProgressOrSignal, signal);
  }
}

/** appendMessage's options `{ id?, flush? }`, checked: `id` a non-empty string (a reserved id, which
 * the core checks), `flush` a boolean. */
function appendOptions(options) {
  if (options === null || typeof options !== "object") {
    throw sessionError("INVALID_ARGUMENT", "appendMessage(message, options) expects options to be an object", TypeError);
  }
  const { id, flush } = options;
  if (id !== undefined && (typeof id !== "string" || id.length === 0)) {
    throw sessionError("INVALID_ENTRY_ID", `appendMessage options.id must be a reserved entry id (a non-empty string), got ${describeValue(id)}`, TypeError);
  }
  if (flush !== undefined && typeof flush !== "boolean") {
    throw sessionError("INVALID_ARGUMENT", "appendMessage options.flush must be a boolean", TypeError);
  }
  return { id, flush: flush === true };
}

function describeValue(v) {
  try {
    return typeof v === "string" ? JSON.stringify(v) : typeof v === "symbol" || (typeof v === "object" && v !== null) ? typeof v : String(v);
  } catch {
    return typeof v;
  }
}

/** A stored message, or its content-null copy (the common path of projection, kept inline). */
/** The messages one plan item contributes (flags & 1: a compaction after the leading one, which
 * contributes none): the one projection rule of buildSessionContext, buildSessionProjection and
 * the transcript read model. */
function projectItem(sourceEntry, edit, flags) {
  if (flags & 1) return [];
  if (edit === undefined && sourceEntry.type === "message") return messageOf(sourceEntry);
  return ctx.projectContextEntry(sourceEntry, edit);
}

function messageOf(entry) {
  const message = entry.message;
  if (message.content != null) return [message];
  return ctx.sessionEntryToContextMessages(entry);
}

function findMostRecentSession(sessionDir, cwd) {
  const dir = paths.normalizePath(sessionDir);
  const resolvedCwd = cwd ? paths.resolvePath(cwd) : null;
  const found = native.findMostRecent(dir, resolvedCwd);
  return found === null ? null : path.join(dir, path.basename(found));
}

function loadEntriesFromFile(filePath) {
  return JSON.parse(native.loadEntriesJson(paths.normalizePath(filePath)));
}

function parseSessionEntries(content) {
  const entries = [];
  for (const line of content.trim().split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line));
    } catch {
      // Malformed lines are skipped, as the reference does.
    }
  }
  return entries;
}

/** Migrate entry objects to the current version in place (v1 ids/parents, v3 role rename). */
function migrateSessionEntries(entries) {
  const header = entries.find((e) => e.type === "session");
  const version = header?.version ?? 1;
  if (version >= CURRENT_SESSION_VERSION) return;
  if (version < 2) {
    let prevId = null;
    for (const entry of entries) {
      if (entry.type === "session") {
        entry.version = 2;
        continue;
      }
      entry.id = randomEntryId();
      entry.parentId = prevId;
      prevId = entry.id;
      if (entry.type === "compaction" && typeof entry.firstKeptEntryIndex === "number") {
        const target = entries[entry.firstKeptEntryIndex];
        if (target && target.type !== "session") entry.firstKeptEntryId = target.id;
        delete entry.firstKeptEntryIndex;
      }
    }
  }
  if (version < 3) {
    for (const entry of entries) {
      if (entry.type === "session") {
        entry.version = 3;
        continue;
      }
      if (entry.type === "message" && entry.message && entry.message.role === "hookMessage") entry.message.role = "custom";
    }
  }
}

// Errors raised by JavaScript itself on bad input get a `code` too (see guard.js).
guardErrors(SessionManager);

/** The prototype of a disposed manager: still a SessionManager (instanceof holds), every method
 * throws SESSION_DISPOSED, dispose() does nothing. */
const DISPOSED = Object.create(SessionManager.prototype);
for (const name of Object.getOwnPropertyNames(SessionManager.prototype)) {
  if (name === "constructor" || typeof Object.getOwnPropertyDescriptor(SessionManager.prototype, name).value !== "function") continue;
  const method =
    name === "dispose"
      ? { dispose() {} }.dispose
      : {
          [name]() {
            throw sessionError("SESSION_DISPOSED", `SessionManager.${name}() called after dispose()`);
          },
        }[name];
  Object.defineProperty(DISPOSED, name, { value: method, writable: true, configurable: true, enumerable: false });
}

module.exports = {
  CURRENT_SESSION_VERSION,
  MAX_SESSION_TRANSCRIPT_PAGE_SIZE: transcript.MAX_SESSION_TRANSCRIPT_PAGE_SIZE,
  SessionManager,
  assertValidSessionId,
  findMostRecentSession,
  loadEntriesFromFile,
  parseSessionEntries,
  migrateSessionEntries,
  PRIVATE,
};
