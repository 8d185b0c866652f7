// Entries built from columns (lib/columns.js, the core's materialize::columns): each skeleton as
// a signature and slots into the batch's values, built by one generated function per signature.
// What a signature cannot say as it is (odd member names, `__proto__`, repeated names, deep or
// big objects, arrays, numbers JSON spells oddly, strings with escapes) must still come out as
// `JSON.parse` of the line makes it: held to the reference's objects, for a session in memory and
// one whose lines stay in the file (where skeletons read from the file are checked first), and
// without code generation, where the skeletons' JSON is parsed as before.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { execFileSync } from "node:child_process";

import { chain, header, msgEntry, entry, tempDir, writeJsonl } from "./helpers/fixtures.mjs";
import { loadOurs, loadReference, ROOT, tuneFor } from "./helpers/target.mjs";

const { SessionManager } = loadOurs();
const Reference = (await loadReference()).SessionManager;
const columns = (await import("../lib/columns.js")).default;

const big = (n) => "x".repeat(n);
const usage = { input: 10, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 12, cost: { input: 0.00003, output: 0.000015, cacheRead: 0, cacheWrite: 0, total: 0.000045 } };

/** Lines of a session whose skeletons hold what a signature cannot say as it is. Raw text, so
 * that numbers and names are spelled as a hand (or another writer) may spell them. */
function oddLines() {
  const records = chain([
    msgEntry("a1", undefined, { role: "user", content: big(400), timestamp: 1 }),
    msgEntry("a2", undefined, { role: "assistant", content: [{ type: "text", text: big(300) }], provider: "p", model: "m", usage, stopReason: "stop", timestamp: 2 }),
  ]);
  const lines = [JSON.stringify(header({ cwd: "/proj" })), ...records.map((r) => JSON.stringify(r))];
  const odd = [
    // `__proto__`, array indexes and a repeated name in a nested object; the holder's lazy member.
    `{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-02T03:04:05.600Z","message":{"role":"assistant","content":[{"type":"text","text":"${big(300)}"}],"usage":{"__proto__":{"polluted":1},"2":"two","1":"one","input":1,"input":2},"stopReason":"stop","timestamp":3}}`,
    // Numbers as JSON may spell them (in an array, and as members of a built object), and
    // strings with escapes and characters above U+00FF.
    `{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-01-02T03:04:05.600Z","message":{"role":"user","content":"${big(300)}","n":[-0,1e400,-1E-400,1.50,9007199254740993,0.1e1],"neg":-0,"huge":1e400,"spelled":{"a":1.50,"b":9007199254740993,"c":-1E-400,"d":0.1e1,"e":-0.0,"f":123456789012,"g":-7},"s":"tab\\t\\"q\\" \\ud83d\\ude00 \\ud800 \\u00e9 é 日本","timestamp":4}}`,
    // Member names that are not printable ASCII, empty, or escaped; deep nesting.
    `{"type":"custom","customType":"ext","id":"a5","parentId":"a4","timestamp":"2026-01-02T03:04:05.600Z","data":{"é":1,"":2,"a\\u0062":3,"tab\\t":4,"d":{"e":{"f":{"g":{"h":{"i":{"j":{"k":[1,{"l":true}]}}}}}}},"big":"${big(400)}"}}`,
    // Many members, and whitespace between tokens.
    `{ "type" : "custom" , "customType":"wide", "id":"a6","parentId":"a5","timestamp":"2026-01-02T03:04:05.600Z","data":{${Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`).join(",")}} }`,
    // A message whose holder keeps everything (a repeated name).
    `{"type":"message","id":"a7","parentId":"a6","timestamp":"2026-01-02T03:04:05.600Z","message":{"role":"user","content":"${big(300)}","content":"second","timestamp":5}}`,
    // A message entry with members of its own next to its message.
    `{"type":"message","id":"a8","parentId":"a7","timestamp":"2026-01-02T03:04:05.600Z","extra":{${Array.from({ length: 30 }, (_, i) => `"k${i}":"${big(2500)}"`).join(",")}},"message":{"role":"user","content":"hi","timestamp":6}}`,
    `{"type":"message","id":"a9","parentId":"a8","timestamp":"2026-01-02T03:04:05.600Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"${big(5000)}"}],"details":{"exit":0,"out":"${big(600)}"},"isError":false,"timestamp":6}}`,
  ];
  return [...lines, ...odd];
}

