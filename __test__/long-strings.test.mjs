// Long string values (images, tool output) reach JS cut out of the JSON text and put back by
// path (lib/session-manager.js parseLines). These lines put long strings where putting back could
// go wrong — repeated or escaped member names, `__proto__`, escapes, lone surrogates, raw UTF-8,
// invalid UTF-8, deep nesting, whitespace, non-object lines — and the entries must equal the
// reference's, member order included, whether lines are held in memory or read from the file.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadOurs, loadReference, setTuning } from "./helpers/target.mjs";

const ours = loadOurs();
const ref = await loadReference();

const LONG = 16 << 10; // the core's MIN_CUT_BYTES
const big = (c, n = LONG + 7) => c.repeat(n);
const HEADER = '{"type":"session","version":3,"id":"long","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}';
let n = 0;
const ts = () => `2024-01-01T00:00:${String(++n % 60).padStart(2, "0")}.000Z`;
const entry = (id, parent, body) => `{"type":"message","id":"${id}","parentId":${parent ? `"${parent}"` : "null"},"timestamp":"${ts()}",${body}}`;
const user = (content) => `"message":{"role":"user","content":${content},"timestamp":1}`;

function lines() {
  const out = [];
  let parent = null;
  const add = (body, raw) => {
    const id = `e${String(out.length).padStart(7, "0")}`;
    out.push(raw ?? entry(id, parent, body));
    if (!raw) parent = id;
  };
  add(user(`[{"type":"text","text":"${big("a")}"}]`));
  add(user(`[{"type":"text","text":"${big("b", LONG)}\\n\\"q\\\\ \\u00e9 \\ud83d\\ude00 lone \\ud800 end"}]`));
  add(user(`[{"type":"text","text":"${big("é", LONG / 2 + 3)} 😀"}]`));
  add(user(`[{"type":"image","data":"${big("A")}","data":"short wins"}]`));
  add(user(`[{"type":"image","data":"short","data":"${big("B")}"}]`));
  add(user(`[{"type":"image","d\\u0061ta":"${big("C")}","mimeType":"image/png"}]`));
  add(user(`[{"type":"text","text":"x","__proto__":"${big("D")}"}]`));
  add(user(`[{"type":"text","text":"y","__proto__":{"inner":"${big("E")}"}}]`));
  add(user(`[{"type":"text","text":"z","0":"${big("F")}","1":["${big("G")}"]}]`));
  add(user(`[{"type":"text","text":"deep","d":${"[".repeat(40)}"${big("H")}"${"]".repeat(40)}}]`));
  add(null, `  { "type" : "message" , "id" : "ws" , "parentId" : "e0000009" , "timestamp" : "${ts()}" , "message" : { "role" : "user" , "content" : [ { "type" : "text" , "text" : "${big("I")}" } ] } }  `);
  add(user(`[${Array.from({ length: 80 }, (_, i) => `{"type":"text","text":"${big(String.fromCharCode(97 + (i % 26)))}"}`).join(",")}]`));
  add(null, `"${big("J")}"`);
  add(null, `["${big("K")}",{"k":"${big("L")}"}]`);
  add(user(`[{"type":"toolResult","text":"${big("M")}","details":{"stdout":"${big("N")}","code":0}}]`));
  return out;
}

function writeSession(dir, tag, withBadUtf8) {
  const file = path.join(dir, `2024-01-01T00-00-00-000Z_${tag}.jsonl`);
  const body = Buffer.from([HEADER, ...lines()].join("\n") + "\n");
  if (!withBadUtf8) {
    fs.writeFileSync(file, body);
    return file;
  }
  // One more entry whose long text holds an invalid UTF-8 byte.
  const bad = Buffer.from(`${entry("bad", "e0000014", user(`[{"type":"text","text":"${big("O")}"}]`))}\n`);
  bad[bad.indexOf("OOOO") + 2] = 0xff;
  fs.writeFileSync(file, Buffer.concat([body, bad]));
  return file;
}

const views = (sm) => ({
  entries: sm.getEntries(),
  branch: sm.getBranch(),
  context: sm.buildSessionContext(),
  tree: sm.getTree(),
  one: sm.getEntry("e0000007"),
});

