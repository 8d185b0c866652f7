// docs/behaviour.md, "Object identity and fidelity": object identity, undefined-valued keys, JSON fidelity,
// file-name ordering, default-dir side effects and pathological inputs.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget } from "./helpers/target.mjs";
import {
  T0,
  iso,
  tempDir,
  useAgentDir,
  defaultSessionDirFor,
  header,
  entry,
  msgEntry,
  user,
  assistant,
  system,
  writeJsonl,
  writeSession,
  flushedSession,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;

const mem = () => SessionManager.inMemory("/tmp/fid");

/** A persisted, already flushed session; returns the manager and a reader of its last line. */
const flushed = (t) => flushedSession(t, SessionManager, { cwd: "/tmp/fid" });

function openFixture(t, records) {
  const dir = tempDir(t);
  const file = writeJsonl(path.join(dir, "s.jsonl"), records);
  return SessionManager.open(file);
}

// ---------------------------------------------------------------------------
// Identity / aliasing
// ---------------------------------------------------------------------------
describe("identity of returned objects", () => {
  test("getEntry of the leaf id is the same object as getLeafEntry", () => {
    const sm = mem();
    const id = sm.appendMessage(user("a"));
    assert.equal(sm.getEntry(id), sm.getLeafEntry());
  });

  test("getEntry returns the same object on repeated calls", () => {
    const sm = mem();
    const id = sm.appendMessage(user("a"));
    assert.equal(sm.getEntry(id), sm.getEntry(id));
  });

  test("getEntries, getBranch, getTree and getChildren hand out the same entry objects as getEntry", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    const ea = sm.getEntry(a);
    const eb = sm.getEntry(b);
    assert.equal(sm.getEntries()[0], ea);
    assert.equal(sm.getEntries()[1], eb);
    assert.equal(sm.getBranch()[0], ea);
    assert.equal(sm.getBranch()[1], eb);
    assert.equal(sm.getTree()[0].entry, ea);
    assert.equal(sm.getTree()[0].children[0].entry, eb);
    assert.equal(sm.getChildren(a)[0], eb);
  });

  test("entries loaded from a file keep one identity across all accessors", (t) => {
    const sm = openFixture(t, [header(), msgEntry("a", null, user("a")), msgEntry("b", "a", assistant("b"))]);
    const eb = sm.getEntry("b");
    assert.equal(sm.getLeafEntry(), eb);
    assert.equal(sm.getEntries()[1], eb);
    assert.equal(sm.getBranch()[1], eb);
    assert.equal(sm.getTree()[0].children[0].entry, eb);
  });

  test("an appended entry holds the caller's message object, whichever accessor asks first", (t) => {
    const firsts = {
      getEntry: (sm, id) => sm.getEntry(id),
      getLeafEntry: (sm) => sm.getLeafEntry(),
      getBranch: (sm) => sm.getBranch().at(-1),
      getEntries: (sm) => sm.getEntries().at(-1),
      getChildren: (sm) => sm.getChildren("b").at(-1),
      getTree: (sm) => sm.getTree()[0].children[0].children.at(-1).entry,
    };
    for (const [name, first] of Object.entries(firsts)) {
      const sm = openFixture(t, [header(), msgEntry("a", null, user("a")), msgEntry("b", "a", assistant("b"))]);
      const m = user(`after ${name}`);
      const id = sm.appendMessage(m);
      const e = first(sm, id);
      assert.equal(e.id, id, name);
      assert.equal(e.message, m, name);
      assert.equal(sm.getEntry(id), e, name);
      assert.equal(sm.getLeafEntry(), e, name);
      assert.equal(sm.getEntry("b").id, "b", name);
    }
  });

  test("getHeader returns the same header object on repeated calls", (t) => {
    const sm = openFixture(t, [header({ id: "hdr" })]);
    assert.equal(sm.getHeader(), sm.getHeader());
    assert.equal(sm.getHeader().id, "hdr");
  });

  test("buildContextEntries and the projection's sourceEntry are the stored entry objects", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const mc = sm.appendModelChange("p", "m");
    assert.equal(sm.buildContextEntries()[0], sm.getEntry(a));
    assert.equal(sm.buildContextEntries()[1], sm.getEntry(mc));
    assert.equal(sm.buildSessionProjection().entries[1].sourceEntry, sm.getEntry(mc));
  });

  test("messages in the session context are the stored message objects", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const b = sm.appendMessage(assistant("b"));
    const ctx = sm.buildSessionContext();
    assert.equal(ctx.messages[0], sm.getEntry(a).message);
    assert.equal(ctx.messages[1], sm.getEntry(b).message);
  });

  test("messages in the context of a loaded file are the stored message objects", (t) => {
    const sm = openFixture(t, [header(), msgEntry("a", null, user("a")), msgEntry("b", "a", system("s"))]);
    const msgs = sm.buildSessionContext().messages;
    assert.equal(msgs[0], sm.getEntry("a").message);
    assert.equal(msgs[1], sm.getEntry("b").message);
  });

  test("a compaction's checkpoint system message in the context is the stored systemMessage object", () => {
    const sm = mem();
    sm.appendMessage(system("prompt"));
    const c = sm.appendCompaction("s", null, 1);
    const msgs = sm.buildSessionContext().messages;
    assert.equal(msgs[0], sm.getEntry(c).systemMessage);
  });

  test("projection messages of unedited entries are the stored message objects", () => {
    const sm = mem();
    const a = sm.appendMessage(user("a"));
    const p = sm.buildSessionProjection();
    assert.equal(p.entries[0].messages[0], sm.getEntry(a).message);
    assert.equal(p.messages[0], sm.getEntry(a).message);
  });

  test("mutating a message after appending it does not change what was written to the file", (t) => {
    const { sm, lastLine } = flushed(t);
    const m = user("original");
    sm.appendMessage(m);
    const written = lastLine();
    m.content = "mutated";
    assert.equal(lastLine(), written);
    assert.equal(JSON.parse(written).message.content, "original");
  });
});

