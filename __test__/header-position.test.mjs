// Session files whose header is not the first record. oh-my-pi writes a fixed-width `title`
// record before the header of every session; the reference rejects such files (open throws,
// loadEntriesFromFile gives [], listing skips them). Ours reads them (README "What is different,
// on purpose"): records before the header that are objects of no pi type (not `session`,
// `message`, `label`, ...) with neither `id` nor `parentId`, directly followed by a
// `type:"session"` record, stay in the file where they are and are no entries. Each test compares ours on the titled file with the reference on the same file
// without its title, so "behaves as a normal session" means "as the reference reads it".
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { tempDir } from "./helpers/fixtures.mjs";
import { referenceListing } from "./helpers/older-reference.mjs";
import { loadOurs, loadReference, tuneFor } from "./helpers/target.mjs";

const ours = loadOurs();
const ref = await loadReference();

const TITLE = JSON.stringify({
  type: "title",
  v: 1,
  title: "Fix the parser",
  source: "auto",
  updatedAt: "2026-01-01T00:00:00.000Z",
  pad: " ".repeat(40),
});

function header(id, cwd, extra = {}) {
  return JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd, ...extra });
}

function message(id, parentId, role, content, t = 1) {
  const ts = `2026-01-01T00:00:0${t}.000Z`;
  const m =
    role === "assistant"
      ? { role, content: [{ type: "text", text: content }], provider: "p", model: "m", stopReason: "stop", timestamp: Date.parse(ts) }
      : { role, content, timestamp: Date.parse(ts) };
  return JSON.stringify({ type: "message", id, parentId, timestamp: ts, message: m });
}

/** A session with a branch and a label: the body after the header. */
function body() {
  return [
    message("a1", null, "user", "hello", 1),
    message("a2", "a1", "assistant", "hi", 2),
    message("b2", "a1", "assistant", "other branch", 3),
    JSON.stringify({ type: "label", id: "l1", parentId: "b2", timestamp: "2026-01-01T00:00:04.000Z", targetId: "a2", label: "keep" }),
    message("a3", "a2", "user", "more", 5),
  ];
}

/** The same session twice, in two dirs: with leading records (ours) and without (the reference). */
function pair(t, leading = [TITLE], name = "2026-01-01T00-00-00-000Z_s1.jsonl") {
  const root = tempDir(t);
  const titledDir = path.join(root, "titled");
  const plainDir = path.join(root, "plain");
  fs.mkdirSync(titledDir);
  fs.mkdirSync(plainDir);
  const lines = [header("s1", root), ...body()];
  const titled = path.join(titledDir, name);
  const plain = path.join(plainDir, name);
  fs.writeFileSync(titled, [...leading, ...lines].join("\n") + "\n");
  fs.writeFileSync(plain, lines.join("\n") + "\n");
  return { root, titledDir, plainDir, titled, plain };
}

function view(sm) {
  const tree = (nodes) => nodes.map((n) => ({ id: n.entry.id, label: n.label, children: tree(n.children) }));
  return {
    id: sm.getSessionId(),
    cwd: sm.getCwd(),
    header: sm.getHeader(),
    entries: sm.getEntries(),
    leaf: sm.getLeafId(),
    branch: sm.getBranch().map((e) => e.id),
    context: sm.buildSessionContext(),
    tree: tree(sm.getTree()),
    label: sm.getLabel("a2"),
  };
}

test("the reference rejects a file whose header follows a title record (the difference is real)", (t) => {
  const { titled } = pair(t);
  assert.throws(() => ref.SessionManager.open(titled), /Session file is not a valid pi session/);
  assert.deepEqual(ref.loadEntriesFromFile(titled), []);
});

test("a session whose header follows a title record opens like the same session without it", (t) => {
  const { titled, plain } = pair(t);
  const before = fs.readFileSync(titled);
  const got = view(ours.SessionManager.open(titled));
  const want = view(ref.SessionManager.open(plain));
  assert.deepEqual(got, want);
  assert.equal(got.entries.some((e) => e.type === "title"), false, "the title is no entry");
  assert.deepEqual(fs.readFileSync(titled), before, "opening leaves the file as it was");
});

test("open takes the cwd from the header that follows the title", (t) => {
  const { titled, root } = pair(t);
  assert.equal(ours.SessionManager.open(titled).getCwd(), root);
});

test("appends go to the end and the title stays the first line, byte for byte", (t) => {
  const { titled } = pair(t);
  const sm = ours.SessionManager.open(titled);
  const id = sm.appendMessage({ role: "user", content: "appended", timestamp: 1 });
  sm.appendLabelChange(id, "new");
  const lines = fs.readFileSync(titled, "utf8").split("\n");
  assert.equal(lines[0], TITLE);
  assert.equal(JSON.parse(lines[1]).type, "session");
  const again = ours.SessionManager.open(titled);
  assert.equal(again.getLeafEntry().type, "label");
  assert.equal(again.getLabel(id), "new");
  assert.equal(again.getEntries().length, body().length + 2);
});

test("several leading records are all kept in their order and none is an entry", (t) => {
  const other = JSON.stringify({ type: "x-meta", note: "second" });
  const { titled, plain } = pair(t, [TITLE, "", "not json", other]);
  const sm = ours.SessionManager.open(titled);
  assert.deepEqual(view(sm), view(ref.SessionManager.open(plain)));
  sm.appendMessage({ role: "user", content: "x", timestamp: 1 });
  const lines = fs.readFileSync(titled, "utf8").split("\n");
  assert.deepEqual(lines.slice(0, 4), [TITLE, "", "not json", other]);
});

