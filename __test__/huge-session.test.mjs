// Big sessions: files past the lazy threshold are scanned once and their lines read back from
// the file on demand, so opening them costs memory only for the entries actually used.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { tempDir } from "./helpers/fixtures.mjs";
import { loadOurs, loadReference, ROOT, withTuning } from "./helpers/target.mjs";

const ours = loadOurs();

/** Write a linear session of `turns` user/assistant pairs, each assistant carrying `pad` bytes. */
function writeSession(file, turns, pad) {
  const fd = fs.openSync(file, "w");
  const header = { type: "session", version: 3, id: "huge-1", timestamp: "2024-01-01T00:00:00.000Z", cwd: "/w" };
  fs.writeSync(fd, JSON.stringify(header) + "\n");
  const filler = "x".repeat(pad);
  let parent = null;
  let chunk = "";
  for (let i = 0; i < turns; i++) {
    const u = { type: "message", id: `u${i}`, parentId: parent, timestamp: "2024-01-01T00:00:01.000Z", message: { role: "user", content: `question ${i}`, timestamp: 1704067201000 + i } };
    const a = { type: "message", id: `a${i}`, parentId: `u${i}`, timestamp: "2024-01-01T00:00:02.000Z", message: { role: "assistant", content: [{ type: "text", text: filler }], provider: "p", model: "m", timestamp: 1704067202000 + i } };
    parent = `a${i}`;
    chunk += JSON.stringify(u) + "\n" + JSON.stringify(a) + "\n";
    if (chunk.length > 8 << 20) {
      fs.writeSync(fd, chunk);
      chunk = "";
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
}

/** `fn` with every file counting as big from `bytes` on. */
function withLazy(bytes, fn) {
  return withTuning({ lazyFileBytes: bytes }, fn);
}

test("a session read lazily gives the same entries and context as the reference", async (t) => {
  const ref = await loadReference();
  const file = path.join(tempDir(t), "s.jsonl");
  writeSession(file, 200, 500);
  const lazy = withLazy(0, () => ours.SessionManager.open(file));
  const eager = ref.SessionManager.open(file);
  assert.deepEqual(lazy.getEntries(), eager.getEntries());
  assert.deepEqual(lazy.buildSessionContext(), eager.buildSessionContext());
  assert.deepEqual(lazy.getTree().length, eager.getTree().length);
  // Appends after a lazy open land in the same file.
  const id = lazy.appendMessage({ role: "user", content: "more", timestamp: 1 });
  const reopened = ours.SessionManager.open(file);
  assert.equal(reopened.getLeafId(), id);
  assert.equal(reopened.getEntries().length, 401);
});

/** A session with a left-behind branch, labels (one between entries, one off the path), a
 * compaction keeping from a label, lines that are not canonical JSON, a malformed line and a
 * second header: what forkFrom and createBranchedSession must copy, re-chain or re-serialize. */
function writeTangledSession(file, pad) {
  const filler = "y".repeat(pad);
  const lines = [
    JSON.stringify({ type: "session", version: 3, id: "tangled", timestamp: "2024-01-01T00:00:00.000Z", cwd: "/w" }),
    JSON.stringify({ type: "message", id: "a", parentId: null, timestamp: "2024-01-01T00:00:01.000Z", message: { role: "user", content: filler, timestamp: 1 } }),
    "{not json",
    JSON.stringify({ type: "message", id: "b", parentId: "a", timestamp: "2024-01-01T00:00:02.000Z", message: { role: "assistant", content: [{ type: "text", text: "b" }], timestamp: 2 } }),
    JSON.stringify({ type: "message", id: "z", parentId: "a", timestamp: "2024-01-01T00:00:03.000Z", message: { role: "assistant", content: "abandoned", timestamp: 3 } }),
    JSON.stringify({ type: "label", id: "l1", parentId: "b", timestamp: "2024-01-01T00:00:04.000Z", targetId: "a", label: "start" }),
    '{ "type": "message", "id": "c", "parentId": "l1", "timestamp": "2024-01-01T00:00:05.000Z", "message": { "role": "user", "content": "\\u0063 \\/ é", "timestamp": 5.0 } }',
    JSON.stringify({ type: "session", version: 3, id: "second", timestamp: "2024-01-01T00:00:05.500Z", cwd: "/w" }),
    JSON.stringify({ type: "message", id: "d", parentId: "c", timestamp: "2024-01-01T00:00:06.000Z", message: { role: "assistant", content: [{ type: "text", text: filler }], timestamp: 6 } }),
    JSON.stringify({ type: "compaction", id: "e", parentId: "d", timestamp: "2024-01-01T00:00:07.000Z", summary: "s", firstKeptEntryId: "l1", tokensBefore: 5 }),
    '{"2":"two","type":"custom","1":"one","id":"f","parentId":"e","timestamp":"2024-01-01T00:00:08.000Z","customType":"k","data":{"n":1e21}}',
    JSON.stringify({ type: "label", id: "l2", parentId: "f", timestamp: "2024-01-01T00:00:09.000Z", targetId: "c", label: "mid" }),
    JSON.stringify({ type: "label", id: "l3", parentId: "l2", timestamp: "2024-01-01T00:00:09.500Z", targetId: "z", label: "off path" }),
    JSON.stringify({ type: "message", id: "g", parentId: "l3", timestamp: "2024-01-01T00:00:10.000Z", message: { role: "user", content: "g", timestamp: 10 } }),
  ];
  fs.writeFileSync(file, lines.join("\n") + "\n");
}

/** File text without the header line, with generated 8-hex ids numbered by first appearance. */
function comparableText(text) {
  const ids = new Map();
  return text
    .split("\n")
    .slice(1)
    .join("\n")
    .replace(/"([0-9a-f]{8})"/g, (_, id) => {
      if (!ids.has(id)) ids.set(id, `id#${ids.size}`);
      return `"${ids.get(id)}"`;
    });
}

for (const [what, pad] of [
  ["small", 100],
  ["with big lines", 300_000],
]) {
  test(`forkFrom and createBranchedSession of a lazily read session (${what}) write what the reference writes`, async (t) => {
    const ref = await loadReference();
    const dir = tempDir(t);
    const file = path.join(dir, "s.jsonl");
    writeTangledSession(file, pad);
    withLazy(0, () => {
      const fork = { ours: ours.SessionManager.forkFrom(file, "/t", path.join(dir, "ours-fork")), ref: ref.SessionManager.forkFrom(file, "/t", path.join(dir, "ref-fork")) };
      assert.equal(comparableText(fs.readFileSync(fork.ours.getSessionFile(), "utf8")), comparableText(fs.readFileSync(fork.ref.getSessionFile(), "utf8")));
      assert.deepEqual(fork.ours.getEntries(), fork.ref.getEntries());
      assert.deepEqual(fork.ours.buildSessionContext(), fork.ref.buildSessionContext());
      assert.equal(fork.ours.getHeader().parentSession, file);
      // The fork is a working session: appends land in its file.
      fork.ours.appendMessage({ role: "user", content: "after the fork", timestamp: 11 });
      assert.equal(ours.SessionManager.open(fork.ours.getSessionFile()).getEntries().length, fork.ref.getEntries().length + 1);

      const sm = { ours: ours.SessionManager.open(file, path.join(dir, "ours-branch")), ref: ref.SessionManager.open(file, path.join(dir, "ref-branch")) };
      const leaf = sm.ref.getLeafId();
      const files = { ours: sm.ours.createBranchedSession(leaf), ref: sm.ref.createBranchedSession(leaf) };
      assert.equal(comparableText(fs.readFileSync(files.ours, "utf8")), comparableText(fs.readFileSync(files.ref, "utf8")));
      assert.equal(sm.ours.getEntries().length, sm.ref.getEntries().length);
      assert.deepEqual(sm.ours.buildSessionContext(), sm.ref.buildSessionContext());
      // The leaf is the last re-created label (a fresh id on each side).
      const leafOf = (m) => ({ ...m.getLeafEntry(), id: undefined, parentId: undefined });
      assert.deepEqual(leafOf(sm.ours), leafOf(sm.ref));
      sm.ours.appendMessage({ role: "user", content: "after the branch", timestamp: 12 });
      assert.equal(ours.SessionManager.open(files.ours).getLeafEntry().message.content, "after the branch");
    });
  });
}

test("the lazy threshold is the one in force when a manager is made, and a negative one is refused", (t) => {
  const file = path.join(tempDir(t), "s.jsonl");
  writeSession(file, 20, 1000);
  const eager = ours.SessionManager.open(file);
  const lazy = withLazy(0, () => ours.SessionManager.open(file));
  const later = ours.SessionManager.open(file);
  // Only the manager reading lines from the file notices the file rewritten in place: its
  // entries are what it read at open (their skeletons are kept), their big members are read
  // from the file when first read.
  fs.writeFileSync(file, fs.readFileSync(file, "utf8").replaceAll("question ", "q"));
  const entries = lazy.getEntries();
  assert.equal(entries.length, 40);
  assert.throws(() => entries[1].message.content, (e) => e.code === "SESSION_FILE_CHANGED");
  assert.equal(eager.getEntries()[1].message.content[0].text.length, 1000);
  assert.equal(later.getEntries().length, 40);
  const native = createRequire(import.meta.url)(path.join(ROOT, "native.js"));
  for (const bad of [{ lazyFileBytes: -1 }, { backedLineBytes: -1 }]) {
    assert.throws(() => native.setTuning(bad), (e) => e.code === "INVALID_ARGUMENT");
  }
});

test("a big session changed in place after opening is reported, not misread", (t) => {
  const file = path.join(tempDir(t), "s.jsonl");
  writeSession(file, 20, 1000);
  const sm = withLazy(0, () => ours.SessionManager.open(file));
  // Rewritten in place (same inode) by another program, with different content: what was read
  // at open stands (the entries' skeletons), and a big member read from the file afterwards is
  // refused, not taken from the other bytes.
  const text = fs.readFileSync(file, "utf8");
  fs.writeFileSync(file, text.replaceAll("question ", "q"));
  const entries = sm.getEntries();
  assert.equal(entries[0].message.content, "question 0");
  assert.throws(() => JSON.stringify(entries), (e) => e.code === "SESSION_FILE_CHANGED" && e.message.includes(file));
});

test("a big session cut short after opening is reported as changed, by a read and by a branch", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "s.jsonl");
  writeSession(file, 20, 1000);
  const sm = withLazy(0, () => ours.SessionManager.open(file, dir));
  const leaf = sm.getLeafId();
  const entries = sm.getEntries();
  // Another program truncates the file (a crashed rewrite, a sync tool): the lines the open found
  // past the new end are gone, which is the same report as lines changed, not an I/O fault.
  fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2));
  const changed = (/** @type {any} */ e) => e.code === "SESSION_FILE_CHANGED" && e.message.includes(file);
  assert.throws(() => entries[entries.length - 1].message.content, changed);
  assert.throws(() => sm.createBranchedSession(leaf), changed);
  assert.equal(entries[0].message.content, "question 0", "what was read before stands");
});

