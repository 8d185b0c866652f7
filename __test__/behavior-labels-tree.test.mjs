// docs/behaviour.md, "Labels, the tree and moving the leaf": labels, getTree, branch/resetLeaf, branchWithSummary,
// createBranchedSession.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget } from "./helpers/target.mjs";
import {
  T0,
  iso,
  tempDir,
  header,
  entry,
  msgEntry,
  user,
  assistant,
  writeJsonl,
  readJsonl,
  ENTRY_ID_RE,
  UUIDV7_RE,
  flushedSession,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;

const mem = () => SessionManager.inMemory("/tmp/lt");

function preloaded(entries, hdr = header()) {
  return SessionManager.inMemory("/tmp/lt", undefined, [hdr, ...entries]);
}

/** A persisted session that has been flushed to disk (has a user message). */
const flushed = (t) => flushedSession(t, SessionManager, { cwd: "/tmp/lt", text: "hello" });

/** Label records of the manager, in order, as [targetId, label]. */
const labelRecords = (sm) => sm.getEntries().filter((e) => e.type === "label").map((e) => [e.targetId, e.label]);

function findNode(roots, id) {
  const stack = [...roots];
  while (stack.length) {
    const n = stack.pop();
    if (n.entry.id === id) return n;
    stack.push(...n.children);
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Labels
// ---------------------------------------------------------------------------
describe("labels", () => {
  test("labelling an unknown entry throws Entry <id> not found and appends nothing", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    assert.throws(() => sm.appendLabelChange("cafebabe", "x"), { message: "Entry cafebabe not found" });
    assert.equal(sm.getEntries().length, 1);
  });

  test("an entry on another branch can be labelled", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.branch(a);
    sm.appendLabelChange(b, "other branch");
    assert.equal(sm.getLabel(b), "other branch");
  });

  test("appendLabelChange appends a label record as child of the leaf and returns its id", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const id = sm.appendLabelChange(a, "mark");
    const e = sm.getEntry(id);
    assert.match(id, ENTRY_ID_RE);
    assert.deepEqual(Object.keys(e), ["type", "id", "parentId", "timestamp", "targetId", "label"]);
    assert.equal(e.type, "label");
    assert.equal(e.parentId, a);
    assert.equal(e.targetId, a);
    assert.equal(e.label, "mark");
    assert.equal(sm.getLeafId(), id);
  });

  test("a truthy label sets the label and the label timestamp to the record's timestamp", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const id = sm.appendLabelChange(a, "mark");
    assert.equal(sm.getLabel(a), "mark");
    const node = findNode(sm.getTree(), a);
    assert.equal(node.label, "mark");
    assert.equal(node.labelTimestamp, sm.getEntry(id).timestamp);
  });

  test("an undefined label clears the label and its timestamp", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendLabelChange(a, "mark");
    sm.appendLabelChange(a, undefined);
    assert.equal(sm.getLabel(a), undefined);
    const node = findNode(sm.getTree(), a);
    assert.equal(node.label, undefined);
    assert.equal(node.labelTimestamp, undefined);
  });

  test("an empty-string label clears the label", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendLabelChange(a, "mark");
    sm.appendLabelChange(a, "");
    assert.equal(sm.getLabel(a), undefined);
  });

  test("a whitespace-only label is kept verbatim", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendLabelChange(a, "   ");
    assert.equal(sm.getLabel(a), "   ");
  });

  test("relabelling replaces the label text and timestamp", async () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendLabelChange(a, "one");
    await new Promise((r) => setTimeout(r, 5));
    const second = sm.appendLabelChange(a, "two");
    assert.equal(sm.getLabel(a), "two");
    assert.equal(findNode(sm.getTree(), a).labelTimestamp, sm.getEntry(second).timestamp);
  });

  test("getLabel of an unlabelled or unknown id is undefined", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.equal(sm.getLabel(a), undefined);
    assert.equal(sm.getLabel("nope"), undefined);
  });

  test("labels are session-global and survive moving the leaf to another branch", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.appendLabelChange(b, "on b");
    sm.branch(a);
    sm.appendMessage(user("c"));
    assert.equal(sm.getLabel(b), "on b");
  });

  test("an undefined label is written without a label key", (t) => {
    const { sm, first: u, file } = flushed(t);
    sm.appendLabelChange(u, "x");
    sm.appendLabelChange(u, undefined);
    const last = readJsonl(file).at(-1);
    assert.equal(last.type, "label");
    assert.equal(Object.hasOwn(last, "label"), false);
    assert.equal(last.targetId, u);
  });

  test("an empty-string label is written as an empty string", (t) => {
    const { sm, first: u, file } = flushed(t);
    sm.appendLabelChange(u, "");
    assert.equal(readJsonl(file).at(-1).label, "");
    assert.match(fs.readFileSync(file, "utf8"), /"label":""/);
  });

  test("label records are replayed in file order when a file is loaded", (t) => {
    const dir = tempDir(t);
    const file = writeJsonl(path.join(dir, "s.jsonl"), [
      header(),
      msgEntry("a", null, user("a")),
      msgEntry("b", "a", assistant("b")),
      entry("label", "l1", "b", { targetId: "a", label: "first" }, iso(T0 + 1)),
      entry("label", "l2", "l1", { targetId: "b", label: "bee" }, iso(T0 + 2)),
      entry("label", "l3", "l2", { targetId: "a", label: "second" }, iso(T0 + 3)),
    ]);
    const sm = SessionManager.open(file);
    assert.equal(sm.getLabel("a"), "second");
    assert.equal(sm.getLabel("b"), "bee");
    assert.equal(findNode(sm.getTree(), "a").labelTimestamp, iso(T0 + 3));
  });

  test("a clearing label record in a loaded file removes the label", (t) => {
    const dir = tempDir(t);
    const clear = entry("label", "l2", "l1", { targetId: "a" }, iso(T0 + 2));
    const file = writeJsonl(path.join(dir, "s.jsonl"), [
      header(),
      msgEntry("a", null, user("a")),
      entry("label", "l1", "a", { targetId: "a", label: "x" }, iso(T0 + 1)),
      clear,
    ]);
    const sm = SessionManager.open(file);
    assert.equal(sm.getLabel("a"), undefined);
  });

  test("labels for ids that do not exist are replayed on load", (t) => {
    const dir = tempDir(t);
    const file = writeJsonl(path.join(dir, "s.jsonl"), [
      header(),
      msgEntry("a", null, user("a")),
      entry("label", "l1", "a", { targetId: "ghost", label: "boo" }),
    ]);
    const sm = SessionManager.open(file);
    assert.equal(sm.getLabel("ghost"), "boo");
  });

  test("label order follows the first time each target was labelled", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.appendLabelChange(b, "B");
    sm.appendLabelChange(a, "A");
    sm.appendLabelChange(b, "B2");
    sm.createBranchedSession(b);
    assert.deepEqual(labelRecords(sm), [
      [b, "B2"],
      [a, "A"],
    ]);
  });

  test("clearing and relabelling moves a target to the end of the label order", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.appendLabelChange(b, "B");
    sm.appendLabelChange(a, "A");
    sm.appendLabelChange(b, undefined);
    sm.appendLabelChange(b, "B again");
    sm.createBranchedSession(b);
    assert.deepEqual(labelRecords(sm), [
      [a, "A"],
      [b, "B again"],
    ]);
  });
});

