// docs/behaviour.md, "When a session is written": persistence rules (lazy flush, failure rollback, newSession, full rewrite).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { TARGET, loadTarget } from "./helpers/target.mjs";
import {
  ENTRY_ID_RE,
  FILE_NAME_RE,
  INVALID_ID_MESSAGE,
  appended,
  assistant,
  fileLines,
  header,
  jsonlFiles,
  msgEntry,
  readText,
  snapshot,
  system,
  tempDir,
  throwsFsError,
  throwsMessage,
  user,
  withCwd,
  withEnv,
  writeJsonl,
  flushedSession,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;

function created(t) {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  return { dir, sm, file: sm.getSessionFile() };
}

const flushed = (t) => flushedSession(t, SessionManager, { text: "first" });

// ---------------------------------------------------------------- lazy first write

test("setup entries alone do not create the session file", (t) => {
  const { sm, dir, file } = created(t);
  sm.appendModelChange("p", "m");
  sm.appendThinkingLevelChange("high");
  const c = sm.appendCustomEntry("ext", { a: 1 });
  sm.appendCustomMessageEntry("ext", "text", true);
  sm.appendLabelChange(c, "lbl");
  sm.appendSessionInfo("name");
  sm.appendUsage("k", "p", "m", { input: 1 });
  assert.equal(fs.existsSync(file), false);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test("messages with roles other than user or assistant do not create the session file", (t) => {
  const { sm, file } = created(t);
  sm.appendMessage(system("sys"));
  sm.appendMessage({ role: "toolResult", toolCallId: "t1", toolName: "x", content: [], isError: false, timestamp: 1 });
  sm.appendMessage({ role: "custom", customType: "c", content: "x", display: true, timestamp: 1 });
  sm.appendMessage({ role: "bashExecution", command: "ls", output: "", exitCode: 0, cancelled: false, truncated: false, timestamp: 1 });
  assert.equal(fs.existsSync(file), false);
});

test("the first user message creates the session file", (t) => {
  const { sm, file } = created(t);
  sm.appendMessage(user("hello"));
  assert.equal(fileLines(file).length, 2);
});

test("the first assistant message creates the session file", (t) => {
  const { sm, file } = created(t);
  sm.appendMessage(assistant("hello"));
  assert.equal(fileLines(file).length, 2);
});

test("the flush writes the header and then every in-memory entry in order", (t) => {
  const { sm, file } = created(t);
  const ids = [];
  ids.push(sm.appendModelChange("p", "m"));
  ids.push(sm.appendThinkingLevelChange("high"));
  ids.push(sm.appendMessage(system("sys")));
  ids.push(sm.appendLabelChange(ids[0], "start"));
  ids.push(sm.appendMessage(user("go")));
  const lines = fileLines(file);
  assert.equal(lines[0], JSON.stringify(sm.getHeader()));
  assert.deepEqual(lines.slice(1), ids.map((id) => JSON.stringify(sm.getEntry(id))));
});

test("the flush also writes entries on other branches", (t) => {
  const { sm, file } = created(t);
  const a = sm.appendModelChange("p", "m");
  const b = sm.appendThinkingLevelChange("low");
  sm.resetLeaf();
  const c = sm.appendCustomEntry("ext", 1);
  sm.branch(a);
  const d = sm.appendMessage(user("go"));
  assert.deepEqual(fileLines(file).slice(1).map((l) => JSON.parse(l).id), [a, b, c, d]);
});

test("after the flush each append adds exactly one line", (t) => {
  const { sm, file } = flushed(t);
  for (const append of [() => sm.appendModelChange("p", "m"), () => sm.appendMessage(assistant("x")), () => sm.appendCustomEntry("e", 2)]) {
    const before = readText(file);
    const id = append();
    assert.equal(appended(before, readText(file)), `${JSON.stringify(sm.getEntry(id))}\n`);
  }
});

test("after the flush setup entries are written immediately", (t) => {
  const { sm, file } = flushed(t);
  const id = sm.appendThinkingLevelChange("high");
  assert.equal(JSON.parse(fileLines(file).at(-1)).id, id);
});

// The reference's data loss (upstream issue #8939): a file no reader opens again. Ours writes the
// session back whole instead (README "What is different"; __test__/vanished-session.test.mjs).
test("an append after the file was deleted externally recreates it: the reference with just that line, ours whole", (t) => {
  const { sm, file } = flushed(t);
  const before = readText(file);
  fs.unlinkSync(file);
  const id = sm.appendModelChange("p", "m");
  const line = `${JSON.stringify(sm.getEntry(id))}\n`;
  if (TARGET === "reference") {
    assert.equal(readText(file), line);
  } else {
    assert.equal(readText(file), before + line, "header and every entry held, then the new line");
  }
});

test("an in-memory manager never touches the disk", async (t) => {
  const work = tempDir(t);
  const agent = tempDir(t, "pi-agent-");
  withCwd(t, work);
  withEnv(t, { PI_CODING_AGENT_DIR: agent });
  const sm = SessionManager.inMemory();
  const u = sm.appendMessage(user("x"));
  sm.appendMessage(assistant("y"));
  sm.appendCompaction("s", u, 1);
  sm.createBranchedSession(u);
  sm.newSession();
  assert.deepEqual(fs.readdirSync(work), []);
  assert.deepEqual(fs.readdirSync(agent), []);
});

test("an in-memory manager given a session file path never writes to it", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "mem.jsonl");
  const sm = SessionManager.inMemory("/proj");
  sm.setSessionFile(file);
  assert.equal(sm.getSessionFile(), file);
  sm.appendMessage(user("x"));
  sm.appendMessage(assistant("y"));
  assert.equal(fs.existsSync(file), false);
});

// ---------------------------------------------------------------- failure handling

test("a flush that fails because the file exists rethrows and removes the new entry", (t) => {
  const { sm, file } = created(t);
  sm.appendModelChange("p", "m");
  fs.writeFileSync(file, "occupied");
  const before = snapshot(sm);
  throwsFsError(() => sm.appendMessage(user("x")), "EEXIST");
  assert.deepEqual(snapshot(sm), before);
  assert.equal(readText(file), "occupied");
});

test("after a failed flush the removed entry is no longer in the id index", (t) => {
  const { sm, file } = created(t);
  fs.writeFileSync(file, "occupied");
  const message = user("lost");
  throwsFsError(() => sm.appendMessage(message), "EEXIST");
  assert.equal(sm.getEntryCount(), 0);
  assert.equal(sm.getLeafId(), null);
  assert.equal(sm.getLeafEntry(), undefined);
  assert.deepEqual(sm.getEntries(), []);
  assert.deepEqual(sm.getChildren(null), []);
});

test("a failed append restores the leaf to its value before the append", (t) => {
  const { sm, dir, first } = flushed(t);
  sm.appendMessage(assistant("a"));
  sm.branch(first);
  fs.rmSync(dir, { recursive: true });
  const before = snapshot(sm);
  throwsFsError(() => sm.appendMessage(user("b")), "ENOENT");
  assert.deepEqual(snapshot(sm), before);
  assert.equal(sm.getLeafId(), first);
});

test("an append after the session dir was deleted fails with ENOENT and does not recreate the dir", (t) => {
  const { sm, dir } = flushed(t);
  fs.rmSync(dir, { recursive: true });
  const before = snapshot(sm);
  throwsFsError(() => sm.appendModelChange("p", "m"), "ENOENT");
  assert.deepEqual(snapshot(sm), before);
  assert.equal(fs.existsSync(dir), false);
});

test("a first flush into a deleted session dir fails with ENOENT and rolls back", (t) => {
  const { sm, dir } = created(t);
  const setup = sm.appendModelChange("p", "m");
  fs.rmSync(dir, { recursive: true });
  throwsFsError(() => sm.appendMessage(user("x")), "ENOENT");
  assert.deepEqual(snapshot(sm), { leaf: setup, ids: [setup], count: 1 });
  assert.equal(fs.existsSync(dir), false);
});

test("a failed label append leaves the label unchanged", (t) => {
  const { sm, dir, first } = flushed(t);
  sm.appendLabelChange(first, "old");
  fs.rmSync(dir, { recursive: true });
  throwsFsError(() => sm.appendLabelChange(first, "new"), "ENOENT");
  assert.equal(sm.getLabel(first), "old");
});

test("a failed branchWithSummary leaves the leaf on the branch point", (t) => {
  const { sm, dir, first } = flushed(t);
  const second = sm.appendMessage(assistant("a"));
  fs.rmSync(dir, { recursive: true });
  throwsFsError(() => sm.branchWithSummary(first, "summary"), "ENOENT");
  assert.equal(sm.getLeafId(), first);
  assert.deepEqual(sm.getEntries().map((e) => e.id), [first, second]);
  assert.equal(sm.getEntryCount(), 2);
});

// ---------------------------------------------------------------- newSession

test("newSession rejects an invalid id with the exact message and changes nothing", (t) => {
  const { sm, file, first } = flushed(t);
  const id = sm.getSessionId();
  const before = snapshot(sm);
  throwsMessage(() => sm.newSession({ id: "no spaces" }), INVALID_ID_MESSAGE);
  assert.equal(sm.getSessionId(), id);
  assert.equal(sm.getSessionFile(), file);
  assert.deepEqual(snapshot(sm), before);
  assert.equal(sm.getLeafId(), first);
});

test("newSession of a persisted manager returns the new file path in the session dir", (t) => {
  const { sm, dir } = created(t);
  const ret = sm.newSession();
  assert.equal(ret, sm.getSessionFile());
  assert.equal(path.dirname(ret), dir);
  const match = FILE_NAME_RE.exec(path.basename(ret));
  assert.ok(match);
  assert.equal(match[1], sm.getHeader().timestamp.replace(/[:.]/g, "-"));
  assert.equal(match[2], sm.getSessionId());
});

test("newSession with a custom id uses it for the session and the file name", (t) => {
  const { sm, dir } = created(t);
  const ret = sm.newSession({ id: "next-one" });
  assert.equal(sm.getSessionId(), "next-one");
  assert.equal(sm.getHeader().id, "next-one");
  assert.equal(ret, path.join(dir, `${sm.getHeader().timestamp.replace(/[:.]/g, "-")}_next-one.jsonl`));
});

test("newSession of an in-memory manager returns undefined", () => {
  const sm = SessionManager.inMemory("/proj");
  assert.equal(sm.newSession(), undefined);
  assert.equal(sm.getSessionFile(), undefined);
});

test("newSession of an in-memory manager with a set session file returns that file", (t) => {
  const file = path.join(tempDir(t), "x.jsonl");
  const sm = SessionManager.inMemory("/proj");
  sm.setSessionFile(file);
  assert.equal(sm.newSession(), file);
});

test("newSession creates a v3 header with the manager cwd and the given parentSession", () => {
  const sm = SessionManager.inMemory("/the/cwd");
  const before = Date.now();
  sm.newSession({ parentSession: "/parent.jsonl" });
  const h = sm.getHeader();
  assert.equal(h.type, "session");
  assert.equal(h.version, 3);
  assert.equal(h.id, sm.getSessionId());
  assert.equal(h.cwd, "/the/cwd");
  assert.equal(h.parentSession, "/parent.jsonl");
  assert.ok(Date.parse(h.timestamp) >= before);
});

test("newSession generates a fresh session id", () => {
  const sm = SessionManager.inMemory("/proj");
  const old = sm.getSessionId();
  sm.newSession();
  assert.notEqual(sm.getSessionId(), old);
});

test("newSession clears entries, the id index, labels and the leaf", () => {
  const sm = SessionManager.inMemory("/proj");
  const a = sm.appendMessage(user("x"));
  sm.appendLabelChange(a, "lbl");
  sm.newSession();
  assert.deepEqual(sm.getEntries(), []);
  assert.equal(sm.getEntryCount(), 0);
  assert.equal(sm.getEntry(a), undefined);
  assert.equal(sm.getLabel(a), undefined);
  assert.equal(sm.getLeafId(), null);
  assert.deepEqual(sm.getTree(), []);
});

test("newSession never writes and leaves the previous file untouched", (t) => {
  const { sm, dir, file } = flushed(t);
  const bytes = readText(file);
  const next = sm.newSession();
  assert.equal(readText(file), bytes);
  assert.equal(fs.existsSync(next), false);
  assert.deepEqual(jsonlFiles(dir), [path.basename(file)]);
});

test("after newSession the new file is written lazily again", (t) => {
  const { sm } = flushed(t);
  const next = sm.newSession();
  const m = sm.appendModelChange("p", "m");
  assert.equal(fs.existsSync(next), false);
  const u = sm.appendMessage(user("again"));
  assert.deepEqual(fileLines(next).map((l) => JSON.parse(l).id), [sm.getSessionId(), m, u]);
});

test("newSession keeps the cwd and the session dir", (t) => {
  const { sm, dir } = flushed(t);
  sm.newSession();
  assert.equal(sm.getCwd(), "/proj");
  assert.equal(sm.getSessionDir(), dir);
});

// ---------------------------------------------------------------- full rewrite

test("loading an empty file writes exactly the new header line", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "empty.jsonl");
  fs.writeFileSync(file, "");
  const sm = SessionManager.open(file);
  assert.equal(readText(file), `${JSON.stringify(sm.getHeader())}\n`);
});

