// What upstream's entry-id reservation proposal (earendil-works/pi, entry-id-reservation.test.ts
// at 5c72509) expects, asked of ours in our own words: reserving a chosen id, upstream's refusal
// messages (our codes kept), and a failed durable write that keeps the reservation (default
// mode: a removed directory fails the write, as the reference's ENOENT).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { tempDir } from "./helpers/fixtures.mjs";
import { loadOurs } from "./helpers/target.mjs";

const { SessionManager } = loadOurs();

const hello = (timestamp = 1, content = "hello") => ({ role: "user", content, timestamp });

test("reserved ids are distinct and neither append an entry nor move the leaf", () => {
  const sm = SessionManager.inMemory("/w");
  const first = sm.reserveEntryId();
  const second = sm.reserveEntryId();
  assert.notEqual(first, second);
  assert.deepEqual(sm.getEntries(), []);
  assert.equal(sm.getEntry(first), undefined);
  assert.equal(sm.getLeafId(), null);
});

test("reserveEntryId(id) reserves the id chosen, and appendMessage uses it under the leaf", () => {
  const sm = SessionManager.inMemory("/w");
  const parentId = sm.appendCustomEntry("parent");
  const reserved = sm.reserveEntryId("maverick-entry-1");
  assert.equal(reserved, "maverick-entry-1");
  assert.equal(sm.appendMessage(hello(), { id: reserved }), reserved);
  const entry = sm.getEntry(reserved);
  assert.equal(entry.type, "message");
  assert.equal(entry.id, reserved);
  assert.equal(entry.parentId, parentId);
});

test("an id never reserved is refused with upstream's message and our code, changing nothing", () => {
  const sm = SessionManager.inMemory("/w");
  assert.throws(() => sm.appendMessage(hello(), { id: "not-reserved" }), {
    code: "ENTRY_ID_NOT_RESERVED",
    message: "Session entry ID was not reserved: not-reserved",
  });
  assert.deepEqual(sm.getEntries(), []);
});

test("an id used already is refused with upstream's message and our code", () => {
  const sm = SessionManager.inMemory("/w");
  const id = sm.reserveEntryId("reserved-once");
  sm.appendMessage(hello(), { id });
  assert.throws(() => sm.appendMessage(hello(2, "again"), { id }), {
    code: "DUPLICATE_ENTRY_ID",
    message: "Session entry ID already exists: reserved-once",
  });
  assert.equal(sm.getEntries().length, 1);
  assert.throws(() => sm.reserveEntryId("reserved-once"), { code: "DUPLICATE_ENTRY_ID", message: "Session entry ID already exists: reserved-once" });
});

test("a chosen id not of a session id's form is refused with upstream's words", () => {
  const sm = SessionManager.inMemory("/w");
  for (const bad of ["not valid", "", "-lead", "trail.", 5]) {
    assert.throws(() => sm.reserveEntryId(/** @type {any} */ (bad)), (err) => {
      assert.ok(err instanceof TypeError);
      assert.equal(err.code, "INVALID_ENTRY_ID");
      assert.match(err.message, /^Session entry id must be non-empty/);
      return true;
    });
  }
});

test("a chosen id reserved already is refused until released", () => {
  const sm = SessionManager.inMemory("/w");
  sm.reserveEntryId("twice");
  assert.throws(() => sm.reserveEntryId("twice"), { code: "DUPLICATE_ENTRY_ID" });
  assert.equal(sm.releaseEntryId("twice"), true);
  assert.equal(sm.reserveEntryId("twice"), "twice");
});

test("a released reservation and one of a previous session are no longer reserved", () => {
  const sm = SessionManager.inMemory("/w");
  const released = sm.reserveEntryId("released-entry");
  assert.equal(sm.releaseEntryId(released), true);
  assert.equal(sm.releaseEntryId(released), false);
  assert.throws(() => sm.appendMessage(hello(), { id: released }), { message: "Session entry ID was not reserved: released-entry" });
  const previous = sm.getSessionId();
  const cleared = sm.reserveEntryId("cleared-entry");
  sm.newSession();
  assert.notEqual(sm.getSessionId(), previous);
  assert.throws(() => sm.appendMessage(hello(), { id: cleared }), { message: "Session entry ID was not reserved: cleared-entry" });
});

test("a flushed append of a reserved user entry is on disk before any assistant message", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create(dir, dir);
  const file = sm.getSessionFile();
  const id = sm.reserveEntryId("durable-user-entry");
  sm.appendMessage(hello(), { id, flush: true });
  assert.ok(fs.existsSync(file));
  const entry = SessionManager.open(file, dir).getEntry(id);
  assert.equal(entry.type, "message");
  assert.deepEqual([entry.message.role, entry.message.content], ["user", "hello"]);
});

// Upstream's proposal waits for the first assistant message; the reference 1.6.0 (our oracle)
// writes the session at its first user message, and so do we without flush.
test("without flush the first user message is written when the reference writes it", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create(dir, dir);
  sm.appendCustomEntry("before");
  assert.equal(fs.existsSync(sm.getSessionFile()), false);
  sm.appendMessage(hello());
  assert.equal(fs.existsSync(sm.getSessionFile()), true);
});

test("a flushed append into a removed directory fails in default mode, keeps the tree and the reservation", (t) => {
  const dir = path.join(tempDir(t), "sessions");
  fs.mkdirSync(dir);
  const sm = SessionManager.create(dir, dir);
  const id = sm.reserveEntryId("retryable-user-entry");
  fs.rmSync(dir, { recursive: true, force: true });
  assert.throws(() => sm.appendMessage(hello(), { id, flush: true }), { code: "ENOENT" });
  assert.deepEqual(sm.getEntries(), []);
  assert.equal(sm.getLeafId(), null);
  fs.mkdirSync(dir, { recursive: true });
  assert.equal(sm.appendMessage(hello(), { id, flush: true }), id);
});
