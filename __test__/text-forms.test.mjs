// Entries reach JS as one JSON text per batch of lines, handed over without being decoded from
// UTF-8 (crates/pi-session-core/src/json/decode.rs `json_text_units`): ASCII and Latin-1 text one
// byte per character, with the few characters above U+00FF written as \u escapes, other text as
// UTF-16; strings with characters above U+00FF cut out of the text and given back as slices of
// one string per batch (crates/pi-session-core/src/materialize); and long plain strings of lines
// read from a big session's file point into the buffer the line was read into. Whatever the
// form, the entries must be the reference's: values, member order, unknown entry types, invalid
// UTF-8, and one object per entry.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";

import { loadOurs, loadReference, tuneFor } from "./helpers/target.mjs";
import { tempDir } from "./helpers/fixtures.mjs";

const { SessionManager } = loadOurs();
const ref = await loadReference();

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");

const HEADER = '{"type":"session","version":3,"id":"forms","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}';
const LONG = 16 << 10; // the core's MIN_CUT_BYTES

/** Lines chained by parentId; `body(i)` is each one's members after the id fields. */
function chain(count, body, type = () => "message") {
  const out = [];
  for (let i = 0; i < count; i++) {
    const id = `t${String(i).padStart(7, "0")}`;
    const parent = i === 0 ? "null" : `"t${String(i - 1).padStart(7, "0")}"`;
    out.push(`{"type":"${type(i)}","id":"${id}","parentId":${parent},"timestamp":"2024-01-01T00:00:00.000Z",${body(i)}}`);
  }
  return out;
}

const userText = (text) => `"message":{"role":"user","content":[{"type":"text","text":${JSON.stringify(text)}}],"timestamp":1}`;

function writeLines(t, tag, lines, extra = null) {
  const dir = tempDir(t, "pi-forms-");
  const file = path.join(dir, `2024-01-01T00-00-00-000Z_${tag}.jsonl`);
  const body = Buffer.from(`${[HEADER, ...lines].join("\n")}\n`);
  fs.writeFileSync(file, extra ? Buffer.concat([body, extra]) : body);
  return { dir, file };
}

/** Ours and the reference read `file` to the same entries, in the same member order, with one
 * object per entry whichever accessor asks. */
function sameAsReference(file, dir) {
  const ours = SessionManager.open(file, dir);
  const theirs = ref.SessionManager.open(file, dir);
  const a = ours.getEntries();
  const b = theirs.getEntries();
  assert.equal(a.length, b.length);
  for (let i = 0; i < a.length; i++) {
    assert.equal(JSON.stringify(a[i]), JSON.stringify(b[i]), `entry ${i}: same JSON, member order included`);
    assert.deepStrictEqual(a[i], b[i], `entry ${i}`);
    if (typeof a[i].id === "string") assert.equal(ours.getEntry(a[i].id), a[i], `entry ${i}: one object`);
  }
  assert.deepStrictEqual(ours.buildSessionContext(), theirs.buildSessionContext());
  return a;
}

const words = ["plain", "café", "naïve", "中文", "😀", "Ω", "\u2028", "ü", "end"];

test("a batch with a little non-ASCII (escaped to stay one byte per unit) reads as the reference's", (t) => {
  // About 1 non-ASCII byte in 20: the escaped form. BMP, Latin-1, astral, line separator, and
  // non-ASCII member names, in messages and in an entry type the reference does not know.
  const lines = chain(
    300,
    (i) =>
      i % 7 === 3
        ? `"data":{"naïve key":"${words[i % words.length]}","emoji 😀":[${JSON.stringify(words.join(" "))}],"n":${i}}`
        : userText(`${"ascii text ".repeat(4)}${words[i % words.length]} #${i}`),
    (i) => (i % 7 === 3 ? "unknown_kind" : "message"),
  );
  const { file, dir } = writeLines(t, "few", lines);
  const bytes = fs.readFileSync(file);
  const high = bytes.filter((b) => b >= 0x80).length;
  assert.ok(high > 0 && high * 8 <= bytes.length, `a little non-ASCII (${high} of ${bytes.length} bytes)`);
  const entries = sameAsReference(file, dir);
  assert.equal(entries[3].type, "unknown_kind");
  assert.equal(entries[3].data["emoji 😀"][0], words.join(" "));
});

test("a batch that is mostly non-ASCII (UTF-16) reads as the reference's", (t) => {
  const lines = chain(200, (i) => userText(`中文的会话记录，第${i}条。😀 ${"汉字".repeat(20)}`));
  const { file, dir } = writeLines(t, "many", lines);
  const bytes = fs.readFileSync(file);
  assert.ok(bytes.filter((b) => b >= 0x80).length * 8 > bytes.length, "mostly non-ASCII");
  const entries = sameAsReference(file, dir);
  assert.match(entries[199].message.content[0].text, /第199条。😀/);
});

