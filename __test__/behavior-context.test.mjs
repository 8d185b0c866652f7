// docs/behaviour.md, "Contexts": context building: path selection, compaction-aware entry lists,
// entry → message conversion, context edits, projections and contexts.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget } from "./helpers/target.mjs";
import {
  T0,
  iso,
  entry,
  msgEntry,
  user,
  assistant,
  toolResult,
  system,
  compaction,
  chain,
  tempDir,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;

const ids = (list) => list.map((e) => e.id);

// ---------------------------------------------------------------------------
// Path selection
// ---------------------------------------------------------------------------
describe("path selection", () => {
  test("a null leafId selects an empty path", () => {
    const entries = chain([msgEntry("a", undefined, user("x")), msgEntry("b", undefined, user("y"))]);
    assert.deepEqual(M.buildContextEntries(entries, null), []);
  });

  test("an undefined leafId selects the path ending at the last element of the array", () => {
    const entries = [
      msgEntry("a", null, user("a")),
      msgEntry("b", "a", user("b")),
      msgEntry("c", "b", user("c")),
      msgEntry("d", "a", user("d")),
    ];
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["a", "d"]);
  });

  test("the last array element is used even when it is not the deepest node", () => {
    const entries = [
      msgEntry("a", null, user("a")),
      msgEntry("b", "a", user("b")),
      msgEntry("c", "b", user("c")),
      msgEntry("z", null, user("z")),
    ];
    assert.deepEqual(ids(M.buildContextEntries(entries, undefined)), ["z"]);
  });

  test("an unknown leafId falls back to the last element of the array", () => {
    const entries = [msgEntry("a", null, user("a")), msgEntry("b", "a", user("b")), msgEntry("c", "a", user("c"))];
    assert.deepEqual(ids(M.buildContextEntries(entries, "nope")), ["a", "c"]);
  });

  test("an empty-string leafId falls back to the last element of the array", () => {
    const entries = [msgEntry("a", null, user("a")), msgEntry("b", "a", user("b")), msgEntry("c", "a", user("c"))];
    assert.deepEqual(ids(M.buildContextEntries(entries, "")), ["a", "c"]);
  });

  test("a known leafId selects the path from the root to that entry, root first", () => {
    const entries = [
      msgEntry("a", null, user("a")),
      msgEntry("b", "a", user("b")),
      msgEntry("c", "b", user("c")),
      msgEntry("d", "a", user("d")),
    ];
    assert.deepEqual(ids(M.buildContextEntries(entries, "c")), ["a", "b", "c"]);
  });

  test("an empty entries array with no leaf selects nothing", () => {
    assert.deepEqual(M.buildContextEntries([]), []);
    assert.deepEqual(M.buildContextEntries([], "x"), []);
  });

  test("the walk stops at a missing parent, so an orphan starts the path", () => {
    const entries = [
      msgEntry("a", null, user("a")),
      msgEntry("o", "missing", user("o")),
      msgEntry("p", "o", user("p")),
    ];
    assert.deepEqual(ids(M.buildContextEntries(entries, "p")), ["o", "p"]);
  });

  test("a passed byId map is used to look up the leaf instead of the entries array", () => {
    const a = msgEntry("a", null, user("a"));
    const b = msgEntry("b", "a", user("b"));
    const hidden = msgEntry("h", "a", user("h"));
    const byId = new Map([
      ["a", a],
      ["b", b],
      ["h", hidden],
    ]);
    const result = M.buildContextEntries([a, b], "h", byId);
    assert.deepEqual(ids(result), ["a", "h"]);
    assert.equal(result[1], hidden);
  });

  test("a passed byId map is used for the parent walk instead of the entries array", () => {
    const a = msgEntry("a", null, user("a"));
    const b = msgEntry("b", "a", user("b"));
    const otherA = msgEntry("a", null, user("other a"));
    const byId = new Map([
      ["a", otherA],
      ["b", b],
    ]);
    const result = M.buildContextEntries([a, b], "b", byId);
    assert.equal(result[0], otherA);
    assert.equal(result[1], b);
  });

  test("with a byId map that lacks the leaf, the last array element is used and walked through the map", () => {
    const a = msgEntry("a", null, user("a"));
    const b = msgEntry("b", "a", user("b"));
    const byId = new Map([["a", a]]);
    assert.deepEqual(ids(M.buildContextEntries([a, b], "zzz", byId)), ["a", "b"]);
  });

  test("the selected path holds the entry objects themselves", () => {
    const entries = chain([msgEntry("a", undefined, user("a")), entry("model_change", "b", undefined, { provider: "p", modelId: "m" })]);
    const result = M.buildContextEntries(entries);
    assert.equal(result[0], entries[0]);
    assert.equal(result[1], entries[1]);
  });

  test("after resetLeaf every instance context is empty", () => {
    const sm = SessionManager.inMemory("/tmp/ctx");
    sm.appendMessage(user("hi"));
    sm.appendMessage(assistant("yo"));
    sm.resetLeaf();
    assert.deepEqual(sm.buildContextEntries(), []);
    assert.deepEqual(sm.buildSessionContext().messages, []);
    assert.deepEqual(sm.buildSessionProjection().entries, []);
    assert.deepEqual(sm.buildSessionProjection().messages, []);
  });

  test("a file whose last entry's id is null opens with a null leaf, so its context is empty", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "s.jsonl");
    const header = { type: "session", version: 3, id: "null-leaf", timestamp: iso(0), cwd: dir };
    const lines = [header, { ...msgEntry("a", null, user("one")) }, { ...msgEntry("b", "a", user("two")) }, { ...msgEntry(null, "b", user("three")) }];
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const sm = SessionManager.open(file, dir);
    assert.equal(sm.getLeafId(), null);
    assert.deepEqual(sm.getBranch(), []);
    assert.deepEqual(sm.buildContextEntries(), []);
    assert.deepEqual(sm.buildSessionContext().messages, []);
    assert.equal(sm.getEntries().length, 3);
  });

  test("instance methods follow the current leaf, not the last entry", () => {
    const sm = SessionManager.inMemory("/tmp/ctx");
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    sm.branch(a);
    assert.deepEqual(ids(sm.buildContextEntries()), [a]);
    assert.equal(sm.buildSessionContext().messages.length, 1);
  });
});

