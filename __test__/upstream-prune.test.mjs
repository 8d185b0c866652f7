// What upstream's pruneBranch/countSubtree proposal (earendil-works/pi, prune-branch.test.ts at
// 1d0879f) expects, asked of ours in our own words: the result's shape, countSubtree of an
// unknown id, labels dropped with a branch, re-parenting past them, a leaf label kept.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

import { assistant, tempDir, user } from "./helpers/fixtures.mjs";
import { loadOurs } from "./helpers/target.mjs";

const { SessionManager } = loadOurs();

/** a ─ b ─ c ─ d (active), and c ─ e ─ f on the side; the leaf back on d. */
function sideBranch() {
  const sm = SessionManager.inMemory("/w");
  const a = sm.appendMessage(user("a"));
  const b = sm.appendMessage(user("b"));
  const c = sm.appendMessage(user("c"));
  const d = sm.appendMessage(user("d"));
  sm.branch(c);
  const e = sm.appendMessage(user("e"));
  const f = sm.appendMessage(assistant("f"));
  sm.branch(d);
  return { sm, a, b, c, d, e, f };
}

/** r ─ a (active) and r ─ x on the side: the shape for labels on the active path naming x. */
function labelTarget() {
  const sm = SessionManager.inMemory("/w");
  const r = sm.appendMessage(user("r"));
  const a = sm.appendMessage(user("a"));
  sm.branch(r);
  const x = sm.appendMessage(user("x"));
  sm.branch(a);
  return { sm, r, a, x };
}

const sorted = (ids) => [...ids].sort();

test("pruneBranch returns the ids it removed and whether the context changed", () => {
  const { sm, a, b, c, d, e, f } = sideBranch();
  const result = sm.pruneBranch(e);
  assert.deepEqual(sorted(result.removedEntryIds), sorted([e, f]));
  assert.equal(result.contextChanged, false);
  assert.deepEqual(sorted(sm.getEntries().map((x) => x.id)), sorted([a, b, c, d]));
  assert.deepEqual(sm.getTree()[0].children[0].children[0].children.map((n) => n.entry.id), [d]);
  assert.equal(sm.getLeafId(), d);
});

test("pruneBranch keeps our own counts beside upstream's fields", () => {
  const { sm, e } = sideBranch();
  const result = sm.pruneBranch(e);
  assert.equal(result.removed, 2);
  assert.equal(result.labelsDropped, 0);
  assert.equal(result.written, false);
  assert.ok(result.bytesBefore > result.bytesAfter);
});

test("pruneBranch leaves the active context as it was, and the pruned id counts 0 after", () => {
  const { sm, e } = sideBranch();
  const before = sm.buildSessionContext();
  sm.pruneBranch(e);
  assert.deepEqual(sm.buildSessionContext(), before);
  assert.equal(sm.countSubtree(e), 0);
});

test("countSubtree counts a deep branch and the whole tree from its root", () => {
  const sm = SessionManager.inMemory("/w");
  const root = sm.appendMessage(user("root"));
  const leaf = sm.appendMessage(user("leaf"));
  sm.branch(root);
  const e1 = sm.appendMessage(user("e1"));
  const e2 = sm.appendMessage(user("e2"));
  const e3 = sm.appendMessage(assistant("e3"));
  sm.branch(leaf);
  assert.equal(sm.countSubtree(e1), 3);
  assert.equal(sm.countSubtree(root), 5);
  assert.deepEqual(sorted(sm.pruneBranch(e1).removedEntryIds), sorted([e1, e2, e3]));
  assert.equal(sm.getLeafId(), leaf);
});

test("countSubtree of an unknown id is 0", () => {
  assert.equal(sideBranch().sm.countSubtree("does-not-exist"), 0);
});

test("pruneBranch refuses the leaf and its ancestors with upstream's message, changing nothing", () => {
  const { sm, a, c, d } = sideBranch();
  for (const id of [d, c, a]) {
    assert.throws(() => sm.pruneBranch(id), { code: "ON_ACTIVE_BRANCH", message: "Cannot delete the branch you are currently on" });
  }
  assert.equal(sm.getEntries().length, 6);
  assert.equal(sm.getLeafId(), d);
});

test("pruneBranch refuses an unknown id with Entry <id> not found", () => {
  assert.throws(() => sideBranch().sm.pruneBranch("nope"), { code: "ENTRY_NOT_FOUND", message: "Entry nope not found" });
});

test("a label clearing a bookmark on the pruned branch goes with it, so the bookmark stands", () => {
  const sm = SessionManager.inMemory("/w");
  const a = sm.appendMessage(user("a"));
  const b = sm.appendMessage(user("b"));
  const c = sm.appendMessage(user("c"));
  const set = sm.appendLabelChange(c, "bar");
  sm.branch(b);
  const e = sm.appendMessage(user("e"));
  sm.appendLabelChange(c, undefined);
  sm.branch(set);
  assert.ok(sm.pruneBranch(e).removedEntryIds.includes(e));
  assert.equal(sm.getLabel(c), "bar");
  const ids = sm.getEntries().map((x) => x.id);
  assert.ok(ids.includes(a) && ids.includes(set));
});

