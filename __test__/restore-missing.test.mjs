// Restore mode (setRestoreMissing, PI_SESSION_RESTORE_MISSING): a session whose file or directory was taken away
// is written back whole by the next append instead of failing.
// An addition beyond the reference (README, "Additions beyond the reference"): these tests run on this package only, and
// compare files with the reference where they must match.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadOurs } from "./helpers/target.mjs";
import { assistant, readText, sessionText, stateOf, tempDir, throwsCode, user } from "./helpers/fixtures.mjs";

const { SessionManager } = loadOurs();



function restoring(t, dir = tempDir(t)) {
  const sessions = path.join(dir, "sessions");
  const sm = SessionManager.create("/proj", sessions);
  sm.setRestoreMissing(true);
  return { sm, dir, sessions };
}

test("without restore mode an append after the sessions dir was removed still fails with ENOENT", (t) => {
  const dir = path.join(tempDir(t), "sessions");
  const sm = SessionManager.create("/proj", dir);
  sm.appendMessage(user("a"));
  fs.rmSync(dir, { recursive: true });
  throwsCode(() => sm.appendMessage(assistant("b")), "ENOENT");
  assert.equal(fs.existsSync(dir), false);
});

test("in restore mode an append after the sessions dir was removed makes it again and writes the whole session back", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendModelChange("prov", "mod");
  sm.appendMessage(user("a"));
  sm.appendMessage(assistant("b"));
  const file = sm.getSessionFile();
  fs.rmSync(sessions, { recursive: true });
  const id = sm.appendMessage(user("c"));
  assert.equal(readText(file), sessionText(sm));
  assert.equal(sm.getLeafId(), id);
  const reopened = SessionManager.open(file);
  assert.deepEqual(reopened.getEntries(), sm.getEntries());
});

test("in restore mode the session goes on in the restored file one line per append", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendMessage(user("a"));
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(assistant("b"));
  const before = readText(sm.getSessionFile());
  const id = sm.appendMessage(user("c"));
  assert.equal(readText(sm.getSessionFile()), `${before}${JSON.stringify(sm.getEntry(id))}\n`);
  assert.equal(readText(sm.getSessionFile()), sessionText(sm));
});

test("in restore mode an append after the file alone was deleted writes the whole session back, not one line", (t) => {
  const { sm } = restoring(t);
  sm.appendMessage(user("a"));
  sm.appendMessage(assistant("b"));
  fs.unlinkSync(sm.getSessionFile());
  sm.appendCustomEntry("ext", { n: 1 });
  assert.equal(readText(sm.getSessionFile()), sessionText(sm));
});

test("in restore mode a first write into a removed sessions dir makes it and writes every pending entry", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendModelChange("prov", "mod");
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(user("a"));
  assert.equal(readText(sm.getSessionFile()), sessionText(sm));
});

test("in restore mode a session opened at a path whose directory does not exist is written there", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "not", "made", "yet", "s.jsonl");
  const sm = SessionManager.open(file, path.join(dir, "other"));
  sm.setRestoreMissing(true);
  sm.appendMessage(user("a"));
  assert.equal(readText(file), sessionText(sm));
});

test("in restore mode long lines read back from the old file are written back intact", (t) => {
  const { sm, sessions } = restoring(t);
  const big = "x".repeat(8192);
  sm.appendMessage(user(big));
  sm.appendMessage(assistant(big + "y"));
  sm.appendMessage(user(big + "z"));
  const expected = sessionText(sm);
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(assistant("short"));
  const text = readText(sm.getSessionFile());
  assert.equal(text.slice(0, expected.length), expected);
  assert.equal(text, sessionText(sm));
  // The lines held in the old file stay readable: a branched copy needs them.
  const copy = sm.createBranchedSession(sm.getLeafId());
  assert.deepEqual(SessionManager.open(copy).getEntries().map((e) => e.message), sm.getEntries().map((e) => e.message));
});

test("in restore mode flush writes back a file that was deleted", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendMessage(user("a"));
  fs.rmSync(sessions, { recursive: true });
  assert.equal(sm.flush(), true);
  assert.equal(readText(sm.getSessionFile()), sessionText(sm));
});

test("in restore mode an exclusive manager takes its lease again when the directory is made again", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendMessage(user("a"));
  sm.setExclusive(true);
  const lock = `${sm.getSessionFile()}.lock`;
  assert.equal(fs.existsSync(lock), true);
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(assistant("b"));
  assert.equal(fs.existsSync(lock), true);
  assert.equal(JSON.parse(readText(lock)).pid, process.pid);
  sm.setExclusive(false);
  assert.equal(fs.existsSync(lock), false);
});

test("in restore mode a write back that fails leaves memory as it was", (t) => {
  const { sm, dir, sessions } = restoring(t);
  sm.appendMessage(user("a"));
  fs.rmSync(sessions, { recursive: true });
  // A file where the directory should be: it cannot be made again.
  fs.writeFileSync(sessions, "not a dir");
  const before = stateOf(sm);
  assert.throws(() => sm.appendMessage(assistant("b")), (err) => typeof err.code === "string" && err.code.startsWith("E"));
  assert.deepEqual(stateOf(sm), before);
  fs.rmSync(path.join(dir, "sessions"));
  sm.appendMessage(assistant("b"));
  assert.equal(readText(sm.getSessionFile()), sessionText(sm));
});

test("PI_SESSION_RESTORE_MISSING=1 turns restore mode on for every new manager", (t) => {
  const prev = process.env.PI_SESSION_RESTORE_MISSING;
  process.env.PI_SESSION_RESTORE_MISSING = "1";
  t.after(() => (prev === undefined ? delete process.env.PI_SESSION_RESTORE_MISSING : (process.env.PI_SESSION_RESTORE_MISSING = prev)));
  const sessions = path.join(tempDir(t), "sessions");
  const sm = SessionManager.create("/proj", sessions);
  sm.appendMessage(user("a"));
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(assistant("b"));
  assert.equal(readText(sm.getSessionFile()), sessionText(sm));
});

test("setRestoreMissing takes a boolean only", () => {
  const sm = SessionManager.inMemory("/proj");
  throwsCode(() => sm.setRestoreMissing("yes"), "INVALID_ARGUMENT", TypeError);
  sm.setRestoreMissing(false);
});
