// Two processes writing one session file.
//   - Default mode (as the reference): both append 2,000 entries at the same time; every line is
//     whole and parses, and all 4,000 ids are in the file (for us and for the reference).
//   - Exclusive mode: the second exclusive process is refused with SESSION_LOCKED naming the first
//     one's pid, and a default-mode process may open but not write; after the holder exits, its
//     lease is gone and the file is free.
//   - A lease left by a killed holder (or any dead pid on this host) is taken over.
//   - Another writer's torn line (a write cut part-way, crafted here): our next append starts on
//     a line of its own, which the reference reads too; and an entry another writer glued after
//     such bytes (as the reference's writer does) is read by ours (open, loadEntriesFromFile,
//     listings), not by the reference. The same with real kills: kill.test.mjs.
import { afterEach, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { loadOurs, loadReference } from "./helpers/target.mjs";
import { ENTRY_ID_RE, tempDir, user } from "./helpers/fixtures.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(HERE, "helpers", "append-child.mjs");
const { SessionManager, loadEntriesFromFile, parseSessionEntries } = loadOurs();
const reference = await loadReference();

const assistantMsg = (text) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  provider: "p",
  model: "m",
  stopReason: "stop",
  timestamp: 2,
});

/** An existing session file with a header and two messages. */
function existingSession(dir) {
  const sm = SessionManager.create(dir, dir);
  sm.appendMessage(user("start"));
  sm.appendMessage(assistantMsg("ok"));
  return sm.getSessionFile();
}

/** Start an append-child; `lines` fills as it prints, `ready`/`exit` resolve on those events. */
/** Children still running: a test that fails before it ends them must not leave the file's
 * process waiting on them (a `hold` child never exits by itself). */
const running = new Set();
afterEach(() => {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
});

function startChild(opts, env = {}) {
  const child = spawn(process.execPath, ["--expose-gc", CHILD, JSON.stringify(opts)], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, PI_SESSION_EXCLUSIVE: "", ...env },
  });
  running.add(child);
  child.on("exit", () => running.delete(child));
  const state = { child, pid: child.pid, lines: [], stderr: "" };
  let buf = "";
  let onReady;
  let onHeld;
  state.ready = new Promise((resolve) => {
    onReady = resolve;
  });
  state.held = new Promise((resolve) => {
    onHeld = resolve;
  });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buf += chunk;
    const parts = buf.split("\n");
    buf = parts.pop();
    for (const line of parts) {
      state.lines.push(line);
      if (line === "ready" || line.startsWith("error ")) onReady(line);
      if (line === "held") onHeld(line);
    }
  });
  child.stderr.on("data", (chunk) => {
    state.stderr += chunk;
  });
  state.exit = new Promise((resolve) => {
    child.on("close", (code, signal) => {
      onReady("closed");
      onHeld("closed");
      resolve({ code, signal });
    });
  });
  state.go = () => child.stdin.write("go\n");
  state.ids = () => state.lines.filter((l) => ENTRY_ID_RE.test(l));
  state.error = () => state.lines.find((l) => l.startsWith("error "));
  return state;
}

/** A pid that belonged to a process that has exited. */
async function deadPid() {
  const c = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => c.on("close", resolve));
  return c.pid;
}

function leaseOf(file) {
  try {
    return JSON.parse(fs.readFileSync(`${file}.lock`, "utf8"));
  } catch {
    return null;
  }
}

