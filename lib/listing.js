"use strict";
// SessionManager.list / listAll. The Rust core reads and summarizes the files off the JS thread
// (a chunk at a time, so progress flows while it works); this module keeps the reference's order,
// progress protocol, cwd filtering and abort semantics, and turns the summaries into SessionInfo.
const fs = require("node:fs");
const path = require("node:path");
const native = require("../native.js");
const { normalizePath, resolvePath, pathsEqual, getSessionsDir, getAgentDir } = require("./paths.js");

/** Files summarized per native call: small enough for steady progress, large enough to amortize.
 * With the cache most files are answered without reading them, so chunks can be larger. */
const CHUNK = 16;
const CACHED_CHUNK = 128;
const LIST_PUBLISH_INTERVAL = 10;
const LIST_ALL_PUBLISH_INTERVAL = 100;

/** SessionInfo from the core's summary JSON. Dates are made here because only JS parses them. */
function finishInfo(text) {
  const r = JSON.parse(text);
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
    firstMessage: r.firstMessage || "(no messages)",
    allMessagesText: r.allMessagesText,
  };
}

function sortInfos(sessions) {
  return sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/**
 * The listing cache (`<agentDir>/session-list-cache.jsonl`): summaries of unchanged files are
 * reused between runs. Set PI_SESSION_LIST_CACHE=0 to read every file every time.
 */
function openCache() {
  if (process.env.PI_SESSION_LIST_CACHE === "0") return null;
  try {
    return native.ListCacheHandle.open(path.join(getAgentDir(), "session-list-cache.jsonl"));
  } catch {
    return null;
  }
}

/** Summarize `files` ({path, mtimeMs?}) in order, calling onLoaded(info|null, index) per file. */
async function summarizeAll(files, onLoaded, signal) {
  const results = new Array(files.length);
  const cache = files.length > 0 ? openCache() : null;
  try {
    await summarizeChunks(files, results, cache, onLoaded, signal);
  } finally {
    cache?.save();
  }
  return results;
}

async function summarizeChunks(files, results, cache, onLoaded, signal) {
  for (let i = 0, step = CHUNK; i < files.length; i += step) {
    // The first chunk stays small so the first progress call comes early.
    step = i === 0 || cache === null ? CHUNK : CACHED_CHUNK;
    signal?.throwIfAborted();
    const chunk = files.slice(i, i + step);
    const paths = chunk.map((f) => f.path);
    const raw =
      cache !== null
        ? await native.summarizeFilesCached(cache, paths)
        : await native.summarizeFiles(
            paths,
            chunk.map((f) => f.mtimeMs ?? null),
          );
    for (let j = 0; j < raw.length; j++) {
      signal?.throwIfAborted();
      const info = raw[j] === null ? null : finishInfo(raw[j]);
      results[i + j] = info;
      onLoaded(info, i + j);
    }
  }
  signal?.throwIfAborted();
}

async function listSessionsFromDir(dir, onProgress, signal) {
  signal?.throwIfAborted();
  if (!fs.existsSync(dir)) return [];
  try {
    const files = native.listDirNames(dir).map((name) => ({ path: path.join(dir, name) }));
    const total = files.length;
    const partial = [];
    let loaded = 0;
    const results = await summarizeAll(
      files,
      (info) => {
        loaded++;
        if (info) partial.push(info);
        const publish = loaded === 1 || loaded % LIST_PUBLISH_INTERVAL === 0 || loaded === total;
        onProgress?.(loaded, total, publish ? sortInfos([...partial]) : undefined);
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
  const include = (s) => !filterCwd || cwdMatches(s.cwd, resolvedCwd);
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
    const candidates = native.listAllCandidates(root).map((c) => ({
      path: path.join(path.join(root, c.dir), c.file),
      mtimeMs: c.mtimeMs ?? undefined,
    }));
    const total = candidates.length;
    let loaded = 0;
    let firstDone = false;
    const partial = [];
    const results = await summarizeAll(
      candidates,
      (info, index) => {
        loaded++;
        if (index === 0) firstDone = true;
        if (info) partial.push(info);
        const publish = firstDone && (index === 0 || loaded % LIST_ALL_PUBLISH_INTERVAL === 0 || loaded === total);
        progress?.(loaded, total, publish ? sortInfos([...partial]) : undefined);
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
