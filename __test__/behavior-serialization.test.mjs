// docs/behaviour.md, "What is written": JSON serialization of session files (exact bytes).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget } from "./helpers/target.mjs";
import { assistant, fileLines, header, readText, system, tempDir, user, writeJsonl, flushedSession } from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;

const q = (v) => JSON.stringify(v);

/** A persisted session that has already been flushed by one user message. */
const flushed = (t, cwd = "/proj") => flushedSession(t, SessionManager, { cwd });

function lastLine(file) {
  const lines = fileLines(file);
  return lines[lines.length - 1];
}

function base(sm, id, type) {
  const e = sm.getEntry(id);
  return `{"type":${q(type)},"id":${q(id)},"parentId":${q(e.parentId)},"timestamp":${q(e.timestamp)}`;
}

/** Append a message holding `content` and return the raw bytes of its serialized `message` value. */
function messageBytes(t, message) {
  const { sm, file } = flushed(t);
  const id = sm.appendMessage(message);
  const line = lastLine(file);
  const prefix = `${base(sm, id, "message")},"message":`;
  assert.ok(line.startsWith(prefix), line);
  assert.ok(line.endsWith("}"));
  return line.slice(prefix.length, -1);
}

// ---------------------------------------------------------------- general JSON rules

test("every record is one compact JSON document per line and the file ends with a newline", (t) => {
  const { sm, file } = flushed(t);
  sm.appendMessage(assistant("reply"));
  sm.appendModelChange("p", "m");
  const text = readText(file);
  assert.ok(text.endsWith("\n"));
  const lines = fileLines(file);
  assert.equal(lines.length, 4);
  for (const line of lines) {
    assert.equal(line, JSON.stringify(JSON.parse(line)));
    assert.ok(!line.includes(": ") && !line.includes(", "), line);
  }
});

test("keys whose value is undefined are omitted while null is written", (t) => {
  const bytes = messageBytes(t, { role: "user", a: undefined, content: "x", b: null, nested: { c: undefined, d: null } });
  assert.equal(bytes, '{"role":"user","content":"x","b":null,"nested":{"d":null}}');
});

test("undefined array elements are written as null", (t) => {
  const bytes = messageBytes(t, { role: "user", content: "x", list: [1, undefined, null] });
  assert.equal(bytes, '{"role":"user","content":"x","list":[1,null,null]}');
});

test("non-ASCII text is written as raw UTF-8", (t) => {
  const { sm, file } = flushed(t);
  sm.appendMessage({ role: "user", content: "héllo ✓ 😀 日本" });
  const raw = fs.readFileSync(file);
  assert.ok(raw.includes(Buffer.from('"héllo ✓ 😀 日本"', "utf8")));
  assert.ok(!readText(file).includes("\\u00e9"));
});

test("quotes, backslashes and control characters are escaped as JSON.stringify does", (t) => {
  const bytes = messageBytes(t, { role: "user", content: 'a"b\\c\u0001d\ne\tf\u001fg\u007fh' });
  assert.equal(bytes, '{"role":"user","content":"a\\"b\\\\c\\u0001d\\ne\\tf\\u001fg\u007fh"}');
});

test("lone surrogates are written as lower-case \\u escapes", (t) => {
  const bytes = messageBytes(t, { role: "user", content: "x\ud800y\udfffz" });
  assert.equal(bytes, '{"role":"user","content":"x\\ud800y\\udfffz"}');
});

test("NaN and Infinity are written as null", (t) => {
  const bytes = messageBytes(t, { role: "user", content: "x", a: NaN, b: Infinity, c: -Infinity, d: [NaN] });
  assert.equal(bytes, '{"role":"user","content":"x","a":null,"b":null,"c":null,"d":[null]}');
});

test("integer-like keys come first in ascending order, other keys keep insertion order", (t) => {
  const bytes = messageBytes(t, { role: "user", content: "x", data: { b: 1, 10: 2, a: 3, 2: 4, 0: 5 } });
  assert.equal(bytes, '{"role":"user","content":"x","data":{"0":5,"2":4,"10":2,"b":1,"a":3}}');
});

test("integer-like key hoisting also applies to the top level of user data", (t) => {
  const bytes = messageBytes(t, { role: "user", content: "x", 7: "seven" });
  assert.equal(bytes, '{"7":"seven","role":"user","content":"x"}');
});

test("non-canonical numeric-looking keys keep insertion order while canonical array indices are hoisted", (t) => {
  const data = {};
  data["01"] = 1;
  data["-1"] = 2;
  data["4294967295"] = 3;
  data["1.5"] = 4;
  data["4294967294"] = 5;
  const bytes = messageBytes(t, { role: "user", content: "x", data });
  assert.equal(bytes, '{"role":"user","content":"x","data":{"4294967294":5,"01":1,"-1":2,"4294967295":3,"1.5":4}}');
});

