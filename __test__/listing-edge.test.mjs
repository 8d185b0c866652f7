// Listing summaries read raw JSON text without building values: these lines exercise the
// shortcuts (escaped key spellings, duplicate members, whitespace, odd content shapes) and the
// result must equal the reference's SessionInfo for each file.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./helpers/fixtures.mjs";
import { olderReferenceListing, READLINE_SPLITS_AT_SEPARATORS, referenceListing } from "./helpers/older-reference.mjs";
import { loadOurs, loadReference } from "./helpers/target.mjs";

const ours = loadOurs();
const ref = await loadReference();

const HEADER = '{"type":"session","version":3,"id":"edge","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}';
const msg = (m, extra = "") => `{"type":"message","id":"x","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z"${extra},"message":${m}}`;

const CASES = {
  plain: [msg('{"role":"user","content":"hello","timestamp":1704067201000}')],
  escapedKeys: [
    '{"t\\u0079pe":"message","id":"x","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","m\\u0065ssage":{"r\\u006fle":"user","c\\u006fntent":"esc keys"}}',
  ],
  escapedValues: [msg('{"role":"\\u0075ser","content":[{"type":"t\\u0065xt","text":"esc \\u00e9 \\ud83d\\ude00 \\ud800"}]}')],
  whitespace: [
    '  { "type" : "message" , "id":"x", "message" : { "role" : "assistant" , "content" : [ { "type" : "text" , "text" : "spaced" } , { "type":"image","data":"AAAA" } ] , "timestamp" : 5 } }  ',
  ],
  duplicateMessage: [
    '{"type":"message","id":"x","message":{"role":"user","content":"first"},"message":{"role":"assistant","content":"second"}}',
    '{"type":"message","id":"y","message":{"role":"user","content":"kept"},"message":7}',
    '{"type":"message","id":"z","message":{"role":"user","content":"a","role":"system"}}',
  ],
  duplicateType: ['{"type":"session_info","type":"message","message":{"role":"user","content":"dup type"}}'],
  contentShapes: [
    msg('{"role":"user","content":[{"type":"text","text":["a",null,1,[2,[3]],{"o":1},true]},{"type":"text"},{"type":"text","text":null}]}'),
    msg('{"role":"assistant","content":[1,"s",[{"type":"text","text":"nested"}],{"type":"text","text":"  trailing  "}]}'),
    msg('{"role":"user","content":[]}'),
    msg('{"role":"user","content":""}'),
    msg('{"role":"toolResult","content":[{"type":"text","text":"tool"}]}'),
    msg('{"role":"user"}'),
    msg('{"content":"no role"}'),
    msg('"a string message"'),
    msg("[1,2]"),
  ],
  throwsOnNullBlock: [msg('{"role":"user","content":"before"}'), msg('{"role":"user","content":[null]}')],
  throwsOnNullMessage: [msg('{"role":"user","content":"before"}'), msg("null")],
  throwsOnNumberContent: [msg('{"role":"user","content":42}')],
  timestamps: [
    msg('{"role":"user","content":"num ts","timestamp":1704067300000}'),
    msg('{"role":"user","content":"string ts","timestamp":"1704067400000"}', ',"x":1'),
    '{"type":"message","id":"q","timestamp":"March 7, 2024","message":{"role":"user","content":"date text"}}',
    '{"type":"message","id":"r","timestamp":1704067500000.7,"message":{"role":"assistant","content":"entry number"}}',
  ],
  names: [
    '{"type":"session_info","name":"  My\\tName\\n "}',
    '{"type":"session_info","name":"second"}',
    '{"type":"session_info","name":null}',
    '{"type":"session_info","name":"\\u0020final\\u000b"}',
  ],
  malformedBetween: [msg('{"role":"user","content":"ok"}'), '{"type":"message","message":{"role":"user","content":"bad\u0001"}}', "not json", "", msg('{"role":"user","content":"after"}')],
  // Texts of 1 KiB or more reach JS as external strings (Latin-1 or UTF-16).
  longTexts: [
    msg(`{"role":"user","content":"${"é".repeat(1023)}x"}`),
    msg(`{"role":"assistant","content":[{"type":"text","text":"${"ab\\n".repeat(700)} \\ud83d\\ude00 \\ud800 ${"z".repeat(600)}"}]}`),
    msg(`{"role":"user","content":"${"q".repeat(1023)}"}`),
  ],
  crlf: [msg('{"role":"user","content":"one"}') + "\r\n" + msg('{"role":"user","content":"two"}') + "\r" + msg('{"role":"user","content":"three"}')],
  // U+2028/U+2029 as raw characters end no record (the reference on Node 20/22 agrees; its own
  // readline cuts lines at them from Node 24 on: see the last test), and as \u escapes they are
  // JSON escapes like any other.
  lineSeparators: [
    msg('{"role":"user","content":"raw \u2028 line \u2029 para","timestamp":1704067201000}'),
    msg('{"role":"assistant","content":[{"type":"text","text":"escaped \\u2028 \\u2029"}],"timestamp":1704067202000}'),
    msg('{"role":"user","content":[{"type":"text","text":"\u2029 at the start, at the end \u2028"}],"timestamp":1704067203000}'),
  ],
};

