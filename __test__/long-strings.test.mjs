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
import { loadOurs, loadReference } from "./helpers/target.mjs";

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
      const before = process.env.PI_SESSION_LAZY_BYTES;
      if (lazy) process.env.PI_SESSION_LAZY_BYTES = "0";
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
        if (before === undefined) delete process.env.PI_SESSION_LAZY_BYTES;
        else process.env.PI_SESSION_LAZY_BYTES = before;
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
}
