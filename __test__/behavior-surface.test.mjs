// docs/behaviour.md, "Module surface".
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget } from "./helpers/target.mjs";
import {
  INVALID_ID_MESSAGE,
  assistant,
  header,
  msgEntry,
  tempDir,
  throwsMessage,
  user,
  writeJsonl,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;

// ---------------------------------------------------------------- exports

test("CURRENT_SESSION_VERSION is the number 3", () => {
  assert.equal(M.CURRENT_SESSION_VERSION, 3);
  assert.equal(typeof M.CURRENT_SESSION_VERSION, "number");
});

test("assertValidSessionId accepts alphanumeric ids with inner '-', '_' and '.', including a single character", () => {
  for (const id of ["1", "a", "Z", "abc", "a-b", "a_b", "a.b", "A9-x_y.z0", "0190a3c4-1b2c-7d3e-8f4a-5b6c7d8e9f00"]) {
    assert.doesNotThrow(() => M.assertValidSessionId(id), id);
  }
});

test("assertValidSessionId returns undefined for a valid id", () => {
  assert.equal(M.assertValidSessionId("abc"), undefined);
});

test("assertValidSessionId rejects the empty string with the exact message", () => {
  throwsMessage(() => M.assertValidSessionId(""), INVALID_ID_MESSAGE);
});

test("assertValidSessionId rejects ids that start with a separator", () => {
  for (const id of ["-a", ".a", "_a"]) throwsMessage(() => M.assertValidSessionId(id), INVALID_ID_MESSAGE);
});

test("assertValidSessionId rejects ids that end with a separator", () => {
  for (const id of ["a-", "a.", "a_"]) throwsMessage(() => M.assertValidSessionId(id), INVALID_ID_MESSAGE);
});

test("assertValidSessionId rejects spaces, slashes and non-ASCII letters", () => {
  for (const id of ["a b", "a/b", "ä", "abä", "a\nb", "é1"]) {
    throwsMessage(() => M.assertValidSessionId(id), INVALID_ID_MESSAGE);
  }
});

test("migrateSessionEntries migrates the given array in place and returns undefined", () => {
  const entries = [
    { type: "session", version: 2, id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" },
    { type: "message", id: "aaaaaaaa", parentId: null, timestamp: "2025-01-01T00:00:01.000Z", message: { role: "hookMessage", content: "x" } },
  ];
  const second = entries[1];
  assert.equal(M.migrateSessionEntries(entries), undefined);
  assert.equal(entries.length, 2);
  assert.equal(entries[1], second);
  assert.equal(entries[0].version, 3);
  assert.equal(entries[1].message.role, "custom");
});

test("parseSessionEntries splits on newlines and skips blank lines", () => {
  const out = M.parseSessionEntries('\n  {"a":1}\n\n   \n{"b":2}\n\n');
  assert.deepEqual(out, [{ a: 1 }, { b: 2 }]);
});

test("parseSessionEntries silently drops lines that fail to parse", () => {
  const out = M.parseSessionEntries('{"a":1}\n{broken\nnot json\n{"b":2}');
  assert.deepEqual(out, [{ a: 1 }, { b: 2 }]);
});

test("parseSessionEntries keeps any parsed value including null, numbers and strings", () => {
  const out = M.parseSessionEntries('5\nnull\n"s"\n{"a":1}\n');
  assert.deepEqual(out, [5, null, "s", { a: 1 }]);
});

test("parseSessionEntries does not require a session header", () => {
  const out = M.parseSessionEntries('{"type":"message","id":"x"}\n');
  assert.deepEqual(out, [{ type: "message", id: "x" }]);
});

test("parseSessionEntries returns an empty array for an empty or whitespace-only string", () => {
  assert.deepEqual(M.parseSessionEntries(""), []);
  assert.deepEqual(M.parseSessionEntries(" \n \n"), []);
});

test("getLatestCompactionEntry returns the last compaction in array order, not tree order", () => {
  const c1 = { type: "compaction", id: "c1", parentId: "c2", timestamp: "2025-01-01T00:00:02.000Z", summary: "one", firstKeptEntryId: "c1", tokensBefore: 1 };
  const c2 = { type: "compaction", id: "c2", parentId: null, timestamp: "2025-01-01T00:00:01.000Z", summary: "two", firstKeptEntryId: "c2", tokensBefore: 2 };
  const m = msgEntry("m1", "c1", user("x"));
  assert.equal(M.getLatestCompactionEntry([c1, c2, m]), c2);
});

test("getLatestCompactionEntry returns null when there is no compaction", () => {
  assert.equal(M.getLatestCompactionEntry([msgEntry("m1", null, user("x"))]), null);
  assert.equal(M.getLatestCompactionEntry([]), null);
});

test("sessionEntryToContextMessages is exported and maps a message entry to its stored message", () => {
  const message = user("x");
  const out = M.sessionEntryToContextMessages(msgEntry("m1", null, message));
  assert.equal(out.length, 1);
  assert.equal(out[0], message);
});

test("buildContextEntries is exported and returns the root-to-leaf path", () => {
  const a = msgEntry("a", null, user("1"));
  const b = msgEntry("b", "a", assistant("2"));
  const c = msgEntry("c", "a", assistant("3"));
  assert.deepEqual(M.buildContextEntries([a, b, c], "b"), [a, b]);
});

test("projectContextEntry is exported and drops an entry whose edit replacement is null", () => {
  const entry = msgEntry("a", null, user("1"));
  assert.deepEqual(M.projectContextEntry(entry, undefined), [entry.message]);
  assert.deepEqual(M.projectContextEntry(entry, { type: "context_edit", targetId: "a", replacement: null }), []);
});

test("buildSessionProjection is exported and returns entries, messages, thinkingLevel and model", () => {
  const a = msgEntry("a", null, user("1"));
  const p = M.buildSessionProjection([a]);
  assert.deepEqual(Object.keys(p).sort(), ["entries", "messages", "model", "thinkingLevel"]);
  assert.equal(p.entries[0].sourceEntry, a);
  assert.deepEqual(p.messages, [a.message]);
});

test("buildSessionContext is exported and returns messages, thinkingLevel and model", () => {
  const a = msgEntry("a", null, user("1"));
  const ctx = M.buildSessionContext([a]);
  assert.deepEqual(ctx, { messages: [a.message], thinkingLevel: "off", model: null });
});

test("getDefaultSessionDir creates the computed directory when it is missing", (t) => {
  const agent = path.join(tempDir(t), "agent");
  const dir = M.getDefaultSessionDir("/some/project", agent);
  assert.equal(dir, path.join(agent, "sessions", "--some-project--"));
  assert.ok(fs.statSync(dir).isDirectory());
});

test("getDefaultSessionDir returns the existing directory unchanged when it already exists", (t) => {
  const agent = tempDir(t);
  const dir = path.join(agent, "sessions", "--p--");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "keep.jsonl"), "x");
  assert.equal(M.getDefaultSessionDir("/p", agent), dir);
  assert.equal(fs.readFileSync(path.join(dir, "keep.jsonl"), "utf8"), "x");
});

