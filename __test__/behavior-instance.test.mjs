// docs/behaviour.md, "Reading entries" and "Appending": instance accessors, append methods,
// getBranch, getChildren.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget } from "./helpers/target.mjs";
import {
  T0,
  iso,
  tempDir,
  useAgentDir,
  defaultSessionDirFor,
  header,
  entry,
  msgEntry,
  user,
  assistant,
  toolResult,
  system,
  readJsonl,
  ENTRY_ID_RE,
  ISO_RE,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;

const mem = () => SessionManager.inMemory("/tmp/inst");

/** An in-memory manager over preloaded records (header first). */
function preloaded(entries, hdr = header()) {
  return SessionManager.inMemory("/tmp/inst", undefined, [hdr, ...entries]);
}

function tool(name, extra = {}) {
  return { name, description: `${name} tool`, parameters: { type: "object" }, ...extra };
}

// ---------------------------------------------------------------------------
// Simple accessors
// ---------------------------------------------------------------------------
describe("simple accessors", () => {
  test("isPersisted is true for a created session", (t) => {
    assert.equal(SessionManager.create("/tmp/x", tempDir(t)).isPersisted(), true);
  });

  test("isPersisted is false for an in-memory session", () => {
    assert.equal(mem().isPersisted(), false);
  });

  test("getCwd resolves a relative cwd against the process cwd", () => {
    assert.equal(SessionManager.inMemory("some/rel/dir").getCwd(), path.resolve("some/rel/dir"));
  });

  test("getCwd normalizes dot segments and a trailing slash", () => {
    assert.equal(SessionManager.inMemory("/a/b/../c/").getCwd(), "/a/c");
  });

  test("getSessionDir is the empty string in memory", () => {
    assert.equal(mem().getSessionDir(), "");
  });

  test("getSessionDir keeps a relative session dir relative", (t) => {
    const rel = path.relative(process.cwd(), tempDir(t));
    const sm = SessionManager.create("/tmp/x", rel);
    assert.equal(sm.getSessionDir(), rel);
    assert.equal(path.dirname(sm.getSessionFile()), rel);
  });

  test("getSessionDir keeps a trailing slash", (t) => {
    const dir = tempDir(t) + "/";
    assert.equal(SessionManager.create("/tmp/x", dir).getSessionDir(), dir);
  });

  test("usesDefaultSessionDir is true for a session created without a dir", (t) => {
    useAgentDir(t);
    const cwd = tempDir(t);
    assert.equal(SessionManager.create(cwd).usesDefaultSessionDir(), true);
  });

  test("usesDefaultSessionDir is true for the default dir given with a trailing slash", (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    const sm = SessionManager.create(cwd, defaultSessionDirFor(agent, cwd) + "/");
    assert.equal(sm.usesDefaultSessionDir(), true);
  });

  test("usesDefaultSessionDir is false for another dir", (t) => {
    useAgentDir(t);
    assert.equal(SessionManager.create(tempDir(t), tempDir(t)).usesDefaultSessionDir(), false);
  });

  test("usesDefaultSessionDir is false in memory and creates nothing", (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    const sm = SessionManager.inMemory(cwd);
    assert.equal(sm.usesDefaultSessionDir(), false);
    assert.equal(fs.existsSync(path.join(agent, "sessions")), false);
  });

  test("getSessionId is the header id", () => {
    const sm = mem();
    assert.equal(sm.getSessionId(), sm.getHeader().id);
  });

  test("getSessionId is the custom id when one was given", (t) => {
    assert.equal(SessionManager.create("/tmp/x", tempDir(t), { id: "my-id" }).getSessionId(), "my-id");
  });

  test("getSessionFile is undefined in memory", () => {
    assert.equal(mem().getSessionFile(), undefined);
  });

  test("getSessionFile reports a path set with setSessionFile on an in-memory manager", (t) => {
    const file = path.join(tempDir(t), "x.jsonl");
    const sm = mem();
    sm.setSessionFile(file);
    assert.equal(sm.getSessionFile(), file);
  });

  test("getSessionFile of a created session is <dir>/<timestamp>_<id>.jsonl from the header", (t) => {
    const dir = tempDir(t);
    const sm = SessionManager.create("/tmp/x", dir);
    const h = sm.getHeader();
    assert.equal(sm.getSessionFile(), path.join(dir, `${h.timestamp.replace(/[:.]/g, "-")}_${h.id}.jsonl`));
  });

  test("getHeader returns the same live header object on every call", () => {
    const sm = mem();
    const h = sm.getHeader();
    assert.equal(sm.getHeader(), h);
    assert.equal(h.type, "session");
    assert.equal(h.version, 3);
    assert.equal(h.cwd, "/tmp/inst");
  });

  test("getEntries returns a new array of all entries in insertion order without the header", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.branch(a);
    const c = sm.appendMessage(user("c"));
    const first = sm.getEntries();
    assert.deepEqual(first.map((e) => e.id), [a, b, c]);
    assert.notEqual(sm.getEntries(), first);
    assert.ok(first.every((e) => e.type !== "session"));
  });

  test("mutating the array returned by getEntries does not change the manager", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    sm.getEntries().length = 0;
    assert.equal(sm.getEntries().length, 1);
  });

  test("getEntries elements are the live entry objects", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.equal(sm.getEntries()[0], sm.getEntry(a));
  });

  test("getEntryCount is zero for a new session and counts appended entries", () => {
    const sm = mem();
    assert.equal(sm.getEntryCount(), 0);
    sm.appendMessage(user("a"));
    sm.appendModelChange("p", "m");
    assert.equal(sm.getEntryCount(), 2);
  });

  test("getEntryCount counts duplicate ids once, unlike getEntries", () => {
    const sm = preloaded([
      msgEntry("a", null, user("1")),
      msgEntry("a", null, user("2")),
      msgEntry("b", "a", user("3")),
    ]);
    assert.equal(sm.getEntries().length, 3);
    assert.equal(sm.getEntryCount(), 2);
  });

  test("getLeafId is null for a new session and the last appended id afterwards", () => {
    const sm = mem();
    assert.equal(sm.getLeafId(), null);
    const a = sm.appendMessage(user("a"));
    assert.equal(sm.getLeafId(), a);
  });

  test("getLeafEntry is undefined while the leaf is null", () => {
    const sm = mem();
    assert.equal(sm.getLeafEntry(), undefined);
    sm.appendMessage(user("a"));
    sm.resetLeaf();
    assert.equal(sm.getLeafEntry(), undefined);
  });

  test("getLeafEntry is the entry at the leaf", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.equal(sm.getLeafEntry().id, a);
    assert.equal(sm.getLeafEntry().type, "message");
  });

  test("getEntry returns the entry for a known id and undefined otherwise", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.equal(sm.getEntry(a).id, a);
    assert.equal(sm.getEntry("ffffffff"), undefined);
  });

  test("getSessionName is undefined without session_info entries", () => {
    assert.equal(mem().getSessionName(), undefined);
  });

  test("getSessionName is the latest session_info in file order across branches", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendSessionInfo("on branch one");
    sm.branch(a);
    sm.appendSessionInfo("on branch two");
    sm.branch(a);
    assert.equal(sm.getSessionName(), "on branch two");
  });

  test("getSessionName trims a stored name", () => {
    const sm = preloaded([entry("session_info", "i", null, { name: "  padded  " })]);
    assert.equal(sm.getSessionName(), "padded");
  });

  test("getSessionName is undefined when the latest name is empty", () => {
    const sm = mem();
    sm.appendSessionInfo("named");
    sm.appendSessionInfo("");
    assert.equal(sm.getSessionName(), undefined);
  });

  test("getSessionName is undefined when the latest stored name is whitespace only", () => {
    const sm = preloaded([entry("session_info", "i", null, { name: "x" }), entry("session_info", "j", "i", { name: " \t " })]);
    assert.equal(sm.getSessionName(), undefined);
  });

  test("newSession on an in-memory manager returns undefined", () => {
    assert.equal(mem().newSession(), undefined);
  });
});