for (const [where, offset, byte] of [
  // In the middle of the line, where the open's check of each line (its length and its ends) does
  // not look, leaving it no longer JSON.
  ["in its middle", 1000, '"'],
  // At its start, where the check looks.
  ["at its start", -5, "E"],
]) {
  test(`a big session's line changed ${where} is reported as changed when read, and only that line`, (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "s.jsonl");
    writeSession(file, 40, 2000);
    const sm = withLazy(0, () => ours.SessionManager.open(file, dir));
    const entries = sm.getEntries();
    const victim = entries.findIndex((e) => e.id === "a30");
    const bytes = fs.readFileSync(file);
    const at = bytes.indexOf('"id":"a30"') + offset;
    assert.notEqual(bytes[at], byte.charCodeAt(0));
    const fd = fs.openSync(file, "r+");
    fs.writeSync(fd, Buffer.from(byte), 0, 1, at);
    fs.closeSync(fd);
    const changed = (/** @type {any} */ e) => e.code === "SESSION_FILE_CHANGED" && e.message.includes(file);
    // Read in order (as JSON.stringify or an export reads): the values are read ahead in batches,
    // and the one holding the changed line must not take its neighbours down with it.
    for (let i = 0; i < entries.length; i++) {
      if (i === victim) assert.throws(() => entries[i].message.content, changed);
      else assert.equal(typeof entries[i].message.content, entries[i].message.role === "user" ? "string" : "object", `entry ${i}`);
    }
    assert.throws(() => entries[victim].message.content, changed, "and again");
    assert.throws(() => sm.createBranchedSession(sm.getLeafId()), changed);
  });
}

