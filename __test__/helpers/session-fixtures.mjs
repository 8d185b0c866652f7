// Small builders for session records and session files, shared by the behaviour tests.
// Only node built-ins; nothing here depends on the implementation under test.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** A fresh temporary directory, removed when the test ends. */
export function tempDir(t, prefix = "pi-sn-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t?.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Point PI_CODING_AGENT_DIR at `dir` (a fresh temp dir when omitted) for the rest of the test;
 * the previous value is restored afterwards. Returns the directory.
 */
export function useAgentDir(t, dir) {
  const agentDir = dir ?? tempDir(t, "pi-agent-");
  const previous = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = agentDir;
  t.after(() => {
    if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = previous;
  });
  return agentDir;
}

/** The default per-cwd directory the reference derives (§2.2), without creating it. */
export function defaultSessionDirFor(agentDir, cwd) {
  const resolvedCwd = path.resolve(cwd);
  const encoded = `--${resolvedCwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  return path.join(path.resolve(agentDir), "sessions", encoded);
}

/** ISO timestamp for a millisecond value. */
export const iso = (ms) => new Date(ms).toISOString();

/** A base instant; tests add offsets to it. */
export const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 600);

/** A v3 session header. */
export function header(fields = {}) {
  return {
    type: "session",
    version: 3,
    id: "sess-1",
    timestamp: iso(T0),
    cwd: "/tmp/project",
    ...fields,
  };
}

/** Generic entry. */
export function entry(type, id, parentId, fields = {}, timestamp = iso(T0)) {
  return { type, id, parentId, timestamp, ...fields };
}

/** A `message` entry. */
export function msgEntry(id, parentId, message, timestamp = iso(T0)) {
  return { type: "message", id, parentId, timestamp, message };
}

export function user(content, timestamp = 1) {
  return { role: "user", content, timestamp };
}

export function assistant(text, fields = {}) {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    provider: "prov",
    model: "mod",
    timestamp: 2,
    ...fields,
  };
}

export function toolResult(text, fields = {}) {
  return {
    role: "toolResult",
    toolCallId: "call-1",
    toolName: "read",
    content: [{ type: "text", text }],
    isError: false,
    timestamp: 3,
    ...fields,
  };
}

export function system(content, fields = {}) {
  return { role: "system", content, timestamp: 4, ...fields };
}

/** A compaction entry. */
export function compaction(id, parentId, fields = {}, timestamp = iso(T0)) {
  return {
    type: "compaction",
    id,
    parentId,
    timestamp,
    summary: `summary of ${id}`,
    tokensBefore: 100,
    ...fields,
  };
}

/**
 * Chain records linearly: each whose parentId is undefined gets parentId = previous id
 * (first → null). Returns the same objects.
 */
export function chain(records) {
  let prev = null;
  for (const r of records) {
    if (r.parentId === undefined) r.parentId = prev;
    prev = r.id;
  }
  return records;
}

/** Write records (objects are JSON-serialized, strings written verbatim) as JSONL. */
export function writeJsonl(file, records, { trailingNewline = true } = {}) {
  const lines = records.map((r) => (typeof r === "string" ? r : JSON.stringify(r)));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, lines.join("\n") + (trailingNewline && lines.length ? "\n" : ""));
  return file;
}

/** Write a session file `<dir>/<name>` from a header plus entries. */
export function writeSession(dir, name, hdr, entries = []) {
  return writeJsonl(path.join(dir, name), [hdr, ...entries]);
}

/** Set a file's mtime (and atime) to the given ms value. */
export function setMtime(file, ms) {
  const d = new Date(ms);
  fs.utimesSync(file, d, d);
}

/** Read a JSONL file back into parsed records. */
export function readJsonl(file) {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/** A progress callback that records its calls. */
export function progressRecorder() {
  const calls = [];
  const fn = (loaded, total, partial) => {
    calls.push([loaded, total, partial]);
  };
  return { fn, calls };
}

/** Pre-aborted signal (optionally with a custom reason). */
export function abortedSignal(reason) {
  const ac = new AbortController();
  if (arguments.length) ac.abort(reason);
  else ac.abort();
  return ac.signal;
}

export const HEX8 = /^[0-9a-f]{8}$/;
export const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