// ---------------------------------------------------------------------------
// getTree
// ---------------------------------------------------------------------------
describe("answers asked before a change", () => {
  // Labels, the header, the file and the entry count are asked for first, then changed: an answer
  // kept from before the change must not come back after it.
  test("follow label changes, appends, a new session, a reload and a branched session", (t) => {
    const { sm, first: u, file } = flushed(t);
    const firstHeader = sm.getHeader();
    assert.equal(sm.getLabel(u), undefined);
    assert.equal(sm.getEntryCount(), 1);
    assert.equal(sm.getSessionFile(), file);

    sm.appendLabelChange(u, "one");
    assert.equal(sm.getLabel(u), "one");
    sm.appendLabelChange(u, "two");
    assert.equal(sm.getLabel(u), "two");
    sm.appendLabelChange(u, undefined);
    assert.equal(sm.getLabel(u), undefined);
    assert.equal(sm.getEntryCount(), 4);
    const a = sm.appendMessage(assistant("reply"));
    sm.appendLabelChange(a, "kept");
    assert.equal(sm.getEntryCount(), 6);
    assert.equal(sm.getLabel(a), "kept");

    sm.branch(u);
    assert.equal(sm.getLeafEntry().id, u);
    assert.equal(sm.getLeafId(), u);

    const second = sm.newSession();
    assert.notEqual(second, file);
    assert.equal(sm.getSessionFile(), second);
    assert.equal(sm.getEntryCount(), 0);
    assert.notEqual(sm.getHeader().id, firstHeader.id);
    assert.equal(sm.getHeader().id, sm.getSessionId());
    assert.equal(sm.getLabel(a), undefined);

    sm.setSessionFile(file);
    assert.equal(sm.getSessionFile(), file);
    assert.equal(sm.getEntryCount(), 6);
    assert.equal(sm.getHeader().id, firstHeader.id);
    assert.equal(sm.getLabel(a), "kept");
    assert.equal(sm.getLabel(u), undefined);

    const branched = sm.createBranchedSession(a);
    assert.notEqual(branched, file);
    assert.equal(sm.getSessionFile(), branched);
    assert.notEqual(sm.getHeader().id, firstHeader.id);
    assert.equal(sm.getHeader().parentSession, file);
    // The path u -> a, and a's label re-created.
    assert.equal(sm.getEntryCount(), 3);
    assert.equal(sm.getLabel(a), "kept");
    assert.equal(sm.getLabel(u), undefined);
  });

  test("getSessionName() follows session_info appends, a new session, a reload and a branched session", (t) => {
    const { sm, first: u, file } = flushed(t);
    assert.equal(sm.getSessionName(), undefined);
    sm.appendSessionInfo("  first name ");
    assert.equal(sm.getSessionName(), "first name");
    sm.appendMessage(assistant("reply"));
    assert.equal(sm.getSessionName(), "first name");
    // The name is read from the entry each time, as the reference reads it.
    sm.getEntries().find((e) => e.type === "session_info").name = "changed by hand";
    assert.equal(sm.getSessionName(), "changed by hand");
    sm.appendSessionInfo("second");
    assert.equal(sm.getSessionName(), "second");
    sm.appendSessionInfo("");
    assert.equal(sm.getSessionName(), undefined);
    sm.appendSessionInfo("third");
    const last = sm.getLeafId();
    sm.branch(u);
    // Not a path question: the latest session_info record of the session, wherever it is.
    assert.equal(sm.getSessionName(), "third");
    sm.newSession();
    assert.equal(sm.getSessionName(), undefined);
    sm.setSessionFile(file);
    assert.equal(sm.getSessionName(), "third");
    sm.createBranchedSession(u);
    assert.equal(sm.getSessionName(), undefined);
    sm.setSessionFile(file);
    sm.createBranchedSession(last);
    assert.equal(sm.getSessionName(), "third");
  });

  test("getBranch() follows appends, branch, branchWithSummary, resetLeaf and a new session", () => {
    const sm = mem();
    const ids = (path) => path.map((e) => e.id);
    const a = sm.appendMessage(user("a"));
    assert.deepEqual(ids(sm.getBranch()), [a]);
    const b = sm.appendMessage(assistant("b"));
    const c = sm.appendModelChange("p", "m");
    // The caller owns the array it gets, the first time and the next.
    const taken = sm.getBranch();
    assert.deepEqual(ids(taken), [a, b, c]);
    taken.pop();
    taken.push("junk");
    const again = sm.getBranch();
    assert.deepEqual(ids(again), [a, b, c]);
    again.length = 0;
    assert.deepEqual(ids(sm.getBranch()), [a, b, c]);
    assert.equal(sm.getBranch()[2], sm.getEntry(c));

    sm.branch(a);
    assert.deepEqual(ids(sm.getBranch()), [a]);
    const d = sm.appendMessage(user("d"));
    assert.deepEqual(ids(sm.getBranch()), [a, d]);
    assert.deepEqual(ids(sm.getBranch(c)), [a, b, c]);
    assert.deepEqual(ids(sm.getBranch()), [a, d]);
    sm.branch(c);
    const filled = sm.getBranch();
    assert.deepEqual(ids(filled), [a, b, c]);
    filled.length = 0;
    assert.deepEqual(ids(sm.getBranch()), [a, b, c]);
    // Moved without being asked in between: the append lands on a's path, not on c's.
    sm.branch(a);
    const d2 = sm.appendMessage(user("d2"));
    assert.deepEqual(ids(sm.getBranch()), [a, d2]);
    sm.branch(c);
    assert.deepEqual(ids(sm.getBranch()), [a, b, c]);

    const s = sm.branchWithSummary(b, "summary of c");
    assert.deepEqual(ids(sm.getBranch()), [a, b, s]);
    const s2 = sm.branchWithSummary(null, "from the root");
    assert.deepEqual(ids(sm.getBranch()), [s2]);
    sm.resetLeaf();
    assert.deepEqual(sm.getBranch(), []);
    const root = sm.appendMessage(user("new root"));
    assert.deepEqual(ids(sm.getBranch()), [root]);

    // The first entry of the new session will sit where a sits now.
    sm.branch(a);
    assert.deepEqual(ids(sm.getBranch()), [a]);
    sm.newSession();
    assert.deepEqual(sm.getBranch(), []);
    const e = sm.appendMessage(user("e"));
    assert.deepEqual(ids(sm.getBranch()), [e]);
  });

  test("a file that fails to load still becomes the session's file, as the path is set first", (t) => {
    const { sm, dir, file } = flushed(t);
    assert.equal(sm.getSessionFile(), file);
    const bad = path.join(dir, "not-a-session.jsonl");
    fs.writeFileSync(bad, "this is not JSON\n");
    assert.throws(() => sm.setSessionFile(bad));
    assert.equal(sm.getSessionFile(), bad);
  });

  test("the header is found again in a new session (it was not the first record before)", () => {
    const hdr = header({ id: "second-place" });
    const sm = SessionManager.inMemory("/tmp/lt", undefined, [msgEntry("m1", null, user("before the header")), hdr]);
    assert.equal(sm.getHeader(), hdr);
    sm.newSession();
    const fresh = sm.getHeader();
    assert.equal(fresh.type, "session");
    assert.notEqual(fresh.id, "second-place");
    assert.equal(fresh.id, sm.getSessionId());
  });
});