// ---------------------------------------------------------------------------
// Append methods
// ---------------------------------------------------------------------------
describe("append methods", () => {
  test("appendMessage returns an 8-hex id and stores a message entry", () => {
    const sm = mem();
    const m = user("hi");
    const before = Date.now();
    const id = sm.appendMessage(m);
    const after = Date.now();
    assert.match(id, ENTRY_ID_RE);
    const e = sm.getEntry(id);
    assert.deepEqual(Object.keys(e), ["type", "id", "parentId", "timestamp", "message"]);
    assert.equal(e.type, "message");
    assert.equal(e.parentId, null);
    assert.deepEqual(e.message, m);
    assert.match(e.timestamp, ISO_RE);
    const ts = Date.parse(e.timestamp);
    assert.ok(ts >= before && ts <= after);
  });

  test("each append's parentId is the previous leaf and the leaf advances to the new entry", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendThinkingLevelChange("high");
    assert.equal(sm.getEntry(b).parentId, a);
    assert.equal(sm.getLeafId(), b);
  });

  test("appendMessage does not validate the message role", () => {
    const sm = mem();
    const id = sm.appendMessage({ role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 1 });
    const id2 = sm.appendMessage({ role: "branchSummary", summary: "s", fromId: "x", timestamp: 1 });
    assert.equal(sm.getEntry(id).message.role, "compactionSummary");
    assert.equal(sm.getEntry(id2).message.role, "branchSummary");
  });

  test("appendThinkingLevelChange stores the level and returns the id", () => {
    const sm = mem();
    const id = sm.appendThinkingLevelChange("medium");
    const e = sm.getEntry(id);
    assert.match(id, ENTRY_ID_RE);
    assert.deepEqual(Object.keys(e), ["type", "id", "parentId", "timestamp", "thinkingLevel"]);
    assert.equal(e.type, "thinking_level_change");
    assert.equal(e.thinkingLevel, "medium");
  });

  test("appendModelChange stores provider and modelId and returns the id", () => {
    const sm = mem();
    const id = sm.appendModelChange("anthropic", "claude-x");
    const e = sm.getEntry(id);
    assert.deepEqual(Object.keys(e), ["type", "id", "parentId", "timestamp", "provider", "modelId"]);
    assert.equal(e.type, "model_change");
    assert.equal(e.provider, "anthropic");
    assert.equal(e.modelId, "claude-x");
  });

  test("appendUsage returns the entry object itself rather than its id", () => {
    const sm = mem();
    const usage = { input: 1, output: 2 };
    const e = sm.appendUsage("summary", "prov", "model-1", usage, "why");
    assert.equal(typeof e, "object");
    assert.match(e.id, ENTRY_ID_RE);
    assert.equal(sm.getEntry(e.id), e);
    assert.equal(sm.getLeafId(), e.id);
    assert.deepEqual(Object.keys(e), ["type", "id", "parentId", "timestamp", "kind", "provider", "model", "usage", "note"]);
    assert.equal(e.type, "usage");
    assert.equal(e.kind, "summary");
    assert.equal(e.provider, "prov");
    assert.equal(e.model, "model-1");
    assert.deepEqual(e.usage, usage);
    assert.equal(e.note, "why");
  });

  test("appendUsage omits the note key when the note is undefined", () => {
    const e = mem().appendUsage("k", "p", "m", {});
    assert.equal(Object.hasOwn(e, "note"), false);
  });

  test("appendUsage omits the note key when the note is an empty string", () => {
    const e = mem().appendUsage("k", "p", "m", {}, "");
    assert.equal(Object.hasOwn(e, "note"), false);
  });

  test("appendCompaction stores summary, firstKeptEntryId, tokensBefore, details, usage and fromHook", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const id = sm.appendCompaction("sum", a, 1234, { readFiles: ["x"] }, true, { input: 5 });
    const e = sm.getEntry(id);
    assert.match(id, ENTRY_ID_RE);
    assert.equal(e.type, "compaction");
    assert.equal(e.parentId, a);
    assert.equal(e.summary, "sum");
    assert.equal(e.firstKeptEntryId, a);
    assert.equal(e.tokensBefore, 1234);
    assert.deepEqual(e.details, { readFiles: ["x"] });
    assert.equal(e.fromHook, true);
    assert.deepEqual(e.usage, { input: 5 });
  });

  test("appendCompaction stores a firstKeptEntryId that is not known as given", () => {
    const sm = mem();
    const id = sm.appendCompaction("sum", "nonexist", 1);
    assert.equal(sm.getEntry(id).firstKeptEntryId, "nonexist");
  });

  test("appendCompaction with a null firstKeptEntryId stores the entry's own id (retain-none)", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    const id = sm.appendCompaction("sum", null, 1);
    assert.equal(sm.getEntry(id).firstKeptEntryId, id);
    assert.deepEqual(sm.buildContextEntries().map((e) => e.id), [id]);
  });

  test("appendCompaction writes no systemMessage when the context has no system message", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const id = sm.appendCompaction("sum", a, 1);
    assert.equal(Object.hasOwn(sm.getEntry(id), "systemMessage"), false);
  });

  test("appendCompaction's systemMessage is a copy whose timestamp is the compaction time in ms", () => {
    const sm = mem();
    const sys = system("You are helpful.", { timestamp: 12 });
    const s = sm.appendMessage(sys);
    const id = sm.appendCompaction("sum", s, 1);
    const e = sm.getEntry(id);
    assert.deepEqual(e.systemMessage, { role: "system", content: "You are helpful.", timestamp: Date.parse(e.timestamp) });
    assert.notEqual(e.systemMessage, sm.getEntry(s).message);
    assert.equal(sm.getEntry(s).message.timestamp, 12);
  });

  test("appendCompaction's systemMessage has keys role, content, sections, toolsAdded, timestamp in that order", () => {
    const sm = mem();
    sm.appendMessage(system("p", { toolsAdded: [tool("read")], sections: { env: "linux" } }));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.deepEqual(Object.keys(e.systemMessage), ["role", "content", "sections", "toolsAdded", "timestamp"]);
  });

  test("the folded base text joins non-empty system contents with blank lines and text blocks with newlines", () => {
    const sm = mem();
    sm.appendMessage(system("First."));
    sm.appendMessage(user("u"));
    sm.appendMessage(system([{ type: "text", text: "B1" }, { type: "image", data: "x" }, { type: "text", text: "B2" }]));
    sm.appendMessage(system(""));
    sm.appendMessage(system("Last."));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.equal(e.systemMessage.content, "First.\n\nB1\nB2\n\nLast.");
  });

  test("a system message with empty content and no tools still yields a systemMessage with empty content", () => {
    const sm = mem();
    sm.appendMessage(system(""));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.deepEqual(e.systemMessage, { role: "system", content: "", timestamp: Date.parse(e.timestamp) });
  });

  test("sections are patched by name across system messages and a null value deletes a section", () => {
    const sm = mem();
    sm.appendMessage(system("p", { sections: { a: "1", b: "2", d: "4" } }));
    sm.appendMessage(system("", { sections: { a: "1x", b: null, c: "3" } }));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.deepEqual(e.systemMessage.sections, { a: "1x", d: "4", c: "3" });
    assert.deepEqual(Object.keys(e.systemMessage.sections), ["a", "d", "c"]);
  });

  test("the sections key is omitted when every section was deleted", () => {
    const sm = mem();
    sm.appendMessage(system("p", { sections: { a: "1" } }));
    sm.appendMessage(system("", { sections: { a: null } }));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.equal(Object.hasOwn(e.systemMessage, "sections"), false);
  });

  test("tools are removed by name, then added by name, in insertion order", () => {
    const sm = mem();
    const t1 = tool("t1");
    const t2 = tool("t2");
    const t3 = tool("t3");
    sm.appendMessage(system("p", { toolsAdded: [t1, t2] }));
    sm.appendMessage(system("", { toolsRemoved: [{ name: "t1" }], toolsAdded: [t3] }));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.deepEqual(e.systemMessage.toolsAdded, [t2, t3]);
    assert.equal(Object.hasOwn(e.systemMessage, "toolsRemoved"), false);
  });

  test("a tool removed and re-added in one system message moves to the end with its new definition", () => {
    const sm = mem();
    sm.appendMessage(system("p", { toolsAdded: [tool("a"), tool("b")] }));
    const a2 = tool("a", { description: "new a" });
    sm.appendMessage(system("", { toolsRemoved: [{ name: "a" }], toolsAdded: [a2] }));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.deepEqual(e.systemMessage.toolsAdded.map((x) => [x.name, x.description]), [
      ["b", "b tool"],
      ["a", "new a"],
    ]);
  });

  test("a tool redefined without removal keeps its position with the new definition", () => {
    const sm = mem();
    sm.appendMessage(system("p", { toolsAdded: [tool("a"), tool("b")] }));
    sm.appendMessage(system("", { toolsAdded: [tool("a", { description: "new a" })] }));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.deepEqual(e.systemMessage.toolsAdded.map((x) => [x.name, x.description]), [
      ["a", "new a"],
      ["b", "b tool"],
    ]);
  });

  test("the toolsAdded key is omitted when every tool was removed", () => {
    const sm = mem();
    sm.appendMessage(system("p", { toolsAdded: [tool("a")] }));
    sm.appendMessage(system("", { toolsRemoved: [{ name: "a" }] }));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.equal(Object.hasOwn(e.systemMessage, "toolsAdded"), false);
    assert.equal(e.systemMessage.content, "p");
  });

  test("the fold ignores system messages on other branches", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(system("other branch"));
    sm.branch(a);
    sm.appendMessage(system("this branch"));
    const e = sm.getEntry(sm.appendCompaction("sum", null, 1));
    assert.equal(e.systemMessage.content, "this branch");
  });

  test("the fold replays an earlier compaction's checkpoint followed by later system messages", () => {
    const sm = mem();
    sm.appendMessage(system("A", { sections: { s: "1" } }));
    const u = sm.appendMessage(user("u"));
    const c1 = sm.appendCompaction("one", u, 1);
    assert.equal(sm.getEntry(c1).systemMessage.content, "A");
    sm.appendMessage(system("B", { sections: { s: "2" } }));
    sm.appendMessage(user("v"));
    const c2 = sm.appendCompaction("two", null, 1);
    assert.equal(sm.getEntry(c2).systemMessage.content, "A\n\nB");
    assert.deepEqual(sm.getEntry(c2).systemMessage.sections, { s: "2" });
  });

  test("the fold sees system messages dropped from a compaction's kept range only through that checkpoint", () => {
    const sm = mem();
    const u = sm.appendMessage(user("u"));
    sm.appendMessage(system("kept-range system"));
    sm.appendCompaction("one", u, 1);
    const c2 = sm.appendCompaction("two", null, 1);
    // the first checkpoint holds the text once; the skipped kept-range message is not replayed again
    assert.equal(sm.getEntry(c2).systemMessage.content, "kept-range system");
  });

  test("appendCustomEntry stores customType and data with the payload before the id", () => {
    const sm = mem();
    const id = sm.appendCustomEntry("my-ext", { a: 1 });
    const e = sm.getEntry(id);
    assert.match(id, ENTRY_ID_RE);
    assert.deepEqual(Object.keys(e), ["type", "customType", "data", "id", "parentId", "timestamp"]);
    assert.equal(e.type, "custom");
    assert.equal(e.customType, "my-ext");
    assert.deepEqual(e.data, { a: 1 });
  });

  test("appendCustomEntry accepts a missing data argument", () => {
    const sm = mem();
    const id = sm.appendCustomEntry("my-ext");
    assert.equal(sm.getEntry(id).data, undefined);
    assert.equal(sm.getLeafId(), id);
  });

  test("appendSessionInfo turns runs of CR and LF into one space and trims", () => {
    const sm = mem();
    const id = sm.appendSessionInfo("  line one\r\n\r\nline two\nthree\rfour  ");
    assert.equal(sm.getEntry(id).name, "line one line two three four");
    assert.deepEqual(Object.keys(sm.getEntry(id)), ["type", "id", "parentId", "timestamp", "name"]);
  });

  test("appendSessionInfo keeps inner tabs and spaces", () => {
    const sm = mem();
    const id = sm.appendSessionInfo("a\t b");
    assert.equal(sm.getEntry(id).name, "a\t b");
  });

  test("appendSessionInfo stores an empty name, which clears the session name", () => {
    const sm = mem();
    sm.appendSessionInfo("named");
    const id = sm.appendSessionInfo(" \n ");
    assert.equal(sm.getEntry(id).name, "");
    assert.equal(sm.getSessionName(), undefined);
  });

  test("appendSessionInfo throws a TypeError for a non-string name and appends nothing", () => {
    const sm = mem();
    for (const bad of [42, undefined, null, { name: "x" }]) {
      assert.throws(() => sm.appendSessionInfo(bad), TypeError);
    }
    assert.equal(sm.getEntries().length, 0);
    assert.equal(sm.getLeafId(), null);
  });

  test("appendCustomMessageEntry stores customType, content, display and details with the payload before the id", () => {
    const sm = mem();
    const id = sm.appendCustomMessageEntry("ext", [{ type: "text", text: "hi" }], false, { k: 1 });
    const e = sm.getEntry(id);
    assert.match(id, ENTRY_ID_RE);
    assert.deepEqual(Object.keys(e), ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"]);
    assert.equal(e.type, "custom_message");
    assert.deepEqual(e.content, [{ type: "text", text: "hi" }]);
    assert.equal(e.display, false);
    assert.deepEqual(e.details, { k: 1 });
  });

  test("appendCustomMessageEntry's message appears in the context", () => {
    const sm = mem();
    sm.appendCustomMessageEntry("ext", "hello", true);
    const [m] = sm.buildSessionContext().messages;
    assert.equal(m.role, "custom");
    assert.equal(m.content, "hello");
  });
});