// ---------------------------------------------------------------------------
// buildContextEntries
// ---------------------------------------------------------------------------
describe("buildContextEntries", () => {
  test("without a compaction on the path the whole path is returned, non-message entries included", () => {
    const entries = chain([
      entry("model_change", "m", undefined, { provider: "p", modelId: "x" }),
      msgEntry("a", undefined, user("a")),
      entry("label", "l", undefined, { targetId: "a", label: "L" }),
      msgEntry("b", undefined, assistant("b")),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["m", "a", "l", "b"]);
  });

  test("with a compaction the output starts with it, then the kept entries from firstKeptEntryId, then the entries after it", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      msgEntry("b", undefined, assistant("b")),
      msgEntry("c", undefined, user("c")),
      compaction("C", undefined, { firstKeptEntryId: "b" }),
      msgEntry("d", undefined, assistant("d")),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C", "b", "c", "d"]);
  });

  test("the last compaction on the path wins over earlier ones", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      compaction("C1", undefined, { firstKeptEntryId: "a" }),
      msgEntry("b", undefined, user("b")),
      msgEntry("c", undefined, assistant("c")),
      compaction("C2", undefined, { firstKeptEntryId: "c" }),
      msgEntry("d", undefined, user("d")),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C2", "c", "d"]);
  });

  test("a compaction on another branch is ignored", () => {
    const entries = [
      msgEntry("a", null, user("a")),
      msgEntry("b", "a", assistant("b")),
      compaction("X", "b", { firstKeptEntryId: "b" }),
      msgEntry("c", "b", user("c")),
    ];
    assert.deepEqual(ids(M.buildContextEntries(entries, "c")), ["a", "b", "c"]);
  });

  test("system messages inside the kept range are skipped", () => {
    const entries = chain([
      msgEntry("s0", undefined, system("base")),
      msgEntry("a", undefined, user("a")),
      msgEntry("s1", undefined, system("mid")),
      msgEntry("b", undefined, assistant("b")),
      compaction("C", undefined, { firstKeptEntryId: "a" }),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C", "a", "b"]);
  });

  test("a system message that is the firstKeptEntryId itself is skipped but starts the kept range", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      msgEntry("s", undefined, system("sys")),
      msgEntry("b", undefined, assistant("b")),
      compaction("C", undefined, { firstKeptEntryId: "s" }),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C", "b"]);
  });

  test("system messages after the compaction are kept", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      compaction("C", undefined, { firstKeptEntryId: "a" }),
      msgEntry("s", undefined, system("later")),
      msgEntry("b", undefined, user("b")),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C", "a", "s", "b"]);
  });

  test("an absent firstKeptEntryId keeps nothing before the compaction", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      msgEntry("b", undefined, assistant("b")),
      compaction("C", undefined, {}),
      msgEntry("c", undefined, user("c")),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C", "c"]);
  });

  test("a firstKeptEntryId that is not on the path keeps nothing before the compaction", () => {
    const entries = [
      msgEntry("a", null, user("a")),
      msgEntry("side", "a", user("side")),
      msgEntry("b", "a", assistant("b")),
      compaction("C", "b", { firstKeptEntryId: "side" }),
      msgEntry("c", "C", user("c")),
    ];
    assert.deepEqual(ids(M.buildContextEntries(entries, "c")), ["C", "c"]);
  });

  test("a firstKeptEntryId that lies after the compaction keeps nothing before it", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      compaction("C", undefined, { firstKeptEntryId: "c" }),
      msgEntry("c", undefined, user("c")),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C", "c"]);
  });

  test("a firstKeptEntryId equal to the compaction's own id (retain-none) keeps nothing before it", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      msgEntry("b", undefined, assistant("b")),
      compaction("C", undefined, { firstKeptEntryId: "C" }),
      msgEntry("c", undefined, user("c")),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C", "c"]);
  });

  test("the kept range retains non-message entries such as labels, custom entries, model changes, older compactions and context edits", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      entry("model_change", "mc", undefined, { provider: "p", modelId: "m" }),
      entry("label", "lb", undefined, { targetId: "a", label: "x" }),
      entry("custom", "cu", undefined, { customType: "t", data: 1 }),
      compaction("C1", undefined, { firstKeptEntryId: "a" }),
      entry("context_edit", "ce", undefined, { targetId: "a", replacement: null }),
      entry("thinking_level_change", "tl", undefined, { thinkingLevel: "high" }),
      msgEntry("b", undefined, assistant("b")),
      compaction("C2", undefined, { firstKeptEntryId: "mc" }),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C2", "mc", "lb", "cu", "C1", "ce", "tl", "b"]);
  });

  test("a compaction that is the last entry yields only itself plus its kept range", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      msgEntry("b", undefined, assistant("b")),
      compaction("C", undefined, { firstKeptEntryId: "b" }),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C", "b"]);
  });

  test("a retainedTail compaction without firstKeptEntryId keeps nothing before it and everything after it", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      msgEntry("b", undefined, assistant("b")),
      compaction("C", undefined, { retainedTail: [user("tail")] }),
      msgEntry("c", undefined, user("c")),
    ]);
    assert.deepEqual(ids(M.buildContextEntries(entries)), ["C", "c"]);
  });

  test("the instance method equals the function applied to getEntries, the leaf and the index", () => {
    const sm = SessionManager.inMemory("/tmp/ctx");
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    sm.appendCompaction("sum", a, 10);
    sm.appendMessage(user("c"));
    assert.deepEqual(
      ids(sm.buildContextEntries()),
      ids(M.buildContextEntries(sm.getEntries(), sm.getLeafId())),
    );
    assert.equal(sm.buildContextEntries()[0].type, "compaction");
  });
});

