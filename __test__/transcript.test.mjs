// The transcript read model (an addition; the reference has none, so these run on ours only):
// readTranscriptPage pages the active branch's projected context with opaque cursors, and
// subscribeTranscript tells readers of committed appends and of branch changes.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { loadOurs } from "./helpers/target.mjs";
import { assistant, tempDir, throwsCode, user } from "./helpers/fixtures.mjs";

const { SessionManager, MAX_SESSION_TRANSCRIPT_PAGE_SIZE } = loadOurs();

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

/** Every page from the newest back to the oldest, oldest first, and the oldest page's `before`. */
function readBackward(sm, limit) {
  const pages = [];
  let page = sm.readTranscriptPage({ limit });
  pages.unshift(page);
  while (page.hasBefore) {
    page = sm.readTranscriptPage({ limit, before: page.before });
    pages.unshift(page);
  }
  return pages;
}

function readForward(sm, limit, from) {
  const pages = [];
  let page = sm.readTranscriptPage({ limit, after: from });
  pages.push(page);
  while (page.hasAfter) {
    page = sm.readTranscriptPage({ limit, after: page.after });
    pages.push(page);
  }
  return pages;
}

const idsOf = (pages) => pages.flatMap((p) => p.entries.map((e) => e.sourceEntry.id));

test("pages read backward from the newest cover the active branch exactly once, in order", (t) => {
  const { sm } = conversation(t, 6);
  // A side branch off the third entry is not part of the transcript.
  const third = sm.getBranch()[2].id;
  const leaf = sm.getLeafId();
  sm.branch(third);
  sm.appendMessage(user("side"));
  sm.branch(leaf);
  const pages = readBackward(sm, 5);
  assert.deepEqual(idsOf(pages), sm.getBranch().map((e) => e.id));
  assert.deepEqual(pages.map((p) => p.entries.length), [2, 5, 5]);
  assert.equal(pages[0].hasBefore, false);
  assert.equal(pages.at(-1).hasAfter, false);
  for (const p of pages) assert.equal(p.total, 12);
});

test("pages read forward from the oldest boundary cover the active branch exactly once, in order", (t) => {
  const { sm } = conversation(t, 5);
  const oldest = readBackward(sm, 3)[0].before;
  const pages = readForward(sm, 4, oldest);
  assert.deepEqual(idsOf(pages), sm.getBranch().map((e) => e.id));
  assert.deepEqual(pages.map((p) => p.entries.length), [4, 4, 2]);
  // The page's entries are the session's own entry objects.
  assert.equal(pages[0].entries[0].sourceEntry, sm.getBranch()[0]);
});

test("a page past the newest entry is empty and keeps its cursor for entries appended later", (t) => {
  const { sm } = conversation(t, 2);
  const newest = sm.readTranscriptPage({ limit: 10 });
  const empty = sm.readTranscriptPage({ limit: 10, after: newest.after });
  assert.deepEqual(empty.entries, []);
  assert.equal(empty.hasAfter, false);
  const id = sm.appendMessage(user("later"));
  const next = sm.readTranscriptPage({ limit: 10, after: newest.after });
  assert.deepEqual(next.entries.map((e) => e.sourceEntry.id), [id]);
});

test("the messages of a compacted and edited transcript, page by page, equal buildSessionContext's", (t) => {
  const { sm } = conversation(t, 6);
  const kept = sm.getBranch()[6].id;
  sm.appendCompaction("summary of the start", kept, 1234);
  sm.appendMessage(user("after compaction"));
  const edited = sm.appendMessage(assistant("to be edited"));
  sm.appendContextEdit(edited, { content: "edited text" });
  sm.appendMessage(user("last"));
  const pages = readBackward(sm, 3);
  const projection = sm.buildSessionProjection();
  assert.deepEqual(
    pages.flatMap((p) => p.entries.flatMap((e) => e.messages)),
    sm.buildSessionContext().messages,
  );
  assert.deepEqual(idsOf(pages), projection.entries.map((e) => e.sourceEntry.id));
  // The compaction leads, and what it dropped is not in the transcript.
  assert.equal(pages[0].entries[0].sourceEntry.type, "compaction");
  assert.ok(!idsOf(pages).includes(sm.getBranch()[0].id));
  assert.ok(pages.flatMap((p) => p.entries.flatMap((e) => e.messages)).some((m) => JSON.stringify(m).includes("edited text")));
});

