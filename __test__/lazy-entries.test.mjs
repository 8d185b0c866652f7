// Entries read from a file hold their big members (a message's content, a tool result's details,
// a summary, a custom entry's data) as accessors that read the value on first use (lib/lazy.js).
// These tests hold such entries to the reference's objects by every ordinary observation, both
// for a session held in memory and for one whose lines stay in the file, and pin what laziness
// promises: reading what callers test (a tool result's role) reads no content.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import util from "node:util";

import { tempDir } from "./helpers/fixtures.mjs";
import { loadOurs, loadReference, setTuning } from "./helpers/target.mjs";

const { SessionManager } = loadOurs();
const Reference = (await loadReference()).SessionManager;

const long = (seed, n) => `${seed} `.repeat(Math.ceil(n / (seed.length + 1))).slice(0, n);

/** A session of every entry kind with big members, written by the reference. Returns its file. */
function richSession(t) {
  const dir = tempDir(t, "pi-lazy-");
  const sm = Reference.create("/proj", dir);
  sm.appendModelChange("anthropic", "claude");
  const u = sm.appendMessage({ role: "user", content: long("question \u00e9\u4e2d \u{1F600}", 900), timestamp: 1 });
  sm.appendMessage({
    role: "assistant",
    content: [
      { type: "thinking", thinking: long("think", 600), thinkingSignature: "sig" },
      { type: "text", text: long("answer \u2014 \u2192", 700) },
      { type: "toolCall", id: "call_1", name: "bash", arguments: { command: long("ls -la", 300) } },
    ],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude",
    usage: { input: 10, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 30, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "toolUse",
    timestamp: 2,
  });
  sm.appendMessage({
    role: "toolResult",
    toolCallId: "call_1",
    toolName: "bash",
    content: [{ type: "text", text: long("output line\n\ttab \"quoted\" \\", 40_000) }],
    details: { truncation: { truncated: true, lines: [long("detail", 500)] } },
    isError: false,
    timestamp: 3,
  });
  sm.appendMessage({ role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: "QUJD".repeat(30_000), mimeType: "image/png" }], timestamp: 4 });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "short" }], provider: "anthropic", model: "claude", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: 5 });
  sm.appendCustomEntry("ext.state", { items: Array.from({ length: 40 }, (_, i) => ({ i, text: long("item", 30) })) });
  sm.appendCustomMessageEntry("ext.note", long("note body", 800), true, { extra: long("x", 400) });
  sm.appendCompaction(long("## Goal\nsummary", 3000), u, 12345, { readFiles: [long("src/file.rs", 300)], modifiedFiles: [] }, false);
  sm.appendSessionInfo("A name");
  sm.appendLabelChange(u, "start");
  sm.branchWithSummary(u, long("the abandoned branch", 2000), { notes: long("n", 500) }, false);
  sm.appendMessage({ role: "user", content: "the last prompt", timestamp: 6 });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: long("the last reply", 2000) }], provider: "anthropic", model: "claude", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: 7 });
  return sm.getSessionFile();
}

/** The entries and branch of `file` as the reference reads them. */
function referenceOf(file) {
  const sm = Reference.open(file, path.dirname(file));
  return { entries: sm.getEntries(), branch: sm.getBranch(), header: sm.getHeader() };
}

/** Every (holder, key) of `entries` that is still a lazy accessor. */
function lazyMembers(entries) {
  const out = [];
  for (const e of entries) {
    for (const h of [e, e.message]) {
      if (h === null || typeof h !== "object") continue;
      for (const [k, d] of Object.entries(Object.getOwnPropertyDescriptors(h))) if (d.get) out.push([h, k]);
    }
  }
  return out;
}

