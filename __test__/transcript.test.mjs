// The transcript read model (an addition in the shape of upstream's proposal; the reference has
// none, so these run on ours only): readTranscriptPage pages the whole active branch, root to
// leaf, each entry as sessionEntryToContextMessages projects it, and subscribeTranscript tells
// readers of committed appends and of branch or session changes.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadOurs } from "./helpers/target.mjs";
import columns from "../lib/columns.js";
import { assistant, tempDir, throwsCode, user } from "./helpers/fixtures.mjs";

const { SessionManager, MAX_SESSION_TRANSCRIPT_PAGE_SIZE, sessionEntryToContextMessages } = loadOurs();

/** A persisted session with `n` user/assistant turns (the file exists: it has an assistant message). */
function conversation(t, n) {
  const dir = tempDir(t, "pi-transcript-");
  const sm = SessionManager.create(path.join(dir, "cwd"), dir);
  for (let i = 0; i < n; i++) {
    sm.appendMessage(user(`q${i}`));
    sm.appendMessage(assistant(`a${i}`));
  }
  return { dir, sm };
}

/** Every page from the newest back to the oldest, oldest first. */
function readBackward(sm, limit) {
  const pages = [];
  let page = sm.readTranscriptPage({ limit });
  pages.unshift(page);
  while (page.hasMoreBefore) {
    page = sm.readTranscriptPage({ limit, before: page.cursors.before });
    pages.unshift(page);
  }
  return pages;
}

/** Every page forward from the oldest page's start. */
function readForward(sm, limit) {
  const pages = readBackward(sm, limit).slice(0, 1);
  let page = pages[0];
  while (page.hasMoreAfter) {
    page = sm.readTranscriptPage({ limit, after: page.cursors.after });
    pages.push(page);
  }
  return pages;
}

/** What the transcript must be: the branch's entries as sessionEntryToContextMessages makes them. */
function expectedItems(sm) {
  return sm.getBranch().flatMap((e) => sessionEntryToContextMessages(e).map((message) => ({ id: e.id, message })));
}

/** The error `fn` throws, checked to be a `Ctor` with `code`. */
function refused(fn, code, Ctor = Error) {
  let caught;
  throwsCode(() => {
    try {
      fn();
    } catch (err) {
      caught = err;
      throw err;
    }
  }, code, Ctor);
  return caught;
}

const itemsOf = (pages) => pages.flatMap((p) => p.items.map((i) => ({ id: i.id, message: i.message })));

test("MAX_SESSION_TRANSCRIPT_PAGE_SIZE is upstream's 200", () => {
  assert.equal(MAX_SESSION_TRANSCRIPT_PAGE_SIZE, 200);
});

test("a page has upstream's shape: items, cursors, hasMoreBefore, hasMoreAfter, totalItems, itemsAfterLatestCompaction", (t) => {
  const { sm } = conversation(t, 2);
  const page = sm.readTranscriptPage({ limit: 3 });
  assert.deepEqual(Object.keys(page).sort(), ["cursors", "hasMoreAfter", "hasMoreBefore", "items", "itemsAfterLatestCompaction", "totalItems"]);
  assert.deepEqual(Object.keys(page.cursors).sort(), ["after", "before"]);
  const last = sm.getLeafEntry();
  assert.deepEqual(page.items.at(-1), { id: last.id, entryTimestamp: last.timestamp, message: last.message });
  assert.equal(page.items.at(-1).message, last.message, "a stored message is handed out as itself");
  assert.equal(page.totalItems, 4);
  assert.equal(page.itemsAfterLatestCompaction, 4);
  assert.equal(page.hasMoreBefore, true);
  assert.equal(page.hasMoreAfter, false);
});

test("a cursor is opaque: it does not show the entry id it stands for", (t) => {
  const { sm } = conversation(t, 2);
  const page = sm.readTranscriptPage({ limit: 2 });
  for (const item of page.items) {
    assert.ok(!page.cursors.before.includes(item.id));
    assert.ok(!page.cursors.after.includes(item.id));
  }
});

