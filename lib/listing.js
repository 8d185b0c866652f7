"use strict";
// SessionManager.list / listAll. The Rust core reads and summarizes the files off the JS thread
// (a chunk at a time, so progress flows while it works); this module keeps the reference's order,
// progress protocol, cwd filtering and abort semantics, and turns the summaries into SessionInfo.
const fs = require("node:fs");
const path = require("node:path");
const native = require("../native.js");
const { normalizePath, resolvePath, pathsEqual, getSessionsDir, getAgentDir } = require("./paths.js");

/** Most results taken per native call: the first call takes one so progress starts early. */
const BATCH = 64;
const LIST_PUBLISH_INTERVAL = 10;
const LIST_ALL_PUBLISH_INTERVAL = 100;

/** SessionInfo from the core's summary: `meta` JSON plus the two texts, which arrive as strings. */
function finishInfo(metaText, firstMessage, allMessagesText) {
  const r = JSON.parse(metaText);
  let activity = r.act;
  for (const raw of r.actPending) {
    const t = new Date(raw).getTime();
    if (!Number.isNaN(t)) activity = Math.max(activity ?? 0, t);
  }
  const headerTime = typeof r.created === "string" ? new Date(r.created).getTime() : NaN;
  const modified =
    typeof activity === "number" && activity > 0
      ? new Date(activity)
      : !Number.isNaN(headerTime)
        ? new Date(headerTime)
        : new Date(Math.round(r.mtimeMs));
  return {
    path: r.path,
    id: r.id,
    cwd: r.cwd,
    name: r.name,
    parentSessionPath: r.parentSessionPath,
    created: new Date(r.created),
    modified,
    messageCount: r.messageCount,
    firstMessage: firstMessage || "(no messages)",
    allMessagesText,
  };
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
 * The listing cache (`<agentDir>/.pi-session-native/list-cache`, the file `pi-sessions list`
 * uses too: `list_cache::file_in` in the core): summaries of unchanged files are reused between
 * runs. Not a `*.jsonl` in the agent root, which the stock agent reads in full on every start
 * (README "Listing cache"). Set PI_SESSION_LIST_CACHE=0 to read every file every time.
 */
const CACHE_DIR = ".pi-session-native";
const CACHE_FILE = "list-cache";

function cacheFile() {
  if (process.env.PI_SESSION_LIST_CACHE === "0") return null;
  try {
    return path.join(getAgentDir(), CACHE_DIR, CACHE_FILE);
  } catch {
    return null;
  }
}

/** Summarize `files` ({path, mtimeMs?}) in order, calling onLoaded(info|null, index) per file. */
async function summarizeAll(files, onLoaded, signal) {
  const results = new Array(files.length);
  if (files.length === 0) return results;
  const run = native.SummaryRun.start(
    files.map((f) => f.path),
    files.map((f) => f.mtimeMs ?? null),
    cacheFile(),
  );
  try {
    let i = 0;
    while (i < files.length) {
      signal?.throwIfAborted();
      const batch = await run.next(i === 0 ? 1 : BATCH);
      if (batch.length === 0) break;
      for (let j = 0; j < batch.length; j += 3, i++) {
        signal?.throwIfAborted();
        const info = batch[j] === null ? null : finishInfo(batch[j], batch[j + 1], batch[j + 2]);
        results[i] = info;
        onLoaded(info, i);
      }
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

async function listSessionsFromDir(dir, onProgress, signal) {
  signal?.throwIfAborted();
  if (!fs.existsSync(dir)) return [];
  try {
    const names = await native.listDirNames(dir);
    const prefix = joinPrefix(dir);
    const files = names.map((name) => ({ path: prefix + name }));
    const total = files.length;
    const partial = onProgress ? new SortedPartial() : null;
    let loaded = 0;
    const results = await summarizeAll(
      files,
      (info) => {
        loaded++;
        if (!onProgress) return;
        if (info) partial.add(info);
        const publish = loaded === 1 || loaded % LIST_PUBLISH_INTERVAL === 0 || loaded === total;
        onProgress(loaded, total, publish ? partial.snapshot() : undefined);
      },
      signal,
    );
    return results.filter((info) => info !== null);
  } catch {
    signal?.throwIfAborted();
    return [];
  }
}

function cwdMatches(cwd, resolvedCwd) {
  return cwd !== undefined && cwd !== "" && pathsEqual(resolvePath(cwd), resolvedCwd);
}

async function list(cwd, sessionDir, onProgress, signal, defaults) {
  const dir = sessionDir ? normalizePath(sessionDir) : defaults.getDefaultSessionDir(cwd);
  const filterCwd = sessionDir !== undefined && !pathsEqual(dir, defaults.getDefaultSessionDirPath(cwd));
  const resolvedCwd = resolvePath(cwd);
  // Resolving a cwd costs microseconds and progress re-filters every snapshot: decide once per cwd.
  const decided = new Map();
  const include = (s) => {
    if (!filterCwd) return true;
    let ok = decided.get(s.cwd);
    if (ok === undefined) {
      ok = cwdMatches(s.cwd, resolvedCwd);
      decided.set(s.cwd, ok);
    }
    return ok;
  };
  const progress = onProgress ? (loaded, total, partial) => onProgress(loaded, total, partial?.filter(include)) : undefined;
  const sessions = (await listSessionsFromDir(dir, progress, signal)).filter(include);
  return sortInfos(sessions);
}

async function listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
  const customDir = typeof sessionDirOrOnProgress === "string" ? normalizePath(sessionDirOrOnProgress) : undefined;
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
  const root = getSessionsDir();
  try {
    if (!fs.existsSync(root)) return [];
    const prefixes = new Map();
    const candidates = (await native.listAllCandidates(root)).map((c) => {
      let prefix = prefixes.get(c.dir);
      if (prefix === undefined) prefixes.set(c.dir, (prefix = joinPrefix(path.join(root, c.dir))));
      return { path: prefix + c.file, mtimeMs: c.mtimeMs ?? undefined };
    });
    const total = candidates.length;
    let loaded = 0;
    let firstDone = false;
    const partial = progress ? new SortedPartial() : null;
    const results = await summarizeAll(
      candidates,
      (info, index) => {
        loaded++;
        if (!progress) return;
        if (index === 0) firstDone = true;
        if (info) partial.add(info);
        const publish = firstDone && (index === 0 || loaded % LIST_ALL_PUBLISH_INTERVAL === 0 || loaded === total);
        progress(loaded, total, publish ? partial.snapshot() : undefined);
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