// ---------------------------------------------------------------------------
// sessionEntryToContextMessages
// ---------------------------------------------------------------------------
describe("sessionEntryToContextMessages", () => {
  test("a message entry yields the stored message object itself", () => {
    const m = user("hello");
    const out = M.sessionEntryToContextMessages(msgEntry("a", null, m));
    assert.equal(out.length, 1);
    assert.equal(out[0], m);
  });

  test("a system message with content present is returned as the same object", () => {
    const m = system("prompt");
    assert.equal(M.sessionEntryToContextMessages(msgEntry("a", null, m))[0], m);
  });

  test("a system message with null content becomes a shallow copy with empty-string content", () => {
    const m = { role: "system", content: null, timestamp: 5, sections: { a: "x" } };
    const out = M.sessionEntryToContextMessages(msgEntry("a", null, m));
    assert.equal(out.length, 1);
    assert.notEqual(out[0], m);
    assert.deepEqual(out[0], { role: "system", content: "", timestamp: 5, sections: { a: "x" } });
    assert.equal(m.content, null);
  });

  test("a system message without a content key becomes a copy with empty-string content", () => {
    const m = { role: "system", timestamp: 5 };
    assert.deepEqual(M.sessionEntryToContextMessages(msgEntry("a", null, m)), [
      { role: "system", timestamp: 5, content: "" },
    ]);
  });

  for (const role of ["user", "assistant", "toolResult"]) {
    test(`a ${role} message with null content becomes a shallow copy with empty-array content`, () => {
      const m = { role, content: null, timestamp: 9, extra: "kept" };
      const out = M.sessionEntryToContextMessages(msgEntry("a", null, m));
      assert.notEqual(out[0], m);
      assert.deepEqual(out, [{ role, content: [], timestamp: 9, extra: "kept" }]);
      assert.equal(m.content, null);
    });
  }

  test("a user message without a content key becomes a copy with empty-array content", () => {
    const m = { role: "user", timestamp: 9 };
    assert.deepEqual(M.sessionEntryToContextMessages(msgEntry("a", null, m)), [
      { role: "user", timestamp: 9, content: [] },
    ]);
  });

  test("messages of other roles pass through unchanged even with null content", () => {
    const custom = { role: "custom", customType: "x", content: null, display: true, timestamp: 1 };
    const bash = { role: "bashExecution", command: "ls", output: "", exitCode: 0, cancelled: false, truncated: false, timestamp: 1 };
    assert.equal(M.sessionEntryToContextMessages(msgEntry("a", null, custom))[0], custom);
    assert.equal(M.sessionEntryToContextMessages(msgEntry("b", null, bash))[0], bash);
  });

  test("a custom_message entry becomes a custom message with role, customType, content, display, details and ms timestamp", () => {
    const e = {
      type: "custom_message",
      customType: "ext",
      content: "text",
      display: true,
      details: { a: 1 },
      id: "x",
      parentId: null,
      timestamp: iso(T0),
    };
    const out = M.sessionEntryToContextMessages(e);
    assert.deepEqual(out, [
      { role: "custom", customType: "ext", content: "text", display: true, details: { a: 1 }, timestamp: T0 },
    ]);
    assert.deepEqual(Object.keys(out[0]), ["role", "customType", "content", "display", "details", "timestamp"]);
  });

  test("a custom_message without details still has a details key holding undefined", () => {
    const e = { type: "custom_message", customType: "ext", content: "t", display: false, id: "x", parentId: null, timestamp: iso(T0) };
    const [m] = M.sessionEntryToContextMessages(e);
    assert.ok(Object.hasOwn(m, "details"));
    assert.equal(m.details, undefined);
    assert.equal(m.display, false);
  });

  test("a custom_message with null content yields empty-array content", () => {
    const e = { type: "custom_message", customType: "ext", content: null, display: true, id: "x", parentId: null, timestamp: iso(T0) };
    assert.deepEqual(M.sessionEntryToContextMessages(e)[0].content, []);
  });

  test("a custom_message without a content key yields empty-array content", () => {
    const e = { type: "custom_message", customType: "ext", display: true, id: "x", parentId: null, timestamp: iso(T0) };
    assert.deepEqual(M.sessionEntryToContextMessages(e)[0].content, []);
  });

  test("a custom_message keeps array content as the same array", () => {
    const content = [{ type: "text", text: "a" }];
    const e = { type: "custom_message", customType: "ext", content, display: true, id: "x", parentId: null, timestamp: iso(T0) };
    assert.equal(M.sessionEntryToContextMessages(e)[0].content, content);
  });

  test("a custom_message with an invalid ISO timestamp gets a NaN timestamp that serializes as null", () => {
    const e = { type: "custom_message", customType: "ext", content: "t", display: true, id: "x", parentId: null, timestamp: "not a date" };
    const [m] = M.sessionEntryToContextMessages(e);
    assert.ok(Number.isNaN(m.timestamp));
    assert.equal(JSON.parse(JSON.stringify(m)).timestamp, null);
  });

  test("a branch_summary with a summary becomes a branchSummary message", () => {
    const e = entry("branch_summary", "bs", "a", { fromId: "z", summary: "went elsewhere" }, iso(T0 + 5));
    const out = M.sessionEntryToContextMessages(e);
    assert.deepEqual(out, [{ role: "branchSummary", summary: "went elsewhere", fromId: "z", timestamp: T0 + 5 }]);
    assert.deepEqual(Object.keys(out[0]), ["role", "summary", "fromId", "timestamp"]);
  });

  test("a branch_summary with an empty summary yields no message", () => {
    const e = entry("branch_summary", "bs", "a", { fromId: "z", summary: "" });
    assert.deepEqual(M.sessionEntryToContextMessages(e), []);
  });

  test("a branch_summary without a summary key yields no message", () => {
    const e = entry("branch_summary", "bs", "a", { fromId: "z" });
    assert.deepEqual(M.sessionEntryToContextMessages(e), []);
  });

  test("a compaction without systemMessage yields one compactionSummary message", () => {
    const e = compaction("C", "a", { summary: "S", tokensBefore: 42, firstKeptEntryId: "a" }, iso(T0 + 7));
    const out = M.sessionEntryToContextMessages(e);
    assert.deepEqual(out, [{ role: "compactionSummary", summary: "S", tokensBefore: 42, timestamp: T0 + 7 }]);
    assert.deepEqual(Object.keys(out[0]), ["role", "summary", "tokensBefore", "timestamp"]);
  });

  test("a compaction with systemMessage yields the stored system message object followed by the summary", () => {
    const sys = { role: "system", content: "p", timestamp: 1 };
    const e = compaction("C", "a", { summary: "S", tokensBefore: 1, systemMessage: sys });
    const out = M.sessionEntryToContextMessages(e);
    assert.equal(out.length, 2);
    assert.equal(out[0], sys);
    assert.equal(out[1].role, "compactionSummary");
  });

  test("a compaction with an invalid ISO timestamp yields a NaN summary timestamp", () => {
    const e = compaction("C", "a", {}, "garbage");
    assert.ok(Number.isNaN(M.sessionEntryToContextMessages(e)[0].timestamp));
  });

  for (const [type, fields] of [
    ["thinking_level_change", { thinkingLevel: "high" }],
    ["model_change", { provider: "p", modelId: "m" }],
    ["usage", { kind: "k", provider: "p", model: "m", usage: {} }],
    ["custom", { customType: "t", data: { a: 1 } }],
    ["label", { targetId: "a", label: "x" }],
    ["session_info", { name: "n" }],
    ["context_edit", { targetId: "a", replacement: null }],
  ]) {
    test(`a ${type} entry yields no messages`, () => {
      assert.deepEqual(M.sessionEntryToContextMessages(entry(type, "x", null, fields)), []);
    });
  }
});