test("loadEntriesFromFile gives every record in file order, the leading ones first", (t) => {
  const { titled, plain } = pair(t);
  const got = ours.loadEntriesFromFile(titled);
  const want = ref.loadEntriesFromFile(plain);
  assert.deepEqual(got, [JSON.parse(TITLE), ...want]);
});

test("a file with leading records and no header after them stays invalid, as the reference has it", (t) => {
  const dir = tempDir(t);
  for (const [name, lines] of [
    ["title-only.jsonl", [TITLE]],
    ["title-then-entry.jsonl", [TITLE, message("a1", null, "user", "hello")]],
    ["id-before-header.jsonl", [JSON.stringify({ type: "title", id: "t" }), header("s2", dir)]],
    ["parent-before-header.jsonl", [JSON.stringify({ type: "title", parentId: null }), header("s3", dir)]],
    ["scalar-before-header.jsonl", ["7", header("s4", dir)]],
    // A v1 message has no id yet, but it is conversation, not a title.
    ["v1-message-before-header.jsonl", [JSON.stringify({ type: "message", message: { role: "user", content: "early" } }), header("s5", dir)]],
    ["numeric-id-header.jsonl", [TITLE, JSON.stringify({ type: "session", version: 3, id: 5, timestamp: "2026-01-01T00:00:00.000Z", cwd: dir })]],
  ]) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, lines.join("\n"));
    const before = fs.readFileSync(file);
    const refErr = (() => {
      try {
        ref.SessionManager.open(file);
      } catch (e) {
        return e.message;
      }
    })();
    assert.throws(() => ours.SessionManager.open(file), { message: refErr, code: "INVALID_SESSION_FILE" }, name);
    assert.deepEqual(ours.loadEntriesFromFile(file), [], name);
    assert.deepEqual(fs.readFileSync(file), before, `${name} is left as it was`);
  }
  assert.equal(ours.findMostRecentSession(dir), null);
});

test("list and listAll report a titled session as the reference reports it without the title", async (t) => {
  const { root, titledDir, plainDir, titled } = pair(t);
  const strip = (infos) => infos.map(({ path: p, ...rest }) => ({ ...rest, file: path.basename(p) }));
  // The sessions' own times decide `modified` here, not the files' mtimes.
  const got = strip(await ours.SessionManager.list(root, titledDir));
  const want = strip(await referenceListing(ref, "list", [root, plainDir]));
  assert.equal(got.length, 1);
  assert.deepEqual(got, want);
  const all = await ours.SessionManager.listAll(titledDir);
  assert.deepEqual(strip(all), strip(await referenceListing(ref, "listAll", [plainDir])));
  assert.deepEqual(all.map((s) => s.path), [titled]);
  assert.equal(ours.findMostRecentSession(titledDir), titled);
});

test("continueRecent and findById find a titled session", (t) => {
  const { titledDir, titled, root } = pair(t);
  const sm = ours.SessionManager.continueRecent(root, titledDir);
  assert.equal(sm.getSessionFile(), titled);
  assert.equal(sm.getSessionId(), "s1");
  assert.equal(ours.SessionManager.findById(root, "s1", titledDir), titled);
});

test("forkFrom and createBranchedSession write files that start with their own header, without the title", (t) => {
  const { titled, root } = pair(t);
  const forkDir = path.join(root, "forks");
  const fork = ours.SessionManager.forkFrom(titled, root, forkDir);
  const forkLines = fs.readFileSync(fork.getSessionFile(), "utf8").trim().split("\n");
  assert.equal(JSON.parse(forkLines[0]).type, "session");
  assert.equal(forkLines.length, 1 + body().length);
  assert.deepEqual(fork.getEntries(), ours.SessionManager.open(titled).getEntries());

  const sm = ours.SessionManager.open(titled);
  const file = sm.createBranchedSession("a2");
  const lines = fs.readFileSync(file, "utf8").trim().split("\n");
  assert.equal(JSON.parse(lines[0]).type, "session");
  assert.equal(lines.some((l) => JSON.parse(l).type === "title"), false);
  assert.equal(fs.readFileSync(titled, "utf8").split("\n")[0], TITLE, "the source keeps its title");
});

test("a v1 file with a title is migrated around it: the title keeps its line and gets no id", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "v1.jsonl");
  const lines = [
    TITLE,
    JSON.stringify({ type: "session", id: "v1s", timestamp: "2026-01-01T00:00:00.000Z", cwd: dir }),
    JSON.stringify({ type: "message", timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "one" } }),
    JSON.stringify({ type: "compaction", timestamp: "2026-01-01T00:00:02.000Z", summary: "s", firstKeptEntryIndex: 1, tokensBefore: 5 }),
  ];
  fs.writeFileSync(file, lines.join("\n") + "\n");
  const sm = ours.SessionManager.open(file);
  const [first, compaction] = sm.getEntries();
  assert.equal(sm.getEntries().length, 2);
  assert.equal(compaction.firstKeptEntryId, first.id, "the index counts from the header, as its writer did");
  const written = fs.readFileSync(file, "utf8").split("\n");
  assert.equal(written[0], TITLE);
  assert.equal(JSON.parse(written[1]).version, 3);
});

test("a big titled file, read lazily from disk, opens like a small one", (t) => {
  const { titled, plain } = pair(t);
  tuneFor(t, { lazyFileBytes: 1 });
  const sm = ours.SessionManager.open(titled);
  assert.deepEqual(view(sm), view(ref.SessionManager.open(plain)));
  sm.appendMessage({ role: "user", content: "lazy append", timestamp: 1 });
  assert.equal(fs.readFileSync(titled, "utf8").split("\n")[0], TITLE);
});
