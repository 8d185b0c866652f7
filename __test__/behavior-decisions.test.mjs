// docs/behaviour.md, "Differences from the reference, on purpose": our product decisions: retainedTail, cycle safety, forkFrom migration,
// never losing bytes on a migration rewrite, and object identity.
// Tests of behaviour where we deliberately differ from reference 1.6.0 are skipped on the reference.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { TARGET, loadReference, loadTarget } from "./helpers/target.mjs";
import {
  ENTRY_ID_RE,
  assistant,
  fileLines,
  header,
  msgEntry,
  readText,
  system,
  tempDir,
  throwsMessage,
  user,
  writeJsonl,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;
const q = (v) => JSON.stringify(v);
const differs = { skip: TARGET === "reference" && "our decision (docs/behaviour.md), differs from the reference" };
const here = path.dirname(fileURLToPath(import.meta.url));

const H = header({ id: "s1", cwd: "/proj" });
const ts = (s) => `2025-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;
const summaryMsg = (summary, tokensBefore, iso) => ({ role: "compactionSummary", summary, tokensBefore, timestamp: Date.parse(iso) });

/** A file: u1 -> a1 -> model change -> compaction(firstKept = u1, retainedTail) -> u2. */
function retainedTailFile(t, retainedTail, extra = {}) {
  const entries = [
    H,
    msgEntry("aaaa0001", null, user("old question", 1), ts(1)),
    msgEntry("aaaa0002", "aaaa0001", assistant("old answer"), ts(2)),
    { type: "model_change", id: "aaaa0003", parentId: "aaaa0002", timestamp: ts(3), provider: "mp", modelId: "mm" },
    { type: "thinking_level_change", id: "aaaa0004", parentId: "aaaa0003", timestamp: ts(4), thinkingLevel: "high" },
    {
      type: "compaction",
      id: "cccc0001",
      parentId: "aaaa0004",
      timestamp: ts(5),
      summary: "summary text",
      firstKeptEntryId: "aaaa0001",
      tokensBefore: 100,
      ...extra,
      ...(retainedTail === undefined ? {} : { retainedTail }),
    },
    msgEntry("aaaa0005", "cccc0001", user("new question", 6), ts(6)),
  ];
  return writeJsonl(path.join(tempDir(t), "rt.jsonl"), entries);
}

const TAIL = [
  { role: "user", content: "latest request", timestamp: 3 },
  { role: "assistant", content: [{ type: "text", text: "latest reply" }], provider: "tp", model: "tm", stopReason: "stop", timestamp: 4 },
];

// ---------------------------------------------------------------- writing retainedTail

test("appendCompaction's seventh argument writes retainedTail as the last key", differs, (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const u = sm.appendMessage(user("x"));
  const id = sm.appendCompaction("sum", u, 12, { readFiles: [] }, false, { input: 1 }, TAIL);
  const e = sm.getEntry(id);
  assert.equal(
    fileLines(sm.getSessionFile()).at(-1),
    `{"type":"compaction","id":${q(id)},"parentId":${q(u)},"timestamp":${q(e.timestamp)},"summary":"sum","firstKeptEntryId":${q(u)},"tokensBefore":12,"details":{"readFiles":[]},"usage":{"input":1},"fromHook":false,"retainedTail":${q(TAIL)}}`,
  );
});

test("retainedTail is written after systemMessage", differs, (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(system("Rules."));
  const u = sm.appendMessage(user("x"));
  const id = sm.appendCompaction("sum", u, 12, undefined, undefined, undefined, []);
  const e = sm.getEntry(id);
  assert.equal(
    fileLines(sm.getSessionFile()).at(-1),
    `{"type":"compaction","id":${q(id)},"parentId":${q(u)},"timestamp":${q(e.timestamp)},"summary":"sum","firstKeptEntryId":${q(u)},"tokensBefore":12,"systemMessage":{"role":"system","content":"Rules.","timestamp":${Date.parse(e.timestamp)}},"retainedTail":[]}`,
  );
});

test("appendCompaction without a retainedTail argument writes no retainedTail key", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const u = sm.appendMessage(user("x"));
  const id = sm.appendCompaction("sum", u, 12);
  assert.equal("retainedTail" in JSON.parse(fileLines(sm.getSessionFile()).at(-1)), false);
  assert.equal(sm.getEntry(id).retainedTail, undefined);
});

// ---------------------------------------------------------------- reading retainedTail

test("context for a retainedTail compaction is the summary, the tail, then the entries after it", differs, (t) => {
  const sm = SessionManager.open(retainedTailFile(t, TAIL));
  assert.deepEqual(sm.buildSessionContext().messages, [
    summaryMsg("summary text", 100, ts(5)),
    ...TAIL,
    user("new question", 6),
  ]);
});

test("context for a retainedTail compaction with a systemMessage starts with that system message", differs, (t) => {
  const sys = { role: "system", content: "Checkpoint prompt", timestamp: 5000 };
  const sm = SessionManager.open(retainedTailFile(t, TAIL, { systemMessage: sys }));
  assert.deepEqual(sm.buildSessionContext().messages, [
    sys,
    summaryMsg("summary text", 100, ts(5)),
    ...TAIL,
    user("new question", 6),
  ]);
});

test("a retainedTail compaction ignores firstKeptEntryId and keeps no entries before it", differs, (t) => {
  const sm = SessionManager.open(retainedTailFile(t, TAIL));
  const ids = sm.buildContextEntries().map((e) => e.id);
  assert.deepEqual(ids, ["cccc0001", "aaaa0005"]);
});

test("an empty retainedTail array counts as present", differs, (t) => {
  const sm = SessionManager.open(retainedTailFile(t, []));
  assert.deepEqual(sm.buildSessionContext().messages, [summaryMsg("summary text", 100, ts(5)), user("new question", 6)]);
  assert.deepEqual(sm.buildContextEntries().map((e) => e.id), ["cccc0001", "aaaa0005"]);
});

test("system messages inside a retainedTail are passed through unchanged", differs, (t) => {
  const tail = [{ role: "system", content: "tail system", sections: { a: "b" }, timestamp: 1 }, TAIL[0]];
  const sm = SessionManager.open(retainedTailFile(t, tail));
  assert.deepEqual(sm.buildSessionContext().messages.slice(1, 3), tail);
});

test("model and thinking level still come from the full path with a retainedTail", (t) => {
  const sm = SessionManager.open(retainedTailFile(t, TAIL));
  const ctx = sm.buildSessionContext();
  assert.deepEqual(ctx.model, { provider: "mp", modelId: "mm" });
  assert.equal(ctx.thinkingLevel, "high");
});

test("in a projection the retainedTail messages belong to the compaction entry's item", differs, (t) => {
  const sm = SessionManager.open(retainedTailFile(t, TAIL));
  const p = sm.buildSessionProjection();
  assert.equal(p.entries.length, 2);
  assert.equal(p.entries[0].sourceEntry.id, "cccc0001");
  assert.deepEqual(p.entries[0].messages, [summaryMsg("summary text", 100, ts(5)), ...TAIL]);
  assert.equal(p.entries[1].sourceEntry.id, "aaaa0005");
});

test("a context edit after a retainedTail compaction still applies to later entries only", differs, (t) => {
  const sm = SessionManager.open(retainedTailFile(t, TAIL));
  sm.appendContextEdit("aaaa0005", { content: "edited question" });
  const msgs = sm.buildSessionContext().messages;
  assert.deepEqual(msgs.slice(1, 3), TAIL);
  assert.equal(msgs[3].content, "edited question");
});

test("sessionEntryToContextMessages expands a retainedTail compaction into summary and tail", differs, () => {
  const entry = { type: "compaction", id: "c", parentId: null, timestamp: ts(5), summary: "s", tokensBefore: 1, retainedTail: TAIL };
  assert.deepEqual(M.sessionEntryToContextMessages(entry), [summaryMsg("s", 1, ts(5)), ...TAIL]);
});

test("buildContextEntries keeps only a retainedTail compaction and what follows it", differs, () => {
  const a = msgEntry("a", null, user("1"), ts(1));
  const c = { type: "compaction", id: "c", parentId: "a", timestamp: ts(2), summary: "s", firstKeptEntryId: "a", tokensBefore: 1, retainedTail: [] };
  const b = msgEntry("b", "c", user("2"), ts(3));
  assert.deepEqual(M.buildContextEntries([a, c, b]), [c, b]);
});

test("a retainedTail compaction appended in this process gives the same context after reopening the file", differs, (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const u = sm.appendMessage(user("x", 1));
  sm.appendMessage(assistant("y"));
  sm.appendCompaction("sum", u, 12, undefined, undefined, undefined, TAIL);
  sm.appendMessage(user("after", 9));
  const live = sm.buildSessionContext();
  assert.deepEqual(live.messages.slice(1), [...TAIL, user("after", 9)]);
  assert.deepEqual(SessionManager.open(sm.getSessionFile()).buildSessionContext(), live);
});

test("createBranchedSession copies retainedTail verbatim", (t) => {
  const sm = SessionManager.open(retainedTailFile(t, TAIL));
  const newFile = sm.createBranchedSession("aaaa0005");
  const comp = fileLines(newFile).map((l) => JSON.parse(l)).find((r) => r.type === "compaction");
  assert.deepEqual(comp.retainedTail, TAIL);
});

test("a file written by the reference (no retainedTail) gives the same context as in the reference", async (t) => {
  const R = await loadReference();
  const ref = R.SessionManager.create("/proj", tempDir(t));
  ref.appendModelChange("p", "m");
  ref.appendMessage(system("sys"));
  const u1 = ref.appendMessage(user("one", 1));
  ref.appendMessage(assistant("two"));
  const u3 = ref.appendMessage(user("three", 3));
  ref.appendMessage(assistant("four"));
  ref.appendCompaction("summary", u3, 500);
  ref.appendMessage(user("five", 5));
  ref.appendLabelChange(u1, "start");
  const file = ref.getSessionFile();
  const expected = R.SessionManager.open(file).buildSessionContext();
  const ours = SessionManager.open(file);
  assert.deepEqual(ours.buildSessionContext(), expected);
  assert.deepEqual(
    ours.getEntries().map((e) => e.id),
    R.SessionManager.open(file).getEntries().map((e) => e.id),
  );
});

// ---------------------------------------------------------------- cycles

// How long a child may take before it counts as hung. It must start Node and load the reference,
// which takes ~0.3 s natively; under an emulator (qemu-user, Wine: scripts/test-platforms.js sets
// PI_TEST_TIME_SCALE) everything is slower by about that factor, and a hang is still a hang.
const HANG_LIMIT_MS = 10_000 * (Number(process.env.PI_TEST_TIME_SCALE) || 1);

/** Run `body` (an async function body with `M` = target module, `file` = session path) in a child with a timeout. */
function runIsolated(t, file, body) {
  const script = path.join(tempDir(t, "pi-child-"), "run.mjs");
  fs.writeFileSync(
    script,
    `import { loadTarget } from ${q(pathToFileURL(path.join(here, "helpers", "target.mjs")).href)};\n` +
      `const M = await loadTarget();\nconst file = ${q(file)};\n` +
      `const result = await (async () => { ${body} })();\nprocess.stdout.write(JSON.stringify(result));\n`,
  );
  const res = spawnSync(process.execPath, [script], { timeout: HANG_LIMIT_MS, encoding: "utf8", env: process.env });
  assert.equal(res.signal, null, `child timed out (hang): ${res.stderr}`);
  assert.equal(res.status, 0, res.stderr);
  return JSON.parse(res.stdout);
}

function cycleFile(t) {
  return writeJsonl(path.join(tempDir(t), "cycle.jsonl"), [
    H,
    msgEntry("aaaa0001", "aaaa0002", user("a", 1), ts(1)),
    msgEntry("aaaa0002", "aaaa0001", assistant("b"), ts(2)),
  ]);
}

function selfLoopFile(t) {
  return writeJsonl(path.join(tempDir(t), "self.jsonl"), [H, msgEntry("aaaa0001", "aaaa0001", user("a", 1), ts(1))]);
}

test("getBranch on a parent cycle terminates and lists each entry once", differs, (t) => {
  const ids = runIsolated(t, cycleFile(t), "return M.SessionManager.open(file).getBranch().map((e) => e.id);");
  assert.equal(ids.at(-1), "aaaa0002");
  assert.deepEqual([...ids].sort(), ["aaaa0001", "aaaa0002"]);
});

test("getBranch on an entry that is its own parent terminates", differs, (t) => {
  const ids = runIsolated(t, selfLoopFile(t), "return M.SessionManager.open(file).getBranch().map((e) => e.id);");
  assert.deepEqual(ids, ["aaaa0001"]);
});

test("buildSessionContext on a parent cycle terminates", differs, (t) => {
  const out = runIsolated(t, cycleFile(t), "return M.SessionManager.open(file).buildSessionContext().messages.length;");
  assert.equal(out, 2);
});

test("buildSessionContext on an entry that is its own parent terminates", differs, (t) => {
  const out = runIsolated(t, selfLoopFile(t), "return M.SessionManager.open(file).buildSessionContext().messages.map((m) => m.content);");
  assert.deepEqual(out, ["a"]);
});

test("the exported buildContextEntries terminates on a parent cycle", differs, (t) => {
  const out = runIsolated(
    t,
    cycleFile(t),
    "const e = M.loadEntriesFromFile(file).slice(1); return M.buildContextEntries(e).map((x) => x.id).sort();",
  );
  assert.deepEqual(out, ["aaaa0001", "aaaa0002"]);
});

test("appending to a cycle and building a projection terminates", differs, (t) => {
  const out = runIsolated(
    t,
    cycleFile(t),
    "const sm = M.SessionManager.open(file); sm.appendMessage({ role: 'user', content: 'c', timestamp: 3 }); return sm.buildSessionProjection().messages.length;",
  );
  assert.equal(out, 3);
});

test("getTree treats entries of a parent cycle as roots so every entry appears once", differs, (t) => {
  const out = runIsolated(
    t,
    cycleFile(t),
    "const roots = M.SessionManager.open(file).getTree(); const seen = []; const stack = [...roots];" +
      "while (stack.length) { const n = stack.pop(); seen.push(n.entry.id); stack.push(...n.children); }" +
      "return { roots: roots.length, seen: seen.sort() };",
  );
  assert.ok(out.roots >= 1);
  assert.deepEqual(out.seen, ["aaaa0001", "aaaa0002"]);
});

test("getTree treats an entry that is its own parent as a root", (t) => {
  const roots = SessionManager.open(selfLoopFile(t)).getTree();
  assert.deepEqual(roots.map((n) => n.entry.id), ["aaaa0001"]);
  assert.deepEqual(roots[0].children, []);
});

// ---------------------------------------------------------------- forkFrom of old files

const V1_TEXT =
  '{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n' +
  '{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"q"}}\n' +
  '{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"h"}}\n';

test("forkFrom of a v1 file writes migrated entries with ids and a linear chain", differs, (t) => {
  const dir = tempDir(t);
  const src = path.join(dir, "v1.jsonl");
  fs.writeFileSync(src, V1_TEXT);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  const records = fileLines(sm.getSessionFile()).map((l) => JSON.parse(l));
  assert.equal(records[0].version, 3);
  assert.equal(records.length, 3);
  assert.match(records[1].id, ENTRY_ID_RE);
  assert.match(records[2].id, ENTRY_ID_RE);
  assert.equal(records[1].parentId, null);
  assert.equal(records[2].parentId, records[1].id);
});

test("forkFrom of a v1 file yields a manager whose leaf is the last migrated entry", differs, (t) => {
  const dir = tempDir(t);
  const src = path.join(dir, "v1.jsonl");
  fs.writeFileSync(src, V1_TEXT);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  const entries = sm.getEntries();
  assert.equal(entries.length, 2);
  assert.equal(sm.getLeafId(), entries[1].id);
  assert.deepEqual(sm.buildSessionContext().messages.map((m) => m.content), ["q", "h"]);
});

test("forkFrom of an old file renames hookMessage roles to custom", differs, (t) => {
  const dir = tempDir(t);
  const src = path.join(dir, "v1.jsonl");
  fs.writeFileSync(src, V1_TEXT);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  assert.equal(JSON.parse(fileLines(sm.getSessionFile())[2]).message.role, "custom");
});

// ---------------------------------------------------------------- never lose bytes

const V1_WITH_GARBAGE =
  '{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n' +
  '{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"q"}}\n' +
  "{this line is torn\n" +
  '{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[]}}\n' +
  "not json either\n";

function v1GarbageFile(t) {
  const dir = tempDir(t);
  const file = path.join(dir, "2025-01-01T00-00-00-000Z_old.jsonl");
  fs.writeFileSync(file, V1_WITH_GARBAGE);
  return { dir, file };
}

test("a migration rewrite keeps malformed lines at their original positions", differs, (t) => {
  const { file } = v1GarbageFile(t);
  const sm = SessionManager.open(file);
  const lines = fileLines(file);
  assert.equal(lines.length, 5);
  assert.equal(lines[2], "{this line is torn");
  assert.equal(lines[4], "not json either");
  const [a, b] = sm.getEntries();
  assert.equal(JSON.parse(lines[1]).id, a.id);
  assert.equal(JSON.parse(lines[3]).id, b.id);
  assert.equal(JSON.parse(lines[0]).version, 3);
});

test("a migration rewrite leaves a backup of the original bytes next to the file", differs, (t) => {
  const { dir, file } = v1GarbageFile(t);
  SessionManager.open(file);
  const base = path.basename(file);
  const backups = fs.readdirSync(dir).filter((n) => n !== base && n.startsWith(base) && n.includes(".bak"));
  assert.equal(backups.length, 1, `backups: ${fs.readdirSync(dir).join(", ")}`);
  assert.equal(readText(path.join(dir, backups[0])), V1_WITH_GARBAGE);
});

test("a migration rewrite leaves no temporary file behind", differs, (t) => {
  const { dir, file } = v1GarbageFile(t);
  SessionManager.open(file);
  const base = path.basename(file);
  for (const name of fs.readdirSync(dir)) {
    assert.ok(name === base || name.includes(".bak"), `unexpected file ${name}`);
  }
});

test("appends after a migration rewrite go after the kept malformed lines", differs, (t) => {
  const { file } = v1GarbageFile(t);
  const sm = SessionManager.open(file);
  const id = sm.appendModelChange("p", "m");
  const lines = fileLines(file);
  assert.equal(lines.length, 6);
  assert.equal(lines[4], "not json either");
  assert.equal(JSON.parse(lines[5]).id, id);
});

test("unknown entry types and unknown fields survive a migration rewrite", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "v2.jsonl");
  const odd = '{"type":"future_thing","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2025-01-01T00:00:02.000Z","payload":{"x":[1,2]}}';
  const extra = '{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"q"},"customField":"kept"}';
  fs.writeFileSync(file, `{"type":"session","version":2,"id":"v2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","meta":1}\n${extra}\n${odd}\n`);
  const sm = SessionManager.open(file);
  const lines = fileLines(file);
  assert.equal(lines[0], '{"type":"session","version":3,"id":"v2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","meta":1}');
  assert.equal(lines[1], extra);
  assert.equal(lines[2], odd);
  assert.equal(sm.getEntry("aaaa0002").type, "future_thing");
});

test("a file that is not a session is refused and the directory is left untouched", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "notes.jsonl");
  fs.writeFileSync(file, "{\"hello\":\"world\"}\nplain text\n");
  throwsMessage(() => SessionManager.open(file), `Session file is not a valid pi session: ${file}`);
  assert.equal(readText(file), "{\"hello\":\"world\"}\nplain text\n");
  assert.deepEqual(fs.readdirSync(dir), ["notes.jsonl"]);
});

// ---------------------------------------------------------------- identity

function conversation() {
  const sm = SessionManager.inMemory("/proj");
  const ids = [sm.appendMessage(user("a", 1)), sm.appendMessage(assistant("b")), sm.appendModelChange("p", "m"), sm.appendMessage(user("c", 3))];
  return { sm, ids };
}

test("getEntry and getLeafEntry return the same object", () => {
  const { sm, ids } = conversation();
  assert.equal(sm.getEntry(ids[3]), sm.getLeafEntry());
  assert.equal(sm.getEntry(ids[3]), sm.getEntry(ids[3]));
});

test("getEntries elements are the objects returned by getEntry", () => {
  const { sm, ids } = conversation();
  const entries = sm.getEntries();
  ids.forEach((id, i) => assert.equal(entries[i], sm.getEntry(id)));
});

test("getBranch elements are the objects returned by getEntry", () => {
  const { sm, ids } = conversation();
  const branch = sm.getBranch();
  ids.forEach((id, i) => assert.equal(branch[i], sm.getEntry(id)));
});

test("getTree nodes hold the objects returned by getEntry", () => {
  const { sm, ids } = conversation();
  let node = sm.getTree()[0];
  for (const id of ids) {
    assert.equal(node.entry, sm.getEntry(id));
    node = node.children[0];
  }
});

test("getChildren returns the objects returned by getEntry", () => {
  const { sm, ids } = conversation();
  assert.equal(sm.getChildren(ids[0])[0], sm.getEntry(ids[1]));
  assert.equal(sm.getChildren(null)[0], sm.getEntry(ids[0]));
});

test("messages in buildSessionContext are the stored message objects", () => {
  const { sm, ids } = conversation();
  const msgs = sm.buildSessionContext().messages;
  assert.equal(msgs[0], sm.getEntry(ids[0]).message);
  assert.equal(msgs[1], sm.getEntry(ids[1]).message);
  assert.equal(msgs[2], sm.getEntry(ids[3]).message);
});

test("buildContextEntries and projection source entries are the objects returned by getEntry", () => {
  const { sm, ids } = conversation();
  sm.buildContextEntries().forEach((e, i) => assert.equal(e, sm.getEntry(ids[i])));
  sm.buildSessionProjection().entries.forEach((item, i) => assert.equal(item.sourceEntry, sm.getEntry(ids[i])));
});

test("getHeader returns the same object each time", () => {
  const { sm } = conversation();
  assert.equal(sm.getHeader(), sm.getHeader());
});

test("identity also holds for entries loaded from a file", (t) => {
  const file = writeJsonl(path.join(tempDir(t), "s.jsonl"), [H, msgEntry("aaaa0001", null, user("a", 1), ts(1)), msgEntry("aaaa0002", "aaaa0001", assistant("b"), ts(2))]);
  const sm = SessionManager.open(file);
  const leaf = sm.getLeafEntry();
  assert.equal(sm.getEntry("aaaa0002"), leaf);
  assert.equal(sm.getEntries()[1], leaf);
  assert.equal(sm.getBranch()[1], leaf);
  assert.equal(sm.getTree()[0].children[0].entry, leaf);
  assert.equal(sm.buildSessionContext().messages[1], leaf.message);
});

test("a compaction's systemMessage in the context is the stored object", () => {
  const sm = SessionManager.inMemory("/proj");
  sm.appendMessage(system("sys"));
  const u = sm.appendMessage(user("x"));
  const c = sm.appendCompaction("s", u, 1);
  assert.equal(sm.buildSessionContext().messages[0], sm.getEntry(c).systemMessage);
});

test("the constructor is private: called from outside it throws INVALID_ARGUMENT and makes nothing", differs, (t) => {
  const dir = tempDir(t);
  for (const args of [[], [dir, dir, undefined, true], [{ core: null }]]) {
    assert.throws(() => new SessionManager(...args), (err) => err instanceof TypeError && err.code === "INVALID_ARGUMENT" && /private/.test(err.message));
  }
  assert.deepEqual(fs.readdirSync(dir), [], "no session was started");
});