// ---------------------------------------------------------------------------
// appendContextEdit
// ---------------------------------------------------------------------------
describe("appendContextEdit", () => {
  const REPL_MSG = "Context edit replacement must be null or contain string/array content";

  function withUser() {
    const sm = mem();
    const u = sm.appendMessage(user("hello"));
    return { sm, u };
  }

  test("a bare string replacement is rejected", () => {
    const { sm, u } = withUser();
    assert.throws(() => sm.appendContextEdit(u, "text"), { message: REPL_MSG });
  });

  test("an array replacement is rejected", () => {
    const { sm, u } = withUser();
    assert.throws(() => sm.appendContextEdit(u, [{ type: "text", text: "x" }]), { message: REPL_MSG });
  });

  test("an object without a content key is rejected", () => {
    const { sm, u } = withUser();
    assert.throws(() => sm.appendContextEdit(u, { text: "x" }), { message: REPL_MSG });
  });

  test("content that is neither a string nor an array is rejected", () => {
    const { sm, u } = withUser();
    assert.throws(() => sm.appendContextEdit(u, { content: 5 }), { message: REPL_MSG });
    assert.throws(() => sm.appendContextEdit(u, { content: null }), { message: REPL_MSG });
    assert.throws(() => sm.appendContextEdit(u, { content: { type: "text" } }), { message: REPL_MSG });
  });

  test("an undefined replacement is rejected", () => {
    const { sm, u } = withUser();
    assert.throws(() => sm.appendContextEdit(u, undefined), { message: REPL_MSG });
  });

  test("the replacement is validated before the target is looked up", () => {
    const { sm } = withUser();
    assert.throws(() => sm.appendContextEdit("nope", "bad"), { message: REPL_MSG });
  });

  test("an unknown target is rejected with Entry <id> not found", () => {
    const { sm } = withUser();
    assert.throws(() => sm.appendContextEdit("deadbeef", null), { message: "Entry deadbeef not found" });
  });

  test("a target off the active branch is rejected", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.branch(a);
    sm.appendMessage(user("c"));
    assert.throws(() => sm.appendContextEdit(b, null), { message: `Entry ${b} is not on the active branch` });
  });

  test("the branch check comes before the editability check", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const mc = sm.appendModelChange("p", "m");
    sm.branch(a);
    assert.throws(() => sm.appendContextEdit(mc, null), { message: `Entry ${mc} is not on the active branch` });
  });

  test("entries that contribute no editable model content are rejected", () => {
    const sm = mem();
    const targets = [
      sm.appendModelChange("p", "m"),
      sm.appendThinkingLevelChange("high"),
      sm.appendMessage(system("sys")),
      sm.appendMessage({ role: "custom", customType: "x", content: "c", display: true, timestamp: 1 }),
      sm.appendMessage({ role: "bashExecution", command: "ls", output: "", exitCode: 0, cancelled: false, truncated: false, timestamp: 1 }),
      sm.appendCustomEntry("x", 1),
      sm.appendSessionInfo("n"),
      sm.appendCompaction("s", null, 1),
    ];
    for (const id of targets) {
      assert.throws(() => sm.appendContextEdit(id, null), {
        message: `Entry ${id} does not contribute editable model content`,
      });
    }
  });

  test("a branch_summary target is rejected as not editable", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const bs = sm.branchWithSummary(a, "summary");
    assert.throws(() => sm.appendContextEdit(bs, null), { message: `Entry ${bs} does not contribute editable model content` });
  });

  test("a label target is rejected as not editable", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const l = sm.appendLabelChange(a, "x");
    assert.throws(() => sm.appendContextEdit(l, null), { message: `Entry ${l} does not contribute editable model content` });
  });

  test("a rejected edit appends nothing", () => {
    const { sm, u } = withUser();
    assert.throws(() => sm.appendContextEdit(u, "bad"));
    assert.throws(() => sm.appendContextEdit("zzz", null));
    assert.equal(sm.getEntries().length, 1);
    assert.equal(sm.getLeafId(), u);
  });

  test("user, assistant, toolResult and custom_message targets are accepted", () => {
    const sm = mem();
    const targets = [
      sm.appendMessage(user("u")),
      sm.appendMessage(assistant("a")),
      sm.appendMessage(toolResult("t")),
      sm.appendCustomMessageEntry("ext", "c", true),
    ];
    for (const id of targets) assert.match(sm.appendContextEdit(id, null), ENTRY_ID_RE);
  });

  test("a context_edit entry records targetId and replacement and becomes the leaf", () => {
    const { sm, u } = withUser();
    const id = sm.appendContextEdit(u, null);
    const e = sm.getEntry(id);
    assert.deepEqual(Object.keys(e), ["type", "id", "parentId", "timestamp", "targetId", "replacement"]);
    assert.equal(e.type, "context_edit");
    assert.equal(e.parentId, u);
    assert.equal(e.targetId, u);
    assert.equal(e.replacement, null);
    assert.equal(sm.getLeafId(), id);
  });

  test("a target before a compaction is accepted because the check uses the plain branch", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    sm.appendCompaction("s", null, 1);
    assert.ok(!sm.buildContextEntries().some((e) => e.id === a));
    assert.match(sm.appendContextEdit(a, { content: "x" }), ENTRY_ID_RE);
  });

  test("string content for an assistant target is stored normalized as one text block", () => {
    const sm = mem();
    const a = sm.appendMessage(assistant("old"));
    const id = sm.appendContextEdit(a, { content: "new", extra: 1 });
    assert.deepEqual(sm.getEntry(id).replacement, { content: [{ type: "text", text: "new" }] });
  });

  test("string content for a toolResult target is stored normalized as one text block", () => {
    const sm = mem();
    const tr = sm.appendMessage(toolResult("old"));
    const id = sm.appendContextEdit(tr, { content: "new" });
    assert.deepEqual(sm.getEntry(id).replacement, { content: [{ type: "text", text: "new" }] });
  });

  test("string content for a user target is stored as given", () => {
    const { sm, u } = withUser();
    const id = sm.appendContextEdit(u, { content: "new", extra: 1 });
    assert.deepEqual(sm.getEntry(id).replacement, { content: "new", extra: 1 });
  });

  test("string content for a custom_message target is stored as given", () => {
    const sm = mem();
    const c = sm.appendCustomMessageEntry("ext", "old", true);
    const id = sm.appendContextEdit(c, { content: "new" });
    assert.deepEqual(sm.getEntry(id).replacement, { content: "new" });
  });

  test("array content for an assistant target is stored as given", () => {
    const sm = mem();
    const a = sm.appendMessage(assistant("old"));
    const content = [{ type: "text", text: "x" }];
    const id = sm.appendContextEdit(a, { content });
    assert.deepEqual(sm.getEntry(id).replacement, { content });
  });

  test("the replacement is judged as a JavaScript value: inherited content counts, toJSON does not", () => {
    const sm = mem();
    const u = sm.appendMessage(user("u"));
    const a = sm.appendMessage(assistant("a"));
    const inherited = Object.create({ content: "from the prototype" });
    const kept = sm.appendContextEdit(u, inherited);
    assert.equal(sm.getEntry(kept).replacement, inherited);
    const wrapped = sm.appendContextEdit(a, Object.create({ content: "also inherited" }));
    assert.deepEqual(sm.getEntry(wrapped).replacement, { content: [{ type: "text", text: "also inherited" }] });
    assert.throws(() => sm.appendContextEdit(a, { toJSON: () => ({ content: "x" }) }), { message: REPL_MSG });
    assert.throws(() => sm.appendContextEdit(a, { content: new String("boxed") }), { message: REPL_MSG });
  });

  test("a target id is shown only once the replacement passed", () => {
    const { sm } = withUser();
    assert.throws(() => sm.appendContextEdit(Symbol("t"), "bad"), { message: REPL_MSG });
    assert.throws(() => sm.appendContextEdit(Symbol("t"), null), { name: "TypeError" });
    assert.throws(() => sm.appendContextEdit({ toString: () => "obj" }, null), { message: "Entry obj not found" });
  });

  test("a message entry whose message is no object fails where its role is read, after the branch check", () => {
    const sm = preloaded([
      msgEntry("gone", null, null),
      msgEntry("text", null, "just text"),
      msgEntry("m", "text", null),
    ]);
    assert.throws(() => sm.appendContextEdit("gone", null), { message: "Entry gone is not on the active branch" });
    assert.throws(() => sm.appendContextEdit("text", null), { message: "Entry text does not contribute editable model content" });
    assert.throws(() => sm.appendContextEdit("m", null), { name: "TypeError", message: /role/ });
    assert.equal(sm.getEntries().length, 3);
  });
});

