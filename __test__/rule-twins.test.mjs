// The rules that live twice, once in the core and once in the JS shell, held to each other on the
// same inputs. Each twin must stay because the reference exports a function over the caller's own
// objects (see the comment at each JS copy):
// - migration: lib/migrate.js `migrateSessionEntries` (entries a caller holds, changed in place)
//   and the core's file/migrate.rs (a file's records, on open);
// - context selection: lib/context.js `buildSessionContext(entries, leafId)` (arrays from callers)
//   and the core's view (store/view.rs + context.rs) behind `SessionManager#buildSessionContext`.
// - the "modified" rule of a listing: lib/listing.js `modifiedByDate` (dates only JavaScript's
//   `Date` reads) and the core's listing/summary.rs `modified_by` (below);
// - getDefaultSessionDir, which the package exports: lib/paths.js and the core's places.rs, held
//   together in path-rules.test.mjs with the rest of the path rules.
// Every other rule and every wire constant is the core's alone, reached through the binding
// (wire-constants.test.mjs fails when a constant is spelled again in JS).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { T0, iso, tempDir, useAgentDir, header, entry, msgEntry, compaction, user, assistant, writeJsonl } from "./helpers/fixtures.mjs";

const require = createRequire(import.meta.url);
const pkg = require("../index.js");
const { SessionManager } = pkg;

/** Records with ids replaced by their first-seen order, so random v1 ids compare. */
function byOrder(records) {
  const names = new Map();
  const name = (v) => {
    if (typeof v !== "string") return v;
    if (!names.has(v)) names.set(v, `#${names.size}`);
    return names.get(v);
  };
  return records.map((r) => {
    const e = structuredClone(r);
    if (e.type !== "session") for (const k of ["id", "parentId", "firstKeptEntryId", "targetId"]) if (k in e) e[k] = name(e[k]);
    return e;
  });
}

const v1 = (fields = {}) => {
  const h = header(fields);
  delete h.version;
  return h;
};
const plain = (type, fields) => ({ type, timestamp: iso(T0), ...fields });

const MIGRATIONS = [
  {
    name: "v1 without a version: ids and parents in file order, an index that names an entry",
    records: [
      v1(),
      plain("message", { message: user("a") }),
      plain("message", { message: assistant("b") }),
      plain("compaction", { summary: "s", firstKeptEntryIndex: 2, tokensBefore: 1 }),
      plain("message", { message: { role: "hookMessage", content: "h", timestamp: 1 } }),
    ],
  },
  {
    name: "v1: a compaction's index at the header or past the end names nothing",
    records: [
      v1({ version: 1 }),
      plain("message", { message: user("a") }),
      plain("compaction", { summary: "s", firstKeptEntryIndex: 0, tokensBefore: 1 }),
      plain("compaction", { summary: "t", firstKeptEntryIndex: 99, tokensBefore: 1 }),
      plain("compaction", { summary: "u", firstKeptEntryIndex: "1", tokensBefore: 1 }),
    ],
  },
  {
    name: "v2: only the role is renamed, and only on messages",
    records: [
      header({ version: 2 }),
      msgEntry("a", null, { role: "hookMessage", content: "h", timestamp: 1 }),
      entry("custom_message", "b", "a", { customType: "x", content: "c", display: true, role: "hookMessage" }),
      msgEntry("c", "b", user("u")),
    ],
  },
  {
    name: "current version: nothing changes",
    records: [header(), msgEntry("a", null, { role: "hookMessage", content: "h", timestamp: 1 }), msgEntry("b", "a", user("u"))],
  },
];

for (const c of MIGRATIONS) {
  test(`migration twins agree: ${c.name}`, (t) => {
    const js = structuredClone(c.records);
    pkg.migrateSessionEntries(js);
    const file = writeJsonl(path.join(tempDir(t, "pi-twins-"), "s.jsonl"), c.records);
    const sm = SessionManager.open(file);
    const core = [sm.getHeader(), ...sm.getEntries()];
    assert.deepEqual(byOrder(core), byOrder(js));
  });
}

