// docs/behaviour.md, "Loading a file": loading a file into a manager, parsing, repair, migration.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget } from "./helpers/target.mjs";
import {
  ENTRY_ID_RE,
  fileLines,
  header,
  msgEntry,
  readText,
  tempDir,
  throwsMessage,
  user,
  useHome,
  withCwd,
  writeJsonl,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager, loadEntriesFromFile, migrateSessionEntries } = M;
const q = (v) => JSON.stringify(v);
const notValid = (file) => `Session file is not a valid pi session: ${file}`;

const H = header({ id: "s1", cwd: "/hdr" });
const A = msgEntry("aaaa0001", null, user("one"), "2025-01-01T00:00:01.000Z");
const B = msgEntry("aaaa0002", "aaaa0001", { role: "assistant", content: [{ type: "text", text: "two" }], provider: "p", model: "m" }, "2025-01-01T00:00:02.000Z");

function file(t, records, name = "s.jsonl") {
  return writeJsonl(path.join(tempDir(t), name), records);
}

function rawFile(t, text, name = "s.jsonl") {
  const p = path.join(tempDir(t), name);
  fs.writeFileSync(p, text);
  return p;
}

const V1_HEADER = '{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}';
const v1Msg = (text, ts = "2025-01-01T00:00:01.000Z") =>
  `{"type":"message","timestamp":"${ts}","message":{"role":"user","content":"${text}"}}`;

// ---------------------------------------------------------------- valid files

test("a file whose first record is a session header with a string id loads", (t) => {
  const sm = SessionManager.open(file(t, [H, A, B]));
  assert.equal(sm.getSessionId(), "s1");
  assert.equal(sm.getEntries().length, 2);
});

test("malformed and blank lines before the header do not prevent loading", (t) => {
  const sm = SessionManager.open(file(t, ["{oops", "", "   ", H, A]));
  assert.equal(sm.getSessionId(), "s1");
  assert.deepEqual(sm.getEntries().map((e) => e.id), ["aaaa0001"]);
});

test("falsy JSON lines before the header are skipped", (t) => {
  const sm = SessionManager.open(file(t, ["null", "0", "false", '""', H, A]));
  assert.equal(sm.getSessionId(), "s1");
});

test("a file whose first record is not a header is refused with the exact message and left untouched", (t) => {
  const p = file(t, [A, H]);
  const before = fs.readFileSync(p);
  throwsMessage(() => SessionManager.open(p), notValid(p));
  assert.deepEqual(fs.readFileSync(p), before);
});

test("a header with a non-string id is refused and the file left untouched", (t) => {
  const p = file(t, [{ ...H, id: 7 }, A]);
  const before = fs.readFileSync(p);
  throwsMessage(() => SessionManager.open(p), notValid(p));
  assert.deepEqual(fs.readFileSync(p), before);
});

test("a first record with a type other than session is refused", (t) => {
  const p = file(t, [{ ...H, type: "Session" }]);
  throwsMessage(() => SessionManager.open(p), notValid(p));
});

test("a first record that is a truthy non-object is refused", (t) => {
  const p = file(t, ["5", H]);
  throwsMessage(() => SessionManager.open(p), notValid(p));
});

// ---------------------------------------------------------------- effects of a successful load

test("a loaded manager holds the parsed header and entries", (t) => {
  const sm = SessionManager.open(file(t, [H, A, B]));
  assert.deepEqual(sm.getHeader(), H);
  assert.deepEqual(sm.getEntries(), [A, B]);
});

test("the session id becomes the header id", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.setSessionFile(file(t, [header({ id: "from-file" }), A]));
  assert.equal(sm.getSessionId(), "from-file");
});

test("setSessionFile keeps the manager cwd instead of the header cwd", (t) => {
  const sm = SessionManager.create("/mine", tempDir(t));
  sm.setSessionFile(file(t, [header({ id: "s", cwd: "/theirs" }), A]));
  assert.equal(sm.getCwd(), "/mine");
});