test("a migration rewrite replaces the whole file with the migrated records", (t) => {
  const dir = tempDir(t);
  const file = writeJsonl(path.join(dir, "v2.jsonl"), [
    { type: "session", version: 2, id: "s2", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" },
    msgEntry("aaaa0001", null, { role: "hookMessage", customType: "h", content: "x", display: true, timestamp: 1 }, "2025-01-01T00:00:01.000Z"),
  ]);
  SessionManager.open(file);
  assert.equal(
    readText(file),
    '{"type":"session","version":3,"id":"s2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n' +
      '{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"custom","customType":"h","content":"x","display":true,"timestamp":1}}\n',
  );
});

test("createBranchedSession with a conversation on the path writes the whole new file at once", (t) => {
  const { sm, file, first } = flushed(t);
  const a = sm.appendMessage(assistant("a"));
  sm.appendMessage(user("later"));
  const oldBytes = readText(file);
  const newFile = sm.createBranchedSession(a);
  assert.notEqual(newFile, file);
  assert.deepEqual(fileLines(newFile).map((l) => JSON.parse(l).id), [sm.getSessionId(), first, a]);
  assert.equal(readText(file), oldBytes);
});

test("createBranchedSession without a conversation on the path writes lazily", (t) => {
  const { sm } = created(t);
  const m = sm.appendModelChange("p", "m");
  const newFile = sm.createBranchedSession(m);
  assert.equal(fs.existsSync(newFile), false);
  sm.appendMessage(user("now"));
  assert.equal(fileLines(newFile).length, 3);
});

test("an in-memory manager loading an empty file does not write the header", (t) => {
  const file = path.join(tempDir(t), "empty.jsonl");
  fs.writeFileSync(file, "");
  const sm = SessionManager.inMemory("/proj");
  sm.setSessionFile(file);
  assert.equal(sm.getHeader().type, "session");
  assert.equal(readText(file), "");
});

test("an in-memory manager loading an old file migrates in memory only", (t) => {
  const dir = tempDir(t);
  const text =
    '{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n' +
    '{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"x"}}\n';
  const file = path.join(dir, "v1.jsonl");
  fs.writeFileSync(file, text);
  const sm = SessionManager.inMemory("/proj");
  sm.setSessionFile(file);
  assert.equal(sm.getHeader().version, 3);
  assert.match(sm.getEntries()[0].id, ENTRY_ID_RE);
  assert.equal(readText(file), text);
  assert.deepEqual(fs.readdirSync(dir), ["v1.jsonl"]);
});

test("the header written for an already loaded session is not rewritten by appends", (t) => {
  const dir = tempDir(t);
  const file = writeJsonl(path.join(dir, "s.jsonl"), [header({ id: "s1" }), msgEntry("aaaa0001", null, user())]);
  const before = readText(file);
  const sm = SessionManager.open(file);
  const id = sm.appendModelChange("p", "m");
  assert.equal(readText(file), `${before}${JSON.stringify(sm.getEntry(id))}\n`);
});