test("a subscriber hears of an append after it is committed, with a cursor that reads it", (t) => {
  const { sm } = conversation(t, 1);
  const heard = [];
  sm.subscribeTranscript((event) => {
    // Committed: the leaf is the new entry and the transcript already holds it.
    const page = sm.readTranscriptPage({ limit: 5, after: event.before });
    heard.push({ event, leaf: sm.getLeafId(), read: page.entries.map((e) => e.sourceEntry.id) });
  });
  const id = sm.appendMessage(user("new"));
  assert.equal(heard.length, 1);
  const [{ event, leaf, read }] = heard;
  assert.equal(event.type, "append");
  assert.equal(leaf, id);
  assert.deepEqual(read, [id]);
  assert.equal(event.entries[0].sourceEntry, sm.getEntry(id));
  assert.deepEqual(event.entries[0].messages, [sm.getEntry(id).message]);
  assert.equal(event.total, 3);
  // The event's `after` cursor continues from there.
  const label = sm.appendLabelChange(id, "mark");
  assert.deepEqual(sm.readTranscriptPage({ limit: 5, after: event.after }).entries.map((e) => e.sourceEntry.id), [label]);
  assert.equal(heard[1].event.type, "append");
});

test("a failed append notifies no subscriber and leaves the cursors valid", (t) => {
  const { sm } = conversation(t, 1);
  const page = sm.readTranscriptPage({ limit: 5 });
  const heard = [];
  sm.subscribeTranscript((event) => heard.push(event));
  // A persisted session serializes the entry: a BigInt cannot be, so nothing is committed.
  assert.throws(() => sm.appendMessage({ role: "user", content: 1n, timestamp: 1 }));
  assert.deepEqual(heard, []);
  assert.deepEqual(sm.readTranscriptPage({ limit: 5, after: page.after }).entries, []);
});

test("an unsubscribed listener hears nothing more, and one listener subscribed twice hears twice", (t) => {
  const { sm } = conversation(t, 1);
  let calls = 0;
  const listener = () => calls++;
  const off = sm.subscribeTranscript(listener);
  const offAgain = sm.subscribeTranscript(listener);
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
  // Warnings are emitted on the next tick.
  await new Promise((resolve) => setImmediate(resolve));
  const mine = warnings.filter((w) => w.code === "TRANSCRIPT_LISTENER_THREW");
  assert.equal(mine.length, 1);
  assert.equal(mine[0].name, "TranscriptListenerWarning");
  assert.match(mine[0].detail, /listener broke/);
});

test("every branch or session change resets the subscribers and makes earlier cursors stale", (t) => {
  const { sm } = conversation(t, 3);
  const other = conversation(t, 1).sm.getSessionFile();
  const first = () => sm.getBranch()[0].id;
  const changes = {
    branch: () => sm.branch(first()),
    resetLeaf: () => sm.resetLeaf(),
    newSession: () => sm.newSession(),
    setSessionFile: () => sm.setSessionFile(other),
    createBranchedSession: () => sm.createBranchedSession(sm.getLeafId()),
  };
  for (const [name, change] of Object.entries(changes)) {
    sm.setSessionFile(conversation(t, 2).sm.getSessionFile());
    const cursor = sm.readTranscriptPage({ limit: 2 }).before;
    const heard = [];
    const off = sm.subscribeTranscript((event) => heard.push(event.type));
    change();
    off();
    assert.deepEqual(heard, ["reset"], name);
    throwsCode(() => sm.readTranscriptPage({ limit: 2, before: cursor }), "TRANSCRIPT_CURSOR_STALE", Error);
    // A fresh read works.
    sm.readTranscriptPage({ limit: 2 });
  }
});