test("two processes appending 2,000 entries each to one file leave 4,000 whole lines", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, "pi-conc-");
  const file = existingSession(dir);
  const before = fs.readFileSync(file, "utf8").split("\n").length - 1;
  const a = startChild({ file, count: 2000, waitGo: true, seed: 1 });
  const b = startChild({ file, count: 2000, waitGo: true, seed: 2 });
  assert.equal(await a.ready, "ready", a.stderr);
  assert.equal(await b.ready, "ready", b.stderr);
  a.go();
  b.go();
  const [ea, eb] = await Promise.all([a.exit, b.exit]);
  assert.deepEqual([ea.code, eb.code], [0, 0], a.stderr + b.stderr);
  assert.equal(a.ids().length, 2000);
  assert.equal(b.ids().length, 2000);

  const text = fs.readFileSync(file, "utf8");
  assert.ok(text.endsWith("\n"));
  // A writer descheduled half-way through copying its line in (longer than the other's look
  // waits, see fsio/append.rs) gets an empty line after it: every reader skips it, and it is
  // the only thing besides the 4,000 lines the file may hold.
  const all = text.slice(0, -1).split("\n");
  const lines = all.filter((l) => l !== "");
  t.diagnostic(`empty lines: ${all.length - lines.length}`);
  assert.equal(lines.length, before + 4000);
  const ids = [];
  for (const [i, line] of lines.entries()) {
    let entry;
    assert.doesNotThrow(() => {
      entry = JSON.parse(line);
    }, `line ${i + 1} does not parse: ${line.slice(0, 80)}`);
    ids.push(entry.id);
  }
  // Each writer's chain is intact: an entry's parent is that writer's previous entry.
  const byId = new Map(lines.map((l) => JSON.parse(l)).map((e) => [e.id, e]));
  for (const w of [a, b]) {
    const mine = w.ids();
    for (let i = 1; i < mine.length; i++) assert.equal(byId.get(mine[i]).parentId, mine[i - 1]);
  }
  // The writes really overlapped (else this test proves little).
  const firstB = ids.indexOf(b.ids()[0]);
  const lastA = ids.indexOf(a.ids().at(-1));
  const firstA = ids.indexOf(a.ids()[0]);
  const lastB = ids.indexOf(b.ids().at(-1));
  const overlapped = firstB < lastA && firstA < lastB;
  t.diagnostic(`appends interleaved: ${overlapped}`);

  for (const impl of [{ SessionManager }, reference]) {
    const sm = impl.SessionManager.open(file);
    const have = new Set(sm.getEntries().map((e) => e.id));
    for (const id of [...a.ids(), ...b.ids()]) assert.ok(have.has(id), `id ${id} missing`);
    assert.equal(sm.getEntries().length, before - 1 + 4000);
  }
  assert.ok(!fs.existsSync(`${file}.lock`), "default mode takes no lease");
});

test("in exclusive mode the second process gets SESSION_LOCKED with the first one's pid", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, "pi-excl-");
  const file = existingSession(dir);
  const holder = startChild({ file, count: 2000, waitGo: true }, { PI_SESSION_EXCLUSIVE: "1" });
  assert.equal(await holder.ready, "ready", holder.stderr);
  assert.equal(leaseOf(file)?.pid, holder.pid);
  assert.equal(leaseOf(file)?.hostname, os.hostname());

  // Exclusive by environment: refused at open.
  const second = startChild({ file, count: 10 }, { PI_SESSION_EXCLUSIVE: "1" });
  assert.match(await second.ready, /^error SESSION_LOCKED /);
  assert.equal((await second.exit).code, 3);
  assert.match(second.error(), new RegExp(`pid ${holder.pid}\\b`));

  // Exclusive by method: refused when asking for it.
  const third = startChild({ file, count: 10, exclusive: true });
  assert.match(await third.ready, /^error SESSION_LOCKED /);
  assert.match(third.error(), new RegExp(`pid ${holder.pid}\\b`));

  // Default mode: may open (reading is fine), but its first write is refused.
  const reader = startChild({ file, count: 10 });
  assert.equal(await reader.ready, "ready");
  const { code } = await reader.exit;
  assert.equal(code, 4);
  assert.match(reader.error(), new RegExp(`^error SESSION_LOCKED .*pid ${holder.pid}\\b`));
  assert.equal(reader.ids().length, 0);

  // Same in this process.
  const here = SessionManager.open(file);
  assert.throws(() => here.setExclusive(true), (err) => err.code === "SESSION_LOCKED" && err.message.includes(`pid ${holder.pid}`));
  assert.throws(() => here.appendMessage(user("no")), { code: "SESSION_LOCKED" });

  holder.go();
  assert.equal((await holder.exit).code, 0, holder.stderr);
  assert.equal(holder.ids().length, 2000);
  assert.ok(!fs.existsSync(`${file}.lock`), "the holder's lease is removed when it exits");
  // Now free: the manager that was refused (its mode stayed on) takes the lease on its next write.
  here.appendMessage(user("now"));
  assert.equal(leaseOf(file)?.pid, process.pid);
  here.setExclusive(false);
  assert.ok(!fs.existsSync(`${file}.lock`));
  const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
  for (const line of lines) JSON.parse(line);
  assert.equal(lines.length, 3 + 2000 + 1);
});

test("a lease left by a dead process on this host is taken over", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, "pi-stale-");
  const file = existingSession(dir);
  const dead = await deadPid();
  fs.writeFileSync(
    `${file}.lock`,
    `${JSON.stringify({ pid: dead, hostname: os.hostname(), startedAt: "2024-01-01T00:00:00.000Z", nonce: "gone" })}\n`,
  );
  const taker = startChild({ file, count: 50, waitGo: true }, { PI_SESSION_EXCLUSIVE: "1" });
  assert.equal(await taker.ready, "ready", taker.stderr);
  assert.equal(leaseOf(file)?.pid, taker.pid);
  taker.go();
  assert.equal((await taker.exit).code, 0);
  assert.equal(taker.ids().length, 50);

  // A holder killed with SIGKILL cannot clean up: its lease stays, and is taken over.
  const victim = startChild({ file, count: 10, hold: true }, { PI_SESSION_EXCLUSIVE: "1" });
  assert.equal(await victim.ready, "ready");
  // After its appends and a garbage collection: its manager is still alive, so is the lease.
  assert.equal(await victim.held, "held", victim.stderr);
  assert.equal(leaseOf(file)?.pid, victim.pid);
  victim.child.kill("SIGKILL");
  await victim.exit;
  assert.equal(leaseOf(file)?.pid, victim.pid, "a killed holder leaves its lease");
  const sm = SessionManager.open(file);
  sm.setExclusive(true);
  assert.equal(leaseOf(file)?.pid, process.pid);
  sm.appendMessage(user("after takeover"));
  sm.setExclusive(false);
});