test("numbers use JavaScript formatting", (t) => {
  const nums = [1.0, 1.5, -0, 0.1 + 0.2, 1e20, 1e21, 1e-6, 1e-7, 2 ** 53 + 2, 5e-324, 1.7976931348623157e308, -2.5e-8, 123456789.125];
  const bytes = messageBytes(t, { role: "user", content: "x", nums });
  assert.equal(
    bytes,
    '{"role":"user","content":"x","nums":[1,1.5,0,0.30000000000000004,100000000000000000000,1e+21,0.000001,1e-7,9007199254740994,5e-324,1.7976931348623157e+308,-2.5e-8,123456789.125]}',
  );
});

// ---------------------------------------------------------------- key order per record type

test("the header is written as type, version, id, timestamp, cwd, parentSession", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  sm.newSession({ parentSession: "/prev/file.jsonl" });
  sm.appendMessage(user("x"));
  const h = sm.getHeader();
  assert.equal(
    fileLines(sm.getSessionFile())[0],
    `{"type":"session","version":3,"id":${q(sm.getSessionId())},"timestamp":${q(h.timestamp)},"cwd":"/proj","parentSession":"/prev/file.jsonl"}`,
  );
});

test("the header omits parentSession when there is none", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  sm.appendMessage(user("x"));
  assert.equal(
    fileLines(sm.getSessionFile())[0],
    `{"type":"session","version":3,"id":${q(sm.getSessionId())},"timestamp":${q(sm.getHeader().timestamp)},"cwd":"/proj"}`,
  );
});

test("a message record is written as type, id, parentId, timestamp, message", (t) => {
  const { sm, file, first } = flushed(t);
  assert.equal(fileLines(file)[1], `${base(sm, first, "message")},"message":{"role":"user","content":"start","timestamp":1}}`);
});

test("a thinking_level_change record is written as type, id, parentId, timestamp, thinkingLevel", (t) => {
  const { sm, file } = flushed(t);
  const id = sm.appendThinkingLevelChange("high");
  assert.equal(lastLine(file), `${base(sm, id, "thinking_level_change")},"thinkingLevel":"high"}`);
});

test("a model_change record is written as type, id, parentId, timestamp, provider, modelId", (t) => {
  const { sm, file } = flushed(t);
  const id = sm.appendModelChange("anthropic", "claude");
  assert.equal(lastLine(file), `${base(sm, id, "model_change")},"provider":"anthropic","modelId":"claude"}`);
});

test("a usage record is written as type, id, parentId, timestamp, kind, provider, model, usage, note", (t) => {
  const { sm, file } = flushed(t);
  const entry = sm.appendUsage("summary", "prov", "mod", { input: 1, output: 2 }, "why");
  assert.equal(
    lastLine(file),
    `${base(sm, entry.id, "usage")},"kind":"summary","provider":"prov","model":"mod","usage":{"input":1,"output":2},"note":"why"}`,
  );
});

test("a usage record omits note when it is falsy", (t) => {
  const { sm, file } = flushed(t);
  const entry = sm.appendUsage("summary", "prov", "mod", { input: 1 }, "");
  assert.equal(lastLine(file), `${base(sm, entry.id, "usage")},"kind":"summary","provider":"prov","model":"mod","usage":{"input":1}}`);
  assert.equal("note" in entry, false);
});

test("a compaction record is written as type, id, parentId, timestamp, summary, firstKeptEntryId, tokensBefore, details, usage, fromHook, systemMessage", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  sm.appendMessage(system("Be brief."));
  const u = sm.appendMessage(user("x"));
  const id = sm.appendCompaction("sum", u, 42, { readFiles: ["a"] }, true, { input: 3 });
  const e = sm.getEntry(id);
  assert.equal(
    lastLine(sm.getSessionFile()),
    `${base(sm, id, "compaction")},"summary":"sum","firstKeptEntryId":${q(u)},"tokensBefore":42,"details":{"readFiles":["a"]},"usage":{"input":3},"fromHook":true,"systemMessage":{"role":"system","content":"Be brief.","timestamp":${Date.parse(e.timestamp)}}}`,
  );
});

test("a compaction record without optional values writes only the defined keys", (t) => {
  const { sm, file, first } = flushed(t);
  const id = sm.appendCompaction("sum", first, 7);
  assert.equal(lastLine(file), `${base(sm, id, "compaction")},"summary":"sum","firstKeptEntryId":${q(first)},"tokensBefore":7}`);
});

test("a branch_summary record is written as type, id, parentId, timestamp, fromId, summary, details, usage, fromHook", (t) => {
  const { sm, file, first } = flushed(t);
  const second = sm.appendMessage(assistant("a"));
  const id = sm.branchWithSummary(first, "bs", { x: 1 }, false, { input: 2 });
  assert.equal(
    lastLine(file),
    `${base(sm, id, "branch_summary")},"fromId":${q(second)},"summary":"bs","details":{"x":1},"usage":{"input":2},"fromHook":false}`,
  );
});

test("a custom record is written as type, customType, data, id, parentId, timestamp", (t) => {
  const { sm, file } = flushed(t);
  const id = sm.appendCustomEntry("ext", { k: "v" });
  const e = sm.getEntry(id);
  assert.equal(
    lastLine(file),
    `{"type":"custom","customType":"ext","data":{"k":"v"},"id":${q(id)},"parentId":${q(e.parentId)},"timestamp":${q(e.timestamp)}}`,
  );
});