for (const where of ["in memory", "left in the file"]) {
  /** Our manager of a fresh rich session, and the reference's reading of it. */
  const open = (t, file = richSession(t)) => {
    if (where !== "in memory") {
      setTuning({ lazyFileBytes: 0 });
      t.after(() => setTuning());
    }
    return { sm: SessionManager.open(file, path.dirname(file)), ref: referenceOf(file), file };
  };

  test(`${where}: entries hold their big members lazily, and reading what callers test reads none of them`, (t) => {
    const { sm } = open(t);
    const entries = sm.getEntries();
    const lazy = lazyMembers(entries);
    const keys = new Set(lazy.map(([, k]) => k));
    for (const k of ["content", "details", "summary", "data"]) assert.ok(keys.has(k), `${k} is lazy somewhere`);
    // The footer's walk and the agent's checks: type, role, usage, provider, model, customType.
    let tokens = 0;
    for (const e of entries) {
      if (e.type === "message" && e.message.role === "assistant") tokens += e.message.usage?.totalTokens ?? 0;
      void e.customType, e.id, e.parentId, e.timestamp;
      if (e.type === "message") void e.message.provider, e.message.model, e.message.stopReason, e.message.toolName;
    }
    assert.equal(tokens, 30);
    const toolResult = entries.find((e) => e.type === "message" && e.message.role === "toolResult");
    assert.equal(toolResult.message.role, "toolResult");
    assert.equal(typeof Object.getOwnPropertyDescriptor(toolResult.message, "content").get, "function", "the tool output is not read");
    assert.equal(lazyMembers(entries).length, lazy.length, "nothing was read");
  });

  test(`${where}: JSON.stringify, keys, for-in, spread, entries, structuredClone and deepStrictEqual see the reference's objects`, (t) => {
    const { sm, ref } = open(t);
    const ours = sm.getEntries();
    assert.equal(ours.length, ref.entries.length);
    for (let i = 0; i < ours.length; i++) {
      const [a, b] = [ours[i], ref.entries[i]];
      // Key order, before any value is read.
      assert.deepEqual(Object.keys(a), Object.keys(b));
      if (a.message) {
        assert.deepEqual(Object.keys(a.message), Object.keys(b.message));
        const forIn = [];
        for (const k in a.message) forIn.push(k);
        assert.deepEqual(forIn, Object.keys(b.message));
      }
    }
    // Each observation on its own entries, so that each one reads the values itself.
    const observe = [
      (a, b) => assert.equal(JSON.stringify(a), JSON.stringify(b)),
      (a, b) => assert.deepStrictEqual({ ...a, message: a.message && { ...a.message } }, { ...b, message: b.message && { ...b.message } }),
      (a, b) => assert.deepStrictEqual(Object.entries(a.message ?? a), Object.entries(b.message ?? b)),
      (a, b) => assert.deepStrictEqual(structuredClone(a), structuredClone(b)),
      (a, b) => assert.deepStrictEqual(a, b),
    ];
    for (const see of observe) {
      const fresh = SessionManager.open(sm.getSessionFile(), sm.getSessionDir()).getEntries();
      for (let i = 0; i < fresh.length; i++) see(fresh[i], ref.entries[i]);
    }
    assert.equal(JSON.stringify(ours), JSON.stringify(ref.entries), "the whole list, byte for byte");
  });

  test(`${where}: an entry nested thousands of levels deep is as JSON.stringify-able as the reference's`, (t) => {
    // From Node 26, V8 serializes plain objects without recursion, so any depth works for the
    // reference; an object with an accessor takes the recursive path and overflows a few
    // thousand levels down. Such an entry is handed out whole (on older Node both overflow).
    const file = richSession(t);
    const last = Reference.open(file, path.dirname(file)).getLeafId();
    const nest = (n, inner) => `${"[".repeat(n)}${inner}${"]".repeat(n)}`;
    const ts = '"timestamp":"2025-01-01T00:00:00.000Z"';
    fs.appendFileSync(
      file,
      `{"type":"custom","customType":"deep","data":${nest(20_000, JSON.stringify(long("deep", 400)))},"id":"deep0001","parentId":"${last}",${ts}}\n` +
        `{"type":"message","id":"deep0002","parentId":"deep0001",${ts},"message":{"role":"user","content":${nest(8_000, '"x"')},"timestamp":9}}\n` +
        `{"type":"custom","customType":"shallow","data":${nest(200, JSON.stringify(long("near", 400)))},"id":"deep0003","parentId":"deep0002",${ts}}\n`,
    );
    const { sm } = open(t, file);
    const entries = sm.getEntries();
    const theirs = referenceOf(file).entries;
    const text = (e) => {
      try {
        return JSON.stringify(e);
      } catch (err) {
        return `${err.name}`;
      }
    };
    const [deep, deeper, shallow] = entries.slice(-3);
    assert.equal(lazyMembers([deep, deeper]).length, 0, "the deep entries are whole");
    assert.deepEqual(lazyMembers([shallow]).map(([, k]) => k), ["data"], "one nested 200 levels is lazy as any other");
    assert.deepEqual(entries.slice(-3).map(text), theirs.slice(-3).map(text));
  });

  test(`${where}: util.inspect shows the values, not accessors, and the holder is plain afterwards`, (t) => {
    const { sm, ref } = open(t);
    const ours = sm.getBranch();
    for (let i = 0; i < ours.length; i++) {
      assert.equal(util.inspect(ours[i], { depth: 6 }), util.inspect(ref.branch[i], { depth: 6 }));
      assert.equal(util.inspect(ours[i], { showHidden: true, depth: 6 }), util.inspect(ref.branch[i], { showHidden: true, depth: 6 }));
    }
    assert.deepEqual(lazyMembers(ours), []);
  });

  test(`${where}: the same object on every call, and assignment and delete stick`, (t) => {
    const { sm, ref } = open(t);
    const entries = sm.getEntries();
    const i = entries.findIndex((e) => e.type === "message" && e.message.role === "toolResult");
    const e = entries[i];
    assert.equal(sm.getEntry(e.id), e);
    assert.equal(sm.getEntries()[i], e);
    assert.equal(sm.getChildren(e.parentId)[0], e);
    e.message.content = [{ type: "text", text: "replaced" }];
    assert.deepEqual(sm.getEntry(e.id).message.content, [{ type: "text", text: "replaced" }]);
    delete e.message.details;
    assert.equal("details" in e.message, false);
    assert.deepEqual(Object.keys(e.message), Object.keys(ref.entries[i].message).filter((k) => k !== "details"));
    const custom = entries.find((x) => x.type === "custom");
    custom.data = 5;
    assert.equal(sm.getEntry(custom.id).data, 5);
    assert.equal(Object.getOwnPropertyDescriptor(custom, "data").value, 5);
  });

  test(`${where}: a frozen holder and an object inheriting from one still read their values`, (t) => {
    const { sm, ref } = open(t);
    const entries = sm.getEntries();
    const idx = entries.map((e, i) => (e.type === "message" ? i : -1)).filter((i) => i >= 0);
    Object.freeze(entries[idx[0]].message);
    assert.deepStrictEqual(entries[idx[0]].message.content, ref.entries[idx[0]].message.content);
    assert.deepStrictEqual(entries[idx[0]].message.content, ref.entries[idx[0]].message.content);
    const child = Object.create(entries[idx[1]].message);
    assert.deepStrictEqual(child.content, ref.entries[idx[1]].message.content);
    child.content = "mine";
    assert.equal(child.content, "mine");
    assert.deepStrictEqual(entries[idx[1]].message.content, ref.entries[idx[1]].message.content);
  });

  test(`${where}: frozen, sealed and pinned holders refuse, take and show values as the reference's objects do`, (t) => {
    const { sm, ref } = open(t);
    const entries = sm.getEntries();
    const idx = entries.map((e, i) => (e.type === "message" ? i : -1)).filter((i) => i >= 0);
    // Frozen, nothing read yet: an assignment fails as on the reference's (this module is strict),
    // with the engine's words, also through an object inheriting from it, and the value stays.
    const frozen = [entries[idx[0]].message, ref.entries[idx[0]].message].map((m) => Object.freeze(m));
    const failure = (/** @type {() => void} */ assign) => {
      try {
        assign();
      } catch (e) {
        return [/** @type {any} */ (e).constructor, /** @type {any} */ (e).message];
      }
      return "no error";
    };
    assert.deepEqual(failure(() => (frozen[0].content = "changed")), failure(() => (frozen[1].content = "changed")));
    assert.deepEqual(failure(() => (Object.create(frozen[0]).content = "changed")), failure(() => (Object.create(frozen[1]).content = "changed")));
    assert.equal(failure(() => (frozen[1].content = "changed"))[0], TypeError);
    assert.deepStrictEqual(frozen[0].content, frozen[1].content);
    // util.inspect of a frozen holder, of a sealed one and of one whose member was made
    // non-configurable (none read yet): the values, as the reference's.
    assert.equal(util.inspect(Object.freeze(entries[idx[1]]), { depth: 6 }), util.inspect(Object.freeze(ref.entries[idx[1]]), { depth: 6 }));
    assert.equal(util.inspect(Object.seal(entries[idx[2]].message), { depth: 6 }), util.inspect(Object.seal(ref.entries[idx[2]].message), { depth: 6 }));
    for (const m of [entries[idx[3]].message, ref.entries[idx[3]].message]) Object.defineProperty(m, "content", { configurable: false });
    assert.equal(util.inspect(entries[idx[3]], { depth: 6 }), util.inspect(ref.entries[idx[3]], { depth: 6 }));
    // Frozen or sealed once every value was read (util.inspect's method of ours is still there,
    // hidden): inspected, it shows the object as it is, and throws nothing.
    const last = entries.length - 1; // the last reply: its message holds the lazy content
    const compaction = entries.findIndex((e) => e.type === "compaction"); // itself holds the summary
    for (const [i, holderOf, close] of [
      [last, (/** @type {any} */ e) => e.message, Object.freeze],
      [compaction, (/** @type {any} */ e) => e, Object.seal],
    ]) {
      const [a, b] = [entries[i], ref.entries[i]];
      assert.ok(lazyMembers([a]).length > 0, `entry ${i} has lazy members`);
      assert.equal(JSON.stringify(a), JSON.stringify(b));
      close(holderOf(a));
      close(holderOf(b));
      assert.equal(util.inspect(a, { depth: 6 }), util.inspect(b, { depth: 6 }));
    }
    // A sealed holder's members stay writable.
    const sealed = entries[idx[2]].message;
    sealed.content = "mine";
    assert.equal(sealed.content, "mine");
    assert.equal(JSON.stringify(sealed), JSON.stringify({ ...ref.entries[idx[2]].message, content: "mine" }));
  });

  test(`${where}: the context sees a content deleted, set to null or replaced before it was read, as the reference's does`, (t) => {
    const { sm, file } = open(t);
    const refSm = Reference.open(file, path.dirname(file));
    const messagesOf = (m) => m.getEntries().filter((e) => e.type === "message").map((e) => e.message);
    const ours = messagesOf(sm);
    const theirs = messagesOf(refSm);
    const lazy = ours.map((m, i) => [m, i]).filter(([m]) => typeof Object.getOwnPropertyDescriptor(m, "content").get === "function");
    assert.ok(lazy.length >= 3, "three contents not read yet");
    const [[a, i], [b, j], [c, k]] = lazy;
    delete a.content;
    delete theirs[i].content;
    b.content = null;
    theirs[j].content = null;
    Object.defineProperty(c, "content", { get: () => "from a getter", enumerable: true, configurable: true });
    Object.defineProperty(theirs[k], "content", { get: () => "from a getter", enumerable: true, configurable: true });
    assert.deepStrictEqual(sm.buildSessionContext(), refSm.buildSessionContext());
  });

  test(`${where}: entries read their values after their manager moved to another session or was disposed`, (t) => {
    const { sm, ref, file } = open(t);
    const entries = sm.getEntries();
    sm.newSession();
    assert.deepStrictEqual(entries.slice(0, 4), ref.entries.slice(0, 4));
    const other = SessionManager.open(file, path.dirname(file));
    const kept = other.getEntries();
    other.dispose();
    assert.deepStrictEqual(kept, ref.entries);
    assert.deepStrictEqual(entries, ref.entries);
  });

  test(`${where}: the context, the tree and a branched session read what the reference does`, (t) => {
    const { sm, file } = open(t);
    const refSm = Reference.open(file, path.dirname(file));
    assert.deepStrictEqual(sm.buildSessionContext(), refSm.buildSessionContext());
    const strip = (nodes) => nodes.map((n) => ({ ...n, children: strip(n.children) }));
    assert.deepStrictEqual(strip(sm.getTree()), strip(refSm.getTree()));
    const leaf = sm.getLeafId();
    const branched = sm.createBranchedSession(leaf);
    const refBranched = refSm.createBranchedSession(leaf);
    // Past the header, the files differ only in the new ids the copies of labels get.
    const lines = (f) =>
      fs
        .readFileSync(f, "utf8")
        .split("\n")
        .slice(1)
        .map((l) => l.replace(/^(\{"type":"label","id":")[^"]*/, "$1"))
        .join("\n");
    assert.equal(lines(branched), lines(refBranched));
  });
}

test("an in-memory session of [header, ...getBranch()] keeps the lazy entries as they are", (t) => {
  const file = richSession(t);
  const sm = SessionManager.open(file, path.dirname(file));
  const branch = sm.getBranch();
  const copy = SessionManager.inMemory("/proj", undefined, [sm.getHeader(), ...branch]);
  assert.equal(copy.getBranch().at(-1), branch.at(-1));
  const ref = referenceOf(file);
  assert.deepStrictEqual(copy.buildSessionContext(), Reference.inMemory("/proj", undefined, [ref.header, ...ref.branch]).buildSessionContext());
});

test("the first long call after an open makes each entry once, and keeps one made before it", (t) => {
  // Over a thousand positions, a call asks first whether the load has any object yet; each of
  // these opens starts with none, then with one made by getEntry.
  const dir = tempDir(t, "pi-lazy-");
  const w = Reference.create("/proj", dir);
  for (let i = 0; i < 700; i++) {
    w.appendMessage({ role: "user", content: long(`question ${i}`, 300), timestamp: i });
    w.appendMessage({ role: "assistant", content: [{ type: "text", text: long(`answer ${i}`, 300) }], provider: "p", model: "m", timestamp: i });
  }
  const file = w.getSessionFile();
  const ref = referenceOf(file);
  for (const first of ["none", "one entry"]) {
    const sm = SessionManager.open(file, dir);
    const early = first === "none" ? null : sm.getEntry(ref.branch[900].id);
    const branch = sm.getBranch();
    assert.equal(branch.length, 1400);
    if (early !== null) assert.equal(branch[900], early, "the entry made before is the branch's");
    const entries = sm.getEntries();
    assert.ok(branch.every((e, i) => entries[i] === e && sm.getEntry(e.id) === e), `${first}: the same objects on every call`);
    assert.deepStrictEqual(branch, ref.branch);
  }
});