test("a lease held on another host is never taken over", (t) => {
  const dir = tempDir(t, "pi-remote-");
  const file = existingSession(dir);
  fs.writeFileSync(
    `${file}.lock`,
    `${JSON.stringify({ pid: 1234567, hostname: "another-host.example", startedAt: "2024-01-01T00:00:00.000Z", nonce: "x" })}\n`,
  );
  const sm = SessionManager.open(file);
  assert.throws(() => sm.setExclusive(true), (err) => err.code === "SESSION_LOCKED" && /pid 1234567 on another-host\.example/.test(err.message));
  assert.throws(() => sm.appendMessage(user("no")), { code: "SESSION_LOCKED" });
  assert.equal(leaseOf(file)?.hostname, "another-host.example");
});

/** The first 200 bytes of a large tool result whose writer was killed inside its write. */
const TORN = JSON.stringify({
  type: "message",
  id: "deadbeef",
  parentId: null,
  timestamp: "2025-01-01T00:00:05.000Z",
  message: { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "x".repeat(20_000) }] },
}).slice(0, 200);

test("an append after another writer's torn line starts on a line of its own, which the reference reads", (t) => {
  const dir = tempDir(t, "pi-torn-append-");
  const file = existingSession(dir);
  const sm = SessionManager.open(file);
  const first = sm.appendMessage(user("mine"));
  fs.appendFileSync(file, TORN);
  const second = sm.appendMessage(assistantMsg("still mine"));
  const text = fs.readFileSync(file, "utf8");
  assert.ok(text.includes(`${TORN}\n{"type":"message","id":"${second}"`), "a newline ends the torn bytes first");
  // Another writer's whole line: no empty line.
  fs.appendFileSync(file, `${JSON.stringify({ type: "custom", id: "c0ffee00", parentId: second, customType: "x" })}\n`);
  const third = sm.appendMessage(user("again"));
  assert.ok(!fs.readFileSync(file, "utf8").includes("\n\n"));
  for (const impl of [{ SessionManager }, reference]) {
    const ids = impl.SessionManager.open(file).getEntries().map((e) => e.id);
    for (const id of [first, second, "c0ffee00", third]) assert.ok(ids.includes(id), `${id} read`);
  }
});

test("an entry another writer glued after a torn line is read by open, loadEntriesFromFile and the listing", async (t) => {
  const dir = tempDir(t, "pi-torn-glued-");
  const file = existingSession(dir);
  const before = SessionManager.open(file).getEntries().map((e) => e.id);
  const glued = { type: "message", id: "a1b2c3d4", parentId: before.at(-1), timestamp: "2025-01-01T00:00:06.000Z", message: assistantMsg("glued") };
  const after = { type: "message", id: "e5f6a7b8", parentId: glued.id, timestamp: "2025-01-01T00:00:07.000Z", message: user("after it") };
  // What a writer that does not look (the reference's) leaves after another one's torn bytes.
  fs.appendFileSync(file, `${TORN}${JSON.stringify(glued)}\n${JSON.stringify(after)}\n`);
  const bytes = fs.readFileSync(file);

  const sm = SessionManager.open(file);
  assert.deepEqual(sm.getEntries().map((e) => e.id), [...before, glued.id, after.id]);
  assert.deepEqual(sm.getBranch().map((e) => e.id), [...before, glued.id, after.id]);
  assert.deepEqual(loadEntriesFromFile(file).slice(1).map((e) => e.id), [...before, glued.id, after.id]);
  const [info] = await SessionManager.list(dir, dir);
  assert.equal(info.messageCount, before.length + 2);
  assert.match(info.allMessagesText, /glued after it/);
  assert.ok(fs.readFileSync(file).equals(bytes), "reading changed the file");
  // The reference loses the glued entry, and its child starts a tree of its own.
  assert.deepEqual(reference.SessionManager.open(file).getEntries().map((e) => e.id), [...before, after.id]);
  // parseSessionEntries is the reference's function over a caller's text: it stays the reference's.
  const text = bytes.toString("utf8");
  assert.deepEqual(parseSessionEntries(text), reference.parseSessionEntries(text));
});
