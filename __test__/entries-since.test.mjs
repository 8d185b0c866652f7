// getEntriesSince(count): the entries appended after a count the caller saw, for an extension that follows a session.
// An addition beyond the reference (README, "Additions beyond the reference"): these tests run on this package only, and
// compare files with the reference where they must match.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadOurs } from "./helpers/target.mjs";
import { assistant, tempDir, throwsCode, user } from "./helpers/fixtures.mjs";

const { SessionManager } = loadOurs();


test("getEntriesSince returns the entries appended after the first count, as getEntries objects", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const a = sm.appendMessage(user("a"));
  const b = sm.appendMessage(assistant("b"));
  const c = sm.appendModelChange("p", "m");
  assert.deepEqual(sm.getEntriesSince(1).map((e) => e.id), [b, c]);
  const all = sm.getEntries();
  const since = sm.getEntriesSince(0);
  assert.equal(since.length, 3);
  since.forEach((e, i) => assert.equal(e, all[i]));
  assert.equal(sm.getEntriesSince(3).length, 0);
  assert.equal(sm.getEntriesSince(2)[0], sm.getEntry(c));
  assert.equal(sm.getEntriesSince(0)[0].id, a);
});

test("getEntriesSince of an opened file hands out the objects later calls return too", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  for (let i = 0; i < 5; i++) sm.appendMessage(user(`m${i}`));
  const opened = SessionManager.open(sm.getSessionFile());
  const tail = opened.getEntriesSince(3);
  assert.equal(tail.length, 2);
  const all = opened.getEntries();
  assert.equal(tail[0], all[3]);
  assert.equal(tail[1], all[4]);
  assert.equal(tail[1], opened.getLeafEntry());
});

test("getEntriesSince with the count of an earlier call returns exactly what was appended since", (t) => {
  const sm = SessionManager.inMemory("/proj");
  sm.appendMessage(user("a"));
  const seen = sm.getEntryCount();
  const b = sm.appendMessage(assistant("b"));
  sm.branch(b);
  const c = sm.appendCustomEntry("x", 1);
  assert.deepEqual(sm.getEntriesSince(seen).map((e) => e.id), [b, c]);
  const mark = sm.getEntries().length;
  assert.deepEqual(sm.getEntriesSince(mark), []);
  const d = sm.appendLabelChange(b, "here");
  assert.deepEqual(sm.getEntriesSince(mark).map((e) => e.id), [d]);
});

test("getEntriesSince past the end throws a RangeError with code ENTRY_COUNT_OUT_OF_RANGE", (t) => {
  for (const cached of [false, true]) {
    const sm = SessionManager.create("/proj", tempDir(t));
    sm.appendMessage(user("a"));
    if (cached) sm.getEntries();
    throwsCode(() => sm.getEntriesSince(2), "ENTRY_COUNT_OUT_OF_RANGE", RangeError);
    assert.equal(sm.getEntriesSince(1).length, 0);
  }
});

test("getEntriesSince refuses a negative, fractional or non-number count with a RangeError", (t) => {
  const sm = SessionManager.inMemory("/proj");
  sm.appendMessage(user("a"));
  for (const bad of [-1, 0.5, NaN, Infinity, "1", null, undefined, {}, 2 ** 40]) {
    throwsCode(() => sm.getEntriesSince(bad), "INVALID_ARGUMENT", RangeError);
  }
  assert.equal(sm.getEntriesSince(0).length, 1);
});