//  u1 ── a1 ─┬─ sy (system) ── u2 ── c1 (keeps a1) ── u3 ── c2 (keeps c1) ── u4 ── a4
//            └─ s1 ── bs (branch summary) ── cm (custom message) ── th ── md ── lb ── s2 ── rt ── u5
// rt is a compaction with a retainedTail: nothing before it is kept.
function tree() {
  return [
    header(),
    msgEntry("u1", null, user("first"), iso(T0)),
    msgEntry("a1", "u1", assistant("reply"), iso(T0 + 1000)),
    msgEntry("sy", "a1", { role: "system", content: "be brief", timestamp: 1 }, iso(T0 + 1500)),
    msgEntry("u2", "sy", user("main"), iso(T0 + 2000)),
    compaction("c1", "u2", { firstKeptEntryId: "a1" }, iso(T0 + 3000)),
    msgEntry("u3", "c1", user("after c1"), iso(T0 + 4000)),
    compaction("c2", "u3", { firstKeptEntryId: "c1" }, iso(T0 + 5000)),
    msgEntry("u4", "c2", user("after c2"), iso(T0 + 6000)),
    msgEntry("a4", "u4", assistant("done"), iso(T0 + 7000)),
    msgEntry("s1", "a1", user("side"), iso(T0 + 8000)),
    entry("branch_summary", "bs", "s1", { fromId: "a4", summary: "the main branch" }, iso(T0 + 9000)),
    entry("custom_message", "cm", "bs", { customType: "note", content: "extension text", display: true }, iso(T0 + 10000)),
    entry("thinking_level_change", "th", "cm", { thinkingLevel: "high" }, iso(T0 + 11000)),
    entry("model_change", "md", "th", { provider: "p", modelId: "m" }, iso(T0 + 12000)),
    entry("label", "lb", "md", { targetId: "u1", label: "start" }, iso(T0 + 13000)),
    msgEntry("s2", "lb", { role: "system", content: null, timestamp: 1 }, iso(T0 + 14000)),
    compaction("rt", "s2", { firstKeptEntryId: "s1", retainedTail: [user("kept in the checkpoint")] }, iso(T0 + 15000)),
    msgEntry("u5", "rt", user("after the checkpoint"), iso(T0 + 16000)),
  ];
}

for (const leaf of ["u1", "a1", "sy", "u2", "c1", "u3", "c2", "a4", "s1", "bs", "cm", "th", "md", "lb", "s2", "rt", "u5"]) {
  test(`context twins agree with the leaf at ${leaf}`, (t) => {
    const records = tree();
    const file = writeJsonl(path.join(tempDir(t, "pi-twins-"), "s.jsonl"), records);
    const sm = SessionManager.open(file);
    sm.branch(leaf);
    const js = pkg.buildSessionContext(records.slice(1), leaf);
    assert.deepEqual(sm.buildSessionContext(), js);
  });
}

test("context twins agree with no leaf (an empty branch)", (t) => {
  const records = tree();
  const sm = SessionManager.open(writeJsonl(path.join(tempDir(t, "pi-twins-"), "s.jsonl"), records));
  sm.resetLeaf();
  assert.deepEqual(sm.buildSessionContext(), pkg.buildSessionContext(records.slice(1), null));
});

// The "modified" rule of a listing: the core decides it (listing/summary.rs `modified_by`) unless
// a date needs JavaScript's own `Date` (a timestamp that is not strict ISO), when lib/listing.js
// decides it with the same rule. Each case is written twice, once with strict ISO timestamps and
// once with the same instants spelled loosely, so each side decides one of the two files.
const strict = (ms) => new Date(ms).toISOString();
const loose = (ms) => new Date(ms).toISOString().replace("Z", "+00:00");
const MTIME = T0 + 86_400_000;
// Messages without a time of their own: their entry's timestamp is their activity.
const said = (role, text) => ({ role, content: [{ type: "text", text }] });
const MODIFIED_CASES = [
  {
    name: "the latest user or assistant message's time",
    records: (ts) => [
      header({ timestamp: ts(T0) }),
      msgEntry("m1", null, said("user", "a"), ts(T0 + 5000)),
      msgEntry("m2", "m1", said("assistant", "b"), ts(T0 + 9000)),
      msgEntry("m3", "m2", said("user", "c"), ts(T0 + 7000)),
    ],
    want: T0 + 9000,
  },
  {
    name: "the header's time when no message has one",
    records: (ts) => [header({ timestamp: ts(T0 + 1234) }), msgEntry("m1", null, said("user", "a"), "not a date")],
    want: T0 + 1234,
  },
  {
    name: "the header's time when there is no message",
    records: (ts) => [header({ timestamp: ts(T0 + 42) }), entry("model_change", "x", null, { provider: "p", modelId: "m" }, ts(T0 + 99_000))],
    want: T0 + 42,
  },
  {
    name: "the file's mtime when neither has a date",
    records: (ts) => [header({ timestamp: ts === strict ? 5 : "not a date" }), entry("custom", "x", null, { customType: "c" }, ts(T0))],
    want: MTIME,
  },
];