// ---------------------------------------------------------------------------
// projectContextEntry
// ---------------------------------------------------------------------------
describe("projectContextEntry", () => {
  test("without an edit the result is the plain conversion, with the stored message object", () => {
    const m = user("x");
    const out = M.projectContextEntry(msgEntry("a", null, m), undefined);
    assert.equal(out.length, 1);
    assert.equal(out[0], m);
  });

  test("an edit whose replacement is null removes the entry's messages", () => {
    const e = msgEntry("a", null, user("x"));
    assert.deepEqual(M.projectContextEntry(e, { replacement: null }), []);
  });

  test("an edit with null replacement removes a compaction's messages too", () => {
    const e = compaction("C", null, { systemMessage: system("s") });
    assert.deepEqual(M.projectContextEntry(e, { replacement: null }), []);
  });

  test("a string replacement stays a string for a user message, in a shallow copy", () => {
    const m = user("old", 77);
    const out = M.projectContextEntry(msgEntry("a", null, m), { replacement: { content: "new" } });
    assert.deepEqual(out, [{ role: "user", content: "new", timestamp: 77 }]);
    assert.notEqual(out[0], m);
    assert.equal(m.content, "old");
  });

  test("a string replacement is wrapped as one text block for an assistant message", () => {
    const m = assistant("old");
    const out = M.projectContextEntry(msgEntry("a", null, m), { replacement: { content: "new" } });
    assert.deepEqual(out[0].content, [{ type: "text", text: "new" }]);
    assert.equal(out[0].provider, "prov");
    assert.equal(out[0].model, "mod");
  });

  test("a string replacement is wrapped as one text block for a toolResult message", () => {
    const m = toolResult("old");
    const out = M.projectContextEntry(msgEntry("a", null, m), { replacement: { content: "new" } });
    assert.deepEqual(out[0].content, [{ type: "text", text: "new" }]);
    assert.equal(out[0].toolCallId, "call-1");
  });

  test("a string replacement stays a string for a custom message from a custom_message entry", () => {
    const e = { type: "custom_message", customType: "x", content: "old", display: true, id: "c", parentId: null, timestamp: iso(T0) };
    const out = M.projectContextEntry(e, { replacement: { content: "new" } });
    assert.equal(out[0].content, "new");
    assert.equal(out[0].role, "custom");
    assert.equal(out[0].customType, "x");
  });

  test("an array replacement is used as is for an assistant message", () => {
    const content = [{ type: "text", text: "a" }, { type: "image", data: "d", mimeType: "image/png" }];
    const out = M.projectContextEntry(msgEntry("a", null, assistant("old")), { replacement: { content } });
    assert.deepEqual(out[0].content, content);
  });

  test("a system message is left unchanged by an edit", () => {
    const m = system("sys");
    const out = M.projectContextEntry(msgEntry("a", null, m), { replacement: { content: "new" } });
    assert.equal(out[0], m);
  });

  test("compactionSummary and checkpoint system messages are left unchanged by an edit", () => {
    const sys = system("s");
    const e = compaction("C", null, { systemMessage: sys, summary: "S" });
    const out = M.projectContextEntry(e, { replacement: { content: "new" } });
    assert.equal(out[0], sys);
    assert.equal(out[1].role, "compactionSummary");
    assert.equal(out[1].summary, "S");
    assert.equal("content" in out[1], false);
  });

  test("a branchSummary message is left unchanged by an edit", () => {
    const e = entry("branch_summary", "b", null, { fromId: "x", summary: "S" });
    const out = M.projectContextEntry(e, { replacement: { content: "new" } });
    assert.deepEqual(out, [{ role: "branchSummary", summary: "S", fromId: "x", timestamp: T0 }]);
  });

  test("a message of another role such as bashExecution is left unchanged by an edit", () => {
    const m = { role: "bashExecution", command: "ls", output: "o", exitCode: 0, cancelled: false, truncated: false, timestamp: 1 };
    assert.equal(M.projectContextEntry(msgEntry("a", null, m), { replacement: { content: "x" } })[0], m);
  });
});