describe("getTree", () => {
  test("an empty session has no roots", () => {
    assert.deepEqual(mem().getTree(), []);
  });

  test("each node has entry, children, label and labelTimestamp keys, present even when undefined", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    const [root] = sm.getTree();
    assert.deepEqual(Object.keys(root).sort(), ["children", "entry", "label", "labelTimestamp"]);
    assert.equal(root.label, undefined);
    assert.equal(root.labelTimestamp, undefined);
    assert.deepEqual(root.children, []);
  });

  test("there is one node per entry, label records included", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    sm.appendLabelChange(a, "x");
    sm.branch(a);
    sm.appendModelChange("p", "m");
    let count = 0;
    const stack = [...sm.getTree()];
    while (stack.length) {
      const n = stack.pop();
      count++;
      stack.push(...n.children);
    }
    assert.equal(count, sm.getEntries().length);
  });

  test("node entries are the live entry objects", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.equal(sm.getTree()[0].entry, sm.getEntry(a));
  });

  test("a chain becomes nested single children", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    const c = sm.appendMessage(user("c"));
    const roots = sm.getTree();
    assert.equal(roots.length, 1);
    assert.equal(roots[0].entry.id, a);
    assert.equal(roots[0].children[0].entry.id, b);
    assert.equal(roots[0].children[0].children[0].entry.id, c);
  });

  test("roots are in insertion order, not sorted by timestamp", () => {
    const sm = preloaded([
      msgEntry("late", null, user("late"), iso(T0 + 9000)),
      msgEntry("early", null, user("early"), iso(T0)),
    ]);
    assert.deepEqual(sm.getTree().map((n) => n.entry.id), ["late", "early"]);
  });

  test("an entry whose parentId equals its own id is a root", () => {
    const sm = preloaded([msgEntry("a", null, user("a")), msgEntry("self", "self", user("s"))]);
    assert.deepEqual(sm.getTree().map((n) => n.entry.id), ["a", "self"]);
  });

  test("an entry with an unknown parent is a root at its insertion position", () => {
    const sm = preloaded([
      msgEntry("a", null, user("a")),
      msgEntry("orphan", "missing", user("o")),
      msgEntry("b", null, user("b")),
      msgEntry("child", "orphan", user("c")),
    ]);
    const roots = sm.getTree();
    assert.deepEqual(roots.map((n) => n.entry.id), ["a", "orphan", "b"]);
    assert.deepEqual(roots[1].children.map((n) => n.entry.id), ["child"]);
  });

  test("children are sorted by timestamp, oldest first", () => {
    const sm = preloaded([
      msgEntry("root", null, user("r"), iso(T0)),
      msgEntry("c3", "root", user("3"), iso(T0 + 3000)),
      msgEntry("c1", "root", user("1"), iso(T0 + 1000)),
      msgEntry("c2", "root", user("2"), iso(T0 + 2000)),
    ]);
    assert.deepEqual(sm.getTree()[0].children.map((n) => n.entry.id), ["c1", "c2", "c3"]);
  });

  test("children are sorted at every depth", () => {
    const sm = preloaded([
      msgEntry("root", null, user("r"), iso(T0)),
      msgEntry("k", "root", user("k"), iso(T0 + 1)),
      msgEntry("g2", "k", user("g2"), iso(T0 + 20)),
      msgEntry("g1", "k", user("g1"), iso(T0 + 10)),
    ]);
    assert.deepEqual(sm.getTree()[0].children[0].children.map((n) => n.entry.id), ["g1", "g2"]);
  });

  test("children with equal timestamps keep insertion order", () => {
    const sm = preloaded([
      msgEntry("root", null, user("r"), iso(T0)),
      msgEntry("x", "root", user("x"), iso(T0 + 5)),
      msgEntry("early", "root", user("e"), iso(T0 + 1)),
      msgEntry("y", "root", user("y"), iso(T0 + 5)),
      msgEntry("z", "root", user("z"), iso(T0 + 5)),
    ]);
    assert.deepEqual(sm.getTree()[0].children.map((n) => n.entry.id), ["early", "x", "y", "z"]);
  });

  test("labels and label timestamps are attached to the labelled nodes", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    const l = sm.appendLabelChange(a, "start");
    const tree = sm.getTree();
    assert.equal(tree[0].label, "start");
    assert.equal(tree[0].labelTimestamp, sm.getEntry(l).timestamp);
    assert.equal(findNode(tree, b).label, undefined);
  });

  test("an id written twice is one node under both parents, as the reference's Map of ids makes it", (t) => {
    // a ─┬─ b ── d (first record)      d's node is the last record with that id; e hangs below it
    //    └─ c ── d (second record) ── e
    const lines = [
      header(),
      msgEntry("a", null, user("a"), iso(T0 + 1)),
      msgEntry("b", "a", user("b"), iso(T0 + 2)),
      msgEntry("c", "a", user("c"), iso(T0 + 3)),
      msgEntry("d", "b", user("d1"), iso(T0 + 4)),
      msgEntry("d", "c", user("d2"), iso(T0 + 5)),
      msgEntry("e", "d", user("e"), iso(T0 + 6)),
    ];
    const file = path.join(tempDir(t), "dup.jsonl");
    writeJsonl(file, lines);
    const sm = SessionManager.open(file);
    const [root] = sm.getTree();
    const [b, c] = root.children;
    assert.deepEqual([b.entry.id, c.entry.id], ["b", "c"]);
    assert.equal(b.children[0], c.children[0], "one node object under both parents");
    assert.equal(b.children[0].entry.message.content, "d2");
    assert.deepEqual(b.children[0].children.map((n) => n.entry.id), ["e"]);
    // A second call makes new nodes, over the same entries.
    const again = sm.getTree()[0];
    assert.notEqual(again, root);
    assert.equal(again.entry, root.entry);
  });

  test("a very deep tree is built without overflowing the stack", () => {
    const n = 30000;
    const entries = [];
    for (let i = 0; i < n; i++) entries.push(msgEntry(`e${i}`, i === 0 ? null : `e${i - 1}`, user("x"), iso(T0 + i)));
    const sm = preloaded(entries);
    let node = sm.getTree()[0];
    let depth = 1;
    while (node.children.length) {
      node = node.children[0];
      depth++;
    }
    assert.equal(depth, n);
  });
});

