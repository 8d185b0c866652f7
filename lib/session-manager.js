"use strict";
// The SessionManager class: a thin JS shell over the Rust core (`NativeSession`).
//
// The core owns the session: records, id index, leaf, labels, persistence and every structural
// computation (paths, context selection, tree shape). This shell keeps what only JS can (see
// lib/session-state.js): the entry objects, built here on append (so `JSON.stringify` writes
// exactly what the reference writes) or parsed lazily from the core's lines, and cached so the
// same entry is always the same object; and the message objects of contexts, built from them.
//
// The class is the facade; each concept has its module:
//   session-state.js    the entry objects, the leaf and the hot getters' answers, and the three
//                       changes that keep them true (replaced, leafMoved, appended)
//   origins.js          which session and record each entry object was made from
//   wire.js             ids as keys, lines as objects, the tree and context-plan formats
//                       decoded (getTree), UTF-8, skeletons
//   appends.js          appending an entry (ids, timestamps, retries), appendMessage's options,
//                       what appendContextEdit's checks read
//   load.js             a session's records from a file, a new session or caller's entries
//   branching.js        pruneBranch and createBranchedSession's entry objects
//   session-context.js  buildSessionContext and buildSessionProjection, from the core's context plan
//   transcript.js       the transcript read model's pages and cursors
//   transcript-feed.js  the transcript's subscribers (append and reset events)
//   idle-parse.js       parsing a resumed session while the event loop is idle
//   factories.js        what each factory makes before the manager exists, handed to the constructor
//   store.js, migrate.js  the module's functions (the core decides where sessions live)
const native = require("../native.js");
const { sessionError, withCode } = require("./errors.js");
const ctx = require("./context.js");
const listing = require("./listing.js");
const { releaseLocksAtExit } = require("./locks.js");
const { guardErrors, coded } = require("./error-boundary.js");
const { disposedPrototype } = require("./disposed.js");
const transcript = require("./transcript.js");
const { NONE, keyOf, decodeTree } = require("./wire.js");
const { nowIso, randomEntryId: newId, appendEntry, appendOptions, contextEditReplacement, describeValue } = require("./appends.js");
const load = require("./load.js");
const branching = require("./branching.js");
const sessionContext = require("./session-context.js");
const idle = require("./idle-parse.js");
const store = require("./store.js");
const factories = require("./factories.js");
const { parseSessionEntries, migrateSessionEntries } = require("./migrate.js");

class SessionManager {
  /** The core's session. @type {import("../native.js").NativeSession} */
  #core;
  /** What JS keeps of it (entry objects, leaf, cached answers): the one place of such state. */
  #state;
  // Fixed when the manager is made.
  /** @type {string} */
  #cwd;
  /** @type {string} */
  #sessionDir;
  /** @type {boolean} */
  #persist;

  /** Private, as the reference's: managers come from the static factories, each of which makes
   * its parts in lib/factories.js and hands them over here, the one way in. @param {unknown} made */
  constructor(made) {
    if (!(made instanceof factories.Made)) {
      throw sessionError("INVALID_ARGUMENT", "SessionManager's constructor is private: use SessionManager.create, open, continueRecent, inMemory or forkFrom", TypeError);
    }
    this.#core = made.core;
    this.#state = made.state;
    this.#cwd = made.cwd;
    this.#sessionDir = made.sessionDir;
    this.#persist = made.persist;
  }

  // ----- loading ------------------------------------------------------------------------------