// ---------------------------------------------------------------------------
// buildSessionProjection
// ---------------------------------------------------------------------------
describe("buildSessionProjection", () => {
  test("defaults are thinkingLevel off and model null", () => {
    const p = M.buildSessionProjection([msgEntry("a", null, user("x"))]);
    assert.equal(p.thinkingLevel, "off");
    assert.equal(p.model, null);
  });

  test("the projection has exactly the keys entries, messages, thinkingLevel and model", () => {
    const p = M.buildSessionProjection([msgEntry("a", null, user("x"))]);
    assert.deepEqual(Object.keys(p).sort(), ["entries", "messages", "model", "thinkingLevel"]);
  });

  test("the last thinking_level_change on the path sets thinkingLevel verbatim", () => {
    const entries = chain([
      entry("thinking_level_change", "t1", undefined, { thinkingLevel: "high" }),
      entry("thinking_level_change", "t2", undefined, { thinkingLevel: "weird-level" }),
    ]);
    assert.equal(M.buildSessionProjection(entries).thinkingLevel, "weird-level");
  });

  test("a model_change sets the model to its provider and modelId", () => {
    const entries = [entry("model_change", "m", null, { provider: "anthropic", modelId: "claude" })];
    assert.deepEqual(M.buildSessionProjection(entries).model, { provider: "anthropic", modelId: "claude" });
  });

  test("an assistant message after a model_change sets the model from its provider and model", () => {
    const entries = chain([
      entry("model_change", "m", undefined, { provider: "a", modelId: "b" }),
      msgEntry("x", undefined, assistant("hi", { provider: "openai", model: "gpt" })),
    ]);
    assert.deepEqual(M.buildSessionProjection(entries).model, { provider: "openai", modelId: "gpt" });
  });

  test("a model_change after an assistant message wins", () => {
    const entries = chain([
      msgEntry("x", undefined, assistant("hi", { provider: "openai", model: "gpt" })),
      entry("model_change", "m", undefined, { provider: "a", modelId: "b" }),
    ]);
    assert.deepEqual(M.buildSessionProjection(entries).model, { provider: "a", modelId: "b" });
  });

  test("settings come from the full path even when a compaction drops those entries from the context", () => {
    const entries = chain([
      entry("thinking_level_change", "t", undefined, { thinkingLevel: "medium" }),
      entry("model_change", "m", undefined, { provider: "p", modelId: "q" }),
      msgEntry("a", undefined, user("a")),
      compaction("C", undefined, {}),
      msgEntry("b", undefined, user("b")),
    ]);
    const p = M.buildSessionProjection(entries);
    assert.deepEqual(ids(p.entries.map((e) => e.sourceEntry)), ["C", "b"]);
    assert.equal(p.thinkingLevel, "medium");
    assert.deepEqual(p.model, { provider: "p", modelId: "q" });
  });

  test("settings on other branches are ignored", () => {
    const entries = [
      msgEntry("a", null, user("a")),
      entry("thinking_level_change", "t", "a", { thinkingLevel: "high" }),
      entry("model_change", "m", "a", { provider: "p", modelId: "q" }),
      msgEntry("b", "a", user("b")),
    ];
    const p = M.buildSessionProjection(entries, "b");
    assert.equal(p.thinkingLevel, "off");
    assert.equal(p.model, null);
  });

  test("entries holds one item per context entry with sourceEntry being the entry object", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      entry("model_change", "m", undefined, { provider: "p", modelId: "q" }),
      msgEntry("b", undefined, assistant("b")),
    ]);
    const p = M.buildSessionProjection(entries);
    assert.equal(p.entries.length, 3);
    p.entries.forEach((item, i) => assert.equal(item.sourceEntry, entries[i]));
    assert.deepEqual(Object.keys(p.entries[0]).sort(), ["messages", "sourceEntry"]);
    assert.deepEqual(p.entries[1].messages, []);
  });

  test("messages is the concatenation of the items' messages", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      compaction("C", undefined, { firstKeptEntryId: "a", systemMessage: system("s") }),
      msgEntry("b", undefined, assistant("b")),
    ]);
    const p = M.buildSessionProjection(entries);
    assert.deepEqual(p.messages, p.entries.flatMap((e) => e.messages));
    assert.deepEqual(p.messages.map((m) => m.role), ["system", "compactionSummary", "user", "assistant"]);
  });

  test("a context_edit inside the context replaces its target's content", () => {
    const entries = chain([
      msgEntry("a", undefined, user("old")),
      entry("context_edit", "e", undefined, { targetId: "a", replacement: { content: "new" } }),
    ]);
    const p = M.buildSessionProjection(entries);
    assert.equal(p.messages[0].content, "new");
    assert.equal(entries[0].message.content, "old");
  });

  test("a later context_edit for the same target overrides an earlier one", () => {
    const entries = chain([
      msgEntry("a", undefined, user("old")),
      entry("context_edit", "e1", undefined, { targetId: "a", replacement: { content: "first" } }),
      entry("context_edit", "e2", undefined, { targetId: "a", replacement: { content: "second" } }),
    ]);
    assert.equal(M.buildSessionProjection(entries).messages[0].content, "second");
  });

  test("a later null replacement removes the target's messages but keeps its item", () => {
    const entries = chain([
      msgEntry("a", undefined, user("old")),
      msgEntry("b", undefined, assistant("b")),
      entry("context_edit", "e1", undefined, { targetId: "a", replacement: { content: "first" } }),
      entry("context_edit", "e2", undefined, { targetId: "a", replacement: null }),
    ]);
    const p = M.buildSessionProjection(entries);
    assert.deepEqual(p.entries[0].messages, []);
    assert.deepEqual(p.messages.map((m) => m.role), ["assistant"]);
  });

  test("a context_edit outside the context range is ignored", () => {
    const entries = chain([
      entry("context_edit", "e0", undefined, { targetId: "b", replacement: { content: "edited" } }),
      msgEntry("a", undefined, user("a")),
      msgEntry("b", undefined, user("b")),
      compaction("C", undefined, { firstKeptEntryId: "b" }),
    ]);
    const p = M.buildSessionProjection(entries);
    assert.deepEqual(ids(p.entries.map((e) => e.sourceEntry)), ["C", "b"]);
    assert.equal(p.messages[1].content, "b");
  });

  test("a context_edit on another branch is ignored", () => {
    const entries = [
      msgEntry("a", null, user("a")),
      entry("context_edit", "e", "a", { targetId: "a", replacement: { content: "edited" } }),
      msgEntry("b", "a", assistant("b")),
    ];
    assert.equal(M.buildSessionProjection(entries, "b").messages[0].content, "a");
  });

  test("a context_edit inside the kept range of a compaction applies", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      entry("context_edit", "e", undefined, { targetId: "a", replacement: { content: "edited" } }),
      compaction("C", undefined, { firstKeptEntryId: "a" }),
    ]);
    assert.equal(M.buildSessionProjection(entries).messages[1].content, "edited");
  });

  test("a context_edit after the compaction applies to a kept entry", () => {
    const entries = chain([
      msgEntry("a", undefined, assistant("a")),
      compaction("C", undefined, { firstKeptEntryId: "a" }),
      entry("context_edit", "e", undefined, { targetId: "a", replacement: { content: "edited" } }),
    ]);
    assert.deepEqual(M.buildSessionProjection(entries).messages[1].content, [{ type: "text", text: "edited" }]);
  });

  test("an older compaction retained in the kept range contributes no messages", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      compaction("C1", undefined, { firstKeptEntryId: "a", systemMessage: system("old sys") }),
      msgEntry("b", undefined, user("b")),
      compaction("C2", undefined, { firstKeptEntryId: "a" }),
    ]);
    const p = M.buildSessionProjection(entries);
    assert.deepEqual(ids(p.entries.map((e) => e.sourceEntry)), ["C2", "a", "C1", "b"]);
    assert.deepEqual(p.entries[2].messages, []);
    assert.deepEqual(
      p.messages.map((m) => m.summary ?? m.content),
      ["summary of C2", "a", "b"],
    );
  });

  test("the leading compaction contributes its checkpoint system message and summary", () => {
    const sys = system("checkpoint");
    const entries = chain([msgEntry("a", undefined, user("a")), compaction("C", undefined, { systemMessage: sys })]);
    const p = M.buildSessionProjection(entries);
    assert.equal(p.entries[0].messages[0], sys);
    assert.equal(p.entries[0].messages[1].role, "compactionSummary");
  });

  test("the instance method uses the current leaf", () => {
    const sm = SessionManager.inMemory("/tmp/ctx");
    const a = sm.appendMessage(user("a"));
    sm.appendThinkingLevelChange("high");
    sm.appendMessage(assistant("b"));
    sm.branch(a);
    const p = sm.buildSessionProjection();
    assert.equal(p.entries.length, 1);
    assert.equal(p.thinkingLevel, "off");
  });
});