// ---------------------------------------------------------------------------
// branch / resetLeaf
// ---------------------------------------------------------------------------
describe("branch and resetLeaf", () => {
  test("branch to an unknown id throws Entry <id> not found and keeps the leaf", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.throws(() => sm.branch("nope"), { message: "Entry nope not found" });
    assert.equal(sm.getLeafId(), a);
  });

  test("branch to a value no id can equal throws as the reference's message shows it", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.throws(() => sm.branch({ toString: () => "obj" }), { message: "Entry obj not found" });
    assert.throws(() => sm.branch(Symbol("s")), { name: "TypeError" });
    assert.equal(sm.getLeafId(), a);
  });

  test("branch moves the leaf and the next append becomes a child of that entry", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    sm.branch(a);
    assert.equal(sm.getLeafId(), a);
    const c = sm.appendMessage(user("c"));
    assert.equal(sm.getEntry(c).parentId, a);
  });

  test("branch can move the leaf to an entry on another branch", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.branch(a);
    sm.appendMessage(user("c"));
    sm.branch(b);
    assert.equal(sm.getLeafId(), b);
  });

  test("branch does not touch the file", (t) => {
    const { sm, first: u, file } = flushed(t);
    sm.appendMessage(assistant("b"));
    const before = fs.readFileSync(file, "utf8");
    sm.branch(u);
    assert.equal(fs.readFileSync(file, "utf8"), before);
  });

  test("resetLeaf sets the leaf to null and the next append creates another root", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    sm.resetLeaf();
    assert.equal(sm.getLeafId(), null);
    const r = sm.appendMessage(user("again"));
    assert.equal(sm.getEntry(r).parentId, null);
    assert.equal(sm.getTree().length, 2);
  });

  test("resetLeaf does not touch the file", (t) => {
    const { sm, file } = flushed(t);
    const before = fs.readFileSync(file, "utf8");
    sm.resetLeaf();
    assert.equal(fs.readFileSync(file, "utf8"), before);
  });
});