test("escaped lone surrogates, escapes spelled as \\u, and invalid UTF-8 read as the reference's", (t) => {
  const lines = chain(40, (i) =>
    i === 5
      ? `"message":{"role":"user","content":[{"type":"text","text":"lone \\ud800 and \\udc00, pair \\ud83d\\ude00, \\u00e9 é \\u4E2D"}],"timestamp":1}`
      : userText(`line ${i} ${words[i % words.length]}`),
  );
  // One more entry whose text holds a byte that is not UTF-8: it reads as U+FFFD, as the
  // reference's decoding of the file reads it.
  const bad = Buffer.from(`{"type":"message","id":"bad","parentId":"t0000039","timestamp":"2024-01-01T00:00:00.000Z",${userText("before X after é")}}\n`);
  bad[bad.indexOf("X")] = 0xff;
  const { file, dir } = writeLines(t, "escapes", lines, bad);
  const entries = sameAsReference(file, dir);
  assert.equal(entries[5].message.content[0].text, "lone \ud800 and \udc00, pair \ud83d\ude00, é é 中");
  assert.equal(entries.at(-1).message.content[0].text, "before \ufffd after é");
});

test("the same forms hold for entries asked for one at a time, before any batch", (t) => {
  const lines = chain(30, (i) => userText(i % 2 ? `中文 ${"汉字".repeat(30)}` : `ascii ${i} café`));
  const { file, dir } = writeLines(t, "single", lines);
  const ours = SessionManager.open(file, dir);
  const theirs = ref.SessionManager.open(file, dir);
  for (let i = 29; i >= 0; i--) {
    const id = `t${String(i).padStart(7, "0")}`;
    assert.equal(JSON.stringify(ours.getEntry(id)), JSON.stringify(theirs.getEntry(id)), id);
  }
  const all = ours.getEntries();
  assert.equal(all[7], ours.getEntry("t0000007"));
});

test("long strings read from a big session's file stay whole after the entries around them are collected", (t) => {
  // Every file counts as big: lines are read from the file, and each line's long plain strings
  // (image data) point into the buffer that line was read into.
  tuneFor(t, { lazyFileBytes: 0 });
  const image = (c) => c.repeat(LONG + 11);
  const lines = chain(
    12,
    (i) =>
      `"message":{"role":"user","content":[{"type":"image","data":"${image(String.fromCharCode(65 + i))}","mimeType":"image/png"},{"type":"text","text":"caption ${i} é"},{"type":"image","data":"${image(String.fromCharCode(97 + i))}","mimeType":"image/png"}],"timestamp":1}`,
  );
  const { file, dir } = writeLines(t, "shared", lines);
  const expected = JSON.parse(JSON.stringify(ref.SessionManager.open(file, dir).getEntries()));
  let sm = SessionManager.open(file, dir);
  // Keep only the second image of each entry; the entries, their first images and the manager go.
  const kept = sm.getEntries().map((e) => e.message.content[2].data);
  sm = null;
  for (let i = 0; i < 3; i++) gc();
  for (let i = 0; i < kept.length; i++) {
    assert.equal(kept[i].length, LONG + 11);
    assert.equal(kept[i], expected[i].message.content[2].data, `entry ${i}`);
  }
  // A fresh manager reads the same values again.
  const again = SessionManager.open(file, dir).getEntries();
  assert.equal(JSON.stringify(again), JSON.stringify(expected));
});

const WIDE = 64; // the core's MIN_WIDE_CUT_BYTES

/** A string of exactly `bytes` bytes of UTF-8 ending in `tail` (which should be wide text). */
function sized(bytes, tail) {
  return "x".repeat(bytes - Buffer.byteLength(tail)) + tail;
}