// ---------------------------------------------------------------------------
// getBranch
// ---------------------------------------------------------------------------
describe("getBranch", () => {
  test("without an argument the path from the root to the leaf is returned root first", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    const c = sm.appendMessage(user("c"));
    assert.deepEqual(sm.getBranch().map((e) => e.id), [a, b, c]);
  });

  test("a fromId selects the path ending at that entry", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.appendMessage(user("c"));
    assert.deepEqual(sm.getBranch(b).map((e) => e.id), [a, b]);
  });

  test("a null fromId falls back to the leaf", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.deepEqual(sm.getBranch(null).map((e) => e.id), [a]);
  });

  test("entries on other branches are not included", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    sm.branch(a);
    const c = sm.appendMessage(user("c"));
    assert.deepEqual(sm.getBranch().map((e) => e.id), [a, c]);
  });

  test("an unknown id yields an empty list", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    assert.deepEqual(sm.getBranch("nope"), []);
  });

  test("an empty-string id yields an empty list", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    assert.deepEqual(sm.getBranch(""), []);
  });

  test("a null leaf yields an empty list", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    sm.resetLeaf();
    assert.deepEqual(sm.getBranch(), []);
  });

  test("the walk stops at a missing parent", () => {
    const sm = preloaded([msgEntry("a", null, user("a")), msgEntry("o", "gone", user("o")), msgEntry("p", "o", user("p"))]);
    assert.deepEqual(sm.getBranch().map((e) => e.id), ["o", "p"]);
  });

  test("the returned entries are the live entry objects", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.equal(sm.getBranch()[0], sm.getEntry(a));
  });
});