test("a paging walk over 10,000 entries visits every item exactly once, backward and forward", (t) => {
  const sm = SessionManager.inMemory("/w");
  for (let i = 0; i < 5000; i++) {
    sm.appendMessage(user(`q${i}`));
    sm.appendMessage(assistant(`a${i}`));
  }
  const expected = expectedItems(sm);
  assert.equal(expected.length, 10000);
  const backward = readBackward(sm, 137);
  assert.deepEqual(itemsOf(backward), expected);
  const forward = readForward(sm, 137);
  assert.deepEqual(itemsOf(forward), expected);
  assert.ok(backward.every((p) => p.totalItems === 10000));
});

test("compaction narrows no transcript: every entry before it stays, and its summary is an item", (t) => {
  const { sm } = conversation(t, 3);
  const kept = sm.getBranch()[4].id;
  const compactionId = sm.appendCompaction("the summary", kept, 1234);
  const after = sm.appendMessage(user("after"));
  const page = sm.readTranscriptPage({ limit: 50 });
  assert.deepEqual(itemsOf([page]), expectedItems(sm));
  assert.deepEqual(page.items.map((i) => i.id), [...sm.getBranch().map((e) => e.id)]);
  const summary = page.items.find((i) => i.id === compactionId);
  assert.equal(summary.message.role, "compactionSummary");
  assert.equal(summary.message.summary, "the summary");
  assert.equal(page.itemsAfterLatestCompaction, 1);
  assert.equal(page.items.at(-1).id, after);
  // The model's context is narrowed all the same.
  assert.ok(sm.buildSessionContext().messages.length < page.items.length);
});