test("a label on the active path naming the pruned entry is removed and its child re-parented", () => {
  const { sm, r, a, x } = labelTarget();
  const label = sm.appendLabelChange(x, "mark");
  const b = sm.appendMessage(user("b"));
  assert.deepEqual(sm.getBranch().map((e) => e.id), [r, a, label, b]);
  const context = sm.buildSessionContext();
  const result = sm.pruneBranch(x);
  assert.equal(result.contextChanged, false);
  assert.ok(result.removedEntryIds.includes(x) && result.removedEntryIds.includes(label));
  assert.equal(sm.getEntry(b).parentId, a);
  assert.deepEqual(sm.getBranch().map((e) => e.id), [r, a, b]);
  assert.deepEqual(sm.buildSessionContext(), context);
});

test("a chain of labels naming the pruned entry is skipped whole when re-parenting", () => {
  const { sm, r, a, x } = labelTarget();
  const l1 = sm.appendLabelChange(x, "one");
  const l2 = sm.appendLabelChange(x, "two");
  const b = sm.appendMessage(user("b"));
  sm.pruneBranch(x);
  assert.equal(sm.getEntry(l1), undefined);
  assert.equal(sm.getEntry(l2), undefined);
  assert.equal(sm.getEntry(b).parentId, a);
  assert.deepEqual(sm.getBranch().map((e) => e.id), [r, a, b]);
});

test("a label that is the leaf stays when the entry it names is pruned", () => {
  const { sm, r, a, x } = labelTarget();
  const label = sm.appendLabelChange(x, "mark");
  const context = sm.buildSessionContext();
  const result = sm.pruneBranch(x);
  assert.ok(!result.removedEntryIds.includes(label));
  assert.equal(sm.getLeafId(), label);
  assert.notEqual(sm.getLeafEntry(), undefined);
  assert.deepEqual(sm.getBranch().map((e) => e.id), [r, a, label]);
  assert.deepEqual(sm.buildSessionContext(), context);
});

test("a compaction of the active path keeping from a dropped label keeps from the next entry, and the context is reported changed", () => {
  const { sm, r, a, x } = labelTarget();
  const label = sm.appendLabelChange(x, "mark");
  const b = sm.appendMessage(user("b"));
  const compaction = sm.appendCompaction("summary", label, 1000);
  const tail = sm.appendMessage(user("tail"));
  const result = sm.pruneBranch(x);
  assert.equal(result.contextChanged, true);
  assert.equal(sm.getEntry(compaction).firstKeptEntryId, b);
  assert.deepEqual(sm.getBranch().map((e) => e.id), [r, a, b, compaction, tail]);
  assert.ok(sm.buildSessionContext().messages.length > 0);
});

test("a session on disk is rewritten, and reopening it finds the survivors and the leaf", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create(dir, dir);
  sm.appendMessage(user("a"));
  sm.appendMessage(assistant("b"));
  const c = sm.appendMessage(user("c"));
  const d = sm.appendMessage(assistant("d"));
  sm.branch(c);
  const e = sm.appendMessage(user("e"));
  sm.appendMessage(assistant("f"));
  sm.branch(d);
  const file = sm.getSessionFile();
  assert.ok(fs.existsSync(file));
  sm.pruneBranch(e);
  const reopened = SessionManager.open(file, dir);
  assert.deepEqual(sorted(reopened.getEntries().map((x) => x.id)), sorted(sm.getEntries().map((x) => x.id)));
  assert.equal(reopened.getEntry(e), undefined);
  assert.equal(reopened.getLeafId(), d);
});

// Upstream's proposal waits for the first assistant message before writing; the reference 1.6.0
// (our oracle) writes at the first user or assistant message. So the session not yet on disk
// here holds no message at all.
test("a session not yet on disk is pruned in memory and no file is made early", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create(dir, dir);
  const a = sm.appendCustomEntry("a");
  const b = sm.appendCustomEntry("b");
  const e = sm.appendCustomEntry("side");
  sm.branch(b);
  sm.pruneBranch(e);
  assert.equal(fs.existsSync(sm.getSessionFile()), false);
  assert.deepEqual(sorted(sm.getEntries().map((x) => x.id)), sorted([a, b]));
});

test("createBranchedSession works on a pruned in-memory session", () => {
  const { sm, a, b, c, d, e } = sideBranch();
  sm.pruneBranch(e);
  sm.createBranchedSession(d);
  assert.deepEqual(sm.getEntries().map((x) => x.id), [a, b, c, d]);
});
