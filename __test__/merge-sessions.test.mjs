// mergeSessions: two copies of one session that grew apart, joined (the library form of
// `pi-sessions merge`). The copies are written by the reference SessionManager and the merged
// file is read back by the reference, so the result is checked against pi's own reading.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadOurs, loadReference } from "./helpers/target.mjs";
import {
  T0,
  assistant,
  header,
  iso,
  msgEntry,
  readText,
  tempDir,
  user,
  writeJsonl,
} from "./helpers/fixtures.mjs";

const { mergeSessions } = loadOurs();
const Reference = (await loadReference()).SessionManager;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A reference session with one exchange, copied; each copy continued by `open` with its own
 * exchange, `b`'s later than `a`'s. */
async function divergedCopies(t) {
  const dir = tempDir(t);
  const sm = Reference.create("/proj", dir);
  sm.appendMessage(user("first question"));
  sm.appendMessage(assistant("first answer"));
  const a = sm.getSessionFile();
  const b = path.join(dir, "copy-b.jsonl");
  fs.copyFileSync(a, b);

  const ca = Reference.open(a, dir);
  ca.appendMessage(user("a asks"));
  ca.appendMessage(assistant("a answers"));
  await sleep(15);
  const cb = Reference.open(b, dir);
  cb.appendMessage(user("b asks"));
  cb.appendMessage(assistant("b answers"));
  cb.appendMessage(user("b asks again"));
  return { dir, a, b };
}

const ids = (sm) => sm.getEntries().map((e) => e.id);

test("two diverged reference copies merge into one session the reference reads whole, resuming at the later continuation", async (t) => {
  const { dir, a, b } = await divergedCopies(t);
  const aBefore = readText(a);
  const bBefore = readText(b);
  const out = path.join(dir, "merged.jsonl");
  const r = mergeSessions(a, b, { out });

  const ra = Reference.open(a, dir);
  const rb = Reference.open(b, dir);
  const merged = Reference.open(out, dir);
  const union = new Set([...ids(ra), ...ids(rb)]);
  assert.deepEqual(new Set(ids(merged)), union);
  assert.equal(ids(merged).length, union.size, "every entry once");
  for (const id of union) {
    const e = ra.getEntry(id) ?? rb.getEntry(id);
    assert.deepEqual(merged.getEntry(id), e, id);
  }

  assert.equal(merged.getLeafId(), rb.getLeafId());
  assert.deepEqual(merged.buildSessionContext().messages, rb.buildSessionContext().messages);
  assert.equal(merged.getHeader().id, ra.getHeader().id);

  assert.deepEqual(r, {
    session: ra.getHeader().id,
    out,
    entries: union.size,
    conflicts: [],
    keptLines: 0,
    leafId: rb.getLeafId(),
  });
  assert.equal(readText(a), aBefore, "a is left as it was");
  assert.equal(readText(b), bBefore, "b is left as it was");
});

test("the order of the arguments does not change where the merged session resumes", async (t) => {
  const { dir, a, b } = await divergedCopies(t);
  const out = path.join(dir, "merged-ba.jsonl");
  const r = mergeSessions(b, a, { out });
  const rb = Reference.open(b, dir);
  const merged = Reference.open(out, dir);
  assert.equal(r.leafId, rb.getLeafId());
  assert.equal(merged.getLeafId(), rb.getLeafId());
  assert.deepEqual(merged.buildSessionContext().messages, rb.buildSessionContext().messages);
});

test("inPlace writes the merged session into a and leaves b unchanged", async (t) => {
  const { dir, a, b } = await divergedCopies(t);
  const bBefore = readText(b);
  const union = new Set([...ids(Reference.open(a, dir)), ...ids(Reference.open(b, dir))]);
  const r = mergeSessions(a, b, { inPlace: true });
  assert.equal(r.out, a);
  assert.equal(r.text, undefined);
  const merged = Reference.open(a, dir);
  assert.deepEqual(new Set(ids(merged)), union);
  assert.equal(merged.getLeafId(), Reference.open(b, dir).getLeafId());
  assert.equal(readText(b), bBefore);
  // A second merge of the same copy adds nothing.
  const again = mergeSessions(a, b, { inPlace: true });
  assert.equal(again.entries, union.size);
  assert.deepEqual(again.conflicts, []);
});