// ---------------------------------------------------------------------------
// getChildren
// ---------------------------------------------------------------------------
describe("getChildren", () => {
  test("direct children are returned in insertion order, without grandchildren", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.appendMessage(user("grandchild"));
    sm.branch(a);
    const c = sm.appendMessage(assistant("c"));
    assert.deepEqual(sm.getChildren(a).map((e) => e.id), [b, c]);
  });

  test("null returns the root entries", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    sm.resetLeaf();
    const r = sm.appendMessage(user("root two"));
    assert.deepEqual(sm.getChildren(null).map((e) => e.id), [a, r]);
  });

  test("an entry without children and an unknown id yield empty lists", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.deepEqual(sm.getChildren(a), []);
    assert.deepEqual(sm.getChildren("nope"), []);
  });

  test("parent ids are compared strictly, so undefined and null are different", () => {
    const sm = preloaded([{ type: "custom", customType: "x", id: "u", timestamp: iso(T0) }, msgEntry("n", null, user("n"))]);
    assert.deepEqual(sm.getChildren(undefined).map((e) => e.id), ["u"]);
    assert.deepEqual(sm.getChildren(null).map((e) => e.id), ["n"]);
  });

  test("children follow index order, where a later duplicate id keeps the first position", () => {
    const first = msgEntry("x", null, user("first"));
    const other = msgEntry("y", null, user("other"));
    const dup = msgEntry("x", null, user("dup"));
    const sm = preloaded([first, other, dup]);
    const kids = sm.getChildren(null);
    assert.deepEqual(kids.map((e) => e.message.content), ["dup", "other"]);
  });

  test("the returned children are the live entry objects", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    assert.equal(sm.getChildren(a)[0], sm.getEntry(b));
  });
});

