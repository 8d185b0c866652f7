"use strict";
// SessionManager.list / listAll. The Rust core reads and summarizes the files off the JS thread
// (a chunk at a time, so progress flows while it works), and decides where they are and which a
// listing of a shared directory keeps (their cwd); this module keeps the reference's order,
// progress protocol and abort semantics, and turns the summaries into SessionInfo.
const fs = require("node:fs");
const path = require("node:path");
const native = require("../native.js");
const { eachSummary } = require("./wire.js");
const { NAMES_SORTED } = require("./store.js");

/** Most results taken per native call: the first call takes one so progress starts early. */
const BATCH = 64;
const LIST_PUBLISH_INTERVAL = 10;
const LIST_ALL_PUBLISH_INTERVAL = 100;
/** Listings of more files than this pace their partial lists by time (PartialPacer). */
const PACE_ABOVE_TOTAL = 200;
const PACE_MIN_MS = 100;
const PACE_CONSUMER_FACTOR = 4;

/**
 * SessionInfo from the core's summary: its fields (src/wire.rs `summary_info`, parsed) plus the
 * two texts, which arrive as strings. The core applies the "modified" rule
 * (crates/pi-session-core/src/listing/summary.rs `SummaryInfo::modified_by`) and sends `modified`;
 * only when a date needs JavaScript's own `Date` parsing (an entry or header timestamp that is not
 * strict ISO) it sends the rule's ingredients instead, and the same rule is applied here with `Date`.
 */
function finishInfo(r, firstMessage, allMessagesText) {
  return {
    path: r.path,
    id: r.id,
    cwd: r.cwd,
    name: r.name,
    parentSessionPath: r.parentSessionPath,
    created: new Date(r.created),
    modified: r.modified !== undefined ? new Date(r.modified) : modifiedByDate(r),
    messageCount: r.messageCount,
    firstMessage: firstMessage || "(no messages)",
    allMessagesText,
  };
}

/**
 * The "modified" rule where the core could not read a date (see finishInfo): a twin of the core's
 * `SummaryInfo::modified_by`, which must stay here because only JavaScript's `Date` parses the
 * dates it is for (V8's lenient formats). `rule-twins.test.mjs` holds the two to the same
 * answers: each case once with strict dates (the core decides) and once with the same instants
 * in loose spellings (this decides).
 */
function modifiedByDate(r) {
  let activity = r.act;
  for (const raw of r.actPending) {
    const t = new Date(raw).getTime();
    if (!Number.isNaN(t)) activity = Math.max(activity ?? 0, t);
  }
  const headerTime = typeof r.created === "string" ? new Date(r.created).getTime() : NaN;
  return typeof activity === "number" && activity > 0
    ? new Date(activity)
    : !Number.isNaN(headerTime)
      ? new Date(headerTime)
      : new Date(Math.round(r.mtimeMs));
}

const byModifiedDesc = (a, b) => b.modified.getTime() - a.modified.getTime();

function sortInfos(sessions) {
  return sessions.sort(byModifiedDesc);
}

/**
 * The infos loaded so far, kept sorted as they arrive (stable: an info goes after those it ties
 * with), so each progress report is a copy instead of a sort.
 */
class SortedPartial {
  items = [];
  arrived = [];
  /** An invalid date makes the comparator inconsistent: then sort as the reference does. */
  invalid = false;
  add(info) {
    const t = info.modified.getTime();
    this.arrived.push(info);
    if (Number.isNaN(t)) this.invalid = true;
    if (this.invalid) return;
    const items = this.items;
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (items[mid].modified.getTime() >= t) lo = mid + 1;
      else hi = mid;
    }
    items.splice(lo, 0, info);
  }
  snapshot() {
    return this.invalid ? sortInfos(this.arrived.slice()) : this.items.slice();
  }
}