// ---------------------------------------------------------------------------
// branchWithSummary
// ---------------------------------------------------------------------------
describe("branchWithSummary", () => {
  test("an unknown non-null id throws Entry <id> not found and changes nothing", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    assert.throws(() => sm.branchWithSummary("nope", "s"), { message: "Entry nope not found" });
    assert.equal(sm.getLeafId(), a);
    assert.equal(sm.getEntries().length, 1);
  });

  test("the summary entry is a child of branchFromId, records the previous leaf as fromId and becomes the leaf", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    const id = sm.branchWithSummary(a, "abandoned b");
    const e = sm.getEntry(id);
    assert.match(id, ENTRY_ID_RE);
    assert.equal(e.type, "branch_summary");
    assert.equal(e.parentId, a);
    assert.equal(e.fromId, b);
    assert.equal(e.summary, "abandoned b");
    assert.equal(sm.getLeafId(), id);
  });

  test("fromId is the literal string root when the leaf was null", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.resetLeaf();
    const id = sm.branchWithSummary(a, "s");
    assert.equal(sm.getEntry(id).fromId, "root");
  });

  test("a null branchFromId creates a new root summary entry", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const id = sm.branchWithSummary(null, "fresh start");
    const e = sm.getEntry(id);
    assert.equal(e.parentId, null);
    assert.equal(e.fromId, a);
    assert.equal(sm.getTree().length, 2);
  });

  test("a null branchFromId with a null leaf records fromId root", () => {
    const sm = mem();
    const id = sm.branchWithSummary(null, "s");
    assert.equal(sm.getEntry(id).fromId, "root");
    assert.equal(sm.getEntry(id).parentId, null);
  });

  test("details, usage and fromHook are stored with the documented key order", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const id = sm.branchWithSummary(a, "s", { readFiles: [] }, true, { input: 1 });
    const e = sm.getEntry(id);
    assert.deepEqual(Object.keys(e), ["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "usage", "fromHook"]);
    assert.deepEqual(e.details, { readFiles: [] });
    assert.deepEqual(e.usage, { input: 1 });
    assert.equal(e.fromHook, true);
  });

  test("the summary appears as a branchSummary message after the branch point in the context", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.branchWithSummary(a, "went to b");
    const msgs = sm.buildSessionContext().messages;
    assert.deepEqual(msgs.map((m) => m.role), ["user", "branchSummary"]);
    assert.equal(msgs[1].fromId, b);
    assert.equal(msgs[1].summary, "went to b");
  });
});