/** What a manager's entries look like by every reading that tells objects apart. */
function seen(sm) {
  const branch = sm.getBranch();
  return {
    json: JSON.stringify(branch),
    entries: JSON.stringify(sm.getEntries()),
    keys: branch.map((e) => [Object.keys(e), e.message && typeof e.message === "object" ? Object.keys(e.message) : null, Object.getPrototypeOf(e) === Object.prototype]),
    protos: branch.map((e) => (e.message?.usage ? [Object.getPrototypeOf(e.message.usage) === Object.prototype, Object.keys(e.message.usage)] : null)),
    numbers: branch.filter((e) => e.message?.n).map((e) => [
      [...e.message.n, ...Object.values(e.message.spelled)].map((x) => (Object.is(x, -0) ? "-0" : String(x))),
      Object.is(e.message.neg, -0),
      e.message.huge,
    ]),
    context: JSON.stringify(sm.buildSessionContext()),
  };
}

function check(t, lazyFileBytes) {
  tuneFor(t, lazyFileBytes === undefined ? {} : { lazyFileBytes });
  const file = writeJsonl(path.join(tempDir(t), "s.jsonl"), oddLines());
  const ours = SessionManager.open(file);
  const ref = Reference.open(file);
  assert.deepEqual(seen(ours), seen(ref));
  assert.deepStrictEqual(ours.getBranch(), ref.getBranch());
  assert.deepStrictEqual(ours.getEntries(), ref.getEntries());
}

test("entries whose skeletons a signature cannot say as they are come out as the reference's, in memory", (t) => {
  check(t, undefined);
});

test("... and with the lines left in the file (skeletons read from it are checked before they are built)", (t) => {
  check(t, 0);
});

/** A session whose second line's skeleton is too big to be kept in memory (read from the file
 * when asked for: a message entry's own members are never lazy, only its message's), and a text
 * to put in the middle of that line: same length, ends unchanged (what the open's check of a
 * line looks at), `{…},{…}` there, which a JSON array would take as two values. */
function changedLines() {
  const extra = Array.from({ length: 30 }, (_, i) => `"k${i}":"${big(2500)}"`).join(",");
  const line = `{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:05.600Z","extra":{${extra}},"message":{"role":"user","content":"hi","timestamp":6}}`;
  const next = `{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-01-02T03:04:05.700Z","message":{"role":"assistant","content":"yo","timestamp":7}}`;
  return { lines: [JSON.stringify(header({ cwd: "/proj" })), line, next], twoValues: '"k15":""}},{"y":{"z":"' };
}

test("a line changed in the file after the open fails its batch with SESSION_FILE_CHANGED, also where its new text would parse as two values", (t) => {
  tuneFor(t, { lazyFileBytes: 0 });
  const { lines, twoValues } = changedLines();
  for (const [find, put] of [
    ['"k15":', '"k15"!'],
    [`"k15":"${big(twoValues.length - 7)}`, twoValues],
  ]) {
    const file = writeJsonl(path.join(tempDir(t), "s.jsonl"), lines);
    const sm = SessionManager.open(file);
    const text = fs.readFileSync(file, "utf8");
    const at = text.indexOf(find);
    assert.equal(put.length, find.length);
    fs.writeFileSync(file, text.slice(0, at) + put + text.slice(at + find.length));
    assert.throws(() => sm.getBranch(), { code: "SESSION_FILE_CHANGED" }, put);
  }
});

test("... and so does the skeletons' JSON, where code cannot be generated", (t) => {
  const script = `
    const fs = require("node:fs");
    require(${JSON.stringify(path.join(ROOT, "native.js"))}).setTuning({ lazyFileBytes: 0 });
    const { SessionManager } = require(${JSON.stringify(ROOT)});
    const [file, find, put] = JSON.parse(process.argv[1]);
    const sm = SessionManager.open(file);
    const text = fs.readFileSync(file, "utf8");
    const at = text.indexOf(find);
    fs.writeFileSync(file, text.slice(0, at) + put + text.slice(at + find.length));
    try { sm.getBranch(); process.stdout.write("no error"); } catch (e) { process.stdout.write(String(e.code)); }
  `;
  const { lines, twoValues } = changedLines();
  const file = writeJsonl(path.join(tempDir(t), "s.jsonl"), lines);
  const out = execFileSync(process.execPath, ["--disallow-code-generation-from-strings", "-e", script, JSON.stringify([file, `"k15":"${big(twoValues.length - 7)}`, twoValues])], { encoding: "utf8" });
  assert.equal(out, "SESSION_FILE_CHANGED");
});

