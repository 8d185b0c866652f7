// A session loaded from a file is parsed into its entry objects while the program waits on
// something else (lib/session-manager.js, "idle parsing"), so that the calls pi makes right
// after a resume (getBranch, buildSessionContext, the footer's getEntries, /tree) find them
// made. These tests pin the mechanism, not its speed: accessors parse nothing afterwards, the
// objects are the ones every accessor hands out, their values are the reference's, and the
// mechanism never keeps a process alive or a dropped session in memory.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { tempDir } from "./helpers/fixtures.mjs";
import { loadOurs, loadReference, ROOT } from "./helpers/target.mjs";

const { SessionManager } = loadOurs();
const Reference = (await loadReference()).SessionManager;
const FIXTURES = path.join(ROOT, "fixtures");

/** Counts JSON.parse calls for the rest of the test. */
function countParses(t) {
  const original = JSON.parse;
  const counter = { n: 0 };
  JSON.parse = function (...args) {
    counter.n++;
    return original.apply(this, args);
  };
  t.after(() => {
    JSON.parse = original;
  });
  return counter;
}

/**
 * Waits until no more parsing happens: ten windows of 20 ms in a row without a new JSON.parse
 * (one starved window on a loaded machine can look quiet; ten in a row do not).
 */
async function settle(counter) {
  for (let quiet = 0, last = -1; quiet < 10; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (counter.n === last) quiet++;
    else {
      quiet = 0;
      last = counter.n;
    }
  }
}

/** A session of every entry kind: long strings (cut on their way to JS), surrogates, unknown types. */
function richSession(t) {
  const dir = tempDir(t, "pi-idle-");
  const sm = Reference.create("/proj", dir);
  const u = sm.appendMessage({ role: "user", content: "hello \u{1F600} \u00e9\u4e2d", timestamp: 1 });
  sm.appendMessage({
    role: "assistant",
    content: [
      { type: "text", text: "x".repeat(40_000) },
      { type: "image", data: "QUJD".repeat(20_000), mimeType: "image/png" },
    ],
    provider: "p",
    model: "m",
    usage: { input: 1, output: 2, totalTokens: 3, cost: { total: 0.5 } },
    stopReason: "stop",
    timestamp: 2,
  });
  sm.appendMessage({ role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "line\n\t\"quoted\" \ud83d\ude00 ".repeat(3000) }], isError: false, timestamp: 3 });
  sm.appendThinkingLevelChange("high");
  sm.appendModelChange("p", "m2");
  sm.appendCustomEntry("ext", { nested: { list: [1, 2, { deep: "\u2028 \u2029" }] } });
  sm.appendLabelChange(u, "start");
  sm.appendSessionInfo("a name");
  sm.appendCompaction("summary", u, 123);
  sm.branchWithSummary(u, "branch summary");
  sm.appendMessage({ role: "user", content: "on the branch", timestamp: 4 });
  const file = sm.getSessionFile();
  // An entry type no version of the agent knows, as another tool might write it.
  fs.appendFileSync(file, `${JSON.stringify({ type: "future_kind", id: "f1", parentId: sm.getLeafId(), timestamp: new Date(5).toISOString(), payload: { a: [1, "two"] } })}\n`);
  return file;
}

test("after an open and some idle time, the accessors a resume calls parse nothing more", async (t) => {
  const file = richSession(t);
  const parses = countParses(t);
  const sm = SessionManager.open(file);
  await settle(parses);
  const before = parses.n;
  sm.getBranch();
  sm.buildSessionContext();
  const entries = sm.getEntries();
  sm.getTree();
  assert.equal(parses.n, before, "every entry object was already made");
  assert.ok(entries.length >= 12);
});

test("objects parsed while idle are the very objects every accessor hands out", async (t) => {
  const file = richSession(t);
  const parses = countParses(t);
  const sm = SessionManager.open(file);
  await settle(parses);
  const entries = sm.getEntries();
  for (const e of entries) assert.equal(sm.getEntry(e.id), e, e.id);
  assert.equal(sm.getLeafEntry(), entries[entries.length - 1]);
  const byId = new Map(entries.map((e) => [e.id, e]));
  for (const e of sm.getBranch()) assert.equal(byId.get(e.id), e);
  const walk = (nodes) => nodes.forEach((n) => (assert.equal(byId.get(n.entry.id), n.entry), walk(n.children)));
  walk(sm.getTree());
});

test("entries parsed while idle equal the reference's, for every kind, long strings and surrogates included", async (t) => {
  const files = [richSession(t), ...["unknown-types-and-fields", "invalid-utf8", "crlf", "duplicate-ids", "non-object-lines", "blank-and-malformed-lines"].map((f) => path.join(FIXTURES, `${f}.jsonl`))];
  const dir = tempDir(t, "pi-idle-");
  for (const source of files) {
    // Opening may repair a file (a torn tail): each side gets its own copy.
    const mine = path.join(dir, `ours-${path.basename(source)}`);
    const theirs = path.join(dir, `ref-${path.basename(source)}`);
    fs.copyFileSync(source, mine);
    fs.copyFileSync(source, theirs);
    const parses = countParses(t);
    const sm = SessionManager.open(mine);
    await settle(parses);
    const ref = Reference.open(theirs);
    assert.deepEqual(sm.getEntries(), ref.getEntries(), path.basename(source));
    assert.deepEqual(sm.buildSessionContext(), ref.buildSessionContext(), path.basename(source));
    assert.deepEqual(sm.getHeader(), ref.getHeader(), path.basename(source));
  }
});

test("a session replaced before the program went idle is not parsed at all", async (t) => {
  const file = richSession(t);
  const parses = countParses(t);
  const sm = SessionManager.open(file);
  sm.newSession();
  const before = parses.n;
  await settle(parses);
  assert.equal(parses.n, before);
  assert.equal(sm.getEntries().length, 0);
});

test("a session opened later takes the place of the one before", async (t) => {
  const first = richSession(t);
  const second = richSession(t);
  const parses = countParses(t);
  const a = SessionManager.open(first);
  const b = SessionManager.open(second);
  await settle(parses);
  const afterIdle = parses.n;
  b.getEntries();
  assert.equal(parses.n, afterIdle, "the later session was parsed while idle");
  a.getEntries();
  assert.ok(parses.n > afterIdle, "the earlier one was left to its accessors");
});

test("an exclusive manager is left alone, so its lease goes with it", async (t) => {
  const file = richSession(t);
  const parses = countParses(t);
  const sm = SessionManager.open(file);
  sm.setExclusive(true);
  const before = parses.n;
  await settle(parses);
  assert.equal(parses.n, before);
  sm.setExclusive(false);
});

test("idle parsing never keeps a process alive", (t) => {
  const dir = tempDir(t, "pi-idle-");
  const sm = Reference.create("/proj", dir);
  for (let i = 0; i < 4000; i++) sm.appendMessage({ role: i % 2 ? "assistant" : "user", content: `message ${i} ${"w ".repeat(50)}`, timestamp: i });
  const script = `
    let parses = 0; const original = JSON.parse; JSON.parse = (...a) => (parses++, original(...a));
    const { SessionManager } = require(${JSON.stringify(path.join(ROOT, "index.js"))});
    SessionManager.open(${JSON.stringify(sm.getSessionFile())});
    const afterOpen = parses;
    process.on("exit", () => console.log(JSON.stringify({ parses: parses - afterOpen })));`;
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim()), { parses: 0 }, "the process ended without waiting for idle parsing");
});