// ---------------------------------------------------------------------------
// createBranchedSession
// ---------------------------------------------------------------------------
describe("createBranchedSession", () => {
  test("an unknown leaf id throws Entry <id> not found", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    assert.throws(() => sm.createBranchedSession("nope"), { message: "Entry nope not found" });
  });

  test("an undefined leaf id branches the current leaf's path", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    sm.branch(a);
    sm.createBranchedSession(undefined);
    assert.deepEqual(sm.getEntries().map((e) => e.id), [a]);
  });

  test("in memory it returns undefined, keeps the file path undefined and replaces the session id", () => {
    const sm = mem();
    const oldId = sm.getSessionId();
    const a = sm.appendMessage(user("a"));
    assert.equal(sm.createBranchedSession(a), undefined);
    assert.equal(sm.getSessionFile(), undefined);
    assert.notEqual(sm.getSessionId(), oldId);
    assert.match(sm.getSessionId(), UUIDV7_RE);
    assert.equal(sm.getHeader().id, sm.getSessionId());
  });

  test("in memory the new header has no parentSession and the manager's cwd", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.createBranchedSession(a);
    const h = sm.getHeader();
    assert.equal(h.parentSession, undefined);
    assert.equal(h.cwd, "/tmp/lt");
    assert.equal(h.version, 3);
    assert.equal(h.type, "session");
  });

  test("only the path to the given entry is kept and the leaf is its last record", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.appendMessage(user("c"));
    sm.branch(a);
    sm.appendMessage(user("d"));
    sm.createBranchedSession(b);
    assert.deepEqual(sm.getEntries().map((e) => e.id), [a, b]);
    assert.equal(sm.getLeafId(), b);
    assert.equal(sm.getEntryCount(), 2);
  });

  test("kept entries are shallow copies, not the original objects", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const original = sm.getEntry(a);
    sm.createBranchedSession(a);
    assert.notEqual(sm.getEntry(a), original);
    assert.deepEqual(sm.getEntry(a), original);
  });

  test("label records on the path are dropped and the remaining entries are re-chained", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendLabelChange(a, undefined);
    const b = sm.appendMessage(assistant("b"));
    sm.createBranchedSession(b);
    const entries = sm.getEntries();
    assert.deepEqual(entries.map((e) => e.id), [a, b]);
    assert.equal(entries[0].parentId, null);
    assert.equal(entries[1].parentId, a);
  });

  test("the first kept entry gets a null parent even when a label preceded it", () => {
    const sm = preloaded([
      msgEntry("a", null, user("a")),
      entry("label", "l", null, { targetId: "a" }),
      msgEntry("b", "l", user("b")),
    ]);
    sm.resetLeaf();
    sm.createBranchedSession("b");
    assert.deepEqual(sm.getEntries().map((e) => [e.id, e.parentId]), [["b", null]]);
  });

  test("a compaction whose firstKeptEntryId names a dropped label is redirected to the next kept entry", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const l1 = sm.appendLabelChange(a, undefined);
    sm.appendLabelChange(a, undefined);
    const b = sm.appendMessage(assistant("b"));
    const c = sm.appendCompaction("s", l1, 1);
    sm.createBranchedSession(c);
    assert.equal(sm.getEntry(c).firstKeptEntryId, b);
  });

  test("a compaction whose firstKeptEntryId is its own id keeps it", () => {
    const sm = mem();
    sm.appendMessage(user("a"));
    const c = sm.appendCompaction("s", null, 1);
    sm.createBranchedSession(c);
    assert.equal(sm.getEntry(c).firstKeptEntryId, c);
  });

  test("a compaction whose firstKeptEntryId names a kept entry is unchanged", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendMessage(assistant("b"));
    const c = sm.appendCompaction("s", a, 1);
    sm.createBranchedSession(c);
    assert.equal(sm.getEntry(c).firstKeptEntryId, a);
  });

  test("labels of kept entries are re-created after the last kept entry with original text and timestamp", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const la = sm.appendLabelChange(a, "A");
    const b = sm.appendMessage(assistant("b"));
    const lb = sm.appendLabelChange(b, "B");
    const tsA = sm.getEntry(la).timestamp;
    const tsB = sm.getEntry(lb).timestamp;
    sm.appendMessage(user("c"));
    sm.createBranchedSession(b);
    const entries = sm.getEntries();
    assert.deepEqual(entries.map((e) => e.type), ["message", "message", "label", "label"]);
    const [, , l1, l2] = entries;
    assert.deepEqual([l1.targetId, l1.label, l1.timestamp, l1.parentId], [a, "A", tsA, b]);
    assert.deepEqual([l2.targetId, l2.label, l2.timestamp, l2.parentId], [b, "B", tsB, l1.id]);
    assert.deepEqual(Object.keys(l1), ["type", "id", "parentId", "timestamp", "targetId", "label"]);
    assert.equal(sm.getLeafId(), l2.id);
  });

  test("the branched entries are shallow copies: nested values and label values stay the same objects", () => {
    const sm = mem();
    const said = user("a");
    const a = sm.appendMessage(said);
    const tag = { color: "red" };
    const l = sm.appendLabelChange(a, tag);
    const b = sm.appendMessage(assistant("b"));
    const c = sm.appendCompaction("s", l, 5);
    const before = sm.getEntry(c);
    sm.createBranchedSession(c);
    const entries = sm.getEntries();
    assert.deepEqual(entries.map((e) => e.type), ["message", "message", "compaction", "label"]);
    assert.equal(sm.getEntry(a).message, said);
    assert.notEqual(sm.getEntry(c), before);
    assert.deepEqual([sm.getEntry(b).parentId, sm.getEntry(c).parentId], [a, b]);
    // The compaction kept from the label record, which is gone: it keeps from the entry after it.
    assert.equal(sm.getEntry(c).firstKeptEntryId, b);
    assert.equal(before.firstKeptEntryId, l);
    assert.equal(entries[3].label, tag);
  });

  test("a session read from its file: the entries the caller holds are copied, the others read from the new file", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "s.jsonl");
    const said = { ...user("a"), content: [{ type: "text", text: "long ".repeat(100) }] };
    writeJsonl(file, [header({ cwd: dir }), msgEntry("a1", null, said), msgEntry("b1", "a1", assistant("b")), msgEntry("c1", "b1", user("c"))]);
    const sm = SessionManager.open(file, dir);
    // Only the leaf is held; then a branch summary, whose unset members are undefined-valued keys.
    const held = sm.getLeafEntry();
    const summary = sm.branchWithSummary("c1", "left");
    sm.createBranchedSession(summary);
    assert.equal(sm.getEntry("c1").message, held.message, "a shallow copy of the held entry");
    assert.notEqual(sm.getEntry("c1"), held);
    assert.equal(sm.getEntry("c1").parentId, "b1");
    assert.deepEqual(Object.keys(sm.getEntry(summary)), ["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "usage", "fromHook"]);
    assert.equal(sm.getEntry(summary).parentId, "c1");
    assert.deepEqual(sm.getEntry("a1").message, said, "the one never read, as its line says");
    assert.deepEqual(sm.getBranch().map((e) => e.id), ["a1", "b1", "c1", summary]);
  });

  test("a persisted branched session redirects a compaction that kept from a label, in memory and on disk", (t) => {
    const { sm, first: u } = flushed(t);
    const l = sm.appendLabelChange(u, "L");
    const b = sm.appendMessage(assistant("b"));
    const c = sm.appendCompaction("s", l, 5);
    sm.getEntries();
    const file = sm.createBranchedSession(c);
    assert.equal(sm.getEntry(c).firstKeptEntryId, b);
    assert.equal(sm.getEntry(c).parentId, b);
    const onDisk = readJsonl(file).find((r) => r.type === "compaction");
    assert.equal(onDisk.firstKeptEntryId, b);
  });

  test("re-created label records get fresh ids distinct from the path and from each other", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.appendLabelChange(a, "A");
    sm.appendLabelChange(b, "B");
    sm.createBranchedSession(b);
    const labels = sm.getEntries().filter((e) => e.type === "label");
    assert.equal(labels.length, 2);
    for (const l of labels) {
      assert.match(l.id, ENTRY_ID_RE);
      assert.ok(![a, b].includes(l.id));
    }
    assert.notEqual(labels[0].id, labels[1].id);
  });

  test("labels still resolve for kept entries after branching", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendLabelChange(a, "A");
    sm.createBranchedSession(a);
    assert.equal(sm.getLabel(a), "A");
  });

  test("labels of entries off the kept path are not copied", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    sm.appendLabelChange(b, "B");
    sm.branch(a);
    sm.createBranchedSession(a);
    assert.deepEqual(sm.getEntries().map((e) => e.id), [a]);
    assert.equal(sm.getLabel(b), undefined);
  });

  test("cleared labels are not re-created", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    sm.appendLabelChange(a, "A");
    sm.appendLabelChange(a, "");
    sm.createBranchedSession(a);
    assert.deepEqual(sm.getEntries().map((e) => e.type), ["message"]);
  });

  test("ghost labels for unknown ids are not copied", (t) => {
    const dir = tempDir(t);
    const file = writeJsonl(path.join(dir, "s.jsonl"), [
      header(),
      msgEntry("a", null, user("a")),
      entry("label", "l1", "a", { targetId: "ghost", label: "boo" }),
    ]);
    const sm = SessionManager.open(file);
    sm.createBranchedSession("a");
    assert.deepEqual(sm.getEntries().map((e) => e.id), ["a"]);
    assert.equal(sm.getLabel("ghost"), undefined);
  });

  test("persisted: it returns a new file path in the session dir named after the new header", (t) => {
    const { sm, dir, first: u, file } = flushed(t);
    const newPath = sm.createBranchedSession(u);
    const h = sm.getHeader();
    assert.notEqual(newPath, file);
    assert.equal(newPath, path.join(dir, `${h.timestamp.replace(/[:.]/g, "-")}_${h.id}.jsonl`));
    assert.equal(sm.getSessionFile(), newPath);
    assert.match(h.id, UUIDV7_RE);
  });

  test("persisted: the new header records the previous file as parentSession and the manager's cwd", (t) => {
    const { sm, first: u, file } = flushed(t);
    sm.createBranchedSession(u);
    const h = sm.getHeader();
    assert.equal(h.parentSession, file);
    assert.equal(h.cwd, "/tmp/lt");
    assert.equal(h.version, 3);
  });

  test("persisted: a custom session id is not reused for the branched session", (t) => {
    const dir = tempDir(t);
    const sm = SessionManager.create("/tmp/lt", dir, { id: "custom-id" });
    const u = sm.appendMessage(user("a"));
    sm.createBranchedSession(u);
    assert.notEqual(sm.getSessionId(), "custom-id");
    assert.match(sm.getSessionId(), UUIDV7_RE);
  });

  test("persisted: a path with a user message is written immediately with every record", (t) => {
    const { sm, first: u } = flushed(t);
    sm.appendLabelChange(u, "L");
    const newPath = sm.createBranchedSession(u);
    const lines = readJsonl(newPath);
    assert.deepEqual(lines.map((l) => l.type), ["session", "message", "label"]);
    assert.equal(lines[0].parentSession !== undefined, true);
    assert.equal(lines[1].id, u);
    assert.equal(lines[2].label, "L");
  });

  test("persisted: after an immediate write further appends add exactly one line each", (t) => {
    const { sm, first: u } = flushed(t);
    const newPath = sm.createBranchedSession(u);
    const before = readJsonl(newPath).length;
    sm.appendModelChange("p", "m");
    assert.equal(readJsonl(newPath).length, before + 1);
  });

  test("persisted: a path without a conversation is not written until a conversation message arrives", (t) => {
    const dir = tempDir(t);
    const sm = SessionManager.create("/tmp/lt", dir);
    const mc = sm.appendModelChange("p", "m");
    sm.appendMessage(user("hi"));
    const newPath = sm.createBranchedSession(mc);
    assert.equal(fs.existsSync(newPath), false);
    sm.appendMessage(user("again"));
    assert.deepEqual(readJsonl(newPath).map((l) => l.type), ["session", "model_change", "message"]);
  });

  test("persisted: the old file is left untouched", (t) => {
    const { sm, first: u, file } = flushed(t);
    sm.appendMessage(assistant("b"));
    sm.appendLabelChange(u, "L");
    const before = fs.readFileSync(file);
    sm.createBranchedSession(u);
    sm.appendMessage(user("more"));
    assert.deepEqual(fs.readFileSync(file), before);
  });
});