/**
 * Which progress calls hand over the partial list. The reference does it at fixed counts (the
 * first file, every 10th (list) / 100th (listAll), the last). Each one costs the consumer work in
 * proportion to the sessions so far (pi's /resume picker rebuilds its tree and resolves every
 * path), so with a store that delivers a thousand summaries in a blink those calls were nearly
 * all the time the picker took. Up to PACE_ABOVE_TOTAL files the reference's counts are kept.
 * Above, the first and the last call still hand one over; in between, only the last result of a
 * native batch does, and only once PACE_MIN_MS, or PACE_CONSUMER_FACTOR times what the previous
 * hand-over took the consumer if that is longer, have passed since that hand-over ended. Every
 * file still gets its own progress call, and a partial list is always complete so far and sorted.
 */
class PartialPacer {
  constructor(total) {
    this.paced = total > PACE_ABOVE_TOTAL;
    this.nextAt = 0;
  }
  /** Whether a call that is neither the first nor the last hands the list over. */
  due(loaded, interval, batchEnd) {
    if (!this.paced) return loaded % interval === 0;
    return batchEnd && performance.now() >= this.nextAt;
  }
  /** Runs the consumer's call, then sets when the next hand-over may be. */
  handOver(call) {
    const start = performance.now();
    try {
      call();
    } finally {
      const end = performance.now();
      this.nextAt = end + Math.max(PACE_MIN_MS, PACE_CONSUMER_FACTOR * (end - start));
    }
  }
}

/**
 * The listing cache (`<agentDir>/.pi-session-native/list-cache`, the file `pi-sessions list`
 * uses too): summaries of unchanged files are reused between runs. Not a `*.jsonl` in the agent
 * root, which the stock agent reads in full on every start (README "Listing cache"). Its place is
 * the core's (`listing::cache::file_in`, through `native.listCacheFile`). Set
 * PI_SESSION_LIST_CACHE=0 to read every file every time.
 */
function cacheFile() {
  if (process.env.PI_SESSION_LIST_CACHE === "0") return null;
  try {
    return native.listCacheFile(native.agentDir());
  } catch {
    return null;
  }
}

/**
 * Summarize `files` ({path, mtimeMs?}) in order, calling onLoaded(info|null, index, batchEnd) per
 * file; batchEnd is true for the last file of what one native call returned. With `keepCwd` (a
 * resolved cwd), the infos of sessions of other cwds are added to `elsewhere`.
 * @param {{ path: string, mtimeMs?: number }[]} files @param {Function} onLoaded
 * @param {AbortSignal | undefined} signal @param {string | null} [keepCwd] @param {Set<object>} [elsewhere]
 */
async function summarizeAll(files, onLoaded, signal, keepCwd = null, elsewhere) {
  const results = new Array(files.length);
  if (files.length === 0) return results;
  const run = native.SummaryRun.start(
    files.map((f) => f.path),
    files.map((f) => f.mtimeMs ?? null),
    cacheFile(),
    keepCwd,
  );
  try {
    let i = 0;
    while (i < files.length) {
      signal?.throwIfAborted();
      const batch = await run.next(i === 0 ? 1 : BATCH);
      if (batch.length === 0) break;
      eachSummary(batch, (text, first, all, last) => {
        signal?.throwIfAborted();
        /** @type {object | null} */
        let info = null;
        if (text !== null) {
          const r = JSON.parse(text);
          info = finishInfo(r, first, all);
          if (r.elsewhere) elsewhere?.add(info);
        }
        results[i] = info;
        onLoaded(info, i++, last);
      });
    }
    signal?.throwIfAborted();
    // Written back before the listing returns, never after it (callers may remove the dir).
    await run.finish();
  } finally {
    run.cancel();
  }
  return results;
}

/**
 * `path.join(dir, name)` is `prefix + name` for any plain file name (no separators, not `.`/`..`),
 * and readdir only yields such names: join once instead of thousands of times.
 */
function joinPrefix(dir) {
  return path.join(dir, "x").slice(0, -1);
}

