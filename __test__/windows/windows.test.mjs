// Windows behaviour of the store, run by scripts/test-windows.js under Wine with Node for Windows
// (it lives in a subfolder so that the Linux run, which takes __test__/*.test.mjs only, never
// picks it up). Windows paths (drive letter, backslashes, the session dir the agent derives from a
// Windows cwd), listing, atomic rewrites (prune, migration) while another handle holds the file,
// two writers and the lease, and a CRLF file read as the reference reads it. Each test in its own
// temp directory.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, "..", "..");
const require = createRequire(import.meta.url);

if (process.platform !== "win32") {
  throw new Error("__test__/windows/ runs on Windows only (scripts/test-windows.js runs it under Wine)");
}

const ours = require(path.join(ROOT, "index.js"));
const { SessionManager } = ours;
let reference;
before(async () => {
  reference = await import(
    path.join(ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js").replace(/^/, "file:///").replaceAll("\\", "/")
  );
});

function tempDir(t, prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      // Managers not collected yet hold their files, and Windows keeps a deleted file's name
      // until its last handle closes: the directory is left to the OS's temp cleanup then.
      if (!["ENOTEMPTY", "EBUSY", "EPERM"].includes(error.code)) throw error;
    }
  });
  return dir;
}

const user = (text, timestamp) => ({ role: "user", content: text, timestamp });
const assistant = (text, timestamp) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "a",
  provider: "p",
  model: "m",
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp,
});

/** A session with a branch: u1 -> a1, and u1 -> u2 (the leaf). Returns the manager and ids. */
function branchedSession(dir) {
  const sm = SessionManager.create("C:\\Users\\ana\\proj", dir);
  const u1 = sm.appendMessage(user("hi", 1));
  const a1 = sm.appendMessage(assistant("yo", 2));
  sm.branch(u1);
  const u2 = sm.appendMessage(user("other", 3));
  return { sm, u1, a1, u2 };
}

test("a session is written and reopened through a Windows path with a drive letter and backslashes", (t) => {
  const dir = tempDir(t, "pw-");
  assert.match(dir, /^[A-Za-z]:\\/);
  const { sm } = branchedSession(dir);
  const file = sm.getSessionFile();
  assert.equal(path.win32.dirname(file), dir, "the file sits in the dir, joined with a backslash");
  assert.ok(!file.includes("/"), `no forward slash in ${file}`);
  const reopened = SessionManager.open(file.replaceAll("\\", "/"));
  assert.equal(reopened.getSessionFile(), file, "a path with forward slashes resolves to the same file");
  assert.deepEqual(
    reopened.getEntries().map((e) => e.id),
    sm.getEntries().map((e) => e.id),
  );
  assert.equal(reopened.getHeader().cwd, "C:\\Users\\ana\\proj");
});

test("the default session dir of a Windows cwd is the one the reference computes", (t) => {
  const agent = tempDir(t, "pw-agent-");
  const saved = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = agent;
  t.after(() => (saved === undefined ? delete process.env.PI_CODING_AGENT_DIR : (process.env.PI_CODING_AGENT_DIR = saved)));
  for (const cwd of ["C:\\Users\\ana\\proj", "c:/Users/ana/Proj/", "D:\\"]) {
    const expected = reference.getDefaultSessionDir(cwd);
    assert.equal(ours.getDefaultSessionDir(cwd), expected, cwd);
    const sm = SessionManager.create(cwd);
    sm.appendMessage(user("x", 1));
    sm.appendMessage(assistant("y", 2));
    assert.equal(path.win32.dirname(sm.getSessionFile()), expected, cwd);
  }
  assert.equal(path.win32.basename(reference.getDefaultSessionDir("C:\\Users\\ana\\proj")), "--C--Users-ana-proj--");
});

test("listing finds sessions by a Windows cwd, whatever its case, as the reference does", async (t) => {
  const agent = tempDir(t, "pw-agent-");
  const saved = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = agent;
  t.after(() => (saved === undefined ? delete process.env.PI_CODING_AGENT_DIR : (process.env.PI_CODING_AGENT_DIR = saved)));
  const sm = SessionManager.create("C:\\Users\\ana\\proj");
  sm.appendMessage(user("listed", 1));
  sm.appendMessage(assistant("yes", 2));
  const mine = await SessionManager.list("C:\\Users\\ana\\proj");
  const theirs = await reference.SessionManager.list("C:\\Users\\ana\\proj");
  assert.deepEqual(mine.map((s) => s.path), theirs.map((s) => s.path));
  assert.equal(mine.length, 1);
  assert.equal(mine[0].path, sm.getSessionFile());
  const all = await SessionManager.listAll();
  assert.deepEqual(all.map((s) => s.path), [sm.getSessionFile()]);
  const recent = SessionManager.continueRecent("c:\\users\\ana\\proj");
  assert.equal(
    recent.getSessionFile().toLowerCase(),
    reference.SessionManager.continueRecent("c:\\users\\ana\\proj").getSessionFile().toLowerCase(),
  );
});