test("listing summaries equal the reference's on edge-case lines", async (t) => {
  const dir = tempDir(t, "pi-list-edge-");
  for (const [name, lines] of Object.entries(CASES)) {
    fs.writeFileSync(path.join(dir, `${name}.jsonl`), [HEADER, ...lines].join("\n") + "\n");
  }
  const shape = (infos) =>
    infos
      .map((i) => ({ ...i, created: String(i.created.getTime()), modified: String(i.modified.getTime()) }))
      .sort((a, b) => a.path.localeCompare(b.path));
  const prev = process.env.PI_SESSION_LIST_CACHE;
  process.env.PI_SESSION_LIST_CACHE = "0";
  try {
    const expected = shape(await referenceListing(ref, "listAll", [dir]));
    const actual = shape(await ours.SessionManager.listAll(dir));
    assert.ok(expected.length >= 10, "most cases are sessions");
    assert.deepEqual(
      actual.map((i) => path.basename(i.path)),
      expected.map((i) => path.basename(i.path)),
    );
    for (let k = 0; k < expected.length; k++) assert.deepEqual(actual[k], expected[k], path.basename(expected[k].path));
  } finally {
    if (prev === undefined) delete process.env.PI_SESSION_LIST_CACHE;
    else process.env.PI_SESSION_LIST_CACHE = prev;
  }
});

test("long texts are the same from the files and from the listing cache", async (t) => {
  const agent = tempDir(t, "pi-list-long-");
  const dir = path.join(agent, "sessions", "x");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "long.jsonl"), [HEADER, ...CASES.longTexts].join("\n") + "\n");
  const prev = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = agent;
  try {
    const [expected] = await referenceListing(ref, "listAll", [dir]);
    const cold = await ours.SessionManager.listAll(dir);
    assert.ok(fs.existsSync(path.join(agent, ".pi-session-native", "list-cache")), "the cache was written");
    const warm = await ours.SessionManager.listAll(dir);
    for (const [label, got] of [["cold", cold], ["warm", warm]]) {
      assert.equal(got.length, 1, label);
      assert.equal(got[0].allMessagesText, expected.allMessagesText, label);
      assert.equal(got[0].firstMessage, expected.firstMessage, label);
    }
    assert.ok(expected.allMessagesText.length > 4000);
    assert.ok(expected.allMessagesText.includes("\ud83d\ude00 \ud800 "));
  } finally {
    if (prev === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = prev;
  }
});

test("a message holding raw U+2028/U+2029 is listed whole, as the reference lists it on Node 20 and 22; the reference on Node >= 24 cuts it", async (t) => {
  const dir = tempDir(t, "pi-list-seps-");
  fs.writeFileSync(path.join(dir, "seps.jsonl"), [HEADER, ...CASES.lineSeparators].join("\n") + "\n");
  const shape = ([info]) => ({ ...info, created: info.created.getTime(), modified: info.modified.getTime() });
  // The escaped ones are the same characters once the JSON is read.
  const texts = ["raw \u2028 line \u2029 para", "escaped \u2028 \u2029", "\u2029 at the start, at the end \u2028"];
  const actual = shape(await ours.SessionManager.listAll(dir));
  assert.equal(actual.messageCount, 3);
  assert.equal(actual.firstMessage, texts[0]);
  assert.equal(actual.allMessagesText, texts.join(" "));
  assert.equal(actual.modified, 1704067203000);

  const here = shape(await ref.SessionManager.listAll(dir));
  if (READLINE_SPLITS_AT_SEPARATORS) {
    assert.deepEqual(actual, shape(await olderReferenceListing("listAll", [dir])), "the reference under Node 22");
    // This runtime's readline ends lines at the raw characters: both raw messages become pieces
    // that do not parse, and only the escaped one is left.
    assert.equal(here.messageCount, 1, `the reference on ${process.version}`);
    assert.equal(here.allMessagesText, texts[1]);
    assert.equal(here.firstMessage, "(no messages)", "no user message is left");
  } else {
    assert.deepEqual(actual, here, `the reference on Node ${process.version}`);
  }
});