// ---------------------------------------------------------------------------
// undefined-valued keys
// ---------------------------------------------------------------------------
describe("undefined-valued keys", () => {
  test("tree nodes of a loaded file carry label and labelTimestamp keys holding undefined", (t) => {
    const sm = openFixture(t, [header(), msgEntry("a", null, user("a"))]);
    const [node] = sm.getTree();
    assert.ok(Object.hasOwn(node, "label"));
    assert.ok(Object.hasOwn(node, "labelTimestamp"));
    assert.equal(node.label, undefined);
  });

  test("SessionInfo from list carries name and parentSessionPath keys holding undefined", async (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ cwd: "/p" }));
    const [info] = await SessionManager.list("/p", dir);
    assert.ok(Object.hasOwn(info, "name"));
    assert.ok(Object.hasOwn(info, "parentSessionPath"));
  });

  test("a custom message built by the manager's context carries a details key holding undefined", () => {
    const sm = mem();
    sm.appendCustomMessageEntry("ext", "hello", true);
    const [m] = sm.buildSessionContext().messages;
    assert.ok(Object.hasOwn(m, "details"));
    assert.equal(m.details, undefined);
  });
});

// ---------------------------------------------------------------------------
// JSON fidelity
// ---------------------------------------------------------------------------
describe("JSON fidelity of written lines", () => {
  test("integer-like keys are written first in ascending numeric order", (t) => {
    const { sm, lastLine } = flushed(t);
    sm.appendCustomEntry("t", { b: 1, 10: "ten", a: 2, 2: "two", "-1": "neg", "01": "lead" });
    assert.match(lastLine(), /"data":\{"2":"two","10":"ten","b":1,"a":2,"-1":"neg","01":"lead"\}/);
  });

  test("integer-like keys of data read back from disk are hoisted when rewritten", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "s.jsonl");
    fs.writeFileSync(
      file,
      [
        JSON.stringify(header()),
        JSON.stringify(msgEntry("a", null, user("u"))),
        '{"type":"custom","customType":"t","data":{"z":1,"7":2},"id":"c","parentId":"a","timestamp":"2026-01-02T03:04:05.600Z"}',
      ].join("\n") + "\n",
    );
    const sm = SessionManager.open(file);
    const newPath = sm.createBranchedSession("c");
    assert.match(fs.readFileSync(newPath, "utf8"), /"data":\{"7":2,"z":1\}/);
  });

  test("numbers are written with JS formatting", (t) => {
    const { sm, lastLine } = flushed(t);
    sm.appendCustomEntry("t", { i: 1.0, big: 1e21, below: 1e20, small: 1e-7, tiny: 0.000001, f: 0.1, neg0: -0 });
    assert.match(lastLine(), /"data":\{"i":1,"big":1e\+21,"below":100000000000000000000,"small":1e-7,"tiny":0\.000001,"f":0\.1,"neg0":0\}/);
  });

  test("NaN and Infinity are written as null", (t) => {
    const { sm, lastLine } = flushed(t);
    sm.appendCustomEntry("t", { a: NaN, b: Infinity, c: -Infinity });
    assert.match(lastLine(), /"data":\{"a":null,"b":null,"c":null\}/);
  });

  test("undefined values are omitted and null values are written", (t) => {
    const { sm, lastLine } = flushed(t);
    sm.appendCustomEntry("t", { u: undefined, n: null, arr: [undefined, null] });
    assert.match(lastLine(), /"data":\{"n":null,"arr":\[null,null\]\}/);
  });

  test("non-ASCII text is written as raw UTF-8", (t) => {
    const { sm } = flushed(t);
    sm.appendMessage(user("äöü € 😀 日本"));
    const bytes = fs.readFileSync(sm.getSessionFile());
    assert.ok(bytes.includes(Buffer.from("äöü € 😀 日本", "utf8")));
    assert.ok(!bytes.toString("latin1").includes("\\u00e4"));
  });

  test("quotes, backslashes, control characters and lone surrogates are escaped", (t) => {
    const { sm, lastLine } = flushed(t);
    sm.appendCustomEntry("t", { s: 'q"b\\n\n\u0001\ud800' });
    assert.ok(lastLine().includes('"s":"q\\"b\\\\n\\n\\u0001\\ud800"'));
  });

  test("every written line ends with a newline, including the last", (t) => {
    const { sm } = flushed(t);
    sm.appendModelChange("p", "m");
    const text = fs.readFileSync(sm.getSessionFile(), "utf8");
    assert.ok(text.endsWith("\n"));
    assert.equal(text.split("\n").length, 4);
  });
});