for (const lazy of [false, true]) {
  for (const badUtf8 of [false, true]) {
    test(`long strings equal the reference's (${lazy ? "lines read from the file" : "lines in memory"}${badUtf8 ? ", invalid UTF-8" : ""})`, () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-long-"));
      if (lazy) setTuning({ lazyFileBytes: 0 });
      try {
        const file = writeSession(dir, "0000", badUtf8);
        const a = views(ours.SessionManager.open(file, dir));
        const b = views(ref.SessionManager.open(file, dir));
        for (const k of Object.keys(a)) {
          assert.equal(JSON.stringify(a[k]), JSON.stringify(b[k]), `${k}: same JSON, member order included`);
          assert.deepStrictEqual(a[k], b[k], k);
        }
        assert.ok(a.entries.length >= 15);
        // Own `__proto__` members stay own data properties (the prototype is untouched).
        const proto = a.entries.find((e) => e.id === "e0000006").message.content[0];
        assert.equal(Object.getPrototypeOf(proto), Object.prototype);
        assert.equal(Object.getOwnPropertyDescriptor(proto, "__proto__").value.length, LONG + 7);
        // The one object per entry still holds: asking again gives the same objects.
        const sm = ours.SessionManager.open(file, dir);
        const one = sm.getEntry("e0000011");
        assert.equal(sm.getEntries().find((e) => e.id === "e0000011"), one);
        assert.equal(one.message.content.length, 80);
      } finally {
        setTuning();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
}

// Seeded fuzz: random documents around long strings — escapes spelled every way JSON allows,
// whitespace, repeated and escaped names, `__proto__`, deep and wide nesting — must read back
// exactly as JSON.parse reads each line.
import { Rng } from "./parity/prng.mjs";

function fuzzLine(rng, id, parent) {
  const pick = (a) => a[rng.int(a.length)];
  const ws = () => (rng.int(6) === 0 ? pick([" ", "\t", "  "]) : ""); // no line breaks in a JSONL line
  const PIECES = ["abc", "XYZ", " ", "é", "ü", "中", "😀", "\n", '"', "\\", "/", "\u0001", "\ud800", "\udc00", "\u2028"];
  const str = (len) => {
    let s = "";
    while (s.length < len) s += pick(PIECES);
    return s;
  };
  // Escapes in every spelling JSON allows: canonical, \uXXXX in either case, \/.
  const quote = (s) => {
    let out = '"';
    const esc = (u) => {
      const hex = u.toString(16).padStart(4, "0");
      return "\\u" + (rng.int(2) ? hex : hex.toUpperCase());
    };
    for (const ch of s) {
      const u = ch.charCodeAt(0);
      if (ch.length === 2) out += rng.int(4) === 0 ? esc(u) + esc(ch.charCodeAt(1)) : ch; // a pair: both halves alike
      else if (u >= 0xd800 && u <= 0xdfff) out += esc(u); // a lone half has no UTF-8 spelling
      else if (ch === "/" && rng.int(2)) out += "\\/";
      else if (rng.int(3) === 0 && (u < 0x20 || u === 0x22 || u === 0x5c || rng.int(20) === 0)) out += esc(u);
      else out += JSON.stringify(ch).slice(1, -1);
    }
    return out + '"';
  };
  const NAMES = ["a", "b", "text", "data", "0", "1", "__proto__", "constructor", "content", "é"];
  const name = () => {
    const n = pick(NAMES);
    return rng.int(8) === 0 ? `"${[...n].map((c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")).join("")}"` : JSON.stringify(n);
  };
  const value = (depth) => {
    const r = rng.int(10);
    if (depth > 40 || r < 3) return quote(rng.int(3) === 0 ? str(16 * 1024 + rng.int(4096)) : str(rng.int(8)));
    if (r < 5) return pick(["0", "-1.5e3", "true", "false", "null", "12345678901234567890"]);
    if (r < 7 || depth > 3) {
      const n = depth > 3 ? 1 : rng.int(4);
      return `[${ws()}${Array.from({ length: n }, () => value(depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
    }
    const n = rng.int(5);
    return `{${ws()}${Array.from({ length: n }, () => `${name()}${ws()}:${ws()}${value(depth + 1)}`).join(`${ws()},${ws()}`)}${ws()}}`;
  };
  const dupData = rng.int(5) === 0 ? `,"data":${value(1)}` : "";
  return `{"type":"custom","customType":"fuzz","id":"${id}","parentId":${parent ? `"${parent}"` : "null"},"timestamp":"2024-01-01T00:00:00.000Z","data":${ws()}${value(0)}${ws()}${dupData}}`;
}

for (const lazy of [false, true]) {
  test(`fuzzed lines around long strings read back as JSON.parse reads them (${lazy ? "from the file" : "in memory"})`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-long-fuzz-"));
    if (lazy) setTuning({ lazyFileBytes: 0 });
    try {
      const rng = new Rng(lazy ? 7 : 11);
      const lines = [];
      for (let i = 0; i < 60; i++) lines.push(fuzzLine(rng, `f${String(i).padStart(7, "0")}`, i ? `f${String(i - 1).padStart(7, "0")}` : null));
      const file = path.join(dir, "2024-01-01T00-00-00-000Z_fuzz.jsonl");
      fs.writeFileSync(file, [HEADER, ...lines].join("\n") + "\n");
      const entries = ours.SessionManager.open(file, dir).getEntries();
      assert.equal(entries.length, lines.length);
      // What the file holds, line by line, read as JSON.parse reads it.
      const stored = fs.readFileSync(file, "utf8").split("\n").slice(1, -1);
      assert.deepEqual(stored, lines, "every line is stored as written");
      let long = 0;
      for (let i = 0; i < lines.length; i++) {
        const expected = JSON.parse(stored[i]);
        assert.equal(JSON.stringify(entries[i]), JSON.stringify(expected), `line ${i}`);
        assert.deepStrictEqual(entries[i], expected, `line ${i}`);
        if (lines[i].length > LONG) long++;
      }
      assert.ok(long >= 20, `most lines hold long strings (${long})`);
    } finally {
      setTuning();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