  setSessionFile(sessionFile) {
    try {
      load.loadFile(this.#state, sessionFile);
    } finally {
      this.#state.feed.settle();
    }
  }

  newSession(options) {
    const file = load.startSession(this.#state, this.#cwd, options);
    this.#state.feed.settle();
    return file;
  }

  // ----- accessors ----------------------------------------------------------------------------
  // The hot ones are field reads of what session-state.js keeps (as the reference's are).

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
    return this.#core.usesDefaultSessionDir();
  }
  getSessionId() {
    const h = this.getHeader();
    return h !== null && typeof h.id === "string" ? h.id : this.#core.sessionId();
  }
  getSessionFile() {
    return this.#state.sessionFile();
  }
  getHeader() {
    return this.#state.header();
  }
  getEntryCount() {
    return this.#state.entryCount();
  }
  getEntries() {
    return this.#state.allEntries().slice();
  }
  /** The entries after the first `count` of getEntries(), the same objects (an addition).
   * @param {number} count */
  getEntriesSince(count) {
    if (!Number.isInteger(count) || count < 0 || count > NONE) {
      throw sessionError("INVALID_ARGUMENT", `getEntriesSince(count) expects a non-negative integer count, got ${describeValue(count)}`, RangeError);
    }
    return this.#state.entriesSince(count);
  }
  getLeafId() {
    return this.#state.leafId;
  }
  getLeafEntry() {
    const s = this.#state;
    return s.leafPos !== NONE ? s.entry(s.leafPos) : undefined;
  }
  getEntry(id) {
    const s = this.#state;
    const hit = s.entryById.get(id);
    if (hit !== undefined) return hit;
    const pos = s.lookup(id);
    if (pos === NONE) return undefined;
    const entry = s.entry(pos);
    s.entryById.set(id, entry);
    return entry;
  }
  getChildren(parentId) {
    const key = keyOf(parentId);
    return key === null ? [] : this.#state.entries(this.#core.children(key));
  }
  getLabel(id) {
    return this.#state.label(id);
  }
  getSessionName() {
    return this.#state.sessionName();
  }
  getBranch(fromId) {
    return this.#state.branch(fromId);
  }

  // ----- context ------------------------------------------------------------------------------

  buildContextEntries() {
    return this.#state.entries(this.#core.contextEntries());
  }

  buildSessionProjection() {
    return sessionContext.project(this.#state, true);
  }

  buildSessionContext() {
    return sessionContext.project(this.#state, false);
  }

  // ----- transcript read model (an addition; see lib/transcript.js) ----------------------------

  /** One page of the active branch, root to leaf, as sessionEntryToContextMessages projects
   * each entry; only the page's entries are parsed. @param {any} options */
  readTranscriptPage(options) {
    return transcript.readPage(this.#state, options);
  }

  /** Call `listener` after each committed append that adds items, and with the newest page
   * (`resetPageSize` items) on each branch or session change. @param {any} listener @param {any} [options] */
  subscribeTranscript(listener, options) {
    return this.#state.feed.subscribe(listener, options);
  }

  getTree() {
    const s = this.#state;
    return decodeTree(s.treePlan(), s);
  }

  // ----- modes and lifetime -------------------------------------------------------------------

  _persist(entry) {
    let line;
    try {
      line = JSON.stringify(entry);
    } catch (err) {
      throw withCode(err, "INVALID_ARGUMENT");
    }
    this.#core.persistExternal(line ?? "null");
  }

  /** Make the session durable now: a new session not written yet gets its file (header and
   * every entry so far), then the file is fsynced. true for a persisted session, false for an
   * in-memory one. (An addition: the reference has no flush.) */
  flush() {
    return this.#core.flush();
  }

  /** Release what this manager holds now (descriptors, the lease, native memory, entry caches)
   * instead of when it is garbage-collected. Every later call of any method throws
   * `SESSION_DISPOSED`; a second dispose() does nothing. (An addition.) */
  dispose() {
    const s = this.#state;
    s.feed.listeners = null;
    this.#core.dispose();
    s.replaced(0, null, NONE);
    s.trackId = 0;
    // The methods of a disposed manager are DISPOSED's (disposed.js), which throw: no check on
    // the hot paths of live managers.
    Object.setPrototypeOf(this, DISPOSED);
  }

  /** Exclusive mode: hold the session file's lease (`<file>.lock`) so that no other process writes
   * to it; throws `SESSION_LOCKED` (naming the holder's pid) while another process holds it. */
  setExclusive(on) {
    if (typeof on !== "boolean") throw sessionError("INVALID_ARGUMENT", "setExclusive(on) expects a boolean", TypeError);
    if (on) {
      releaseLocksAtExit();
      idle.forget(this.#state);
    }
    this.#core.setExclusive(on);
  }

  /** Restore mode (an addition): a session directory or file that vanished is made again at the
   * next write instead of failing with ENOENT, and a vanished file is written back whole. */
  setRestoreMissing(on) {
    if (typeof on !== "boolean") throw sessionError("INVALID_ARGUMENT", "setRestoreMissing(on) expects a boolean", TypeError);
    this.#core.setRestoreMissing(on);
  }

  /** fsync after every write of this session (as `PI_SESSION_FSYNC=1` does for all). */
  setFsync(on) {
    if (typeof on !== "boolean") throw sessionError("INVALID_ARGUMENT", "setFsync(on) expects a boolean", TypeError);
    this.#core.setFsync(on);
  }

  // ----- appends ------------------------------------------------------------------------------

  // Each entry is written with the reference's members in its order (JSON.stringify keeps it).

  /** Append `entry` (see appends.js). @template {{ type: string, id: string }} E
   * @param {E} entry @param {(id: string) => void} [retarget] @param {import("./appends.js").AppendHow} [how] */
  #add(entry, retarget, how) {
    return appendEntry(this.#state, this.#persist, entry, retarget, how);
  }

  appendMessage(message, options) {
    if (options === undefined) return this.#add({ type: "message", id: newId(), parentId: this.#state.leafId, timestamp: nowIso(), message }).id;
    const how = appendOptions(options);
    return this.#add({ type: "message", id: how.id ?? newId(), parentId: this.#state.leafId, timestamp: nowIso(), message }, undefined, how).id;
  }

  /** Reserve an entry id for `appendMessage(message, { id })` (an addition): `id` when given
   * (refused when an entry has it or it is reserved), else a new one no entry has.
   * @param {unknown} [id] */
  reserveEntryId(id) {
    if (id === undefined) return this.#core.reserveEntryId();
    // The core checks the form (INVALID_ENTRY_ID); a value that is no string has no key.
    this.#core.reserveNamedEntryId(typeof id === "string" ? keyOf(id) : null, describeValue(id));
    return id;
  }

  /** Give up a reservation; false when `id` was not reserved (an addition). @param {unknown} id */
  releaseEntryId(id) {
    if (typeof id !== "string") throw sessionError("INVALID_ENTRY_ID", `releaseEntryId(id) expects a string id, got ${typeof id}`, TypeError);
    return this.#core.releaseEntryId(/** @type {string} */ (keyOf(id)));
  }

  appendThinkingLevelChange(thinkingLevel) {
    return this.#add({ type: "thinking_level_change", id: newId(), parentId: this.#state.leafId, timestamp: nowIso(), thinkingLevel }).id;
  }

  appendModelChange(provider, modelId) {
    return this.#add({ type: "model_change", id: newId(), parentId: this.#state.leafId, timestamp: nowIso(), provider, modelId }).id;
  }

  /** (Returns the entry, not its id, as the reference does.) */
  appendUsage(kind, provider, model, usage, note) {
    const head = { type: "usage", id: newId(), parentId: this.#state.leafId, timestamp: nowIso() };
    return this.#add({ ...head, kind, provider, model, usage, ...(note ? { note } : {}) });
  }

  appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, usage, retainedTail) {
    const s = this.#state;
    const timestamp = nowIso();
    const systemMessage = ctx.foldSystemMessages(sessionContext.project(s, false).messages);
    const id = newId();
    /** @type {Record<string, any> & { type: string, id: string }} */
    const entry = {
      type: "compaction",
      id,
      parentId: s.leafId,
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
    // Retain-none (`?? id`, and again after a retried id) is set here, not in the core: this is
    // where the entry object (the reference's members, in its order, handed back as is) and its id are made.
    const selfKept = firstKeptEntryId == null;
    return this.#add(entry, (newId) => {
      if (selfKept) entry.firstKeptEntryId = newId;
    }).id;
  }

  appendCustomEntry(customType, data) {
    return this.#add({ type: "custom", customType, data, id: newId(), parentId: this.#state.leafId, timestamp: nowIso() }).id;
  }

  appendSessionInfo(name) {
    // JS string semantics (a caller's `replace`, `trim`'s whitespace), as the reference cleans the name.
    let sanitized;
    try {
      sanitized = name.replace(/[\r\n]+/g, " ").trim();
    } catch (err) {
      throw withCode(err, "INVALID_ARGUMENT");
    }
    return this.#add({ type: "session_info", id: newId(), parentId: this.#state.leafId, timestamp: nowIso(), name: sanitized }).id;
  }

  appendCustomMessageEntry(customType, content, display, details) {
    const head = { type: "custom_message", customType, content, display, details };
    return this.#add({ ...head, id: newId(), parentId: this.#state.leafId, timestamp: nowIso() }).id;
  }

  appendContextEdit(targetId, replacement) {
    const normalized = contextEditReplacement(this.#state, targetId, replacement);
    return this.#add({ type: "context_edit", id: newId(), parentId: this.#state.leafId, timestamp: nowIso(), targetId, replacement: normalized }).id;
  }

  appendLabelChange(targetId, label) {
    if (this.#state.lookup(targetId) === NONE) throw notFound(targetId);
    return this.#add({ type: "label", id: newId(), parentId: this.#state.leafId, timestamp: nowIso(), targetId, label }).id;
  }

  // ----- branching ----------------------------------------------------------------------------

  branch(branchFromId) {
    const s = this.#state;
    // (The core refuses an unknown id; `${id}` throws for a Symbol, as `Entry ${id} not found` does.)
    const pos = this.#core.branch(keyOf(branchFromId), `${branchFromId}`);
    s.leafMoved(branchFromId, pos); // the leaf is the record the id resolves to
  }

  resetLeaf() {
    const s = this.#state;
    this.#core.resetLeaf();
    s.leafMoved(null, NONE);
  }

  branchWithSummary(branchFromId, summary, details, fromHook, usage) {
    const s = this.#state;
    if (branchFromId !== null && s.lookup(branchFromId) === NONE) throw notFound(branchFromId);
    const fromId = s.leafId ?? "root";
    // The leaf moves first (so after a failed write it rests on branchFromId, as in the reference).
    this.#core.setLeafKey(branchFromId === null ? null : keyOf(branchFromId));
    // Readers start over at the new leaf, then hear of the summary as an append.
    s.leafMoved(branchFromId, this.#core.leafPos());
    const head = { type: "branch_summary", id: newId(), parentId: branchFromId, timestamp: nowIso() };
    return this.#add({ ...head, fromId, summary, details, usage, fromHook }).id;
  }

  /** How many entries `pruneBranch(entryId)` would delete: the entry and everything under it;
   * 0 for an unknown id. @param {unknown} entryId */
  countSubtree(entryId) {
    return this.#core.countSubtree(keyOf(entryId));
  }

  /** Delete an abandoned side branch: `entryId`, everything under it and the labels naming them
   * (not in the reference; see README "Pruning a branch"). The active path is refused. A session
   * on disk is rewritten atomically; one not yet written stays in memory. Surviving entry objects
   * stay the same objects (a re-parented one gets its new `parentId` / `firstKeptEntryId`).
   * @param {unknown} entryId */
  pruneBranch(entryId) {
    const result = branching.pruneBranch(this.#state, entryId);
    this.#state.feed.settle();
    return result;
  }

  createBranchedSession(leafId) {
    const file = branching.createBranchedSession(this.#state, this.#persist, leafId, leafId ?? this.#state.leafId);
    this.#state.feed.settle();
    return file ?? undefined;
  }

  // ----- factories (see factories.js) --------------------------------------------------------

  static create(cwd, sessionDir, options) {
    return new SessionManager(factories.create(cwd, sessionDir, options));
  }

  static open(filePath, sessionDir, cwdOverride) {
    return new SessionManager(factories.open(filePath, sessionDir, cwdOverride));
  }

  static continueRecent(cwd, sessionDir) {
    return new SessionManager(factories.continueRecent(cwd, sessionDir));
  }

  static inMemory(cwd = process.cwd(), options, entries) {
    return new SessionManager(factories.inMemory(cwd, options, entries));
  }

  static forkFrom(sourcePath, targetCwd, sessionDir, options) {
    return new SessionManager(factories.forkFrom(sourcePath, targetCwd, sessionDir, options));
  }

  static findById(cwd, id, sessionDir) {
    return store.findById(cwd, id, sessionDir);
  }

  static list(cwd, sessionDir, onProgress, signal) {
    return listing.list(cwd, sessionDir, onProgress, signal);
  }

  static listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
    return listing.listAll(sessionDirOrOnProgress, onProgressOrSignal, signal);
  }
}

/** `Entry <id> not found` for the checks made before an entry is built (appendLabelChange,
 * branchWithSummary): the core's appends take the finished line and check no target. */
function notFound(id) {
  return sessionError("ENTRY_NOT_FOUND", `Entry ${id} not found`);
}

// Errors raised by JavaScript itself on bad input get a `code` too (see error-boundary.js).
guardErrors(SessionManager);

/** The prototype of a disposed manager (see dispose()). */
const DISPOSED = disposedPrototype(SessionManager);

module.exports = {
  CURRENT_SESSION_VERSION: native.CURRENT_SESSION_VERSION,
  MAX_SESSION_TRANSCRIPT_PAGE_SIZE: transcript.MAX_SESSION_TRANSCRIPT_PAGE_SIZE,
  SessionManager,
  assertValidSessionId: store.assertValidSessionId,
  findMostRecentSession: store.findMostRecentSession,
  loadEntriesFromFile: store.loadEntriesFromFile,
  parseSessionEntries,
  migrateSessionEntries,
};
