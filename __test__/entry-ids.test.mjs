// Entry ids come from the core's one rule (crates/pi-session-core/src/ids.rs): the shell takes the
// next of a batch of random ids the core drew (native.randomEntryIds), and when the session
// already has that id the core gives one it has not (freshEntryId). Here the batch is made of one
// id repeated, so that appends meet ids the session has.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { createRequire } from "node:module";

import { ROOT } from "./helpers/target.mjs";
import { tempDir, user } from "./helpers/fixtures.mjs";

const require = createRequire(import.meta.url);
const native = require(path.join(ROOT, "native.js"));
const { SessionManager } = require(path.join(ROOT, "index.js"));

const SAME = "abcd1234";

/** Runs `fn` while every batch of random ids is SAME repeated; `fill` appends enough entries
 * first to use up the batch drawn before. */
function withRepeatedIds(t, fill) {
  const real = native.randomEntryIds;
  native.randomEntryIds = (count) => SAME.repeat(count);
  t.after(() => (native.randomEntryIds = real));
  // The shell draws 512 ids at a time: past that many appends, every id is SAME until taken.
  for (let i = 0; i < 600; i++) fill();
}

test("an entry whose random id the session has gets another from the core, never a duplicate", (t) => {
  const sm = SessionManager.inMemory("/work");
  withRepeatedIds(t, () => sm.appendMessage(user("fill")));
  const ids = sm.getEntries().map((e) => e.id);
  assert.equal(new Set(ids).size, ids.length, "ids are unique");
  assert.equal(ids.filter((id) => id === SAME).length, 1, "the repeated id is taken once");
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}$/, "a fresh id is 8 hex chars");
});

test("a compaction that keeps from itself follows the id the core gave it", (t) => {
  const sm = SessionManager.create("/work", tempDir(t));
  withRepeatedIds(t, () => sm.appendMessage(user("fill")));
  const id = sm.appendCompaction("summary", undefined, 10);
  assert.notEqual(id, SAME);
  const compaction = sm.getEntry(id);
  assert.equal(compaction.firstKeptEntryId, id, "retain-none names the compaction's own id");
  const reopened = SessionManager.open(sm.getSessionFile());
  assert.equal(reopened.getEntry(id).firstKeptEntryId, id, "and so does its line");
});