/** @param {string} dir @param {Function | undefined} onProgress @param {AbortSignal | undefined} signal
 * @param {string | null} [keepCwd] @param {Set<object>} [elsewhere] */
async function listSessionsFromDir(dir, onProgress, signal, keepCwd = null, elsewhere) {
  signal?.throwIfAborted();
  if (!fs.existsSync(dir)) return [];
  try {
    const names = await native.listDirNames(dir);
    const prefix = joinPrefix(dir);
    const files = names.map((name) => ({ path: prefix + name }));
    const total = files.length;
    const partial = onProgress ? new SortedPartial() : null;
    const pacer = new PartialPacer(total);
    let loaded = 0;
    const results = await summarizeAll(
      files,
      (info, _index, batchEnd) => {
        loaded++;
        if (!onProgress || partial === null) return;
        if (info) partial.add(info);
        const publish = loaded === 1 || loaded === total || pacer.due(loaded, LIST_PUBLISH_INTERVAL, batchEnd);
        if (!publish) onProgress(loaded, total, undefined);
        else pacer.handOver(() => onProgress(loaded, total, partial.snapshot()));
      },
      signal,
      keepCwd,
      elsewhere,
    );
    return results.filter((info) => info !== null);
  } catch {
    signal?.throwIfAborted();
    return [];
  }
}

async function list(cwd, sessionDir, onProgress, signal) {
  // The core's place: the dir (the cwd's default one made), and whether it is shared, when only
  // this cwd's sessions are listed (the core marks the others).
  const place = native.sessionPlace(cwd, sessionDir || null, true);
  /** @type {Set<object>} */
  const elsewhere = new Set();
  const include = (s) => !elsewhere.has(s);
  const progress = onProgress ? (loaded, total, partial) => onProgress(loaded, total, partial?.filter(include)) : undefined;
  const sessions = (await listSessionsFromDir(place.dir, progress, signal, place.shared ? place.cwd : null, elsewhere)).filter(include);
  return sortInfos(sessions);
}

async function listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
  const customDir = typeof sessionDirOrOnProgress === "string" ? native.normalizePath(sessionDirOrOnProgress) : undefined;
  const progress =
    typeof sessionDirOrOnProgress === "function"
      ? sessionDirOrOnProgress
      : typeof onProgressOrSignal === "function"
        ? onProgressOrSignal
        : undefined;
  const abortSignal =
    typeof sessionDirOrOnProgress === "string" || typeof onProgressOrSignal === "function" ? signal : (onProgressOrSignal ?? signal);
  abortSignal?.throwIfAborted();
  if (customDir) return sortInfos(await listSessionsFromDir(customDir, progress, abortSignal));
  const root = native.sessionsRoot();
  try {
    if (!fs.existsSync(root)) return [];
    const prefixes = new Map();
    const candidates = (await native.listAllCandidates(root, NAMES_SORTED)).map((c) => {
      let prefix = prefixes.get(c.dir);
      if (prefix === undefined) prefixes.set(c.dir, (prefix = joinPrefix(path.join(root, c.dir))));
      return { path: prefix + c.file, mtimeMs: c.mtimeMs ?? undefined };
    });
    const total = candidates.length;
    let loaded = 0;
    let firstDone = false;
    const partial = progress ? new SortedPartial() : null;
    const pacer = new PartialPacer(total);
    const results = await summarizeAll(
      candidates,
      (info, index, batchEnd) => {
        loaded++;
        if (!progress || partial === null) return;
        if (index === 0) firstDone = true;
        if (info) partial.add(info);
        const publish =
          firstDone && (index === 0 || loaded === total || pacer.due(loaded, LIST_ALL_PUBLISH_INTERVAL, batchEnd));
        if (!publish) progress(loaded, total, undefined);
        else pacer.handOver(() => progress(loaded, total, partial.snapshot()));
      },
      abortSignal,
    );
    return sortInfos(results.filter((info) => info !== null));
  } catch {
    abortSignal?.throwIfAborted();
    return [];
  }
}

module.exports = { list, listAll };