test("the loop over a signature builds what its generated function builds", () => {
  const sigs = [
    '[6,{"type":0,"id":1,"message":{"role":2,"content":-1,"usage":{"input":3,"__proto__":4,"1":5}},"ok":true,"no":null}]',
    "[1,0]",
    '[2,{"a":{"b":{"c":0}},"d":-1,"e":1}]',
  ];
  const values = ["message", "x1", "assistant", 7, { p: 1 }, "one", [1, { q: 2 }], "v"];
  const refs = Uint32Array.from([0, 1, 2, 3, 4, 5]);
  for (const [sig, r] of [
    [sigs[0], refs],
    [sigs[1], Uint32Array.of(6)],
    [sigs[2], Uint32Array.of(0, 7)],
  ]) {
    const [slots, tree] = JSON.parse(sig);
    const generated = columns.generated(tree, slots)(values, r, 0);
    const looped = columns.interpreted(tree)(values, r, 0);
    assert.equal(JSON.stringify(looped), JSON.stringify(generated));
    assert.deepStrictEqual(Object.getOwnPropertyNames(looped), Object.getOwnPropertyNames(generated));
    if (!Array.isArray(generated)) assert.equal(Object.getPrototypeOf(generated), Object.prototype);
    if (typeof generated.message === "object") {
      assert.equal(Object.getPrototypeOf(generated.message.usage), Object.prototype);
      assert.deepEqual(Object.keys(generated.message.usage), ["1", "input", "__proto__"]);
      assert.deepEqual(Object.getOwnPropertyDescriptor(looped.message, "content").get, Object.getOwnPropertyDescriptor(generated.message, "content").get);
    }
  }
});

test("without code generation the skeletons' JSON is parsed as before, to the same entries", (t) => {
  const file = writeJsonl(path.join(tempDir(t), "s.jsonl"), oddLines());
  const script = `
    const { SessionManager } = require(${JSON.stringify(ROOT)});
    const columns = require(${JSON.stringify(path.join(ROOT, "lib", "columns.js"))});
    const sm = SessionManager.open(${JSON.stringify(file)});
    const b = sm.getBranch();
    process.stdout.write(JSON.stringify({ codegen: columns.CODEGEN, branch: b, inspect: require("node:util").inspect(b[1].message, { depth: 0 }).includes("content: [Array]") }));
  `;
  const run = (flags) => JSON.parse(execFileSync(process.execPath, [...flags, "-e", script], { encoding: "utf8" }));
  const plain = run([]);
  const refused = run(["--disallow-code-generation-from-strings"]);
  assert.equal(plain.codegen, true);
  assert.equal(refused.codegen, false);
  assert.deepEqual(refused.branch, plain.branch);
  assert.deepEqual(plain.branch, JSON.parse(JSON.stringify(Reference.open(file).getBranch())));
  assert.equal(refused.inspect, true);
  assert.equal(plain.inspect, true);
});

test("a generated builder gives every number as parsed, in slots that held strings and numbers of every kind", () => {
  const [slots, tree] = JSON.parse('[4,{"type":0,"message":{"role":1,"content":-1,"timestamp":2,"usage":{"cost":{"total":3}}}}]');
  const make = columns.generated(tree, slots);
  const kinds = [0, -0, 7, -7, 2 ** 31, 2 ** 53 + 2, 1759309459768, 0.069933, -1e-300, 1e308, Infinity, -Infinity, "1.5", "", 3];
  for (let i = 0; i < 200; i++) {
    const time = kinds[i % kinds.length];
    const total = kinds[(i * 7) % kinds.length];
    const e = make(["message", "assistant", time, total], Uint32Array.of(0, 1, 2, 3), 0);
    assert.ok(Object.is(e.message.timestamp, time), `timestamp ${String(time)}`);
    assert.ok(Object.is(e.message.usage.cost.total, total), `total ${String(total)}`);
    assert.deepEqual(Object.keys(e.message), ["role", "content", "timestamp", "usage"]);
  }
});

test("a signature's function is generated after the batch in which it built enough entries, and builds the same", () => {
  // (Signatures of their own, so that no other test's batches have counted for them.)
  const often = '[2,{"type":0,"id":1,"often":true}]';
  const rare = '[2,{"type":0,"id":1,"rare":true}]';
  const values = ["custom", "a", "b", "c"];
  const refs = (n, sig) => Uint32Array.from(Array.from({ length: n }, (_, i) => [sig, 0, 1 + (i % 3)]).flat());
  const first = columns.buildBatch(values, refs(20, 0), [often]);
  assert.equal(first.items.length, 20);
  assert.deepEqual(first.items[4], { type: "custom", id: "b", often: true });
  assert.equal(columns.builderOf(often).ready, true, "20 entries in one batch: generated after it");
  assert.equal(columns.builderOf(often).make.name, "build");
  const second = columns.buildBatch(values, refs(5, 0), [often]);
  assert.deepEqual(second.items, first.items.slice(0, 5), "the generated function builds what the loop built");
  columns.buildBatch(values, refs(3, 0), [rare]);
  assert.equal(columns.builderOf(rare).ready, false, "3 entries: still the loop");
  assert.equal(columns.builderOf(rare).make.name, "interpretedBuild");
});