// ---------------------------------------------------------------------------
// buildSessionContext
// ---------------------------------------------------------------------------
describe("buildSessionContext", () => {
  test("the context has exactly messages, thinkingLevel and model taken from the projection", () => {
    const entries = chain([
      entry("thinking_level_change", "t", undefined, { thinkingLevel: "low" }),
      msgEntry("a", undefined, user("a")),
      msgEntry("b", undefined, assistant("b", { provider: "x", model: "y" })),
      entry("context_edit", "e", undefined, { targetId: "a", replacement: { content: "A" } }),
    ]);
    const c = M.buildSessionContext(entries);
    const p = M.buildSessionProjection(entries);
    assert.deepEqual(Object.keys(c).sort(), ["messages", "model", "thinkingLevel"]);
    assert.deepEqual(c.messages, p.messages);
    assert.equal(c.thinkingLevel, "low");
    assert.deepEqual(c.model, { provider: "x", modelId: "y" });
    assert.equal(c.messages[0].content, "A");
  });

  test("an older compaction's summary does not re-appear in the context", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      compaction("C1", undefined, { firstKeptEntryId: "a", summary: "first" }),
      msgEntry("b", undefined, user("b")),
      compaction("C2", undefined, { firstKeptEntryId: "a", summary: "second" }),
    ]);
    const summaries = M.buildSessionContext(entries).messages.filter((m) => m.role === "compactionSummary");
    assert.deepEqual(summaries.map((m) => m.summary), ["second"]);
  });

  test("branch summaries and custom messages on the path appear in order", () => {
    const entries = chain([
      msgEntry("a", undefined, user("a")),
      entry("branch_summary", "bs", undefined, { fromId: "z", summary: "BS" }),
      { type: "custom_message", customType: "t", content: "cm", display: true, id: "cm" },
    ]);
    entries[2].timestamp = iso(T0);
    assert.deepEqual(M.buildSessionContext(entries).messages.map((m) => m.role), ["user", "branchSummary", "custom"]);
  });

  test("the instance method returns the same messages as the projection of the current leaf", () => {
    const sm = SessionManager.inMemory("/tmp/ctx");
    sm.appendModelChange("p", "m");
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    sm.appendContextEdit(a, { content: "changed" });
    const c = sm.buildSessionContext();
    assert.deepEqual(Object.keys(c).sort(), ["messages", "model", "thinkingLevel"]);
    assert.deepEqual(c.messages.map((m) => m.content), ["changed", [{ type: "text", text: "b" }]]);
    assert.deepEqual(c.model, { provider: "prov", modelId: "mod" });
  });

  test("the instance method walks through the manager's index, not a rebuilt one", () => {
    // Duplicate ids: the index keeps the later value, so the walk from the leaf goes through it.
    const hdr = { type: "session", version: 3, id: "s", timestamp: iso(T0), cwd: "/tmp" };
    const first = msgEntry("a", null, user("first a"));
    const second = msgEntry("a", null, user("second a"));
    const leaf = msgEntry("b", "a", assistant("b"));
    const sm = SessionManager.inMemory("/tmp/ctx", undefined, [hdr, first, second, leaf]);
    const msgs = sm.buildSessionContext().messages;
    assert.equal(msgs[0], second.message);
  });
});