test("a session larger than 512 MB opens and builds its context", (t) => {
  const free = fs.statfsSync(os.tmpdir());
  const freeBytes = Number(free.bavail) * Number(free.bsize);
  if (freeBytes < 3 * 1024 ** 3) {
    t.skip(`needs 3 GB free in ${os.tmpdir()}, has ${(freeBytes / 1024 ** 3).toFixed(1)} GB`);
    return;
  }
  const file = path.join(tempDir(t), "huge.jsonl");
  writeSession(file, 9000, 64 * 1024); // ~590 MB
  assert.ok(fs.statSync(file).size > 512 * 1024 ** 2);
  // In a child process, to measure what opening it costs in memory.
  const script = `
    const { SessionManager } = require(${JSON.stringify(path.join(ROOT, "index.js"))});
    const sm = SessionManager.open(${JSON.stringify(file)});
    const leaf = sm.getLeafEntry();
    const ctx = sm.buildSessionContext();
    console.log(JSON.stringify({ count: sm.getEntryCount(), leaf: leaf.id, messages: ctx.messages.length, rss: process.resourceUsage().maxRSS }));
  `;
  const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 120_000 });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.equal(out.count, 18000);
  assert.equal(out.leaf, "a8999");
  assert.equal(out.messages, 18000);
});