for (const c of MODIFIED_CASES) {
  test(`"modified" twins agree: ${c.name}`, async (t) => {
    const dir = tempDir(t, "pi-twins-");
    useAgentDir(t);
    const files = { strict: path.join(dir, "strict.jsonl"), loose: path.join(dir, "loose.jsonl") };
    for (const [name, ts] of [["strict", strict], ["loose", loose]]) {
      writeJsonl(files[name], c.records(ts));
      fs.utimesSync(files[name], new Date(MTIME), new Date(MTIME));
    }
    const infos = await SessionManager.listAll(dir);
    const modified = Object.fromEntries(infos.map((i) => [path.basename(i.path, ".jsonl"), i.modified.getTime()]));
    assert.deepEqual(modified, { strict: c.want, loose: c.want });
  });
}

// How many transcript items an entry makes: the core counts them from each record's members
// (record.rs `context_items`, what readTranscriptPage pages by and a subscriber's counts follow),
// the shell makes them with the reference's exported sessionEntryToContextMessages over the
// object. Each shape, read from a file and held in memory (where the core sees a skeleton).
const ITEM_SHAPES = {
  "a user message": { type: "message", message: user("u") },
  "a system message without content": { type: "message", message: { role: "system", content: null, timestamp: 1 } },
  "a message of another role": { type: "message", message: { role: "bashExecution", command: "ls", timestamp: 1 } },
  "a custom message": { type: "custom_message", customType: "c", content: "x", display: true },
  "a branch summary": { type: "branch_summary", fromId: "u1", summary: "s" },
  "a branch summary without a summary": { type: "branch_summary", fromId: "u1", summary: "" },
  "a compaction": { type: "compaction", summary: "s", firstKeptEntryId: "u1", tokensBefore: 1 },
  "a compaction with a system message": { type: "compaction", summary: "s", firstKeptEntryId: "u1", tokensBefore: 1, systemMessage: { role: "system", content: "p", timestamp: 1 } },
  "a compaction with a retained tail": { type: "compaction", summary: "s", firstKeptEntryId: "c", tokensBefore: 1, retainedTail: [user("a"), assistant("b"), user("c")] },
  "a label": { type: "label", targetId: "u1", label: "l" },
  "a model change": { type: "model_change", provider: "p", modelId: "m" },
  "a custom entry": { type: "custom", customType: "c", data: { x: 1 } },
};

for (const [name, shape] of Object.entries(ITEM_SHAPES)) {
  test(`item count twins agree: ${name}`, (t) => {
    const records = [header(), msgEntry("u1", null, user("first"), iso(T0)), { ...shape, id: "x", parentId: "u1", timestamp: iso(T0 + 1000) }];
    const want = 1 + pkg.sessionEntryToContextMessages(records[2]).length;
    const file = SessionManager.open(writeJsonl(path.join(tempDir(t, "pi-twins-"), "s.jsonl"), records));
    const memory = SessionManager.inMemory("/work", undefined, structuredClone(records));
    for (const [side, sm] of [["file", file], ["memory", memory]]) {
      assert.equal(sm.readTranscriptPage({ limit: 200 }).totalItems, want, side);
    }
    // A subscriber's counts after appending the same shape (once the counts are known) follow the
    // same count, step by step in the core.
    const events = [];
    memory.subscribeTranscript((e) => events.push(e));
    memory.branch("u1");
    memory.appendMessage(user("warm"));
    const { type, ...f } = records[2];
    if (type === "message") memory.appendMessage(f.message);
    else if (type === "custom_message") memory.appendCustomMessageEntry(f.customType, f.content, f.display);
    else if (type === "compaction" && !f.systemMessage) memory.appendCompaction(f.summary, f.firstKeptEntryId, f.tokensBefore, undefined, undefined, undefined, f.retainedTail);
    else return; // no append of this shape's own form here
    assert.equal(memory.readTranscriptPage({ limit: 200 }).totalItems, want + 1);
    assert.equal(events.at(-1).totalItems, want + 1);
    assert.equal(events.at(-1).itemsAfterLatestCompaction, memory.readTranscriptPage({ limit: 200 }).itemsAfterLatestCompaction);
  });
}