test("branchWithSummary resets the subscribers, then tells them of the summary it appended", (t) => {
  const { sm } = conversation(t, 3);
  const cursor = sm.readTranscriptPage({ limit: 2 }).after;
  const heard = [];
  sm.subscribeTranscript((event) => heard.push(event));
  const id = sm.branchWithSummary(sm.getBranch()[1].id, "what the other branch did");
  assert.deepEqual(heard.map((e) => e.type), ["reset", "append"]);
  assert.equal(heard[1].entries[0].sourceEntry.id, id);
  assert.deepEqual(heard[1].entries[0].messages.map((m) => m.role), ["branchSummary"]);
  assert.equal(heard[1].total, 3);
  throwsCode(() => sm.readTranscriptPage({ limit: 2, after: cursor }), "TRANSCRIPT_CURSOR_STALE", Error);
});

test("a compaction or a context edit resets the subscribers, since it re-projects entries already read", (t) => {
  const { sm } = conversation(t, 3);
  const heard = [];
  sm.subscribeTranscript((event) => heard.push(event.type === "reset" ? event.reason : event.type));
  const target = sm.getBranch()[4].id;
  sm.appendContextEdit(target, null);
  sm.appendCompaction("s", target, 10);
  sm.appendMessage(user("after"));
  assert.deepEqual(heard, ["projection", "projection", "append"]);
});

test("an unbounded page is refused with TRANSCRIPT_PAGE_UNBOUNDED", (t) => {
  const { sm } = conversation(t, 1);
  for (const options of [undefined, {}, { limit: 0 }, { limit: -1 }, { limit: 1.5 }, { limit: "10" }, { limit: MAX_SESSION_TRANSCRIPT_PAGE_SIZE + 1 }, { limit: Infinity }]) {
    throwsCode(() => sm.readTranscriptPage(options), "TRANSCRIPT_PAGE_UNBOUNDED", RangeError);
  }
  assert.equal(sm.readTranscriptPage({ limit: MAX_SESSION_TRANSCRIPT_PAGE_SIZE }).entries.length, 2);
});

test("a page asked both before and after a cursor is refused with TRANSCRIPT_CURSOR_AMBIGUOUS", (t) => {
  const { sm } = conversation(t, 2);
  const page = sm.readTranscriptPage({ limit: 1 });
  throwsCode(() => sm.readTranscriptPage({ limit: 1, before: page.before, after: page.after }), "TRANSCRIPT_CURSOR_AMBIGUOUS", TypeError);
});

test("a cursor of another manager, even of the same file, is refused with TRANSCRIPT_CURSOR_FOREIGN", (t) => {
  const { dir, sm } = conversation(t, 2);
  const twin = SessionManager.open(sm.getSessionFile(), dir);
  const cursor = twin.readTranscriptPage({ limit: 1 }).before;
  throwsCode(() => sm.readTranscriptPage({ limit: 1, before: cursor }), "TRANSCRIPT_CURSOR_FOREIGN", RangeError);
});

test("a value that is no transcript cursor is refused with TRANSCRIPT_CURSOR_INVALID", (t) => {
  const { sm } = conversation(t, 2);
  const real = sm.readTranscriptPage({ limit: 1 }).before;
  for (const cursor of [3, null, "", "t1.x.1.2", `${real}0x`, { cursor: real }]) {
    throwsCode(() => sm.readTranscriptPage({ limit: 1, after: cursor }), "TRANSCRIPT_CURSOR_INVALID", TypeError);
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
  // Count the entries JSON.parse turns out while the page is read (entries are parsed in
  // batches: an array is as many entries as its length).
  let parsed = 0;
  const parse = JSON.parse;
  const counting = (text, reviver) => {
    const v = parse(text, reviver);
    parsed += Array.isArray(v) ? v.length : 1;
    return v;
  };
  JSON.parse = counting;
  let page;
  try {
    page = opened.readTranscriptPage({ limit: 10 });
  } finally {
    JSON.parse = parse;
  }
  assert.equal(page.entries.length, 10);
  assert.equal(page.total, 3000);
  assert.equal(parsed, 10);
  // The counter sees what getBranch costs: every entry of the path.
  JSON.parse = counting;
  parsed = 0;
  let branch;
  try {
    branch = opened.getBranch();
  } finally {
    JSON.parse = parse;
  }
  assert.ok(parsed >= 2990, `getBranch parsed ${parsed}`);
  assert.deepEqual(page.entries.map((e) => e.sourceEntry), branch.slice(-10));
});
