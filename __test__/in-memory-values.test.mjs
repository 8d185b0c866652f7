// An in-memory session (`SessionManager.inMemory`) never writes, and the reference never
// serializes its entries: it keeps the caller's objects, whatever they hold. Values
// `JSON.stringify` refuses (BigInt, cycles, a throwing `toJSON`) are therefore accepted, and what
// a manager reads of an entry (a message's role, a compaction's first kept entry) is read from
// the object, not from its JSON. These tests state that on the reference too
// (PI_TEST_TARGET=reference); a persisted session still refuses such values (bad-input.test.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadTarget } from "./helpers/target.mjs";
import { tempDir, user, assistant } from "./helpers/fixtures.mjs";

const { SessionManager } = await loadTarget();
const CWD = "/tmp/in-memory-values";

const cyclic = () => {
  const o = { kind: "loop" };
  o.self = o;
  return o;
};

/** An in-memory session of every kind of entry, each holding a value JSON cannot write. */
function build() {
  const sm = SessionManager.inMemory(CWD);
  const q = { role: "user", content: "question", timestamp: 1, tokens: 12n };
  const a = { ...assistant("answer"), loop: cyclic() };
  const qId = sm.appendMessage(q);
  const aId = sm.appendMessage(a);
  const data = { big: 2n, loop: cyclic() };
  sm.appendCustomEntry("ext", data);
  const details = cyclic();
  sm.appendCustomMessageEntry("note", "shown to the model", true, details);
  sm.appendLabelChange(qId, "first");
  const compactionDetails = { n: 3n };
  const cId = sm.appendCompaction("summary so far", aId, 100, compactionDetails);
  const t = { role: "user", content: "after", timestamp: 2, toJSON() {
    throw new Error("toJSON must not be called");
  } };
  const tId = sm.appendMessage(t);
  return { sm, q, a, t, data, details, compactionDetails, ids: { qId, aId, cId, tId } };
}

test("an in-memory session takes entries JSON cannot write and gives back the same objects", () => {
  const { sm, q, a, t, data, details, compactionDetails, ids } = build();
  const entries = sm.getEntries();
  assert.equal(entries.length, 7);
  assert.equal(sm.getEntry(ids.qId).message, q);
  assert.equal(sm.getEntry(ids.aId).message, a);
  assert.equal(sm.getEntry(ids.tId).message, t);
  assert.equal(entries[2].data, data);
  assert.equal(entries[3].details, details);
  assert.equal(sm.getEntry(ids.cId).details, compactionDetails);
  assert.equal(sm.getLabel(ids.qId), "first");
  assert.deepEqual(
    sm.getBranch().map((e) => e.id),
    entries.map((e) => e.id),
  );
  // The context: the compaction summary, then the kept messages from `a` on (the caller's own).
  const ctx = sm.buildSessionContext();
  assert.equal(ctx.messages[0].role, "compactionSummary");
  assert.equal(ctx.messages[1], a);
  assert.equal(ctx.messages.at(-1), t);
  assert.deepEqual(ctx.model, { provider: a.provider, modelId: a.model });
  const projection = sm.buildSessionProjection();
  assert.equal(projection.entries.at(-1).sourceEntry, sm.getEntry(ids.tId));
  const tree = sm.getTree();
  assert.equal(tree.length, 1);
  assert.equal(tree[0].entry.message, q);
  assert.equal(tree[0].label, "first");
});

test("what an in-memory session reads of an entry, it reads from the object, not from its JSON", () => {
  const sm = SessionManager.inMemory(CWD);
  sm.appendMessage(user("hi"));
  // Its JSON says assistant (which would set the model); the object is a user message.
  const disguised = { ...user("not an answer"), provider: "json-only", model: "json-only" };
  Object.defineProperty(disguised, "toJSON", { value: () => ({ ...assistant("fake"), provider: "json-only", model: "json-only" }) });
  sm.appendMessage(disguised);
  assert.equal(sm.buildSessionContext().model, null);
  const answer = assistant("real");
  sm.appendMessage(answer);
  assert.deepEqual(sm.buildSessionContext().model, { provider: answer.provider, modelId: answer.model });
  assert.deepEqual(
    sm.buildSessionContext().messages.map((m) => m.role),
    ["user", "user", "assistant"],
  );
});

test("a branched in-memory session keeps the values, in shallow copies of the entries", () => {
  const { sm, a, data, ids } = build();
  sm.appendMessage({ ...user("more"), big: 9n });
  const leaf = sm.getLeafId();
  assert.equal(sm.createBranchedSession(leaf), undefined);
  const entries = sm.getEntries();
  // The path without the label record, then the label re-created.
  assert.equal(entries.length, 8);
  assert.equal(sm.getEntry(ids.aId).message, a);
  assert.equal(entries[2].data, data);
  assert.equal(entries.at(-2).message.big, 9n);
  assert.equal(entries.at(-1).type, "label");
  assert.equal(sm.getLabel(ids.qId), "first");
  assert.equal(sm.buildSessionContext().messages.at(-1).big, 9n);
});

test("in-memory sessions preloaded with such entries, from the objects or from copies", () => {
  const { sm, a, data, ids } = build();
  const branch = sm.getBranch();
  for (const entries of [
    [sm.getHeader(), ...branch],
    [{ ...sm.getHeader() }, ...branch.map((e) => ({ ...e }))],
  ]) {
    const preview = SessionManager.inMemory(CWD, undefined, entries);
    assert.equal(preview.getEntries().length, branch.length);
    assert.equal(preview.getEntry(ids.aId).message, a);
    assert.equal(preview.getEntries()[2].data, data);
    assert.equal(preview.getLabel(ids.qId), "first");
    assert.equal(preview.buildSessionContext().messages[1], a);
    const more = { ...assistant("draft"), n: 5n };
    preview.appendMessage(more);
    assert.equal(preview.buildSessionContext().messages.at(-1), more);
    assert.equal(preview.getTree()[0].entry.message.tokens, 12n);
  }
  // Without a header: the entries follow a new one.
  const copies = branch.slice(0, 4).map((e) => ({ ...e }));
  const headless = SessionManager.inMemory(CWD, undefined, copies);
  assert.equal(headless.getEntries().length, 4);
  assert.equal(headless.getEntries()[0], copies[0]);
  assert.equal(headless.getEntries()[2].data.big, 2n);
});

test("an in-memory session that read a file branches with its own entries whole", (t) => {
  const dir = tempDir(t);
  const file = SessionManager.create(CWD, dir);
  const first = file.appendMessage(user("from the file"));
  file.appendMessage(assistant("also from the file"));
  const sm = SessionManager.inMemory(CWD);
  sm.setSessionFile(file.getSessionFile());
  const added = { ...user("added in memory"), big: 7n };
  sm.appendMessage(added);
  // Nothing asked before: the file's entries have not been looked at yet.
  assert.equal(sm.createBranchedSession(sm.getLeafId()), undefined);
  const entries = sm.getEntries();
  assert.equal(entries.length, 3);
  assert.equal(entries[0].id, first);
  assert.equal(entries[0].message.content, "from the file");
  assert.equal(entries[2].message.big, 7n);
  assert.equal(sm.buildSessionContext().messages[2].big, 7n);
});