test("without out or inPlace the merged text is returned and nothing is written", async (t) => {
  const { dir, a, b } = await divergedCopies(t);
  const before = fs.readdirSync(dir).sort();
  const r = mergeSessions(a, b);
  assert.equal(r.out, null);
  assert.equal(typeof r.text, "string");
  assert.deepEqual(fs.readdirSync(dir).sort(), before);
  const out = path.join(dir, "merged.jsonl");
  mergeSessions(a, b, { out });
  assert.equal(readText(out), r.text);
});

test("two different sessions are refused with SESSION_MISMATCH and neither file changes", (t) => {
  const dir = tempDir(t);
  const s1 = Reference.create("/proj", dir);
  s1.appendMessage(user("one"));
  s1.appendMessage(assistant("one"));
  const s2 = Reference.create("/proj", dir);
  s2.appendMessage(user("two"));
  s2.appendMessage(assistant("two"));
  const a = s1.getSessionFile();
  const b = s2.getSessionFile();
  const aBefore = readText(a);
  const bBefore = readText(b);
  for (const options of [{ inPlace: true }, { out: path.join(dir, "m.jsonl") }, {}]) {
    assert.throws(
      () => mergeSessions(a, b, options),
      (e) => e instanceof Error && e.code === "SESSION_MISMATCH" && /different sessions/.test(e.message),
    );
  }
  assert.equal(readText(a), aBefore);
  assert.equal(readText(b), bBefore);
  assert.equal(fs.existsSync(path.join(dir, "m.jsonl")), false);
});

test("an entry both copies have under one id with different content is reported and both contents are kept", (t) => {
  const dir = tempDir(t);
  const root = msgEntry("aaaa0001", null, user("shared"), iso(T0));
  const a = writeJsonl(path.join(dir, "a.jsonl"), [
    header(),
    root,
    msgEntry("aaaa0002", "aaaa0001", assistant("a's reply"), iso(T0 + 1000)),
  ]);
  const b = writeJsonl(path.join(dir, "b.jsonl"), [
    header(),
    root,
    msgEntry("aaaa0002", "aaaa0001", assistant("b's reply"), iso(T0 + 2000)),
    msgEntry("aaaa0003", "aaaa0002", user("after b's reply"), iso(T0 + 3000)),
  ]);
  const out = path.join(dir, "merged.jsonl");
  const r = mergeSessions(a, b, { out });
  assert.equal(r.conflicts.length, 1);
  const [{ id, newId }] = r.conflicts;
  assert.equal(id, "aaaa0002");
  assert.match(newId, /^[0-9a-f]{8}$/);
  assert.equal(r.entries, 4);

  const merged = Reference.open(out, dir);
  assert.equal(merged.getEntry("aaaa0002").message.content[0].text, "a's reply");
  const sibling = merged.getEntry(newId);
  assert.equal(sibling.message.content[0].text, "b's reply");
  assert.equal(sibling.mergedFrom, "aaaa0002");
  assert.equal(sibling.parentId, "aaaa0001");
  // b's continuation hangs under b's version, and is where the session resumes.
  assert.equal(merged.getEntry("aaaa0003").parentId, newId);
  assert.equal(merged.getLeafId(), "aaaa0003");
  assert.equal(r.leafId, "aaaa0003");
  assert.deepEqual(
    merged.buildSessionContext().messages.map((m) => (typeof m.content === "string" ? m.content : m.content[0].text)),
    ["shared", "b's reply", "after b's reply"],
  );
});

test("errors carry codes: a missing file is ENOENT, an existing out is EEXIST, out with inPlace is INVALID_ARGUMENT", async (t) => {
  const { dir, a, b } = await divergedCopies(t);
  assert.throws(() => mergeSessions(path.join(dir, "missing.jsonl"), b), { code: "ENOENT" });
  assert.throws(() => mergeSessions(a, path.join(dir, "missing.jsonl")), { code: "ENOENT" });
  const aBefore = readText(a);
  assert.throws(() => mergeSessions(a, b, { out: a }), { code: "EEXIST" });
  assert.throws(() => mergeSessions(a, b, { out: path.join(dir, "x.jsonl"), inPlace: true }), {
    code: "INVALID_ARGUMENT",
  });
  assert.throws(() => mergeSessions(a), { code: "INVALID_ARGUMENT" });
  assert.equal(readText(a), aBefore);
  assert.equal(fs.existsSync(path.join(dir, "x.jsonl")), false);
});
