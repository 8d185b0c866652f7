// countSubtree / pruneBranch (not in the reference 1.6.0; proposed upstream as
// earendil-works/pi#9531): delete an abandoned side branch with everything under it.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { tempDir, user } from "./helpers/fixtures.mjs";
import { loadOurs, tuneFor } from "./helpers/target.mjs";

const { SessionManager } = loadOurs();

const assistant = (text) => ({ role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m", stopReason: "stop", timestamp: 2 });

/** u1 ─ a1 ─ u2 ─ a2 (active)      and a side branch u1 ─ b1 ─ b2, b1 labelled on the active path. */
function build(sm) {
  const u1 = sm.appendMessage(user("root"));
  const a1 = sm.appendMessage(assistant("one"));
  const b1 = sm.appendMessage(user("side"));
  const b2 = sm.appendMessage(assistant("side reply"));
  sm.branch(a1);
  const label = sm.appendLabelChange(b1, "abandoned");
  const u2 = sm.appendMessage(user("two"));
  const a2 = sm.appendMessage(assistant("three"));
  return { u1, a1, b1, b2, label, u2, a2 };
}

test("countSubtree counts the entry and everything under it", (t) => {
  const sm = SessionManager.create(tempDir(t), tempDir(t));
  const ids = build(sm);
  assert.equal(sm.countSubtree(ids.b1), 2);
  assert.equal(sm.countSubtree(ids.b2), 1);
});

test("countSubtree of an id no entry has is 0, as upstream's proposal answers", (t) => {
  const sm = SessionManager.create(tempDir(t), tempDir(t));
  build(sm);
  assert.equal(sm.countSubtree("nope"), 0);
  assert.equal(sm.countSubtree(NaN), 0);
  assert.equal(sm.countSubtree(/** @type {any} */ ({})), 0);
});

test("pruneBranch deletes a side branch, the labels naming it, and keeps the active context", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create(dir, dir);
  const ids = build(sm);
  const context = JSON.stringify(sm.buildSessionContext());
  const leaf = sm.getLeafId();
  const u2 = sm.getEntry(ids.u2);
  const file = sm.getSessionFile();
  const size = fs.statSync(file).size;

  const r = sm.pruneBranch(ids.b1);
  assert.deepEqual({ removed: r.removed, labelsDropped: r.labelsDropped, written: r.written }, { removed: 2, labelsDropped: 1, written: true });
  assert.equal(r.bytesBefore, size);
  assert.equal(r.bytesAfter, fs.statSync(file).size);
  assert.ok(r.bytesAfter < r.bytesBefore);

  for (const gone of [ids.b1, ids.b2, ids.label]) assert.equal(sm.getEntry(gone), undefined);
  assert.equal(sm.getLeafId(), leaf);
  assert.equal(JSON.stringify(sm.buildSessionContext()), context);
  assert.equal(sm.getEntry(ids.u2), u2, "a survivor stays the same object");
  assert.equal(u2.parentId, ids.a1, "re-parented past the deleted label");

  const again = SessionManager.open(file);
  assert.deepEqual(again.getEntries(), sm.getEntries());
  assert.equal(JSON.stringify(again.buildSessionContext()), context);
  assert.deepEqual(fs.readdirSync(dir).filter((n) => n !== path.basename(file)), [], "no temp file left behind");
});

test("pruneBranch refuses the active path and unknown ids and changes nothing", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create(dir, dir);
  const ids = build(sm);
  const before = fs.readFileSync(sm.getSessionFile());
  for (const id of [ids.u1, ids.a1, ids.label, ids.a2]) {
    assert.throws(() => sm.pruneBranch(id), { code: "ON_ACTIVE_BRANCH", message: "Cannot delete the branch you are currently on" });
  }
  assert.throws(() => sm.pruneBranch("zzzz"), { code: "ENTRY_NOT_FOUND", message: "Entry zzzz not found" });
  // An id value no entry can have is unknown too, shown as a template literal shows it.
  assert.throws(() => sm.pruneBranch({ toString: () => "obj" }), { code: "ENTRY_NOT_FOUND", message: "Entry obj not found" });
  assert.throws(() => sm.pruneBranch(Symbol("s")), { name: "TypeError", code: "INVALID_ARGUMENT" });
  assert.deepEqual(fs.readFileSync(sm.getSessionFile()), before);
  assert.equal(sm.getEntries().length, 7);
});

