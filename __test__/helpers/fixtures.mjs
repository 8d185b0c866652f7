// What the JS tests share: a temp dir, environment and cwd for one test, builders for session
// records and messages, reading and writing JSONL files, the formats the tests match against,
// and assertions on errors. Node built-ins only: nothing here depends on the implementation
// under test (except throwsMessage/throwsFsError, which are stricter on ours, see TARGET).
// (The session files under fixtures/ are another thing: fixtures.test.mjs checks them.)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TARGET } from "./target.mjs";

// ------------------------------------------------------------ temp dir, environment, cwd

/** A seeded xorshift: `next(n)` is in [0, n), the same sequence for the same seed (kill tests pick
 * their moments with it). @param {number} seed */
export function rng(seed) {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

/** A fresh temporary directory (its real path), removed when the test ends. */
export function tempDir(t, prefix = "pi-test-") {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  t?.after(() => removeTempDir(dir));
  return dir;
}

/**
 * Remove a test's temp dir. On Windows a name stays until its last handle closes, and a manager
 * the GC has not collected yet still holds its session file: there the dir is left to the OS's
 * temp cleanup rather than failing a test that passed. Elsewhere any failure is the test's.
 */
export function removeTempDir(dir) {
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: process.platform === "win32" ? 3 : 0 });
  } catch (error) {
    if (process.platform !== "win32" || !["EBUSY", "ENOTEMPTY", "EPERM"].includes(error.code)) throw error;
  }
}

