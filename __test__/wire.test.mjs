// The wire formats between the binding (src/wire.rs) and JS (lib/wire.js, lib/listing.js), through
// the real addon: one small session with a branch, a label, children with non-strict timestamps
// and two compactions, read as a tree (getTree), a context plan (buildSessionContext /
// buildSessionProjection), transcript pages (readTranscriptPage); and a listing's summaries, one
// whose dates the core reads and one whose dates only JavaScript's Date reads, fresh and from the
// listing cache; each with the decoded structures asserted.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import {
  T0,
  iso,
  tempDir,
  useAgentDir,
  header,
  entry,
  msgEntry,
  compaction,
  user,
  assistant,
  writeJsonl,
} from "./helpers/fixtures.mjs";

const require = createRequire(import.meta.url);
const { SessionManager } = require("../index.js");
const wire = require("../lib/wire.js");

//  u1 ── a1 ─┬─ u2a (09 s, "+00:00": not strict ISO)  [label "side"]
//            ├─ u2b (07.6 s, strict) ── c ── u3 ── c2 ── u4 ── l (the label)
//            └─ u2c (07 s, a Date string that is not ISO)
// c keeps from a1; c2 keeps from c, which makes c a compaction after the leading one.
function records() {
  return [
    header(),
    msgEntry("u1", null, user("first"), iso(T0)),
    msgEntry("a1", "u1", assistant("reply"), iso(T0 + 1000)),
    msgEntry("u2a", "a1", user("side branch"), "2026-01-02T03:04:09+00:00"),
    msgEntry("u2b", "a1", user("main branch"), iso(T0 + 2000)),
    msgEntry("u2c", "a1", user("third branch"), "Fri Jan 02 2026 03:04:07 GMT+0000"),
    compaction("c", "u2b", { firstKeptEntryId: "a1" }, iso(T0 + 3000)),
    msgEntry("u3", "c", user("after the first compaction"), iso(T0 + 4000)),
    compaction("c2", "u3", { firstKeptEntryId: "c" }, iso(T0 + 5000)),
    msgEntry("u4", "c2", user("after the second compaction"), iso(T0 + 6000)),
    entry("label", "l", "u4", { targetId: "u2a", label: "side" }, iso(T0 + 7000)),
  ];
}

function open(t) {
  const dir = tempDir(t, "pi-wire-");
  const file = path.join(dir, "s.jsonl");
  writeJsonl(file, records());
  return SessionManager.open(file, dir);
}

/** A tree node as `[id, label, children]`, recursively. */
function shape(node) {
  return [node.entry.id, node.label, node.children.map(shape)];
}