test("setSessionFile keeps the manager session dir", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/mine", dir);
  sm.setSessionFile(file(t, [H, A]));
  assert.equal(sm.getSessionDir(), dir);
});

test("a later duplicate id replaces the earlier one in the index but both keep their positions", (t) => {
  const dup = { ...msgEntry("aaaa0001", null, user("again")), timestamp: "2025-01-01T00:00:03.000Z" };
  const sm = SessionManager.open(file(t, [H, A, B, dup]));
  assert.deepEqual(sm.getEntries().map((e) => e.message.content), ["one", B.message.content, "again"]);
  assert.equal(sm.getEntry("aaaa0001").message.content, "again");
  assert.equal(sm.getEntryCount(), 2);
});

test("the leaf is the last record in file order, not the deepest node", (t) => {
  const C = msgEntry("aaaa0003", null, user("root two"));
  const sm = SessionManager.open(file(t, [H, A, B, C]));
  assert.equal(sm.getLeafId(), "aaaa0003");
});

test("label records are replayed in file order", (t) => {
  const label = (id, target, value, ts) => ({ type: "label", id, parentId: null, timestamp: ts, targetId: target, ...(value === undefined ? {} : { label: value }) });
  const sm = SessionManager.open(
    file(t, [
      H,
      A,
      B,
      label("bbbb0001", "aaaa0001", "first", "2025-01-01T00:01:00.000Z"),
      label("bbbb0002", "aaaa0001", "second", "2025-01-01T00:02:00.000Z"),
      label("bbbb0003", "aaaa0002", "tmp", "2025-01-01T00:03:00.000Z"),
      label("bbbb0004", "aaaa0002", "", "2025-01-01T00:04:00.000Z"),
      label("bbbb0005", "ghost", "boo", "2025-01-01T00:05:00.000Z"),
    ]),
  );
  assert.equal(sm.getLabel("aaaa0001"), "second");
  assert.equal(sm.getLabel("aaaa0002"), undefined);
  assert.equal(sm.getLabel("ghost"), "boo");
  const node = sm.getTree().find((n) => n.entry.id === "aaaa0001");
  assert.equal(node.labelTimestamp, "2025-01-01T00:02:00.000Z");
});

test("a loaded file counts as flushed, so setup appends are written immediately", (t) => {
  const m = { type: "model_change", id: "aaaa0001", parentId: null, timestamp: "2025-01-01T00:00:01.000Z", provider: "p", modelId: "m" };
  const p = file(t, [H, m]);
  const sm = SessionManager.open(p);
  const id = sm.appendThinkingLevelChange("high");
  const lines = fileLines(p);
  assert.equal(lines.length, 3);
  assert.equal(JSON.parse(lines[2]).id, id);
  assert.equal(JSON.parse(lines[2]).parentId, "aaaa0001");
});

test("extra header lines are kept in memory but skipped by getEntries and the index", (t) => {
  const H2 = header({ id: "second", timestamp: "2025-01-01T00:00:05.000Z" });
  const sm = SessionManager.open(file(t, [H, A, H2, B]));
  assert.equal(sm.getHeader().id, "s1");
  assert.deepEqual(sm.getEntries().map((e) => e.id), ["aaaa0001", "aaaa0002"]);
  assert.equal(sm.getEntryCount(), 2);
  assert.equal(sm.getLeafId(), "aaaa0002");
});

test("extra header lines are written back by a migration rewrite", (t) => {
  const p = file(t, [
    { ...H, version: 2 },
    A,
    '{"type":"session","version":2,"id":"second","timestamp":"2025-01-01T00:00:05.000Z","cwd":"/x"}',
    B,
  ]);
  SessionManager.open(p);
  const lines = fileLines(p);
  assert.equal(lines.length, 4);
  assert.equal(lines[2], '{"type":"session","version":3,"id":"second","timestamp":"2025-01-01T00:00:05.000Z","cwd":"/x"}');
});

// ---------------------------------------------------------------- setSessionFile