/** Set (or delete, for undefined) environment variables for the rest of the test. */
export function withEnv(t, vars) {
  const saved = {};
  for (const [key, value] of Object.entries(vars)) {
    saved[key] = Object.prototype.hasOwnProperty.call(process.env, key) ? process.env[key] : undefined;
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  t.after(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
}

/**
 * Point PI_CODING_AGENT_DIR at `dir` (a fresh temp dir when omitted) for the rest of the test;
 * the previous value is restored afterwards. Returns the directory.
 */
export function useAgentDir(t, dir) {
  const agentDir = dir ?? tempDir(t, "pi-agent-");
  withEnv(t, { PI_CODING_AGENT_DIR: agentDir });
  return agentDir;
}

/** chdir for the rest of the test. */
export function withCwd(t, dir) {
  const previous = process.cwd();
  process.chdir(dir);
  t.after(() => process.chdir(previous));
}

/**
 * Whether os.homedir() follows HOME set at run time. Node's reads $HOME on every call. Bun's keeps
 * the home the process started with: its process.env writes do not reach the C environment, which
 * both its os.homedir() and our addon's Rust side read.
 */
/** The variable os.homedir() reads first: USERPROFILE on Windows, HOME elsewhere. */
export const HOME_VAR = process.platform === "win32" ? "USERPROFILE" : "HOME";

export const HOME_FOLLOWS_ENV = (() => {
  const saved = process.env[HOME_VAR];
  try {
    process.env[HOME_VAR] = path.join(os.tmpdir(), "pi-home-probe");
    return os.homedir() === process.env[HOME_VAR];
  } finally {
    if (saved === undefined) delete process.env[HOME_VAR];
    else process.env[HOME_VAR] = saved;
  }
})();

/**
 * The home directory for the rest of the test, for `~` to expand to: a fresh temp dir set as HOME
 * where the runtime lets HOME change at run time; else (Bun) the home the process started with,
 * which must be the temp dir scripts/test-bun.js made for it (PI_TEST_HOME), never a real one.
 */
export function useHome(t) {
  if (HOME_FOLLOWS_ENV) {
    const home = tempDir(t, "pi-home-");
    withEnv(t, { [HOME_VAR]: home });
    return home;
  }
  const home = os.homedir();
  if (!process.env.PI_TEST_HOME || process.env.PI_TEST_HOME !== home) {
    throw new Error(
      `this runtime keeps the HOME it started with (${home}) whatever process.env.HOME says: run it with a temp HOME, as scripts/test-bun.js does (PI_TEST_HOME)`,
    );
  }
  return home;
}

/** The default per-cwd directory the reference derives (docs/behaviour.md, "Where sessions live"), without creating it. */
export function defaultSessionDirFor(agentDir, cwd) {
  const resolvedCwd = path.resolve(cwd);
  const encoded = `--${resolvedCwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  return path.join(path.resolve(agentDir), "sessions", encoded);
}

// ------------------------------------------------------------ formats

export const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A session file name, `<timestamp>_<session id>.jsonl`. */
export const FILE_NAME_RE =
  /^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)_([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\.jsonl$/;
export const UUIDV7_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** An entry id: 8 lowercase hex digits. */
export const ENTRY_ID_RE = /^[0-9a-f]{8}$/;
export const INVALID_ID_MESSAGE =
  "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";

/** 41-bit counter of a UUIDv7 (12 rand_a bits + top 29 bits of rand_b). */
export function uuidv7Counter(id) {
  const big = BigInt(`0x${id.replace(/-/g, "")}`);
  const randA = (big >> 64n) & 0xfffn;
  const randB = big & ((1n << 62n) - 1n);
  return (randA << 29n) | (randB >> 33n);
}

/** The Unix milliseconds of a UUIDv7. */
export function uuidv7Millis(id) {
  return Number(BigInt(`0x${id.replace(/-/g, "").slice(0, 12)}`));
}

// ------------------------------------------------------------ records and messages

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

export function user(content = "hello", timestamp = 1) {
  return { role: "user", content, timestamp };
}

export function assistant(text = "hi", fields = {}) {
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

export function system(content = "You are helpful.", fields = {}) {
  return { role: "system", content, timestamp: 4, ...fields };
}

// ------------------------------------------------------------ files

/** Write records (objects are JSON-serialized, strings written verbatim) as JSONL, one per line. */
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

/** Sets `file`'s mtime to `nsec` nanoseconds after the second `sec` (since 1970) with `touch`:
 * utimes takes seconds as one double, which cannot hold nanoseconds of today's times. False
 * where that cannot be done, or the file system keeps coarser times (the caller skips).
 * @param {string} file @param {number} sec @param {number} nsec */
export function setMtimeNs(file, sec, nsec) {
  const stamp = new Date(sec * 1000).toISOString().replace(".000Z", `.${String(nsec).padStart(9, "0")}Z`);
  try {
    execFileSync("touch", ["-m", "-d", stamp, file], { stdio: "ignore" });
  } catch {
    return false;
  }
  return fs.statSync(file, { bigint: true }).mtimeNs === BigInt(sec) * 1_000_000_000n + BigInt(nsec);
}

export function readText(file) {
  return fs.readFileSync(file, "utf8");
}

/** Physical lines of a file that must end with "\n". */
export function fileLines(file) {
  const text = readText(file);
  assert.ok(text.endsWith("\n"), "file must end with a newline");
  return text.slice(0, -1).split("\n");
}

/** Read a JSONL file back into parsed records (blank lines skipped). */
export function readJsonl(file) {
  return readText(file)
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/** The `.jsonl` file names in a directory, sorted ([] when it does not exist). */
export function jsonlFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort();
}

/** Split `before` off the start of `after`, asserting it is a prefix; returns the rest. */
export function appended(before, after) {
  assert.ok(after.startsWith(before), "file must only grow at the end");
  return after.slice(before.length);
}

// ------------------------------------------------------------ state, callbacks, errors

/** Observable in-memory state used to check rollbacks. */
export function snapshot(sm) {
  return {
    leaf: sm.getLeafId(),
    ids: sm.getEntries().map((e) => e.id),
    count: sm.getEntryCount(),
  };
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

/**
 * A persisted session whose file exists: created in a temp dir with `SessionManager` (ours or the
 * reference) and flushed by one user message (`text`). `lastLine()` reads the file's last line now.
 * @returns {{ sm: any, dir: string, file: string, first: string, lastLine: () => string }}
 */
export function flushedSession(t, SessionManager, { cwd = "/proj", text = "start" } = {}) {
  const dir = tempDir(t);
  const sm = SessionManager.create(cwd, dir);
  const first = sm.appendMessage(user(text));
  const file = sm.getSessionFile();
  return { sm, dir, file, first, lastLine: () => readText(file).trimEnd().split("\n").at(-1) };
}

/** What a failed call must leave as it was: the entries' ids, the leaf, the count and the file. */
export function stateOf(sm) {
  const file = sm.getSessionFile();
  return {
    ids: sm.getEntries().map((e) => e.id),
    leaf: sm.getLeafId(),
    count: sm.getEntryCount(),
    text: file !== undefined && fs.existsSync(file) ? readText(file) : null,
  };
}

/** What the file of `sm` must hold: its header and every entry, one JSON line each. */
export function sessionText(sm) {
  return [sm.getHeader(), ...sm.getEntries()].map((e) => `${JSON.stringify(e)}\n`).join("");
}

/** What `fn` throws, failing the test (expected `what`) when it returns. */
export function thrownBy(fn, what = "a throw") {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return assert.fail(`expected ${what}`);
}

/** Expect a synchronous throw with an exact message (and, on our target, a non-empty string code). */
export function throwsMessage(fn, message) {
  const error = thrownBy(fn, `a throw with message: ${message}`);
  assert.equal(error.message, message);
  if (TARGET === "ours") {
    assert.equal(typeof error.code, "string");
    assert.ok(error.code.length > 0, "error.code must be non-empty");
  }
  return error;
}

/** Expect a filesystem error; on the reference its code is `referenceCode`, on ours any non-empty code. */
export function throwsFsError(fn, referenceCode) {
  const error = thrownBy(fn, `a ${referenceCode} error`);
  assert.equal(typeof error.code, "string");
  assert.ok(error.code.length > 0);
  if (TARGET === "reference") assert.equal(error.code, referenceCode);
  return error;
}

/** Expect a synchronous throw of an instance of `Ctor` whose `code` is `code`. */
export function throwsCode(fn, code, Ctor = Error) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof Ctor, `expected ${Ctor.name}, got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}