describe("wire formats", () => {
  test("the tree format decodes to getTree's nodes, children sorted with Date semantics where the core could not", (t) => {
    const sm = open(t);
    const roots = sm.getTree();
    assert.deepEqual(roots.map(shape), [
      [
        "u1",
        undefined,
        [
          [
            "a1",
            undefined,
            [
              ["u2c", undefined, []],
              ["u2b", undefined, [["c", undefined, [["u3", undefined, [["c2", undefined, [["u4", undefined, [["l", undefined, []]]]]]]]]]]],
              ["u2a", "side", []],
            ],
          ],
        ],
      ],
    ]);
    const side = roots[0].children[0].children[2];
    assert.equal(side.labelTimestamp, iso(T0 + 7000));
    // The nodes hold the session's own entry objects.
    assert.equal(side.entry, sm.getEntry("u2a"));
    assert.equal(roots[0].entry, sm.getEntry("u1"));
  });

  test("the context plan decodes to the selected entries, a later compaction contributing nothing", (t) => {
    const sm = open(t);
    const projection = sm.buildSessionProjection();
    assert.deepEqual(
      projection.entries.map((e) => [e.sourceEntry.id, e.messages.map((m) => m.role)]),
      [
        ["c2", ["compactionSummary"]],
        ["c", []],
        ["u3", ["user"]],
        ["u4", ["user"]],
        ["l", []],
      ],
    );
    assert.equal(projection.entries[2].sourceEntry, sm.getEntry("u3"));
    const context = sm.buildSessionContext();
    assert.deepEqual(
      context.messages.map((m) => m.role),
      ["compactionSummary", "user", "user"],
    );
    // The model comes from the last assistant message on the path (a1, before the cut).
    assert.deepEqual(context.model, { provider: "prov", modelId: "mod" });
  });

  test("the transcript page format decodes to items of the whole branch, compactions narrowing nothing", (t) => {
    const sm = open(t);
    // The branch u1 a1 u2b c u3 c2 u4 l: every message and each compaction's summary; the label none.
    const last = sm.readTranscriptPage({ limit: 2 });
    assert.equal(last.totalItems, 7);
    assert.equal(last.itemsAfterLatestCompaction, 1);
    assert.deepEqual(last.items.map((i) => [i.id, i.message.role]), [["c2", "compactionSummary"], ["u4", "user"]]);
    assert.equal(last.hasMoreBefore, true);
    assert.equal(last.hasMoreAfter, false);
    const before = sm.readTranscriptPage({ limit: 4, before: last.cursors.before });
    assert.deepEqual(before.items.map((i) => i.id), ["a1", "u2b", "c", "u3"]);
    const first = sm.readTranscriptPage({ limit: 4, before: before.cursors.before });
    assert.deepEqual(first.items.map((i) => i.id), ["u1"]);
    assert.equal(first.hasMoreBefore, false);
  });

  test("the plan decoder reads offsets, NONE and the suppressed flag by name", () => {
    const { NONE, FLAG_SUPPRESSED, FLAG_RETAINED_TAIL } = wire;
    const plan = wire.decodePlan(Uint32Array.of(NONE, 7, 2, 3, NONE, FLAG_RETAINED_TAIL, 4, 9, FLAG_SUPPRESSED));
    assert.deepEqual([plan.thinking, plan.model, plan.count], [NONE, 7, 2]);
    assert.deepEqual(
      [0, 1].map((i) => [plan.entry(i), plan.edit(i), plan.silent(i)]),
      [
        [3, NONE, false],
        [4, 9, true],
      ],
    );
  });

  test("the transcript page decoder reads counts, the leaf and each item's entry and index by name", () => {
    const { NONE, PAGE_NOT_ON_BRANCH } = wire;
    const page = wire.decodeTranscriptPage(Uint32Array.of(0, 12, 3, 9, 2, 40, 2, 33, 0, 33, 1));
    assert.deepEqual(
      [page.status, page.total, page.afterCompaction, page.start, page.count, page.leaf, page.leafItems],
      [0, 12, 3, 9, 2, 40, 2],
    );
    assert.deepEqual([0, 1].map((i) => [page.entry(i), page.within(i)]), [[33, 0], [33, 1]]);
    const refused = wire.decodeTranscriptPage(Uint32Array.of(PAGE_NOT_ON_BRANCH));
    assert.deepEqual([refused.status, refused.count, refused.leaf], [PAGE_NOT_ON_BRANCH, 0, NONE]);
  });

  test("the summary format decodes to SessionInfo, modified decided by the core or, for loose dates, by Date", async (t) => {
    const agentDir = useAgentDir(t);
    const dir = tempDir(t, "pi-wire-list-");
    const plain = (id, parentId, role, content, timestamp) => ({ type: "message", id, parentId, timestamp, message: { role, content } });
    // Strict ISO timestamps everywhere: the core decides `modified` (the last message's time).
    writeJsonl(path.join(dir, "a.jsonl"), [
      header({ id: "a", cwd: "/tmp/wire-cwd" }),
      plain("m1", null, "user", "hello there", iso(T0 + 1000)),
      plain("m2", "m1", "assistant", [{ type: "text", text: "general" }], iso(T0 + 2000)),
      { type: "session_info", id: "i1", parentId: "m2", timestamp: iso(T0 + 3000), name: "  wired  " },
    ]);
    // A message timestamp and a header timestamp that are not strict ISO: Date decides in JS.
    writeJsonl(path.join(dir, "b.jsonl"), [
      header({ id: "b", cwd: "/tmp/wire-cwd", timestamp: "Jan 2 2026", parentSession: "/x/parent.jsonl" }),
      plain("n1", null, "user", "loose", "2026-01-02T03:04:09+00:00"),
    ]);
    const want = [
      {
        path: path.join(dir, "b.jsonl"),
        id: "b",
        cwd: "/tmp/wire-cwd",
        name: undefined,
        parentSessionPath: "/x/parent.jsonl",
        created: new Date("Jan 2 2026"),
        modified: new Date("2026-01-02T03:04:09+00:00"),
        messageCount: 1,
        firstMessage: "loose",
        allMessagesText: "loose",
      },
      {
        path: path.join(dir, "a.jsonl"),
        id: "a",
        cwd: "/tmp/wire-cwd",
        name: "wired",
        parentSessionPath: undefined,
        created: new Date(T0),
        modified: new Date(T0 + 2000),
        messageCount: 2,
        firstMessage: "hello there",
        allMessagesText: "hello there general",
      },
    ];
    assert.deepEqual(await SessionManager.list("/tmp/wire-cwd", dir), want);
    // The second listing reads the summaries from the listing cache: the same infos.
    const cache = path.join(agentDir, ".pi-session-native", "list-cache");
    assert.ok(fs.statSync(cache).size > 0, "the first listing wrote the cache");
    assert.deepEqual(await SessionManager.list("/tmp/wire-cwd", dir), want);
  });

  test("the batch decoder puts cut strings back where the core's tags say: a named member or an array index, from the values or a slice of wide", () => {
    const native = require("../native.js");
    const { BATCH_STEP_NAME: NAME, BATCH_STEP_INDEX: INDEX, BATCH_FROM_VALUES: VALUES, BATCH_FROM_WIDE: WIDE } = native;
    assert.equal(new Set([NAME, INDEX]).size, 2, "the step tags differ");
    assert.equal(new Set([VALUES, WIDE]).size, 2, "the value tags differ");
    // Item 1's "a" from the values; item 1's b[1] from wide[2..6]; item 0's "c".d from the values.
    const plan = Uint32Array.of(1, 1, NAME, 0, VALUES, 1, 2, NAME, 1, INDEX, 1, WIDE, 2, 6, 0, 2, NAME, 2, NAME, 3, VALUES);
    const items = wire.parseLines(['[{"c":{"d":0}},{"a":0,"b":[true,0],"z":1}]', plan, ["a", "b", "c", "d"], "..wide..", "first", "second"]);
    assert.deepEqual(items, [{ c: { d: "second" } }, { a: "first", b: [true, "wide"], z: 1 }]);
    assert.deepEqual(Object.keys(items[1]), ["a", "b", "z"], "a value put back keeps its member's place");
    assert.deepEqual(wire.parseLines('[{"x":1}]'), [{ x: 1 }], "a batch with nothing cut is its JSON text");
  });

  test("summary batches are read SUMMARY_FIELDS slots per session, null for a file that is no session", () => {
    const native = require("../native.js");
    assert.equal(native.SUMMARY_FIELDS, 3);
    const seen = [];
    wire.eachSummary(['{"id":"a"}', "first", "all", null, null, null, '{"id":"b"}', "", "x"], (...args) => seen.push(args));
    assert.deepEqual(seen, [
      ['{"id":"a"}', "first", "all", false],
      [null, null, null, false],
      ['{"id":"b"}', "", "x", true],
    ]);
  });

  test("open takes the header's cwd from the bounded scan, and past its bound from a full read", (t) => {
    const dir = tempDir(t, "pi-wire-scan-");
    const at = (name, records) => writeJsonl(path.join(dir, name), records);
    assert.equal(SessionManager.open(at("h.jsonl", [header({ cwd: "/tmp/scan-cwd" })]), dir).getCwd(), "/tmp/scan-cwd");
    assert.equal(SessionManager.open(at("e.jsonl", []), dir).getCwd(), process.cwd(), "no header: the process's cwd");
    // Lines that do not parse, over 1 MiB of them, before the header: only a full read finds it.
    const far = at("l.jsonl", [...Array.from({ length: 1100 }, () => `{${"x".repeat(1024)}`), header({ cwd: "/tmp/far-cwd" })]);
    assert.equal(SessionManager.open(far, dir).getCwd(), "/tmp/far-cwd");
  });

  test("the scalar position getters answer NONE for no record, as every format does", () => {
    const native = require("../native.js");
    const { NONE } = wire;
    const core = native.NativeSession.blank("/tmp/wire-none", "/tmp/wire-none", false);
    assert.equal(core.headerPos(), NONE, "no session yet");
    core.newSession(null, null);
    assert.equal(core.headerPos(), 0);
    assert.deepEqual([core.leafPos(), core.lookup(JSON.stringify("missing")), core.labelPos(JSON.stringify("missing")), core.sessionNamePos()], [NONE, NONE, NONE, NONE]);
  });
});