test("setSessionFile resolves a relative path", (t) => {
  const p = file(t, [H, A]);
  withCwd(t, path.dirname(p));
  const sm = SessionManager.inMemory("/proj");
  sm.setSessionFile("s.jsonl");
  assert.equal(sm.getSessionFile(), p);
  assert.equal(sm.getSessionId(), "s1");
});

test("an empty file gets a fresh header with the manager cwd written immediately", (t) => {
  const p = rawFile(t, "");
  const sm = SessionManager.create("/mine", tempDir(t));
  sm.setSessionFile(p);
  const lines = fileLines(p);
  assert.equal(lines.length, 1);
  const h = JSON.parse(lines[0]);
  assert.equal(h.type, "session");
  assert.equal(h.version, 3);
  assert.equal(h.id, sm.getSessionId());
  assert.equal(h.cwd, "/mine");
  assert.equal("parentSession" in h, false);
  assert.equal(sm.getSessionFile(), p);
});

test("after an empty file got its header, setup appends are written immediately", (t) => {
  const p = rawFile(t, "");
  const sm = SessionManager.open(p);
  const id = sm.appendModelChange("p", "m");
  const lines = fileLines(p);
  assert.equal(lines.length, 2);
  assert.equal(JSON.parse(lines[1]).id, id);
});

test("a non-empty garbage file is refused with the exact message and left byte-identical", (t) => {
  const p = rawFile(t, "this is not json\n{also not}");
  throwsMessage(() => SessionManager.open(p), notValid(p));
  assert.equal(readText(p), "this is not json\n{also not}");
});

test("a file holding only blank lines is refused and left byte-identical", (t) => {
  const p = rawFile(t, "\n  \n\t\n");
  const sm = SessionManager.inMemory("/proj");
  throwsMessage(() => sm.setSessionFile(p), notValid(p));
  assert.equal(readText(p), "\n  \n\t\n");
});

test("the not-a-session error names the resolved path", (t) => {
  const p = rawFile(t, "garbage");
  withCwd(t, path.dirname(p));
  throwsMessage(() => SessionManager.open("s.jsonl"), notValid(p));
});

test("setSessionFile on a missing file starts a new session that is written lazily at that path", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  const old = sm.getSessionId();
  const target = path.join(dir, "chosen.jsonl");
  sm.setSessionFile(target);
  assert.equal(sm.getSessionFile(), target);
  assert.notEqual(sm.getSessionId(), old);
  assert.equal(fs.existsSync(target), false);
  sm.appendMessage(user("x"));
  assert.equal(JSON.parse(fileLines(target)[0]).id, sm.getSessionId());
});

// ---------------------------------------------------------------- loadEntriesFromFile

test("loadEntriesFromFile returns [] for a missing file", (t) => {
  assert.deepEqual(loadEntriesFromFile(path.join(tempDir(t), "missing.jsonl")), []);
});

test("loadEntriesFromFile expands a path starting with ~/", (t) => {
  const home = useHome(t);
  writeJsonl(path.join(home, "s.jsonl"), [H, A]);
  assert.deepEqual(loadEntriesFromFile("~/s.jsonl"), [H, A]);
});

test("loadEntriesFromFile reads lines longer than the 1 MiB read chunk", (t) => {
  const big = msgEntry("aaaa0009", null, user("y".repeat(1536 * 1024)));
  const out = loadEntriesFromFile(file(t, [H, big, A]));
  assert.equal(out.length, 3);
  assert.equal(out[1].message.content.length, 1536 * 1024);
  assert.deepEqual(out[2], A);
});

test("loadEntriesFromFile decodes a multi-byte character split across the 1 MiB chunk boundary", (t) => {
  const head = `${q(H)}\n`;
  const prefix = `${head}{"type":"custom","customType":"c","data":"`;
  const pad = "p".repeat(1024 * 1024 - 2 - Buffer.byteLength(prefix));
  const p = rawFile(t, `${prefix}${pad}😀tail","id":"aaaa0003","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z"}\n`);
  const out = loadEntriesFromFile(p);
  assert.equal(out.length, 2);
  assert.equal(out[1].data, `${pad}😀tail`);
});

