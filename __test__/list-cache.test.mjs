// The listing cache: summaries of unchanged files are reused between list()/listAll() runs and
// never served stale.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { useAgentDir } from "./helpers/fixtures.mjs";
import { referenceListing } from "./helpers/older-reference.mjs";
import { loadOurs, loadReference } from "./helpers/target.mjs";

const ours = loadOurs();
const ref = await loadReference();

/** Where the listing cache of an agent dir is (README "Listing cache"). */
const cachePath = (agent) => path.join(agent, ".pi-session-native", "list-cache");

/** The cache file's parts: header line, the blocks' bytes, the index's compressed bytes. */
function cacheParts(file) {
  const buf = fs.readFileSync(file);
  const headerEnd = buf.indexOf(10) + 1;
  const indexAt = JSON.parse(buf.subarray(buf.length - 40).toString("latin1")).index;
  return { buf, header: buf.subarray(0, headerEnd).toString("latin1"), blocks: [headerEnd, indexAt], index: buf.subarray(indexAt, buf.length - 40) };
}

/** The index lines of a cache file, where this Node can decompress zstd (22.15+), else null. */
function cacheIndex(file) {
  if (typeof zlib.zstdDecompressSync !== "function") return null;
  const text = zlib.zstdDecompressSync(cacheParts(file).index).toString("utf8");
  return text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** A fresh agent dir (see useAgentDir) and an empty session dir `d` in it. */
function agentWithDir(t) {
  const agent = useAgentDir(t);
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

// The reference's listings come from referenceListing: on Node >= 24 its own readline would cut
// lines at U+2028/U+2029 (helpers/older-reference.mjs).
async function listAll(M, dir) {
  return shape(M === ref ? await referenceListing(ref, "listAll", [dir]) : await M.SessionManager.listAll(dir));
}

test("results with the cache equal results without it and the reference's", async (t) => {
  const agent = useAgentDir(t);
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
  assert.ok(fs.existsSync(cachePath(agent)), "cache file written in the agent dir's .pi-session-native");
  assert.deepEqual(shape(await ours.SessionManager.listAll()), shape(await referenceListing(ref, "listAll", [])));
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
  const index = cacheIndex(cachePath(agent));
  if (index === null) t.diagnostic("this Node has no zstd: the index is not inspected");
  else assert.deepEqual(index.map((e) => path.basename(e.p)), ["a.jsonl"], "entry of the deleted file pruned");
});

test("a cache record whose compressed bytes changed is read again, not served", async (t) => {
  // The cache is written without fsync: after a crash a block can hold other bytes. The frame's
  // checksum (or else the record's own, in the index) tells, and the session is read again.
  const { agent, dir } = agentWithDir(t);
  writeSession(path.join(dir, "a.jsonl"), "hello from the session ".repeat(40));
  writeSession(path.join(dir, "b.jsonl"), "another one");
  const expected = await listAll(ref, dir);
  await listAll(ours, dir);
  const file = cachePath(agent);
  const { buf, blocks } = cacheParts(file);
  assert.ok(!buf.includes("hello from the session hello from the session"), "the texts are stored compressed");
  for (const at of [blocks[0] + 20, Math.floor((blocks[0] + blocks[1]) / 2), blocks[1] - 6]) {
    const bad = Buffer.from(buf);
    bad[at] ^= 0x41;
    fs.writeFileSync(file, bad);
    assert.deepEqual(await listAll(ours, dir), expected, `byte ${at} of ${buf.length} changed`);
  }
});

test("the cache is much smaller than the texts it holds", async (t) => {
  // Sessions of words from one vocabulary (as a user's sessions share theirs), ~600 KB of text.
  const { agent, dir } = agentWithDir(t);
  const words = "the a to of and in is for that it with on as this be are by we not from or an at can use file function return value type error test build module import export const let async await session entry message context tool result output input parse write read path directory line list cache index block compress record stamp worker thread listing summary format version reference agent project branch commit merge fix bug issue review".split(" ");
  let seed = 7; // mulberry32
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let z = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    z = (z + Math.imul(z ^ (z >>> 7), 61 | z)) ^ z;
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
  const text = (n) => Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(" ");
  for (let i = 0; i < 60; i++) {
    const extra = Array.from({ length: 6 }, (_, k) => ({ type: "message", id: `m${k}`, parentId: k ? `m${k - 1}` : "a1", timestamp: "2024-01-01T00:00:02.000Z", message: { role: k % 2 ? "user" : "assistant", content: [{ type: "text", text: text(250) }], timestamp: 1704067202000 } }));
    writeSession(path.join(dir, `s${i}.jsonl`), text(60), extra);
  }
  const infos = await listAll(ours, dir);
  const textBytes = infos.reduce((n, i) => n + Buffer.byteLength(i.firstMessage) + Buffer.byteLength(i.allMessagesText), 0);
  const size = fs.statSync(cachePath(agent)).size;
  t.diagnostic(`cache ${size} bytes for ${textBytes} bytes of text (${((100 * size) / textBytes).toFixed(1)}%)`);
  assert.ok(textBytes > 400_000, `${textBytes} bytes of text`);
  assert.ok(size < textBytes * 0.3, `cache ${size} bytes for ${textBytes} bytes of text (${((100 * size) / textBytes).toFixed(1)}%)`);
  assert.deepEqual(await listAll(ours, dir), await listAll(ref, dir), "and serves them back");
});

test("the cache of older versions in the agent root is deleted, and nothing *.jsonl is written there", async (t) => {
  const agent = useAgentDir(t);
  const sessions = path.join(agent, "sessions", "--w--");
  fs.mkdirSync(sessions, { recursive: true });
  writeSession(path.join(sessions, "a.jsonl"), "hi");
  const legacy = path.join(agent, "session-list-cache.jsonl");
  const untouched = { "settings.json": "{}", "stray.jsonl": "not ours\n", "session-list-cache.jsonl.bak": "keep" };
  for (const [name, body] of Object.entries(untouched)) fs.writeFileSync(path.join(agent, name), body);
  const rootJsonl = () => fs.readdirSync(agent).filter((n) => n.endsWith(".jsonl")).sort();

  // Bypassed: the old file stays, nothing is created.
  fs.writeFileSync(legacy, '{"format":"pi-session-list-cache/4"}\n');
  process.env.PI_SESSION_LIST_CACHE = "0";
  try {
    await ours.SessionManager.listAll();
  } finally {
    delete process.env.PI_SESSION_LIST_CACHE;
  }
  assert.ok(fs.existsSync(legacy) && !fs.existsSync(path.join(agent, ".pi-session-native")));

  for (const run of [() => ours.SessionManager.listAll(), () => ours.SessionManager.list("/w", sessions)]) {
    fs.writeFileSync(legacy, '{"format":"pi-session-list-cache/4"}\n');
    fs.rmSync(path.join(agent, ".pi-session-native"), { recursive: true, force: true });
    assert.equal((await run()).length, 1);
    assert.ok(fs.existsSync(cachePath(agent)), "the new cache is written");
    assert.ok(!fs.existsSync(legacy), "the old one is deleted");
    assert.deepEqual(rootJsonl(), ["stray.jsonl"], "no *.jsonl of ours in the agent root");
    for (const [name, body] of Object.entries(untouched)) assert.equal(fs.readFileSync(path.join(agent, name), "utf8"), body, name);
  }
});

test("a damaged or foreign cache file is ignored and replaced", async (t) => {
  const { agent, dir } = agentWithDir(t);
  writeSession(path.join(dir, "a.jsonl"), "x");
  fs.mkdirSync(path.dirname(cachePath(agent)));
  fs.writeFileSync(cachePath(agent), "garbage\n{\"p\":1}\n");
  assert.deepEqual(await listAll(ours, dir), await listAll(ref, dir));
  assert.equal(cacheParts(cachePath(agent)).header, '{"format":"pi-session-list-cache/8"}\n');
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

test("pi-sessions list and the addon use the same cache file", async (t) => {
  const { spawnSync } = await import("node:child_process");
  const bin = path.join(import.meta.dirname, "..", "bin", "pi-sessions.js");
  const agent = useAgentDir(t);
  const sessions = path.join(agent, "sessions", "--w--");
  fs.mkdirSync(sessions, { recursive: true });
  for (let i = 0; i < 3; i++) writeSession(path.join(sessions, `s${i}.jsonl`), `hello ${i}`);
  const cli = () => {
    const r = spawnSync(process.execPath, [bin, "list", "--all", "--json"], { encoding: "utf8", env: { ...process.env, PI_CODING_AGENT_DIR: agent, NO_COLOR: "1" }, timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout).length;
  };
  const stat = () => fs.statSync(cachePath(agent), { bigint: true });
  // Written by the addon, used as it is by the CLI (all entries hit: nothing to rewrite).
  assert.equal((await ours.SessionManager.listAll()).length, 3);
  const byAddon = stat();
  assert.equal(cli(), 3);
  assert.deepEqual([stat().ino, stat().mtimeNs], [byAddon.ino, byAddon.mtimeNs], "the CLI did not rewrite it");
  // And the other way round.
  fs.rmSync(path.dirname(cachePath(agent)), { recursive: true });
  assert.equal(cli(), 3);
  const byCli = stat();
  assert.equal((await ours.SessionManager.listAll()).length, 3);
  assert.deepEqual([stat().ino, stat().mtimeNs], [byCli.ino, byCli.mtimeNs], "the addon did not rewrite it");
  assert.deepEqual(fs.readdirSync(path.dirname(cachePath(agent))), ["list-cache"]);
});
