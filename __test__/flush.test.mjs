// flush(): a session made durable on request, a new one written at once (the reference waits for its first user
// or assistant message, so an early interrupt lost it).
// An addition beyond the reference (README, "Additions beyond the reference"): these tests run on this package only, and
// compare files with the reference where they must match.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadOurs, loadReference } from "./helpers/target.mjs";
import { assistant, readText, sessionText, tempDir, throwsCode, user } from "./helpers/fixtures.mjs";

const { SessionManager } = loadOurs();
const Reference = (await loadReference()).SessionManager;

/** The lines of a session file with ids and clock times replaced by stable names (in order of
 * first appearance), so that files of two runs of the same calls compare equal. */
function normalized(file) {
  const names = new Map();
  const name = (v) => {
    if (typeof v !== "string") return v;
    if (!names.has(v)) names.set(v, `id${names.size}`);
    return names.get(v);
  };
  return readText(file)
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const e = JSON.parse(line);
      for (const k of ["id", "parentId", "targetId", "firstKeptEntryId", "fromId"]) if (k in e) e[k] = name(e[k]);
      if ("timestamp" in e) e.timestamp = "T";
      return JSON.stringify(e);
    });
}


test("flush writes a new session's header before any message and returns true", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const file = sm.getSessionFile();
  assert.equal(fs.existsSync(file), false);
  assert.equal(sm.flush(), true);
  assert.deepEqual(readText(file), `${JSON.stringify(sm.getHeader())}\n`);
});

test("flush writes every pending setup entry after the header", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  sm.appendThinkingLevelChange("high");
  sm.appendCustomEntry("ext", { a: 1 });
  assert.equal(sm.flush(), true);
  const expected = [sm.getHeader(), ...sm.getEntries()].map((e) => `${JSON.stringify(e)}\n`).join("");
  assert.equal(readText(sm.getSessionFile()), expected);
});

test("flush returns false for an in-memory session and writes nothing", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.inMemory(dir);
  sm.appendMessage(user("x"));
  assert.equal(sm.flush(), false);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test("a second flush leaves the file byte-identical", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  sm.flush();
  const once = fs.readFileSync(sm.getSessionFile());
  assert.equal(sm.flush(), true);
  assert.deepEqual(fs.readFileSync(sm.getSessionFile()), once);
});

test("flush of a session already written returns true and changes nothing", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("x"));
  const before = readText(sm.getSessionFile());
  assert.equal(sm.flush(), true);
  assert.equal(readText(sm.getSessionFile()), before);
});

test("appends after an early flush go to the same file, one line each", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  sm.flush();
  const file = sm.getSessionFile();
  const before = readText(file);
  const id = sm.appendThinkingLevelChange("low");
  assert.equal(readText(file), `${before}${JSON.stringify(sm.getEntry(id))}\n`);
  assert.equal(sm.getSessionFile(), file);
});

test("a session flushed early ends as the file the reference writes for the same calls", (t) => {
  const run = (Class, flushAt) => {
    const sm = Class.create("/proj", tempDir(t));
    const steps = [
      () => sm.appendModelChange("prov", "mod"),
      () => sm.appendThinkingLevelChange("high"),
      () => sm.appendMessage(user("q")),
      () => sm.appendMessage(assistant("a")),
      () => sm.appendCustomEntry("ext", { n: 1 }),
    ];
    steps.forEach((step, i) => {
      if (i === flushAt) sm.flush();
      step();
    });
    return normalized(sm.getSessionFile());
  };
  const expected = run(Reference, -1);
  for (const at of [0, 1, 2, 3]) assert.deepEqual(run(SessionManager, at), expected, `flush before step ${at}`);
});

test("a session flushed early reopens with the same entries", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  const m = sm.appendModelChange("prov", "mod");
  sm.flush();
  const reopened = SessionManager.open(sm.getSessionFile());
  assert.equal(reopened.getSessionId(), sm.getSessionId());
  assert.deepEqual(reopened.getEntries().map((e) => e.id), [m]);
  assert.equal(reopened.getLeafId(), m);
});

test("flush of a session opened on a missing path creates that file", (t) => {
  const file = path.join(tempDir(t), "chosen.jsonl");
  const sm = SessionManager.open(file);
  assert.equal(sm.flush(), true);
  assert.equal(JSON.parse(readText(file)).id, sm.getSessionId());
});

test("flush after newSession writes the new session, leaving the old file as it was", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("x"));
  const old = sm.getSessionFile();
  const oldText = readText(old);
  sm.newSession();
  sm.flush();
  assert.notEqual(sm.getSessionFile(), old);
  assert.equal(readText(old), oldText);
  assert.equal(JSON.parse(readText(sm.getSessionFile())).id, sm.getSessionId());
});

test("flush refuses a path that another writer took, with EEXIST, and keeps the entries pending", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  fs.writeFileSync(sm.getSessionFile(), "occupied");
  throwsCode(() => sm.flush(), "EEXIST");
  assert.equal(readText(sm.getSessionFile()), "occupied");
  assert.equal(sm.getEntryCount(), 1);
});


test("flush writes a branched session that the reference would keep in memory until its first message", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const model = sm.appendModelChange("prov", "mod");
  sm.appendMessage(user("q"));
  const file = sm.createBranchedSession(model);
  assert.equal(fs.existsSync(file), false);
  assert.equal(sm.flush(), true);
  assert.equal(readText(file), sessionText(sm));
  assert.equal(SessionManager.open(file).getLeafId(), model);
});