test("loadEntriesFromFile is exported and returns the parsed records of a session file", (t) => {
  const file = writeJsonl(path.join(tempDir(t), "s.jsonl"), [header({ id: "s1" }), msgEntry("a", null, user("x"))]);
  const out = M.loadEntriesFromFile(file);
  assert.equal(out.length, 2);
  assert.equal(out[0].id, "s1");
});

test("findMostRecentSession is exported and returns null for a missing directory", (t) => {
  assert.equal(M.findMostRecentSession(path.join(tempDir(t), "missing")), null);
});

test("SessionManager exposes the static factories create, open, continueRecent, inMemory, forkFrom, findById, list and listAll", () => {
  for (const name of ["create", "open", "continueRecent", "inMemory", "forkFrom", "findById", "list", "listAll"]) {
    assert.equal(typeof SessionManager[name], "function", name);
  }
});

test("the module exports every name the package root re-exports", () => {
  const kinds = {
    buildContextEntries: "function",
    buildSessionContext: "function",
    CURRENT_SESSION_VERSION: "number",
    getLatestCompactionEntry: "function",
    migrateSessionEntries: "function",
    parseSessionEntries: "function",
    SessionManager: "function",
    sessionEntryToContextMessages: "function",
    buildSessionProjection: "function",
  };
  for (const [name, kind] of Object.entries(kinds)) assert.equal(typeof M[name], kind, name);
});

test("the module also exports the module-only helpers", () => {
  for (const name of ["getDefaultSessionDir", "loadEntriesFromFile", "findMostRecentSession", "assertValidSessionId", "projectContextEntry"]) {
    assert.equal(typeof M[name], "function", name);
  }
});

// ---------------------------------------------------------------- type shapes

test("a new session header has type, version, id, timestamp and cwd", () => {
  const sm = SessionManager.inMemory("/proj");
  const h = sm.getHeader();
  assert.equal(h.type, "session");
  assert.equal(h.version, 3);
  assert.equal(h.id, sm.getSessionId());
  assert.equal(typeof h.timestamp, "string");
  assert.equal(h.cwd, "/proj");
  assert.equal(h.parentSession, undefined);
});

test("NewSessionOptions id and parentSession are honoured by newSession", () => {
  const sm = SessionManager.inMemory("/proj");
  sm.newSession({ id: "custom-1", parentSession: "/old/file.jsonl" });
  assert.equal(sm.getSessionId(), "custom-1");
  assert.equal(sm.getHeader().id, "custom-1");
  assert.equal(sm.getHeader().parentSession, "/old/file.jsonl");
});