test("loadEntriesFromFile decodes invalid UTF-8 bytes as U+FFFD", (t) => {
  const p = path.join(tempDir(t), "s.jsonl");
  fs.writeFileSync(
    p,
    Buffer.concat([Buffer.from(`${q(H)}\n{"type":"custom","customType":"c","data":"a`), Buffer.from([0xff, 0xfe]), Buffer.from('b","id":"x","parentId":null,"timestamp":"t"}\n')]),
  );
  assert.equal(loadEntriesFromFile(p)[1].data, "a\ufffd\ufffdb");
});

test("loadEntriesFromFile accepts CRLF line endings", (t) => {
  const p = rawFile(t, `${q(H)}\r\n${q(A)}\r\n`);
  assert.deepEqual(loadEntriesFromFile(p), [H, A]);
});

test("loadEntriesFromFile skips blank and unparseable lines", (t) => {
  const p = rawFile(t, `${q(H)}\n\n   \n{torn\n${q(A)}\nnot json at all\n`);
  assert.deepEqual(loadEntriesFromFile(p), [H, A]);
});

test("loadEntriesFromFile skips falsy parsed values and keeps truthy non-objects", (t) => {
  const p = rawFile(t, `${q(H)}\nnull\n0\nfalse\n""\n5\n"s"\ntrue\n[1]\n${q(A)}\n`);
  assert.deepEqual(loadEntriesFromFile(p), [H, 5, "s", true, [1], A]);
});

test("loadEntriesFromFile returns [] for an empty file", (t) => {
  assert.deepEqual(loadEntriesFromFile(rawFile(t, "")), []);
});

test("loadEntriesFromFile returns [] when the first record is not a session header", (t) => {
  assert.deepEqual(loadEntriesFromFile(file(t, [A, H])), []);
});

test("loadEntriesFromFile returns [] when the header id is not a string", (t) => {
  assert.deepEqual(loadEntriesFromFile(file(t, [{ ...H, id: null }, A])), []);
});

test("loadEntriesFromFile appends exactly one newline to a file missing its final newline", (t) => {
  const text = `${q(H)}\n${q(A)}`;
  const p = rawFile(t, text);
  assert.deepEqual(loadEntriesFromFile(p), [H, A]);
  assert.equal(readText(p), `${text}\n`);
});

test("loadEntriesFromFile keeps a torn last line on disk and appends one newline after it", (t) => {
  const text = `${q(H)}\n${q(A)}\n{"type":"message","id":"aaaa00`;
  const p = rawFile(t, text);
  assert.deepEqual(loadEntriesFromFile(p), [H, A]);
  assert.equal(readText(p), `${text}\n`);
});

test("loadEntriesFromFile appends a newline after a whitespace-only remainder", (t) => {
  const text = `${q(H)}\n${q(A)}\n   `;
  const p = rawFile(t, text);
  loadEntriesFromFile(p);
  assert.equal(readText(p), `${text}\n`);
});

test("loadEntriesFromFile leaves a file ending with a newline unchanged", (t) => {
  const text = `${q(H)}\n{bad line\n\n${q(A)}\n`;
  const p = rawFile(t, text);
  loadEntriesFromFile(p);
  assert.equal(readText(p), text);
});

test("loadEntriesFromFile does not repair a file with an invalid header", (t) => {
  const text = `${q(A)}\n${q(H)}`;
  const p = rawFile(t, text);
  assert.deepEqual(loadEntriesFromFile(p), []);
  assert.equal(readText(p), text);
});

test("opening a file with a torn last line lets the next append start on a fresh line", (t) => {
  const text = `${q(H)}\n${q(A)}\n{"type":"mess`;
  const p = rawFile(t, text);
  const sm = SessionManager.open(p);
  const id = sm.appendModelChange("p", "m");
  assert.equal(readText(p), `${text}\n${q(sm.getEntry(id))}\n`);
  assert.equal(sm.getEntry(id).parentId, "aaaa0001");
});

