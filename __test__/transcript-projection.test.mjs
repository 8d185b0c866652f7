// buildTranscriptProjection(session), exported from the package root (an addition in the shape
// of upstream's proposal, earendil-works/pi transcript-projection.test.ts at 1c78a97): the active
// branch as blocks with stable ids, tool calls paired with their results.
import { test } from "node:test";
import assert from "node:assert/strict";

import { user } from "./helpers/fixtures.mjs";
import { loadOurs } from "./helpers/target.mjs";

const ours = loadOurs();
const { SessionManager, buildTranscriptProjection } = ours;

const said = (content) => ({
  role: "assistant",
  content,
  api: "anthropic-messages",
  provider: "anthropic",
  model: "m",
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp: 1,
});
const text = (t) => said([{ type: "text", text: t }]);
const result = (toolCallId, t) => ({ role: "toolResult", toolCallId, toolName: "read", content: [{ type: "text", text: t }], isError: false, timestamp: 1 });
const entryIds = (p) => p.blocks.map((b) => b.entryId);
const tools = (p) => p.blocks.filter((b) => b.kind === "tool");

test("buildTranscriptProjection is exported from the package root, CommonJS and ES module alike", async () => {
  assert.equal(typeof buildTranscriptProjection, "function");
  const esm = await import("../index.mjs");
  assert.equal(esm.buildTranscriptProjection, buildTranscriptProjection);
});

test("repeated compaction narrows the context, never the projection, and block ids repeat", () => {
  const sm = SessionManager.inMemory("/w");
  const u1 = sm.appendMessage(user("one"));
  const a1 = sm.appendMessage(text("answer one"));
  const u2 = sm.appendMessage(user("two"));
  const a2 = sm.appendMessage(text("answer two"));
  const c1 = sm.appendCompaction("first summary", u2, 100);
  const u3 = sm.appendMessage(user("three"));
  const a3 = sm.appendMessage(text("answer three"));
  const c2 = sm.appendCompaction("second summary", u3, 200);
  const u4 = sm.appendMessage(user("four"));
  const first = buildTranscriptProjection(sm);
  const second = buildTranscriptProjection(sm);
  assert.deepEqual(entryIds(first), [u1, a1, u2, a2, c1, u3, a3, c2, u4]);
  assert.deepEqual(second.blocks.map((b) => b.id), first.blocks.map((b) => b.id));
  assert.deepEqual(sm.buildContextEntries().map((e) => e.id), [c2, u3, a3, u4]);
});

test("only the active branch is projected, with the branch summary where it turned", () => {
  const sm = SessionManager.inMemory("/w");
  const root = sm.appendMessage(user("root"));
  const common = sm.appendMessage(text("common"));
  const abandoned = [sm.appendMessage(user("abandoned")), sm.appendMessage(text("abandoned answer"))];
  sm.branch(common);
  const alternative = [sm.appendMessage(user("first alternative")), sm.appendMessage(text("first answer"))];
  const summary = sm.branchWithSummary(common, "Summary of abandoned work");
  const active = sm.appendMessage(user("active alternative"));
  const p = buildTranscriptProjection(sm);
  assert.deepEqual(entryIds(p), [root, common, summary, active]);
  for (const id of [...abandoned, ...alternative]) assert.ok(!entryIds(p).includes(id));
  const block = p.blocks.find((b) => b.entryId === summary);
  assert.equal(block.kind, "entry");
  assert.equal(block.entry.type, "branch_summary");
});

test("tool calls get blocks of their own with stable ids, and take their results when they come", () => {
  const sm = SessionManager.inMemory("/w");
  sm.appendMessage(user("use tools"));
  const asked = sm.appendMessage(
    said([
      { type: "thinking", thinking: "inspect both files" },
      { type: "toolCall", id: "call/a", name: "read", arguments: { path: "a.ts" } },
      { type: "text", text: "and" },
      { type: "toolCall", id: "call/b", name: "read", arguments: { path: "b.ts" } },
    ]),
  );
  const pending = tools(buildTranscriptProjection(sm));
  assert.deepEqual(pending.map((b) => b.entryId), [asked, asked]);
  assert.equal(new Set(pending.map((b) => b.id)).size, 2);
  assert.deepEqual(pending.map((b) => b.contentIndex), [1, 3]);
  assert.ok(pending.every((b) => b.result === undefined && b.resultEntry === undefined));

  const ra = sm.appendMessage(result("call/a", "a contents"));
  const rb = sm.appendMessage(result("call/b", "b contents"));
  const done = buildTranscriptProjection(sm);
  const paired = tools(done);
  assert.deepEqual(paired.map((b) => b.id), pending.map((b) => b.id));
  assert.deepEqual(paired.map((b) => b.resultEntry?.id), [ra, rb]);
  assert.deepEqual(paired.map((b) => b.result?.toolCallId), ["call/a", "call/b"]);
  assert.ok(!entryIds(done).includes(ra) && !entryIds(done).includes(rb));
  assert.deepEqual(done.unpairedToolResults, []);

  const orphan = sm.appendMessage(result("missing-call", "orphan"));
  assert.deepEqual(buildTranscriptProjection(sm).unpairedToolResults.map(({ entry }) => entry.id), [orphan]);
});

test("a call id used twice in one message gets two blocks, and the later one takes the result", () => {
  const sm = SessionManager.inMemory("/w");
  sm.appendMessage(user("q"));
  sm.appendMessage(
    said([
      { type: "toolCall", id: "same", name: "read", arguments: {} },
      { type: "toolCall", id: "same", name: "read", arguments: {} },
    ]),
  );
  const r = sm.appendMessage(result("same", "x"));
  const [first, second] = tools(buildTranscriptProjection(sm));
  assert.notEqual(first.id, second.id);
  assert.equal(first.result, undefined);
  assert.equal(second.resultEntry.id, r);
});

test("settings, labels and names render no block; custom entries and custom messages do", () => {
  const sm = SessionManager.inMemory("/w");
  const u = sm.appendMessage(user("q"));
  sm.appendThinkingLevelChange("high");
  sm.appendModelChange("p", "m");
  sm.appendLabelChange(u, "mark");
  sm.appendSessionInfo("name");
  const custom = sm.appendCustomEntry("ext", 1);
  const shown = sm.appendCustomMessageEntry("ext", "shown", true);
  assert.deepEqual(entryIds(buildTranscriptProjection(sm)), [u, custom, shown]);
});

test("block ids keep entry and call ids that hold separators apart", () => {
  const sm = SessionManager.inMemory("/w");
  sm.appendMessage(user("q"));
  const asked = sm.appendMessage(said([{ type: "toolCall", id: "a:b/c", name: "read", arguments: {} }]));
  const [tool] = tools(buildTranscriptProjection(sm));
  assert.equal(tool.id, `entry:${encodeURIComponent(asked)}:tool:${encodeURIComponent("a:b/c")}:0`);
});
