// dispose(): a manager given up releases its descriptors and its lease, and every later call is refused.
// An addition beyond the reference (README, "Additions beyond the reference"): these tests run on this package only, and
// compare files with the reference where they must match.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { loadOurs } from "./helpers/target.mjs";
import { assistant, readText, tempDir, throwsCode, user } from "./helpers/fixtures.mjs";

const { SessionManager } = loadOurs();


/** Descriptors of this process open on `file` (Linux: /proc/self/fd). */
function descriptorsOn(file) {
  let n = 0;
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed meanwhile (the fd of the readdir itself)
    }
  }
  return n;
}

test("every method of a disposed manager throws SESSION_DISPOSED", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const id = sm.appendMessage(user("x"));
  sm.dispose();
  const names = Object.getOwnPropertyNames(SessionManager.prototype).filter((n) => n !== "constructor" && n !== "dispose");
  assert.ok(names.length > 30);
  for (const name of names) {
    throwsCode(() => sm[name](id, id), "SESSION_DISPOSED");
  }
  assert.ok(sm instanceof SessionManager);
});

test("the error of a disposed manager names the method called", (t) => {
  const sm = SessionManager.inMemory(tempDir(t));
  sm.dispose();
  assert.throws(() => sm.getLeafId(), { code: "SESSION_DISPOSED", message: /getLeafId\(\).*dispose/ });
});

test("a second dispose does nothing", (t) => {
  const sm = SessionManager.inMemory(tempDir(t));
  sm.dispose();
  assert.equal(sm.dispose(), undefined);
  throwsCode(() => sm.getEntries(), "SESSION_DISPOSED");
});

test("dispose closes the descriptors the manager holds on its file", { skip: process.platform !== "linux" }, (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("x"));
  sm.appendMessage(assistant("y"));
  sm.appendMessage(user("z"));
  const file = sm.getSessionFile();
  assert.ok(descriptorsOn(file) >= 1, "the appender keeps its descriptor open between appends");
  sm.dispose();
  assert.equal(descriptorsOn(file), 0);
});

test("dispose releases the exclusive lease at once", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  sm.appendMessage(user("x"));
  sm.setExclusive(true);
  const file = sm.getSessionFile();
  assert.equal(fs.existsSync(`${file}.lock`), true);
  sm.dispose();
  assert.equal(fs.existsSync(`${file}.lock`), false);
  const other = SessionManager.open(file);
  other.setExclusive(true);
  other.appendMessage(assistant("mine now"));
  other.dispose();
});

test("other managers keep working after one is disposed, and a disposed manager's entries stay usable", (t) => {
  const dir = tempDir(t);
  const a = SessionManager.create("/proj", dir);
  a.appendMessage(user("a1"));
  a.appendMessage(assistant("a2"));
  const entries = [a.getHeader(), ...a.getBranch()];
  const file = a.getSessionFile();
  a.dispose();
  // Made from the disposed manager's objects: serialized again rather than taken from it.
  const copy = SessionManager.inMemory("/proj", undefined, entries);
  assert.deepEqual(copy.getEntries(), entries.slice(1));
  assert.equal(copy.buildSessionContext().messages.length, 2);
  const b = SessionManager.open(file);
  assert.equal(b.getEntryCount(), 2);
  b.appendMessage(user("b1"));
  assert.equal(SessionManager.open(file).getEntryCount(), 3);
});

test("a disposed manager writes nothing more to its file", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("x"));
  const file = sm.getSessionFile();
  const before = readText(file);
  sm.dispose();
  throwsCode(() => sm.appendMessage(user("late")), "SESSION_DISPOSED");
  throwsCode(() => sm._persist({ type: "custom", id: "abcd1234" }), "SESSION_DISPOSED");
  assert.equal(readText(file), before);
});