for (const lazy of [false, true]) {
  test(`strings with characters above U+00FF, cut out and put back as slices, read as the reference's (${lazy ? "lines read from the file" : "lines in memory"})`, (t) => {
    if (lazy) tuneFor(t, { lazyFileBytes: 0 });
    const prose = (i) => `Step ${i} — moved the cursor → line ${i}; 日本語 naïve café 😀 ${"prose ".repeat(i % 40)}done`;
    const lines = chain(
      4000,
      (i) => {
        switch (i % 6) {
          case 0:
            return userText(prose(i));
          case 1:
            // An assistant turn: text, thinking and a tool call whose arguments hold wide text.
            return `"message":{"role":"assistant","content":[{"type":"thinking","thinking":${JSON.stringify(`Thinking about ${i} → ${"更多 ".repeat(i % 30)}`)}},{"type":"toolCall","id":"c${i}","name":"edit","arguments":{"path":"/w/ü.txt","newText":${JSON.stringify(prose(i))},"list":[${JSON.stringify(prose(i + 1))},1,null]}}],"provider":"p","model":"m","usage":{"input":1,"output":2},"timestamp":1}`;
          case 2:
            // At the cut's threshold: one byte short of it, and exactly it (as written).
            return userText(i % 12 === 2 ? sized(WIDE - 1, "→日") : sized(WIDE, "→日"));
          case 3:
            // Names that are not ASCII, or repeat, keep their object's strings in the text.
            return `"data":{"naïve key":${JSON.stringify(prose(i))},"dup":{"x":${JSON.stringify(prose(i))},"x":${JSON.stringify(prose(i + 2))}},"ok":${JSON.stringify(prose(i))}}`;
          case 4:
            // Escapes among wide characters: a lone surrogate, a pair, a line separator, \u spellings.
            return `"message":{"role":"user","content":[{"type":"text","text":"lone \\ud800 then 日本 and \\ud83d\\ude00 \\u2028 \\u65e5 ${"wide → ".repeat(12)}\\n end"}],"timestamp":1}`;
          default:
            return `"customType":"ext","data":{"notes":[${JSON.stringify(prose(i))},${JSON.stringify("短")}],"deep":{"a":{"b":{"c":[[${JSON.stringify(prose(i))}]]}}}}`;
        }
      },
      (i) => (i % 6 === 3 ? "unknown_kind" : i % 6 === 5 ? "custom" : "message"),
    );
    const { file, dir } = writeLines(t, `wide-${lazy}`, lines);
    assert.ok(fs.statSync(file).size > 1 << 20, "more than one batch");
    const entries = sameAsReference(file, dir);
    assert.equal(Buffer.byteLength(entries[2].message.content[0].text), WIDE - 1);
    assert.equal(Buffer.byteLength(entries[8].message.content[0].text), WIDE);
    assert.equal(entries[3].data.dup.x, prose(5), "the last of a repeated name");
    assert.equal(entries[4].message.content[0].text.slice(0, 21), "lone \ud800 then 日本 and \ud83d\ude00");
    // Strings kept from entries whose manager is gone stay whole.
    let sm = SessionManager.open(file, dir);
    const kept = sm.getEntries().filter((e) => e.type === "message" && e.message.role === "user").map((e) => e.message.content[0].text);
    const expected = kept.slice().map((x) => x.split("").join(""));
    sm = null;
    for (let i = 0; i < 3; i++) gc();
    assert.deepStrictEqual(kept, expected);
  });

  test(`entries of many batches, prepared on several threads, are the reference's (${lazy ? "lines read from the file" : "lines in memory"})`, (t) => {
    if (lazy) tuneFor(t, { lazyFileBytes: 0 });
    // ~6 MB: several batches of ~1 MB, prepared by helper threads while earlier ones are parsed.
    const image = (i) => String.fromCharCode(65 + (i % 26)).repeat(LONG + (i % 97));
    const lines = chain(
      900,
      (i) =>
        i % 3 === 0
          ? `"message":{"role":"user","content":[{"type":"image","data":"${image(i)}","mimeType":"image/png"},{"type":"text","text":${JSON.stringify(`caption ${i} ${words[i % words.length]}`)}}],"timestamp":1}`
          : i % 3 === 1
            ? userText(`${"tool output line\n".repeat(1100)}${words[i % words.length]} ${i}`)
            : userText(`short ${i} ${words[i % words.length]}`),
      (i) => (i % 50 === 7 ? "mystery_type" : "message"),
    );
    const { file, dir } = writeLines(t, `batches-${lazy}`, lines);
    assert.ok(fs.statSync(file).size > 5 << 20, "several batches");
    const ours = SessionManager.open(file, dir);
    const theirs = ref.SessionManager.open(file, dir);
    // The branch first (one request for every entry), then each entry by id: the same objects.
    const a = ours.getBranch();
    const b = theirs.getBranch();
    assert.equal(a.length, b.length);
    for (let i = 0; i < a.length; i++) {
      assert.equal(JSON.stringify(a[i]), JSON.stringify(b[i]), `entry ${i}`);
      assert.equal(ours.getEntry(a[i].id), a[i]);
    }
    assert.deepStrictEqual(ours.getEntries(), theirs.getEntries());
    assert.equal(ours.getEntries()[450], a[450]);
  });
}