// ---------------------------------------------------------------------------
// Persistence of appends (lazy-flush interplay with the instance API)
// ---------------------------------------------------------------------------
describe("appends on a persisted session", () => {
  test("appended entries reach the file in append order once the session has a conversation", (t) => {
    const dir = tempDir(t);
    const sm = SessionManager.create("/tmp/x", dir);
    sm.appendModelChange("p", "m");
    const u = sm.appendMessage(user("hi"));
    const usage = sm.appendUsage("k", "p", "m", { n: 1 });
    const lines = readJsonl(sm.getSessionFile());
    assert.deepEqual(lines.map((l) => l.type), ["session", "model_change", "message", "usage"]);
    assert.equal(lines[2].id, u);
    assert.equal(lines[3].id, usage.id);
    assert.equal(Object.hasOwn(lines[3], "note"), false);
  });

  test("a compaction without a system message is written without a systemMessage key", (t) => {
    const dir = tempDir(t);
    const sm = SessionManager.create("/tmp/x", dir);
    const u = sm.appendMessage(user("hi"));
    sm.appendCompaction("s", u, 5);
    const last = readJsonl(sm.getSessionFile()).at(-1);
    assert.equal(last.type, "compaction");
    assert.equal(Object.hasOwn(last, "systemMessage"), false);
    assert.equal(last.firstKeptEntryId, u);
  });
});