// ---------------------------------------------------------------- version detection

test("a header without a version is treated as version 1", (t) => {
  const p = rawFile(t, `${V1_HEADER}\n${v1Msg("hi")}\n`);
  const sm = SessionManager.open(p);
  assert.equal(sm.getHeader().version, 3);
  assert.match(sm.getEntries()[0].id, ENTRY_ID_RE);
});

test("a version 4 file keeps hookMessage roles and is not rewritten", (t) => {
  const text = `${q({ ...H, version: 4 })}\n${q(msgEntry("aaaa0001", null, { role: "hookMessage", content: "x" }))}\n`;
  const p = rawFile(t, text);
  const sm = SessionManager.open(p);
  assert.equal(sm.getEntries()[0].message.role, "hookMessage");
  assert.equal(sm.getHeader().version, 4);
  assert.equal(readText(p), text);
});

test("opening a version 3 file does not rewrite it", (t) => {
  const text = `${q(H)}\n\n{broken\n${'{"id":"aaaa0001","type":"message","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"x"}}'}\n`;
  const p = rawFile(t, text);
  SessionManager.open(p);
  assert.equal(readText(p), text);
});

test("the version is taken from the first session record even when it is not the first element", () => {
  const entry = { type: "message", message: { role: "hookMessage", content: "x" } };
  const list = [entry, { type: "session", version: 3, id: "s", timestamp: "t", cwd: "/" }];
  migrateSessionEntries(list);
  assert.equal("id" in entry, false);
  assert.equal(entry.message.role, "hookMessage");
});

test("a later header does not change the version of the first one", () => {
  const entry = { type: "message", timestamp: "t", message: { role: "user", content: "x" } };
  const list = [
    { type: "session", id: "s", timestamp: "t", cwd: "/" },
    entry,
    { type: "session", version: 3, id: "s2", timestamp: "t", cwd: "/" },
  ];
  migrateSessionEntries(list);
  assert.match(entry.id, ENTRY_ID_RE);
  assert.equal(list[0].version, 3);
});

// ---------------------------------------------------------------- preloaded entries

test("preloaded entries with a header become the manager's list, so appends push into the caller's array", () => {
  const entries = [{ ...H }, { ...A }];
  const sm = SessionManager.inMemory("/proj", undefined, entries);
  const id = sm.appendMessage(user("more"));
  assert.equal(entries.length, 3);
  assert.equal(entries[2].id, id);
});

test("preloaded entries with a header expose the caller's header object", () => {
  const h = { ...H };
  const sm = SessionManager.inMemory("/proj", undefined, [h, { ...A }]);
  assert.equal(sm.getHeader(), h);
});

