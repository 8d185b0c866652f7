// Big sessions: files past the lazy threshold are scanned once and their lines read back from
// the file on demand, so opening them costs memory only for the entries actually used.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { loadOurs, loadReference, ROOT } from "./helpers/target.mjs";

const ours = loadOurs();

function tmp(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-huge-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

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

function withLazy(bytes, fn) {
  const prev = process.env.PI_SESSION_LAZY_BYTES;
  process.env.PI_SESSION_LAZY_BYTES = String(bytes);
  try {
    return fn();
  } finally {
    if (prev === undefined) delete process.env.PI_SESSION_LAZY_BYTES;
    else process.env.PI_SESSION_LAZY_BYTES = prev;
  }
}

test("a session read lazily gives the same entries and context as the reference", async (t) => {
  const ref = await loadReference();
  const file = path.join(tmp(t), "s.jsonl");
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

test("a big session changed in place after opening is reported, not misread", (t) => {
  const file = path.join(tmp(t), "s.jsonl");
  writeSession(file, 20, 100);
  const sm = withLazy(0, () => ours.SessionManager.open(file));
  // Rewritten in place (same inode) by another program, with different content.
  const text = fs.readFileSync(file, "utf8");
  fs.writeFileSync(file, text.replaceAll("question ", "q"));
  assert.throws(() => sm.getEntries(), (e) => e.code === "SESSION_FILE_CHANGED" && e.message.includes(file));
});

test("a session larger than 512 MB opens and builds its context", (t) => {
  const free = fs.statfsSync(os.tmpdir());
  const freeBytes = Number(free.bavail) * Number(free.bsize);
  if (freeBytes < 3 * 1024 ** 3) {
    t.skip(`needs 3 GB free in ${os.tmpdir()}, has ${(freeBytes / 1024 ** 3).toFixed(1)} GB`);
    return;
  }
  const file = path.join(tmp(t), "huge.jsonl");
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
