// Reserved entry ids (reserveEntryId, releaseEntryId, appendMessage's id and flush options).
// An addition beyond the reference (README, "Additions beyond the reference"): these tests run on this package only, and
// compare files with the reference where they must match.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadOurs } from "./helpers/target.mjs";
import { ENTRY_ID_RE, assistant, readText, stateOf, tempDir, throwsCode, user } from "./helpers/fixtures.mjs";

const { SessionManager } = loadOurs();


test("reserveEntryId returns a fresh 8-hex id that appendMessage then uses", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const first = sm.appendMessage(user("a"));
  const id = sm.reserveEntryId();
  assert.match(id, ENTRY_ID_RE);
  assert.notEqual(id, first);
  assert.equal(sm.getEntry(id), undefined);
  assert.equal(sm.appendMessage(assistant("b"), { id }), id);
  assert.equal(sm.getLeafId(), id);
  assert.equal(sm.getEntry(id).parentId, first);
  assert.equal(JSON.parse(readText(sm.getSessionFile()).trim().split("\n").at(-1)).id, id);
});

test("reserved ids are distinct from each other and from every entry", () => {
  const sm = SessionManager.inMemory("/proj");
  for (let i = 0; i < 50; i++) sm.appendMessage(user(`m${i}`));
  const taken = new Set(sm.getEntries().map((e) => e.id));
  const reserved = new Set();
  for (let i = 0; i < 2000; i++) {
    const id = sm.reserveEntryId();
    assert.equal(taken.has(id) || reserved.has(id), false);
    reserved.add(id);
  }
});

test("an entry appended with a reserved id in memory is the caller's object", () => {
  const sm = SessionManager.inMemory("/proj");
  const id = sm.reserveEntryId();
  const message = user("x");
  sm.appendMessage(message, { id });
  assert.equal(sm.getEntry(id).message, message);
  assert.equal(sm.getLeafEntry(), sm.getEntry(id));
});

test("a reservation is used once: appending the same id again is refused as a duplicate", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const id = sm.reserveEntryId();
  sm.appendMessage(user("a"), { id });
  const before = stateOf(sm);
  throwsCode(() => sm.appendMessage(user("b"), { id }), "DUPLICATE_ENTRY_ID");
  assert.deepEqual(stateOf(sm), before);
});

test("appendMessage with the id of an existing entry is refused and changes nothing", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const a = sm.appendMessage(user("a"));
  sm.appendMessage(assistant("b"));
  const before = stateOf(sm);
  throwsCode(() => sm.appendMessage(user("c"), { id: a }), "DUPLICATE_ENTRY_ID");
  assert.deepEqual(stateOf(sm), before);
});

test("appendMessage with an id that was never reserved is refused and changes nothing", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("a"));
  const before = stateOf(sm);
  throwsCode(() => sm.appendMessage(user("b"), { id: "abcdef12" }), "ENTRY_ID_NOT_RESERVED");
  assert.deepEqual(stateOf(sm), before);
});

test("appendMessage refuses an id that is not a non-empty string, and options of the wrong type", () => {
  const sm = SessionManager.inMemory("/proj");
  sm.appendMessage(user("a"));
  const before = stateOf(sm);
  for (const id of [5, "", null, {}, ["abcd1234"]]) throwsCode(() => sm.appendMessage(user("b"), { id }), "INVALID_ENTRY_ID", TypeError);
  for (const options of [5, "id", null, true]) throwsCode(() => sm.appendMessage(user("b"), options), "INVALID_ARGUMENT", TypeError);
  throwsCode(() => sm.appendMessage(user("b"), { flush: "yes" }), "INVALID_ARGUMENT", TypeError);
  assert.deepEqual(stateOf(sm), before);
});

test("releaseEntryId gives a reservation up, so the id can no longer be appended", () => {
  const sm = SessionManager.inMemory("/proj");
  const id = sm.reserveEntryId();
  assert.equal(sm.releaseEntryId(id), true);
  assert.equal(sm.releaseEntryId(id), false);
  assert.equal(sm.releaseEntryId("never123"), false);
  throwsCode(() => sm.appendMessage(user("x"), { id }), "ENTRY_ID_NOT_RESERVED");
  throwsCode(() => sm.releaseEntryId(5), "INVALID_ENTRY_ID", TypeError);
});

test("a failed write keeps the reservation, and the same id appends once the write can succeed", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const file = sm.getSessionFile();
  const id = sm.reserveEntryId();
  fs.writeFileSync(file, "occupied");
  const before = stateOf(sm);
  throwsCode(() => sm.appendMessage(user("a"), { id }), "EEXIST");
  assert.deepEqual(stateOf(sm), before);
  fs.unlinkSync(file);
  assert.equal(sm.appendMessage(user("a"), { id }), id);
  assert.equal(JSON.parse(readText(file).trim().split("\n")[1]).id, id);
});

test("newSession and setSessionFile drop the reservations of the session left", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  const a = sm.reserveEntryId();
  sm.newSession();
  throwsCode(() => sm.appendMessage(user("x"), { id: a }), "ENTRY_ID_NOT_RESERVED");
  sm.appendMessage(user("x"));
  const b = sm.reserveEntryId();
  sm.setSessionFile(path.join(dir, "other.jsonl"));
  throwsCode(() => sm.appendMessage(user("y"), { id: b }), "ENTRY_ID_NOT_RESERVED");
  assert.equal(sm.releaseEntryId(b), false);
});

test("appendMessage with flush writes a new session at once, even without a user or assistant message", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  const id = sm.appendMessage({ role: "custom", customType: "note", content: "n", display: false, timestamp: 1 }, { flush: true });
  const lines = readText(sm.getSessionFile()).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((e) => e.id), [sm.getSessionId(), ...sm.getEntries().map((e) => e.id)]);
  assert.equal(lines.at(-1).id, id);
  // ...and the session goes on in the same file as the reference would write it.
  const next = sm.appendThinkingLevelChange("low");
  assert.equal(JSON.parse(readText(sm.getSessionFile()).trim().split("\n").at(-1)).id, next);
});

test("appendMessage with a reserved id and flush is on disk when it returns", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const id = sm.reserveEntryId();
  sm.appendMessage(user("q"), { id, flush: true });
  const reopened = SessionManager.open(sm.getSessionFile());
  assert.equal(reopened.getLeafId(), id);
  assert.deepEqual(reopened.getEntry(id).message, user("q"));
});

test("appendMessage with flush: false behaves as a plain append", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage({ role: "custom", customType: "n", content: "c", display: false, timestamp: 1 }, { flush: false });
  assert.equal(fs.existsSync(sm.getSessionFile()), false);
});

test("createBranchedSession drops the reservations of the session it leaves", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const a = sm.appendMessage(user("a"));
  sm.appendMessage(assistant("b"));
  const id = sm.reserveEntryId();
  sm.createBranchedSession(a);
  throwsCode(() => sm.appendMessage(user("c"), { id }), "ENTRY_ID_NOT_RESERVED");
});