test("a compaction with a system message makes two items, and a page boundary between them loses neither", (t) => {
  const { dir, sm } = conversation(t, 1);
  const first = sm.getBranch()[0].id;
  sm.appendCompaction("summary", first, 1);
  sm.appendMessage(user("after"));
  // The compaction as a file may hold it: with the system prompt it compacted under.
  const lines = fs.readFileSync(sm.getSessionFile(), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  lines.find((r) => r.type === "compaction").systemMessage = { role: "system", content: "be brief", timestamp: 1 };
  const file = path.join(dir, "with-system.jsonl");
  fs.writeFileSync(file, lines.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const opened = SessionManager.open(file, dir);
  const expected = expectedItems(opened);
  assert.deepEqual(expected.map((i) => i.message.role), ["user", "assistant", "system", "compactionSummary", "user"]);
  for (const limit of [1, 2, 3]) {
    assert.deepEqual(itemsOf(readBackward(opened, limit)), expected, `backward by ${limit}`);
    assert.deepEqual(itemsOf(readForward(opened, limit)), expected, `forward by ${limit}`);
  }
});

test("a branch summary is an item where the branch turned; the abandoned branch is not in the transcript", (t) => {
  const sm = SessionManager.inMemory("/w");
  const root = sm.appendMessage(user("root"));
  const common = sm.appendMessage(assistant("common"));
  const abandoned = sm.appendMessage(user("abandoned"));
  const summary = sm.branchWithSummary(common, "what was tried");
  const active = sm.appendMessage(user("active"));
  const page = sm.readTranscriptPage({ limit: 10 });
  assert.deepEqual(page.items.map((i) => i.id), [root, common, summary, active]);
  assert.ok(!page.items.some((i) => i.id === abandoned));
  assert.equal(page.items[2].message.role, "branchSummary");
  assert.equal(page.items[2].message.summary, "what was tried");
});

test("entries that project no message (labels, settings, custom entries) make no item", (t) => {
  const sm = SessionManager.inMemory("/w");
  const u = sm.appendMessage(user("q"));
  sm.appendThinkingLevelChange("high");
  sm.appendModelChange("p", "m");
  sm.appendLabelChange(u, "mark");
  sm.appendCustomEntry("ext", { x: 1 });
  sm.appendSessionInfo("name");
  const page = sm.readTranscriptPage({ limit: 10 });
  assert.deepEqual(page.items.map((i) => i.id), [u]);
  assert.equal(page.totalItems, 1);
});

test("the newest page's after cursor reads exactly what is appended later, even after entries that make no item", (t) => {
  const { sm } = conversation(t, 2);
  const page = sm.readTranscriptPage({ limit: 2 });
  assert.deepEqual(sm.readTranscriptPage({ limit: 2, after: page.cursors.after }).items, []);
  sm.appendLabelChange(sm.getLeafId(), "mark");
  const id = sm.appendMessage(user("later"));
  const next = sm.readTranscriptPage({ limit: 2, after: page.cursors.after });
  assert.deepEqual(next.items.map((i) => i.id), [id]);
  assert.notEqual(next.cursors.after, page.cursors.after);
});

test("a cursor stays good across a branch change while its entry is on the active branch", (t) => {
  const { sm } = conversation(t, 3);
  const branch = sm.getBranch();
  const older = sm.readTranscriptPage({ limit: 2, before: sm.readTranscriptPage({ limit: 3 }).cursors.before });
  sm.branch(branch[3].id);
  sm.appendMessage(user("other way"));
  const again = sm.readTranscriptPage({ limit: 2, after: older.cursors.before });
  assert.deepEqual(again.items.map((i) => i.id), [branch[1].id, branch[2].id]);
});

test("a subscriber hears of an append once it is committed, in upstream's shape", (t) => {
  const { sm } = conversation(t, 1);
  const heard = [];
  sm.subscribeTranscript((change) => {
    // Committed: the leaf is the new entry and a page read from the change's cursor holds it.
    const page = sm.readTranscriptPage({ limit: 5, after: change.before });
    heard.push({ change, leaf: sm.getLeafId(), read: page.items.map((i) => i.id) });
  });
  const id = sm.appendMessage(user("new"));
  assert.equal(heard.length, 1);
  const [{ change, leaf, read }] = heard;
  assert.equal(change.type, "append");
  assert.equal(leaf, id);
  assert.deepEqual(read, [id]);
  assert.deepEqual(change.items, [{ id, entryTimestamp: sm.getEntry(id).timestamp, message: sm.getEntry(id).message }]);
  assert.equal(change.totalItems, 3);
  assert.equal(change.itemsAfterLatestCompaction, 3);
  const later = sm.appendMessage(assistant("reply"));
  assert.deepEqual(sm.readTranscriptPage({ limit: 5, after: change.after }).items.map((i) => i.id), [later]);
});

test("an append of an entry that makes no item is not told; a compaction is told as an append", (t) => {
  const { sm } = conversation(t, 2);
  const heard = [];
  sm.subscribeTranscript((change) => heard.push(change));
  sm.appendLabelChange(sm.getLeafId(), "mark");
  sm.appendModelChange("p", "m");
  assert.deepEqual(heard, []);
  const c = sm.appendCompaction("s", sm.getBranch()[2].id, 5);
  sm.appendMessage(user("after"));
  assert.deepEqual(heard.map((h) => h.type), ["append", "append"]);
  assert.equal(heard[0].items[0].id, c);
  assert.deepEqual([heard[0].totalItems, heard[0].itemsAfterLatestCompaction], [5, 0]);
  assert.deepEqual([heard[1].totalItems, heard[1].itemsAfterLatestCompaction], [6, 1]);
});

test("the append persisted first: a subscriber finds the assistant message in the file", (t) => {
  const dir = tempDir(t, "pi-transcript-");
  const sm = SessionManager.create(dir, dir);
  const seen = [];
  sm.subscribeTranscript((change) => {
    if (change.type === "append" && change.items[0].message.role === "assistant") {
      seen.push(fs.readFileSync(sm.getSessionFile(), "utf8").includes(change.items[0].id));
    }
  }, { resetPageSize: 10 });
  sm.appendMessage(user("q"));
  sm.appendMessage(assistant("a"));
  assert.deepEqual(seen, [true]);
});

test("a branch change resets the subscribers with the newest page of their resetPageSize", (t) => {
  const { sm } = conversation(t, 3);
  const branch = sm.getBranch();
  const heard = [];
  sm.subscribeTranscript((change) => heard.push(change), { resetPageSize: 2 });
  sm.branch(branch[2].id);
  assert.equal(heard.length, 1);
  assert.equal(heard[0].type, "reset");
  assert.equal(heard[0].reason, "branch");
  assert.deepEqual(heard[0].page.items.map((i) => i.id), [branch[1].id, branch[2].id]);
  assert.equal(heard[0].page.hasMoreBefore, true);
  sm.resetLeaf();
  assert.deepEqual(heard[1].page.items, []);
  assert.equal(heard[1].page.totalItems, 0);
});

test("branchWithSummary resets the subscribers, then tells them of the summary it appended", (t) => {
  const { sm } = conversation(t, 2);
  const heard = [];
  sm.subscribeTranscript((change) => heard.push(change));
  const id = sm.branchWithSummary(sm.getBranch()[1].id, "summary");
  assert.deepEqual(heard.map((h) => h.type), ["reset", "append"]);
  assert.equal(heard[1].items[0].id, id);
});

test("a change of session resets the subscribers once the manager reads as the new session", (t) => {
  const { sm } = conversation(t, 2);
  const file = sm.getSessionFile();
  const heard = [];
  sm.subscribeTranscript((change) => heard.push({ type: change.type, reason: change.reason, ids: change.page.items.map((i) => i.id), file: sm.getSessionFile() }));
  const firstIds = sm.getBranch().map((e) => e.id);
  sm.newSession();
  sm.setSessionFile(file);
  sm.createBranchedSession(firstIds[2]);
  assert.deepEqual(heard.map((h) => [h.type, h.reason]), [["reset", "session"], ["reset", "session"], ["reset", "session"]]);
  assert.deepEqual(heard[0].ids, []);
  assert.deepEqual(heard[1].ids, firstIds);
  assert.equal(heard[1].file, file);
  assert.deepEqual(heard[2].ids, firstIds.slice(0, 3));
});

test("a failed append notifies no subscriber", (t) => {
  const { sm } = conversation(t, 1);
  const heard = [];
  sm.subscribeTranscript((change) => heard.push(change));
  // A persisted session serializes the entry: a BigInt cannot be, so nothing is committed.
  assert.throws(() => sm.appendMessage({ role: "user", content: 1n, timestamp: 1 }));
  assert.deepEqual(heard, []);
});

test("an unsubscribed listener hears nothing more, and one listener subscribed twice hears twice", (t) => {
  const { sm } = conversation(t, 1);
  let calls = 0;
  const listener = () => calls++;
  const off = sm.subscribeTranscript(listener);
  const offAgain = sm.subscribeTranscript(listener, { resetPageSize: 1 });
  sm.appendMessage(user("one"));
  assert.equal(calls, 2);
  off();
  off();
  sm.appendMessage(user("two"));
  assert.equal(calls, 3);
  offAgain();
  sm.appendMessage(user("three"));
  assert.equal(calls, 3);
});

test("a listener that throws fails neither the append nor the other listeners, and is reported as a warning", async (t) => {
  const { sm } = conversation(t, 1);
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on("warning", onWarning);
  t.after(() => process.off("warning", onWarning));
  const heard = [];
  sm.subscribeTranscript(() => {
    throw new Error("listener broke");
  });
  sm.subscribeTranscript((e) => heard.push(e.type));
  const id = sm.appendMessage(user("x"));
  assert.equal(sm.getLeafId(), id);
  assert.deepEqual(heard, ["append"]);
  await new Promise((resolve) => setImmediate(resolve));
  const mine = warnings.filter((w) => w.code === "TRANSCRIPT_LISTENER_THREW");
  assert.equal(mine.length, 1);
  assert.equal(mine[0].name, "TranscriptListenerWarning");
  assert.match(mine[0].detail, /listener broke/);
});

test("a limit that is no whole number from 1 to 200 is refused with TRANSCRIPT_PAGE_UNBOUNDED and upstream's words", (t) => {
  const { sm } = conversation(t, 1);
  for (const limit of [0, 201, 1.5, undefined, "5"]) {
    const err = refused(() => sm.readTranscriptPage({ limit }), "TRANSCRIPT_PAGE_UNBOUNDED", RangeError);
    assert.match(err.message, /limit/);
  }
  throwsCode(() => sm.readTranscriptPage(undefined), "TRANSCRIPT_PAGE_UNBOUNDED", RangeError);
});

test("a resetPageSize that is no whole number from 1 to 200 is refused with TRANSCRIPT_PAGE_UNBOUNDED", (t) => {
  const { sm } = conversation(t, 1);
  throwsCode(() => sm.subscribeTranscript(() => {}, { resetPageSize: 0 }), "TRANSCRIPT_PAGE_UNBOUNDED", RangeError);
  throwsCode(() => sm.subscribeTranscript(() => {}, { resetPageSize: 201 }), "TRANSCRIPT_PAGE_UNBOUNDED", RangeError);
});

test("a page asked both before and after a cursor is refused with TRANSCRIPT_CURSOR_AMBIGUOUS", (t) => {
  const { sm } = conversation(t, 1);
  const { cursors } = sm.readTranscriptPage({ limit: 1 });
  const err = refused(() => sm.readTranscriptPage({ limit: 1, before: cursors.before, after: cursors.after }), "TRANSCRIPT_CURSOR_AMBIGUOUS", TypeError);
  assert.match(err.message, /either before or after/);
});

test("a cursor of another session is refused with TRANSCRIPT_CURSOR_FOREIGN", (t) => {
  const { sm } = conversation(t, 1);
  const other = SessionManager.inMemory("/w");
  other.appendMessage(user("foreign"));
  const { cursors } = sm.readTranscriptPage({ limit: 1 });
  const err = refused(() => other.readTranscriptPage({ limit: 1, after: cursors.after }), "TRANSCRIPT_CURSOR_FOREIGN", RangeError);
  assert.match(err.message, /different session/);
});

test("another manager of the same session file reads the same cursor", (t) => {
  const { dir, sm } = conversation(t, 2);
  const page = sm.readTranscriptPage({ limit: 2 });
  const twin = SessionManager.open(sm.getSessionFile(), dir);
  assert.deepEqual(twin.readTranscriptPage({ limit: 2, before: page.cursors.before }).items.map((i) => i.id), sm.getBranch().slice(0, 2).map((e) => e.id));
});

test("a cursor whose entry left the active branch is refused with TRANSCRIPT_CURSOR_STALE", (t) => {
  const { sm } = conversation(t, 2);
  const first = sm.getBranch()[0].id;
  const { cursors } = sm.readTranscriptPage({ limit: 1 });
  sm.branch(first);
  const err = refused(() => sm.readTranscriptPage({ limit: 1, after: cursors.after }), "TRANSCRIPT_CURSOR_STALE");
  assert.match(err.message, /not on the active branch/);
});

test("a value that is no transcript cursor is refused with TRANSCRIPT_CURSOR_INVALID", (t) => {
  const { sm } = conversation(t, 1);
  for (const cursor of ["nope", 5, "pt1.bm90IGpzb24", ""]) {
    throwsCode(() => sm.readTranscriptPage({ limit: 1, before: cursor }), "TRANSCRIPT_CURSOR_INVALID", TypeError);
  }
});

test("subscribeTranscript refuses a listener that is not a function", (t) => {
  const { sm } = conversation(t, 1);
  throwsCode(() => sm.subscribeTranscript({}), "INVALID_ARGUMENT", TypeError);
});

test("reading the last page of a big session parses only that page's entries", (t) => {
  const { dir, sm } = conversation(t, 1500);
  const file = sm.getSessionFile();
  const opened = SessionManager.open(file, dir);
  // Count the entries made while the page is read: built from the core's columns, in batches
  // (lib/columns.js), or, without code generation, parsed in batches (an array is as many
  // entries as its length).
  let parsed = 0;
  const parse = JSON.parse;
  const build = columns.buildBatch;
  if (columns.CODEGEN) {
    columns.buildBatch = (...args) => {
      const built = build(...args);
      parsed += built.items.length;
      return built;
    };
  } else {
    JSON.parse = (text, reviver) => {
      const v = parse(text, reviver);
      parsed += Array.isArray(v) ? v.length : 1;
      return v;
    };
  }
  let page;
  try {
    page = opened.readTranscriptPage({ limit: 10 });
  } finally {
    JSON.parse = parse;
    columns.buildBatch = build;
  }
  assert.equal(page.items.length, 10);
  assert.equal(page.totalItems, 3000);
  assert.equal(parsed, 10);
  assert.deepEqual(page.items.map((i) => i.message), opened.getBranch().slice(-10).map((e) => e.message));
});
