// `SessionManager.inMemory(cwd, options, [header, ...sm.getBranch()])`: pi builds such a preview
// manager at every turn boundary an extension listens to. Given the entry objects of another
// manager, ours takes their records from that manager's session instead of serializing the
// entries again; the answers must be those of a manager built from copies of the same entries.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget, tuneFor } from "./helpers/target.mjs";
import { tempDir, user, assistant } from "./helpers/fixtures.mjs";

const { SessionManager } = await loadTarget();
const CWD = "/tmp/preview";

/** A persisted session with a branch, a label, a model change and a branch summary. */
function source(t) {
  const dir = tempDir(t);
  const sm = SessionManager.create(CWD, dir);
  const a = sm.appendMessage(user("first question"));
  sm.appendMessage(assistant("first answer"));
  sm.appendModelChange("anthropic", "claude");
  const q = sm.appendMessage(user("second question"));
  sm.appendLabelChange(q, "important");
  sm.branch(a);
  sm.appendMessage(assistant("another answer"));
  sm.branchWithSummary(q, "what the other branch did");
  sm.appendLabelChange(q, "on the path");
  sm.appendMessage(user("third question"));
  return { sm, dir, q };
}

/** Everything a caller can read from a manager, ids and all. */
function answers(sm, labelled) {
  return {
    entries: sm.getEntries(),
    leaf: sm.getLeafEntry(),
    branch: sm.getBranch(),
    header: sm.getHeader(),
    sessionId: sm.getSessionId(),
    count: sm.getEntryCount(),
    label: sm.getLabel(labelled),
    name: sm.getSessionName(),
    context: sm.buildSessionContext(),
    projection: sm.buildSessionProjection(),
    tree: sm.getTree(),
  };
}

/** Gives each object a (non-enumerable) toJSON that counts its calls; returns the count. */
function countSerializing(objects) {
  let calls = 0;
  for (const e of objects) {
    Object.defineProperty(e, "toJSON", {
      value() {
        calls++;
        const { ...plain } = this;
        return plain;
      },
      configurable: true,
    });
  }
  return () => calls;
}

/** Two preview managers, from the entries (which must not be serialized: the reference never
 * serializes an in-memory session) and from copies of them: equal answers, and equal answers (but
 * for the drafts' random ids and times) once the same drafts are appended. */
function previews(entries, labelled, taken = true) {
  const copies = structuredClone(entries);
  const serialized = countSerializing(entries);
  const made = [SessionManager.inMemory(CWD, undefined, entries), SessionManager.inMemory(CWD, undefined, copies)];
  if (taken) assert.equal(serialized(), 0, "the entries were taken, not serialized again");
  assert.deepEqual(answers(made[0], labelled), answers(made[1], labelled));
  for (const p of made) {
    p.appendCustomMessageEntry("ext", "a draft", true);
    p.appendMessage(user("queued"));
  }
  const shape = (p) => {
    const context = p.buildSessionContext().messages;
    return {
      count: p.getEntryCount(),
      branch: p.getBranch().map((e) => e.type),
      leaf: p.getLeafEntry().message.content,
      context: context.map((m) => m.role),
      last: context.at(-1).content,
    };
  };
  assert.deepEqual(shape(made[0]), shape(made[1]));
  return made[0];
}

test("a preview of a session made in this process answers as one made from copies", (t) => {
  const { sm, q } = source(t);
  const before = sm.getEntries().length;
  const entries = [sm.getHeader(), ...sm.getBranch()];
  const taken = previews(entries, q);
  assert.equal(taken.getHeader(), entries[0], "the caller's objects are the entries");
  assert.equal(taken.getEntries()[0], entries[1]);
  assert.equal(entries.length, sm.getBranch().length + 3, "appends land in the caller's array, as in the reference");
  assert.equal(sm.getEntries().length, before, "the source is untouched");
});

test("a preview of an opened file, and one made again after the source moved on", (t) => {
  const { sm, q } = source(t);
  const reopened = SessionManager.open(sm.getSessionFile());
  reopened.getEntries(); // every object parsed from the file's lines
  previews([reopened.getHeader(), ...reopened.getBranch()], q);

  reopened.appendMessage(assistant("an answer after the preview"));
  const taken = previews([reopened.getHeader(), ...reopened.getBranch()], q);
  assert.equal(taken.getEntries().at(-3).message.content[0].text, "an answer after the preview");

  // The source's entries, kept after the source started another session: its records are gone,
  // so ours serializes these (the answers stay the same).
  const old = [reopened.getHeader(), ...reopened.getBranch()];
  reopened.newSession();
  reopened.appendMessage(user("in the new session"));
  previews(old, q, false);
});

test("a preview of a big session read lazily from its file", (t) => {
  const { sm, q } = source(t);
  const dir = tempDir(t);
  const file = path.join(dir, "big.jsonl");
  fs.copyFileSync(sm.getSessionFile(), file);
  tuneFor(t, { lazyFileBytes: 0 }); // every file counts as big
  const big = SessionManager.open(file);
  const entries = [big.getHeader(), ...big.getBranch()];
  const length = entries.length;
  const taken = previews(entries, q);
  // Its lines are read through a descriptor of its own: the source may go on to another session.
  big.newSession();
  assert.equal(taken.getEntries().length, length - 1 + 2);
  // ... third question, then the two drafts.
  assert.equal(taken.buildSessionContext().messages.at(-3).content, "third question");
});

test("entries taken from a session are not serialized again, as in the reference", (t) => {
  const { sm, q } = source(t);
  const entries = [sm.getHeader(), ...sm.getBranch()];
  const serialized = countSerializing(entries);
  const preview = SessionManager.inMemory(CWD, undefined, entries);
  assert.equal(serialized(), 0);
  assert.equal(preview.getEntries().length, entries.length - 1);
  assert.equal(preview.getLabel(q), "on the path");
  assert.equal(preview.buildSessionContext().messages.at(-1).content, "third question");
});

test("entries made many at once lead to their records at once, and still after the event loop was idle", async (t) => {
  // A resume makes every entry in one go; where each came from is noted when the event loop is
  // idle (idle-parse.js), or at once when a preview asks first.
  const { sm, q } = source(t);
  const opened = SessionManager.open(sm.getSessionFile());
  const entries = [opened.getHeader(), ...opened.getBranch()];
  previews(entries, q);
  const again = SessionManager.open(sm.getSessionFile());
  again.getEntries();
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  previews([again.getHeader(), ...again.getBranch()], q);
  // A file big enough to be read lazily (no idle parsing): the same.
  tuneFor(t, { lazyFileBytes: 0 });
  const big = SessionManager.open(sm.getSessionFile());
  big.getEntries();
  await new Promise((resolve) => setImmediate(resolve));
  previews([big.getHeader(), ...big.getBranch()], q);
});