test("a session not yet on disk is pruned in memory and written later as the reference would", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create(dir, dir);
  // No user or assistant message yet: nothing is written.
  const root = sm.appendCustomEntry("t", { n: 1 });
  const side = sm.appendCustomEntry("t", { n: 2 });
  sm.branch(root);
  sm.appendCustomEntry("t", { n: 3 });
  const r = sm.pruneBranch(side);
  assert.equal(r.written, false);
  assert.equal(fs.existsSync(sm.getSessionFile()), false);
  sm.appendMessage(user("now"));
  const lines = fs.readFileSync(sm.getSessionFile(), "utf8").trim().split("\n");
  assert.equal(lines.length, 1 + 3, "header, two custom entries, the message");
  assert.equal(lines.some((l) => JSON.parse(l).id === side), false);
});

test("an in-memory session is pruned too, its entry objects kept", (t) => {
  const sm = SessionManager.inMemory(tempDir(t));
  const ids = build(sm);
  const a2 = sm.getEntry(ids.a2);
  const context = JSON.stringify(sm.buildSessionContext());
  const r = sm.pruneBranch(ids.b1);
  assert.equal(r.removed, 2);
  assert.equal(r.written, false);
  assert.equal(sm.getEntry(ids.a2), a2);
  assert.equal(sm.getEntry(ids.u2).parentId, ids.a1);
  assert.equal(JSON.stringify(sm.buildSessionContext()), context);
  assert.deepEqual(
    sm.getTree().map((n) => n.entry.id),
    [ids.u1],
  );
  assert.equal(sm.getEntries().length, 4);
});

test("a big session read lazily from its file is pruned and reads back the same", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create(dir, dir);
  const ids = build(sm);
  const file = sm.getSessionFile();
  tuneFor(t, { lazyFileBytes: 1 });
  const lazy = SessionManager.open(file);
  const context = JSON.stringify(lazy.buildSessionContext());
  lazy.pruneBranch(ids.b2);
  assert.equal(JSON.stringify(lazy.buildSessionContext()), context);
  lazy.appendMessage(user("after"));
  const again = SessionManager.open(file);
  assert.deepEqual(again.getEntries(), lazy.getEntries());
  assert.equal(again.getEntry(ids.b2), undefined);
  assert.equal(again.getEntries().length, 7);
});

test("pruneBranch keeps the file's lines that are not entries where they are, and refuses when another writer added entries", (t) => {
  for (const lazyFileBytes of [undefined, 1]) {
    const dir = tempDir(t);
    const sm = SessionManager.create(dir, dir);
    const ids = build(sm);
    const file = sm.getSessionFile();
    fs.appendFileSync(file, "not JSON, kept by every rewrite\n");
    if (lazyFileBytes !== undefined) tuneFor(t, { lazyFileBytes });
    const mine = SessionManager.open(file);
    const entries = mine.getEntries();
    // Another writer (the stock pi in another terminal) appends an entry this manager never read.
    const theirs = JSON.stringify({ type: "message", id: "0ther001", parentId: ids.a2, timestamp: "2026-01-01T00:00:00.000Z", message: user("theirs") });
    fs.appendFileSync(file, `${theirs}\n`);
    const before = fs.readFileSync(file, "utf8");
    assert.throws(() => mine.pruneBranch(ids.b1), (/** @type {any} */ e) => e.code === "SESSION_FILE_CHANGED" && e.message.includes(file));
    assert.equal(fs.readFileSync(file, "utf8"), before, "nothing written");
    assert.equal(mine.getEntries().length, entries.length, "nothing changed");
    assert.equal(mine.getEntries()[0], entries[0]);
    assert.ok(mine.getEntry(ids.b1));
    // Opened again, it knows their entry, and the prune keeps it and the line that is not JSON.
    const again = SessionManager.open(file);
    again.pruneBranch(ids.b1);
    const text = fs.readFileSync(file, "utf8");
    assert.ok(text.includes("\nnot JSON, kept by every rewrite\n"));
    assert.ok(text.includes(theirs));
    assert.equal(SessionManager.open(file).getEntry(ids.b1), undefined);
  }
});