// getTree keeps its plan from the core until the session changes: every kind of change must show.
test("getTree after each change shows that change (the kept tree plan is never stale)", (t) => {
  const shape = (nodes) => nodes.map((n) => [n.entry.id, n.label ?? null, shape(n.children)]);
  const sm = SessionManager.create("/tmp/lt", tempDir(t));
  let last = null;
  const changed = (what) => {
    const s = JSON.stringify(shape(sm.getTree()));
    assert.equal(JSON.stringify(shape(sm.getTree())), s, `${what}: asking again gives the same tree`);
    assert.notEqual(s, last, `${what} shows in the tree`);
    last = s;
    return s;
  };
  assert.equal(changed("a new session"), "[]");
  const u1 = sm.appendMessage(user("one"));
  changed("a first message");
  sm.appendMessage(assistant("two"));
  changed("a reply");
  sm.appendLabelChange(u1, "start");
  assert.match(changed("a label"), /"start"/);
  sm.appendLabelChange(u1, undefined);
  assert.doesNotMatch(changed("a cleared label"), /"start"/);
  sm.branch(u1);
  sm.appendMessage(user("side"));
  changed("a branch");
  sm.resetLeaf();
  sm.appendMessage(user("second root"));
  const before = changed("a second root");
  const file = sm.getSessionFile();
  const other = SessionManager.create("/tmp/lt", path.dirname(file));
  other.appendMessage(user("elsewhere"));
  sm.setSessionFile(other.getSessionFile());
  changed("another file");
  sm.setSessionFile(file);
  assert.equal(changed("the first file again"), before);
  sm.newSession();
  assert.equal(changed("a new session"), "[]");
});