test("a custom_message record is written as type, customType, content, display, details, id, parentId, timestamp", (t) => {
  const { sm, file } = flushed(t);
  const id = sm.appendCustomMessageEntry("ext", "text", true, { d: 1 });
  const e = sm.getEntry(id);
  assert.equal(
    lastLine(file),
    `{"type":"custom_message","customType":"ext","content":"text","display":true,"details":{"d":1},"id":${q(id)},"parentId":${q(e.parentId)},"timestamp":${q(e.timestamp)}}`,
  );
});

test("a label record is written as type, id, parentId, timestamp, targetId, label", (t) => {
  const { sm, file, first } = flushed(t);
  const id = sm.appendLabelChange(first, "bookmark");
  assert.equal(lastLine(file), `${base(sm, id, "label")},"targetId":${q(first)},"label":"bookmark"}`);
});

test("a label record clearing a label with undefined omits the label key", (t) => {
  const { sm, file, first } = flushed(t);
  const id = sm.appendLabelChange(first, undefined);
  assert.equal(lastLine(file), `${base(sm, id, "label")},"targetId":${q(first)}}`);
});

test("a session_info record is written as type, id, parentId, timestamp, name", (t) => {
  const { sm, file } = flushed(t);
  const id = sm.appendSessionInfo("My session");
  assert.equal(lastLine(file), `${base(sm, id, "session_info")},"name":"My session"}`);
});

test("a context_edit record is written as type, id, parentId, timestamp, targetId, replacement", (t) => {
  const { sm, file, first } = flushed(t);
  const id = sm.appendContextEdit(first, { content: "edited" });
  assert.equal(lastLine(file), `${base(sm, id, "context_edit")},"targetId":${q(first)},"replacement":{"content":"edited"}}`);
});

test("a context_edit record writes a null replacement as null", (t) => {
  const { sm, file, first } = flushed(t);
  const id = sm.appendContextEdit(first, null);
  assert.equal(lastLine(file), `${base(sm, id, "context_edit")},"targetId":${q(first)},"replacement":null}`);
});

// ---------------------------------------------------------------- records read back and written again

const ODD_ORDER_LINE =
  '{"message":{"content":"hi","role":"user","zeta":1,"alpha":2},"parentId":null,"extra":{"k":true},"timestamp":"2025-01-01T00:00:01.000Z","id":"abcd0001","type":"message"}';

test("forkFrom writes source entries with their parsed key order", (t) => {
  const dir = tempDir(t);
  const src = writeJsonl(path.join(dir, "src.jsonl"), [header({ id: "src" }), ODD_ORDER_LINE]);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  assert.equal(fileLines(sm.getSessionFile())[1], ODD_ORDER_LINE);
});

test("records read from disk and written again hoist integer-like keys of their data", (t) => {
  const dir = tempDir(t);
  const line = '{"type":"custom","customType":"c","data":{"z":1,"10":2,"a":3,"3":4},"id":"abcd0001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z"}';
  const src = writeJsonl(path.join(dir, "src.jsonl"), [header({ id: "src" }), line]);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  assert.equal(
    fileLines(sm.getSessionFile())[1],
    '{"type":"custom","customType":"c","data":{"3":4,"10":2,"z":1,"a":3},"id":"abcd0001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z"}',
  );
});

test("createBranchedSession writes copied entries with their parsed key order", (t) => {
  const dir = tempDir(t);
  const file = writeJsonl(path.join(dir, "s.jsonl"), [header({ id: "s1" }), ODD_ORDER_LINE]);
  const sm = SessionManager.open(file);
  const newFile = sm.createBranchedSession("abcd0001");
  assert.notEqual(newFile, file);
  assert.equal(fileLines(newFile)[1], ODD_ORDER_LINE);
});

test("createBranchedSession writes only the header and the copied path, without malformed lines", (t) => {
  const dir = tempDir(t);
  const second = '{"type":"message","id":"abcd0002","parentId":"abcd0001","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[]}}';
  const file = writeJsonl(path.join(dir, "s.jsonl"), [header({ id: "s1" }), ODD_ORDER_LINE, "{not json", "", second]);
  const sm = SessionManager.open(file);
  const newFile = sm.createBranchedSession("abcd0002");
  const lines = fileLines(newFile);
  assert.equal(lines.length, 3);
  assert.equal(JSON.parse(lines[0]).type, "session");
  assert.equal(lines[1], ODD_ORDER_LINE);
  assert.equal(lines[2], second);
});

test("keys added by the v1 migration are appended at the end of each record, version last on the header", (t) => {
  const dir = tempDir(t);
  const file = writeJsonl(path.join(dir, "v1.jsonl"), [
    '{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
    '{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}',
  ]);
  const sm = SessionManager.open(file);
  const [e] = sm.getEntries();
  const lines = fileLines(file);
  assert.equal(lines.length, 2);
  assert.equal(lines[0], '{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","version":3}');
  assert.equal(
    lines[1],
    `{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"},"id":${q(e.id)},"parentId":null}`,
  );
});