test("a branch is pruned while another handle holds the session file", (t) => {
  const dir = tempDir(t, "pw-");
  const { sm, a1, u2 } = branchedSession(dir);
  const file = sm.getSessionFile();
  const held = fs.openSync(file, "r");
  const result = sm.pruneBranch(a1);
  assert.equal(result.removed, 1);
  assert.equal(result.written, true);
  assert.deepEqual(SessionManager.open(file).getEntries().map((e) => e.id), sm.getEntries().map((e) => e.id));
  // The manager keeps appending to the new file, not to the one the handle holds.
  const u3 = sm.appendMessage(user("after", 4));
  const ids = SessionManager.open(file).getEntries().map((e) => e.id);
  assert.ok(ids.includes(u2) && ids.includes(u3) && !ids.includes(a1), ids.join(","));
  // Where the OS could not rename over the held file, the old one was moved aside and deleted:
  // its name goes with the last handle.
  fs.closeSync(held);
  assert.deepEqual(fs.readdirSync(dir).filter((n) => n.startsWith(".")), [], "no temp or old file left behind");
});

test("an old-version file is migrated while another manager holds it", (t) => {
  const dir = tempDir(t, "pw-");
  const file = path.join(dir, "old.jsonl");
  fs.copyFileSync(path.join(ROOT, "fixtures", "v1-linear.jsonl"), file);
  const original = fs.readFileSync(file);
  const held = fs.openSync(file, "r");
  t.after(() => fs.closeSync(held));
  const sm = SessionManager.open(file);
  assert.equal(sm.getHeader().version, 3);
  const onDisk = reference.loadEntriesFromFile(file);
  assert.equal(onDisk[0].version, 3, "the file on disk was rewritten as version 3");
  assert.deepEqual(sm.getEntries().map((e) => e.id), onDisk.slice(1).map((e) => e.id));
  assert.deepEqual(fs.readFileSync(`${file}.bak`), original, "the original is kept as a backup");
  const buf = Buffer.alloc(original.length);
  fs.readSync(held, buf, 0, buf.length, 0);
  assert.deepEqual(buf, original, "the held handle still reads the old content");
});

test("a session file held by a manager can be deleted, as stock pi's /resume delete does", (t) => {
  const dir = tempDir(t, "pw-");
  const { sm } = branchedSession(dir);
  const file = sm.getSessionFile();
  fs.unlinkSync(file);
  sm.dispose();
  assert.ok(!fs.existsSync(file), "gone once the manager lets go (at once where deletes are POSIX)");
});

test("two writers share a file in default mode, and the lease keeps out a second one in exclusive mode", (t) => {
  const dir = tempDir(t, "pw-");
  const { sm } = branchedSession(dir);
  const file = sm.getSessionFile();
  const other = SessionManager.open(file);
  other.appendMessage(user("from the other", 5));
  sm.appendMessage(user("from the first", 6));
  const texts = reference.loadEntriesFromFile(file).filter((e) => e.type === "message").map((e) => e.message.content);
  assert.ok(texts.includes("from the other") && texts.includes("from the first"), JSON.stringify(texts));

  sm.setExclusive(true);
  assert.ok(fs.existsSync(`${file}.lock`), "the lease file exists");
  const lease = JSON.parse(fs.readFileSync(`${file}.lock`, "utf8"));
  assert.equal(lease.pid, process.pid);
  assert.equal(typeof lease.procStart, "number", "Windows reports the holder's start time");
  assert.throws(() => SessionManager.open(file).setExclusive(true), { code: "SESSION_LOCKED" });
  // A default writer that has not looked for a holder in the last second refuses to write.
  assert.throws(() => SessionManager.open(file).appendMessage(user("refused", 7)), { code: "SESSION_LOCKED" });
  sm.setExclusive(false);
  assert.ok(!fs.existsSync(`${file}.lock`), "the lease is released");
  other.appendMessage(user("allowed again", 8));
});

test("a lease left by a process that has exited is taken over; one of a live process is not", async (t) => {
  const dir = tempDir(t, "pw-");
  const { sm } = branchedSession(dir);
  const file = sm.getSessionFile();
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  const deadPid = Number(child.stdout);
  assert.ok(deadPid > 0);
  const lease = (pid) =>
    `${JSON.stringify({ pid, hostname: os.hostname(), startedAt: new Date().toISOString(), nonce: `n${pid}` })}\n`;
  fs.writeFileSync(`${file}.lock`, lease(deadPid));
  sm.setExclusive(true);
  assert.equal(JSON.parse(fs.readFileSync(`${file}.lock`, "utf8")).pid, process.pid, "taken over from the exited pid");
  sm.setExclusive(false);

  // A live process of this host holds it.
  const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  t.after(() => live.kill());
  await new Promise((resolve, reject) => live.once("spawn", resolve).once("error", reject));
  fs.writeFileSync(`${file}.lock`, lease(live.pid));
  assert.throws(() => sm.setExclusive(true), { code: "SESSION_LOCKED", message: new RegExp(`pid ${live.pid}`) });
  sm.setExclusive(false);
  fs.unlinkSync(`${file}.lock`);
});

test("a file with CRLF line ends reads as the reference reads it, and appends keep it readable", (t) => {
  const dir = tempDir(t, "pw-");
  const file = path.join(dir, "crlf.jsonl");
  fs.copyFileSync(path.join(ROOT, "fixtures", "crlf.jsonl"), file);
  const sm = SessionManager.open(file);
  assert.deepEqual(sm.getEntries(), reference.loadEntriesFromFile(file).slice(1));
  const id = sm.appendMessage(user("appended", 99));
  const back = reference.loadEntriesFromFile(file);
  assert.equal(back.at(-1).id, id);
  assert.deepEqual(SessionManager.open(file).getEntries(), back.slice(1));
});