test("every appended entry carries type, id, parentId and timestamp", () => {
  const sm = SessionManager.inMemory("/proj");
  const a = sm.appendMessage(user("x"));
  const b = sm.appendThinkingLevelChange("high");
  for (const [id, parent] of [[a, null], [b, a]]) {
    const e = sm.getEntry(id);
    assert.equal(typeof e.type, "string");
    assert.equal(e.id, id);
    assert.equal(e.parentId, parent);
    assert.equal(typeof e.timestamp, "string");
  }
});

test("the append methods produce each member of the entry union", () => {
  const sm = SessionManager.inMemory("/proj");
  const ids = {};
  ids.message = sm.appendMessage(user("x"));
  ids.thinking_level_change = sm.appendThinkingLevelChange("low");
  ids.model_change = sm.appendModelChange("p", "m");
  ids.usage = sm.appendUsage("kind", "p", "m", { input: 1 }).id;
  ids.custom = sm.appendCustomEntry("ct", { a: 1 });
  ids.custom_message = sm.appendCustomMessageEntry("ct", "text", true);
  ids.label = sm.appendLabelChange(ids.message, "lbl");
  ids.session_info = sm.appendSessionInfo("name");
  ids.context_edit = sm.appendContextEdit(ids.message, { content: "edited" });
  ids.compaction = sm.appendCompaction("sum", ids.message, 10);
  ids.branch_summary = sm.branchWithSummary(ids.message, "bs");
  for (const [type, id] of Object.entries(ids)) assert.equal(sm.getEntry(id).type, type, type);
});

test("tree nodes have entry, children, label and labelTimestamp keys", () => {
  const sm = SessionManager.inMemory("/proj");
  sm.appendMessage(user("x"));
  const [node] = sm.getTree();
  assert.deepEqual(Object.keys(node).sort(), ["children", "entry", "label", "labelTimestamp"]);
  assert.deepEqual(node.children, []);
});

test("a session context has messages, thinkingLevel and model", () => {
  const sm = SessionManager.inMemory("/proj");
  sm.appendMessage(user("x"));
  const ctx = sm.buildSessionContext();
  assert.deepEqual(Object.keys(ctx).sort(), ["messages", "model", "thinkingLevel"]);
  assert.ok(Array.isArray(ctx.messages));
  assert.equal(ctx.thinkingLevel, "off");
  assert.equal(ctx.model, null);
});

test("a session projection adds entries of sourceEntry and messages to the context fields", () => {
  const sm = SessionManager.inMemory("/proj");
  const id = sm.appendMessage(user("x"));
  const p = sm.buildSessionProjection();
  assert.deepEqual(Object.keys(p).sort(), ["entries", "messages", "model", "thinkingLevel"]);
  assert.equal(p.entries.length, 1);
  assert.deepEqual(Object.keys(p.entries[0]).sort(), ["messages", "sourceEntry"]);
  assert.equal(p.entries[0].sourceEntry.id, id);
});

test("a listed SessionInfo has path, id, cwd, name, parentSessionPath, created, modified, messageCount, firstMessage and allMessagesText", async (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  sm.appendMessage(user("hello"));
  const [info] = await SessionManager.list("/proj", dir);
  assert.deepEqual(Object.keys(info).sort(), [
    "allMessagesText", "created", "cwd", "firstMessage", "id", "messageCount", "modified", "name", "parentSessionPath", "path",
  ]);
  assert.ok(info.created instanceof Date);
  assert.ok(info.modified instanceof Date);
  assert.equal(info.path, sm.getSessionFile());
  assert.equal(info.messageCount, 1);
});

test("list progress callbacks receive loaded, total and optionally a partial session list", async (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  sm.appendMessage(user("hello"));
  const calls = [];
  await SessionManager.list("/proj", dir, (...args) => calls.push(args));
  assert.equal(calls.length, 1);
  assert.equal(calls[0][0], 1);
  assert.equal(calls[0][1], 1);
  assert.ok(Array.isArray(calls[0][2]));
});

test("a manager offers every ReadonlySessionManager method", () => {
  const sm = SessionManager.inMemory("/proj");
  for (const name of [
    "getCwd", "getSessionDir", "getSessionId", "getSessionFile", "getLeafId", "getLeafEntry", "getEntry", "getLabel",
    "getBranch", "buildContextEntries", "getHeader", "getEntries", "getTree", "getSessionName", "buildSessionProjection",
  ]) {
    assert.equal(typeof sm[name], "function", name);
  }
});

test("a manager exposes _persist as a callable member", () => {
  const sm = SessionManager.inMemory("/proj");
  assert.equal(typeof sm._persist, "function");
});
