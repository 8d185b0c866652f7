// Shared helpers for the behaviour tests (node built-ins only).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TARGET } from "./target.mjs";

export const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const FILE_NAME_RE =
  /^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)_([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\.jsonl$/;
export const UUIDV7_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const ENTRY_ID_RE = /^[0-9a-f]{8}$/;
export const INVALID_ID_MESSAGE =
  "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";

/** A fresh temp dir (real path), removed after the test. */
export function tmp(t, prefix = "pi-beh-") {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Set (or delete, for undefined) environment variables for the duration of a test. */
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

/** Point PI_CODING_AGENT_DIR at a fresh temp dir for this test; returns it. */
export function agentDir(t) {
  const dir = tmp(t, "pi-agent-");
  withEnv(t, { PI_CODING_AGENT_DIR: dir });
  return dir;
}

/** chdir for the duration of a test. */
export function withCwd(t, dir) {
  const previous = process.cwd();
  process.chdir(dir);
  t.after(() => process.chdir(previous));
}

export const user = (text = "hello", timestamp = 1000) => ({ role: "user", content: text, timestamp });
export const assistant = (text = "hi", extra = {}) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  provider: "prov",
  model: "mod",
  stopReason: "stop",
  timestamp: 2000,
  ...extra,
});
export const system = (content = "You are helpful.", extra = {}) => ({ role: "system", content, timestamp: 500, ...extra });

export function readText(file) {
  return fs.readFileSync(file, "utf8");
}

/** Physical lines of a file that must end with "\n". */
export function fileLines(file) {
  const text = readText(file);
  assert.ok(text.endsWith("\n"), "file must end with a newline");
  return text.slice(0, -1).split("\n");
}

export function fileRecords(file) {
  return fileLines(file).map((line) => JSON.parse(line));
}

/** Write records (objects are JSON.stringify'd, strings written verbatim) one per line, with a final "\n". */
export function writeJsonl(file, records, { trailingNewline = true } = {}) {
  const text = records.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n");
  fs.writeFileSync(file, trailingNewline ? `${text}\n` : text);
  return file;
}

export function jsonlFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort();
}

export function header(id = "sess-1", extra = {}) {
  return { type: "session", version: 3, id, timestamp: "2025-01-01T00:00:00.000Z", cwd: "/project", ...extra };
}

export function msgEntry(id, parentId, message, timestamp = "2025-01-01T00:00:01.000Z") {
  return { type: "message", id, parentId, timestamp, message };
}

/** Expect a synchronous throw with an exact message (and, on our target, a non-empty string code). */
export function throwsMessage(fn, message) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error, `expected a throw with message: ${message}`);
  assert.equal(error.message, message);
  if (TARGET === "ours") {
    assert.equal(typeof error.code, "string");
    assert.ok(error.code.length > 0, "error.code must be non-empty");
  }
  return error;
}

/** Expect a filesystem error; on the reference its code is `referenceCode`, on ours any non-empty code. */
export function throwsFsError(fn, referenceCode) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error, `expected a ${referenceCode} error`);
  assert.equal(typeof error.code, "string");
  assert.ok(error.code.length > 0);
  if (TARGET === "reference") assert.equal(error.code, referenceCode);
  return error;
}

/** Observable in-memory state used to check rollbacks. */
export function snapshot(sm) {
  return {
    leaf: sm.getLeafId(),
    ids: sm.getEntries().map((e) => e.id),
    count: sm.getEntryCount(),
  };
}

/** 41-bit counter of a UUIDv7 (12 rand_a bits + top 29 bits of rand_b). */
export function uuidv7Counter(id) {
  const big = BigInt(`0x${id.replace(/-/g, "")}`);
  const randA = (big >> 64n) & 0xfffn;
  const randB = big & ((1n << 62n) - 1n);
  return (randA << 29n) | (randB >> 33n);
}

export function uuidv7Millis(id) {
  return Number(BigInt(`0x${id.replace(/-/g, "").slice(0, 12)}`));
}

/** Split `before` off the start of `after`, asserting it is a prefix; returns the rest. */
export function appended(before, after) {
  assert.ok(after.startsWith(before), "file must only grow at the end");
  return after.slice(before.length);
}