// ---------------------------------------------------------------------------
// File-name ordering
// ---------------------------------------------------------------------------
describe("file-name ordering", () => {
  test("sessions with equal modified times are listed in descending generated-name order", async (t) => {
    const dir = tempDir(t);
    const names = [
      "2026-01-02T03-04-05-600Z_0190a000-0000-7000-8000-000000000001.jsonl",
      "2026-01-02T03-04-05-600Z_0190b000-0000-7000-8000-000000000002.jsonl",
      "2026-01-02T03-04-05-599Z_0190c000-0000-7000-8000-000000000003.jsonl",
      "2025-12-31T23-59-59-999Z_0190d000-0000-7000-8000-000000000004.jsonl",
    ];
    names.forEach((n, i) => writeSession(dir, n, header({ id: `s${i}`, cwd: "/p", timestamp: iso(T0) })));
    const list = await SessionManager.list("/p", dir);
    assert.deepEqual(list.map((s) => path.basename(s.path)), [...names].sort().reverse());
  });
});

// ---------------------------------------------------------------------------
// Default directory side effects
// ---------------------------------------------------------------------------
describe("default-dir side effects", () => {
  test("list without a dir creates the default directory", async (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    await SessionManager.list(cwd);
    assert.ok(fs.statSync(defaultSessionDirFor(agent, cwd)).isDirectory());
  });

  test("findById without a dir creates the default directory", (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    SessionManager.findById(cwd, "x");
    assert.ok(fs.statSync(defaultSessionDirFor(agent, cwd)).isDirectory());
  });

  test("continueRecent without a dir creates the default directory", (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    SessionManager.continueRecent(cwd);
    assert.ok(fs.statSync(defaultSessionDirFor(agent, cwd)).isDirectory());
  });

  test("create without a dir creates the default directory but no session file", (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    const sm = SessionManager.create(cwd);
    const def = defaultSessionDirFor(agent, cwd);
    assert.ok(fs.statSync(def).isDirectory());
    assert.deepEqual(fs.readdirSync(def), []);
    assert.equal(path.dirname(sm.getSessionFile()), def);
  });
});

// ---------------------------------------------------------------------------
// Pathological inputs
// ---------------------------------------------------------------------------
describe("pathological inputs", () => {
  test("truthy non-object JSON lines in a loaded file are kept as entries", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "s.jsonl");
    fs.writeFileSync(file, [JSON.stringify(header()), JSON.stringify(msgEntry("a", null, user("a"))), "5", '"s"', "[1]"].join("\n") + "\n");
    const sm = SessionManager.open(file);
    assert.deepEqual(sm.getEntries().slice(1), [5, "s", [1]]);
  });

  test("id-less entries collapse onto one undefined key in the index", () => {
    const first = { type: "custom", customType: "x", data: 1, parentId: null, timestamp: iso(T0) };
    const second = { type: "custom", customType: "x", data: 2, parentId: null, timestamp: iso(T0) };
    const sm = SessionManager.inMemory("/tmp/fid", undefined, [header(), msgEntry("a", null, user("a")), first, second]);
    assert.equal(sm.getEntries().length, 3);
    assert.equal(sm.getEntryCount(), 2);
    assert.equal(sm.getEntry(undefined), second);
  });

  test("falsy JSON lines in a loaded file are not kept as entries", (t) => {
    const sm = openFixture(t, [header(), "null", "0", "false", '""', msgEntry("a", null, user("a"))]);
    assert.deepEqual(sm.getEntries().map((e) => e.id), ["a"]);
  });

  test("a custom_message with an invalid timestamp yields a NaN message timestamp in the manager's context", () => {
    const sm = SessionManager.inMemory("/tmp/fid", undefined, [
      header(),
      entry("custom_message", "c", null, { customType: "x", content: "t", display: true }, "bogus"),
    ]);
    assert.ok(Number.isNaN(sm.buildSessionContext().messages[0].timestamp));
  });
});