test("preloaded old entries are migrated in place", () => {
  const h = { type: "session", id: "old", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" };
  const e = { type: "message", timestamp: "2025-01-01T00:00:01.000Z", message: { role: "hookMessage", content: "x" } };
  const entries = [h, e];
  const sm = SessionManager.inMemory("/proj", undefined, entries);
  assert.equal(h.version, 3);
  assert.match(e.id, ENTRY_ID_RE);
  assert.equal(e.parentId, null);
  assert.equal(e.message.role, "custom");
  assert.equal(sm.getLeafId(), e.id);
});

test("preloaded entries with a header take the header id and ignore the options", () => {
  const sm = SessionManager.inMemory("/proj", { id: "ignored" }, [{ ...H }, { ...A }]);
  assert.equal(sm.getSessionId(), "s1");
});

test("preloaded entries with a header keep the constructor cwd", () => {
  const sm = SessionManager.inMemory("/constructor", undefined, [header({ id: "s", cwd: "/header" }), { ...A }]);
  assert.equal(sm.getCwd(), "/constructor");
});

test("preloaded entries without a header get a new header from the options", () => {
  const sm = SessionManager.inMemory("/proj", { id: "given" }, [{ ...A }, { ...B }]);
  assert.equal(sm.getSessionId(), "given");
  assert.equal(sm.getHeader().id, "given");
  assert.equal(sm.getHeader().cwd, "/proj");
  assert.deepEqual(sm.getEntries().map((e) => e.id), ["aaaa0001", "aaaa0002"]);
  assert.equal(sm.getLeafId(), "aaaa0002");
});

test("preloaded entries without a header are not migrated", () => {
  const e = msgEntry("aaaa0001", null, { role: "hookMessage", content: "x" });
  const sm = SessionManager.inMemory("/proj", undefined, [e]);
  assert.equal(sm.getEntries()[0].message.role, "hookMessage");
  assert.equal(sm.getHeader().version, 3);
});

test("preloaded entries without a header do not alias the caller's array", () => {
  const entries = [{ ...A }];
  const sm = SessionManager.inMemory("/proj", undefined, entries);
  sm.appendMessage(user("more"));
  assert.equal(entries.length, 1);
  assert.equal(sm.getEntries().length, 2);
});

// ---------------------------------------------------------------- migration

test("v1 migration gives every entry a fresh 8-hex id and chains parentIds linearly", (t) => {
  const p = rawFile(t, `${V1_HEADER}\n${v1Msg("a")}\n${v1Msg("b")}\n${v1Msg("c")}\n`);
  const sm = SessionManager.open(p);
  const entries = sm.getEntries();
  assert.equal(entries.length, 3);
  for (const e of entries) assert.match(e.id, ENTRY_ID_RE);
  assert.equal(new Set(entries.map((e) => e.id)).size, 3);
  assert.equal(entries[0].parentId, null);
  assert.equal(entries[1].parentId, entries[0].id);
  assert.equal(entries[2].parentId, entries[1].id);
  assert.equal(sm.getLeafId(), entries[2].id);
});

test("v1 migration rewrites the file at once with the migrated records", (t) => {
  const p = rawFile(t, `${V1_HEADER}\n${v1Msg("a")}\n${v1Msg("b")}\n`);
  const sm = SessionManager.open(p);
  const [a, b] = sm.getEntries();
  assert.deepEqual(fileLines(p), [
    `${V1_HEADER.slice(0, -1)},"version":3}`,
    `${v1Msg("a").slice(0, -1)},"id":${q(a.id)},"parentId":null}`,
    `${v1Msg("b").slice(0, -1)},"id":${q(b.id)},"parentId":${q(a.id)}}`,
  ]);
});

test("a v1 header that already has a version keeps its key position", (t) => {
  const p = rawFile(t, `{"type":"session","version":1,"id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n${v1Msg("a")}\n`);
  SessionManager.open(p);
  assert.equal(fileLines(p)[0], '{"type":"session","version":3,"id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}');
});

test("v1 migration turns firstKeptEntryIndex into the id of that earlier record, placed after parentId", (t) => {
  const comp = '{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":9}';
  const p = rawFile(t, `${V1_HEADER}\n${v1Msg("a")}\n${v1Msg("b")}\n${comp}\n`);
  const sm = SessionManager.open(p);
  const [, b, c] = sm.getEntries();
  assert.equal(c.firstKeptEntryId, b.id);
  assert.equal("firstKeptEntryIndex" in c, false);
  assert.equal(
    fileLines(p)[3],
    `{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","tokensBefore":9,"id":${q(c.id)},"parentId":${q(b.id)},"firstKeptEntryId":${q(b.id)}}`,
  );
});

test("v1 migration writes no firstKeptEntryId when the index points at the header", (t) => {
  const comp = '{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":0,"tokensBefore":9}';
  const p = rawFile(t, `${V1_HEADER}\n${v1Msg("a")}\n${comp}\n`);
  SessionManager.open(p);
  const rec = JSON.parse(fileLines(p)[2]);
  assert.equal("firstKeptEntryId" in rec, false);
  assert.equal("firstKeptEntryIndex" in rec, false);
});

test("v1 migration writes no firstKeptEntryId when the index is out of range", (t) => {
  const comp = '{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":99,"tokensBefore":9}';
  const p = rawFile(t, `${V1_HEADER}\n${v1Msg("a")}\n${comp}\n`);
  SessionManager.open(p);
  const rec = JSON.parse(fileLines(p)[2]);
  assert.equal("firstKeptEntryId" in rec, false);
  assert.equal("firstKeptEntryIndex" in rec, false);
});

test("v1 migration writes no firstKeptEntryId when the index points at a later record", (t) => {
  const comp = '{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":3,"tokensBefore":9}';
  const p = rawFile(t, `${V1_HEADER}\n${v1Msg("a")}\n${comp}\n${v1Msg("b")}\n`);
  SessionManager.open(p);
  const rec = JSON.parse(fileLines(p)[2]);
  assert.equal("firstKeptEntryId" in rec, false);
  assert.equal("firstKeptEntryIndex" in rec, false);
});

test("v2 to v3 migration renames the hookMessage role to custom and leaves other fields untouched", (t) => {
  const hook = msgEntry("aaaa0001", null, { role: "hookMessage", customType: "h", content: "x", display: false, details: { k: 1 }, timestamp: 5 });
  const other = msgEntry("aaaa0002", "aaaa0001", { role: "user", content: "keep", timestamp: 6 });
  const p = file(t, [{ ...H, version: 2 }, hook, other]);
  const sm = SessionManager.open(p);
  assert.deepEqual(sm.getEntry("aaaa0001").message, { role: "custom", customType: "h", content: "x", display: false, details: { k: 1 }, timestamp: 5 });
  assert.deepEqual(sm.getEntry("aaaa0002"), other);
  assert.equal(fileLines(p)[2], q(other));
});

test("v2 to v3 migration only changes the header version", (t) => {
  const p = file(t, [{ ...H, version: 2 }, A, B]);
  SessionManager.open(p);
  assert.deepEqual(fileLines(p), [q({ ...H, version: 3 }), q(A), q(B)]);
});

test("a v1 file with hookMessage roles gets both migrations", (t) => {
  const p = rawFile(t, `${V1_HEADER}\n{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"hookMessage","content":"h"}}\n`);
  const sm = SessionManager.open(p);
  const [e] = sm.getEntries();
  assert.equal(e.message.role, "custom");
  assert.match(e.id, ENTRY_ID_RE);
  assert.equal(JSON.parse(fileLines(p)[1]).message.role, "custom");
});

test("appends after a migration chain to the last migrated entry and go to disk", (t) => {
  const p = rawFile(t, `${V1_HEADER}\n${v1Msg("a")}\n`);
  const sm = SessionManager.open(p);
  const last = sm.getLeafId();
  const id = sm.appendModelChange("p", "m");
  const lines = fileLines(p);
  assert.equal(lines.length, 3);
  assert.equal(JSON.parse(lines[2]).id, id);
  assert.equal(sm.getEntry(id).parentId, last);
});

test("migrateSessionEntries gives every record of a header-less list an id and parentId", () => {
  const a = { type: "message", message: { role: "user", content: "a" } };
  const b = { type: "custom", customType: "c" };
  migrateSessionEntries([a, b]);
  assert.match(a.id, ENTRY_ID_RE);
  assert.equal(a.parentId, null);
  assert.match(b.id, ENTRY_ID_RE);
  assert.equal(b.parentId, a.id);
});

test("migrateSessionEntries appends the version key last on a v1 header", () => {
  const h = { type: "session", id: "s", timestamp: "t", cwd: "/" };
  const e = { type: "message", message: { role: "user", content: "a" } };
  migrateSessionEntries([h, e]);
  assert.deepEqual(Object.keys(h), ["type", "id", "timestamp", "cwd", "version"]);
  assert.equal(h.version, 3);
  assert.deepEqual(Object.keys(e), ["type", "message", "id", "parentId"]);
});

test("migrateSessionEntries leaves a current list untouched", () => {
  const list = [{ ...H }, { ...A }];
  const copy = structuredClone(list);
  migrateSessionEntries(list);
  assert.deepEqual(list, copy);
});
