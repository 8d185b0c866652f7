// What upstream's transcript read model proposal (earendil-works/pi,
// transcript-read-model.test.ts at 5f3eac7) expects, asked of ours in our own words, case by case.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

import { assistant, tempDir, user } from "./helpers/fixtures.mjs";
import { loadOurs } from "./helpers/target.mjs";

const { SessionManager, MAX_SESSION_TRANSCRIPT_PAGE_SIZE } = loadOurs();

test("the active branch pages backward and forward with opaque cursors, and an after cursor reads a later append", () => {
  const sm = SessionManager.inMemory("/w");
  const ids = [user("one"), assistant("two"), user("three"), assistant("four"), user("five")].map((m) => sm.appendMessage(m));
  const latest = sm.readTranscriptPage({ limit: 2 });
  assert.deepEqual(latest.items.map((i) => i.id), ids.slice(3));
  assert.equal(latest.hasMoreBefore, true);
  assert.equal(latest.hasMoreAfter, false);
  assert.ok(!latest.cursors.before.includes(ids[3]));
  const older = sm.readTranscriptPage({ limit: 2, before: latest.cursors.before });
  assert.deepEqual(older.items.map((i) => i.id), ids.slice(1, 3));
  assert.equal(older.hasMoreBefore, true);
  const beforeAppend = latest.cursors.after;
  const appended = sm.appendMessage(assistant("six"));
  const next = sm.readTranscriptPage({ limit: 2, after: beforeAppend });
  assert.deepEqual(next.items.map((i) => i.id), [appended]);
  assert.notEqual(next.cursors.after, beforeAppend);
});

test("a compaction is projected as its summary message, and only what follows it counts after it", () => {
  const sm = SessionManager.inMemory("/w");
  const first = sm.appendMessage(user("one"));
  sm.appendMessage(assistant("two"));
  const compaction = sm.appendCompaction("summary", first, 123);
  const last = sm.appendMessage(user("three"));
  const page = sm.readTranscriptPage({ limit: 10 });
  assert.deepEqual(page.items.map((i) => i.id), [first, sm.getBranch()[1].id, compaction, last]);
  assert.equal(page.items[2].message.role, "compactionSummary");
  assert.equal(page.items[2].message.summary, "summary");
  assert.equal(page.itemsAfterLatestCompaction, 1);
});

test("appends are told after the commit point and a branch change is told as a reset with its page", (t) => {
  const dir = tempDir(t, "pi-transcript-");
  const sm = SessionManager.create(dir, dir);
  const changes = [];
  sm.subscribeTranscript(
    (change) => {
      if (change.type === "append" && change.items[0]?.message.role === "assistant") {
        const file = sm.getSessionFile();
        assert.ok(file && fs.existsSync(file));
        assert.ok(fs.readFileSync(file, "utf8").includes(change.items[0].id));
      }
      changes.push(change);
    },
    { resetPageSize: 10 },
  );
  const first = sm.appendMessage(user("one"));
  sm.appendMessage(assistant("two"));
  sm.appendMessage(user("three"));
  sm.branch(first);
  const branched = sm.appendMessage(user("branch"));
  assert.deepEqual(changes.map((c) => c.type), ["append", "append", "append", "reset", "append"]);
  assert.deepEqual(changes[3].page.items.map((i) => i.id), [first]);
  assert.equal(changes[4].items[0].id, branched);
});

test("unbounded, ambiguous, foreign and off-branch cursor reads are refused with upstream's words", () => {
  const sm = SessionManager.inMemory("/w");
  const first = sm.appendMessage(user("one"));
  sm.appendMessage(assistant("two"));
  const cursor = sm.readTranscriptPage({ limit: 1 }).cursors.after;
  const foreign = SessionManager.inMemory("/w");
  foreign.appendMessage(user("foreign"));
  assert.throws(() => sm.readTranscriptPage({ limit: MAX_SESSION_TRANSCRIPT_PAGE_SIZE + 1 }), /limit/);
  assert.throws(() => sm.readTranscriptPage({ limit: 1, before: cursor, after: cursor }), /either before or after/);
  assert.throws(() => foreign.readTranscriptPage({ limit: 1, after: cursor }), /different session/);
  sm.branch(first);
  assert.throws(() => sm.readTranscriptPage({ limit: 1, after: cursor }), /not on the active branch/);
});
