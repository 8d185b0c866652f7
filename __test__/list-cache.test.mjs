// The listing cache: summaries of unchanged files are reused between list()/listAll() runs and
// never served stale.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadOurs, loadReference } from "./helpers/target.mjs";

const ours = loadOurs();
const ref = await loadReference();

function tempAgentDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-cache-"));
  const prev = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = dir;
  t.after(() => {
    if (prev === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = prev;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** A fresh agent dir (see tempAgentDir) and an empty session dir `d` in it. */
function agentWithDir(t) {
  const agent = tempAgentDir(t);
  const dir = path.join(agent, "d");
  fs.mkdirSync(dir);
  return { agent, dir };
}

function writeSession(file, userText, extra = []) {
  const lines = [
    { type: "session", version: 3, id: path.basename(file, ".jsonl"), timestamp: "2024-01-01T00:00:00.000Z", cwd: "/w" },
    { type: "message", id: "a1", parentId: null, timestamp: "2024-01-01T00:00:01.000Z", message: { role: "user", content: userText, timestamp: 1704067201000 } },
    ...extra,
  ];
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

const shape = (infos) => infos.map((i) => ({ ...i, created: i.created.toISOString(), modified: i.modified.toISOString() }));

async function listAll(M, dir) {
  return shape(await M.SessionManager.listAll(dir));
}

test("results with the cache equal results without it and the reference's", async (t) => {
  const agent = tempAgentDir(t);
  const dir = path.join(agent, "sessions", "--w--");
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 25; i++) writeSession(path.join(dir, `s${String(i).padStart(2, "0")}.jsonl`), `hello ${i}`);
  const expected = await listAll(ref, dir);
  const first = await listAll(ours, dir);
  const second = await listAll(ours, dir);
  process.env.PI_SESSION_LIST_CACHE = "0";
  const uncached = await listAll(ours, dir);
  delete process.env.PI_SESSION_LIST_CACHE;
  assert.deepEqual(first, expected);
  assert.deepEqual(second, expected);
  assert.deepEqual(uncached, expected);
  assert.ok(fs.existsSync(path.join(agent, "session-list-cache.jsonl")), "cache file written in the agent dir");
  assert.deepEqual(shape(await ours.SessionManager.listAll()), shape(await ref.SessionManager.listAll()));
});

test("a file whose size changed is read again", async (t) => {
  const { dir } = agentWithDir(t);
  const file = path.join(dir, "a.jsonl");
  writeSession(file, "first");
  assert.equal((await listAll(ours, dir))[0].messageCount, 1);
  fs.appendFileSync(
    file,
    JSON.stringify({ type: "message", id: "a2", parentId: "a1", timestamp: "2024-01-01T00:00:02.000Z", message: { role: "assistant", content: "more", timestamp: 1704067202000 } }) + "\n",
  );
  const after = await listAll(ours, dir);
  assert.equal(after[0].messageCount, 2);
  assert.deepEqual(after, await listAll(ref, dir));
});

test("a file rewritten with the same size but a new mtime is read again", async (t) => {
  const { dir } = agentWithDir(t);
  const file = path.join(dir, "a.jsonl");
  writeSession(file, "aaaa");
  assert.equal((await listAll(ours, dir))[0].firstMessage, "aaaa");
  const size = fs.statSync(file).size;
  writeSession(file, "bbbb");
  assert.equal(fs.statSync(file).size, size);
  const later = new Date(Date.now() + 5000);
  fs.utimesSync(file, later, later);
  assert.equal((await listAll(ours, dir))[0].firstMessage, "bbbb");
});

test("a deleted file disappears from results and from the cache", async (t) => {
  const { agent, dir } = agentWithDir(t);
  writeSession(path.join(dir, "a.jsonl"), "keep");
  writeSession(path.join(dir, "b.jsonl"), "drop");
  assert.equal((await listAll(ours, dir)).length, 2);
  fs.rmSync(path.join(dir, "b.jsonl"));
  const after = await listAll(ours, dir);
  assert.deepEqual(after.map((i) => i.firstMessage), ["keep"]);
  const cacheText = fs.readFileSync(path.join(agent, "session-list-cache.jsonl"), "utf8");
  assert.ok(!cacheText.includes("b.jsonl"), "entry of the deleted file pruned");
});

test("a cache record changed in place, still well-formed, is not served", async (t) => {
  // The cache is written without fsync: after a crash a record can hold other bytes and still
  // parse and name its file. Its checksum in the index tells.
  const { agent, dir } = agentWithDir(t);
  writeSession(path.join(dir, "a.jsonl"), "hello from the session");
  writeSession(path.join(dir, "b.jsonl"), "another one");
  await listAll(ours, dir);
  const cacheFile = path.join(agent, "session-list-cache.jsonl");
  const text = fs.readFileSync(cacheFile, "latin1");
  assert.ok(text.includes("hello from the session"), "the summary is cached");
  fs.writeFileSync(cacheFile, text.replaceAll("hello from the session", "HELLO from the session"), "latin1");
  const after = await listAll(ours, dir);
  assert.deepEqual(after, await listAll(ref, dir));
  assert.ok(after.some((i) => i.firstMessage === "hello from the session"));
});

test("a damaged or foreign cache file is ignored and replaced", async (t) => {
  const { agent, dir } = agentWithDir(t);
  writeSession(path.join(dir, "a.jsonl"), "x");
  fs.writeFileSync(path.join(agent, "session-list-cache.jsonl"), "garbage\n{\"p\":1}\n");
  assert.deepEqual(await listAll(ours, dir), await listAll(ref, dir));
  assert.match(fs.readFileSync(path.join(agent, "session-list-cache.jsonl"), "utf8"), /^\{"format":"pi-session-list-cache\/5"\}\n/);
});

test("an aborted listing rejects as the reference does, cache or not", async (t) => {
  const { dir } = agentWithDir(t);
  for (let i = 0; i < 40; i++) writeSession(path.join(dir, `s${i}.jsonl`), `m${i}`);
  await listAll(ours, dir); // warm the cache
  for (const M of [ours, ref]) {
    const controller = new AbortController();
    const reason = new Error("stop now");
    const calls = [];
    const p = M.SessionManager.listAll(dir, (loaded) => {
      calls.push(loaded);
      if (loaded === 3) controller.abort(reason);
    }, controller.signal);
    await assert.rejects(p, (e) => e === reason);
    assert.ok(calls.length >= 3);
  }
});
