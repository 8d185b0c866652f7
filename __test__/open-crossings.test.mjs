// How often opening a session crosses into the native core. `SessionManager.open` is one call
// (the core makes the manager, takes the header's cwd and loads the file), and `setSessionFile`
// on a manager asks for nothing after the load; what idle parsing needs is asked for when idle,
// not by the open the caller waits for. Every function of the addon (free functions, the class's
// statics and its methods) is counted while the open runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

import { tempDir, header, msgEntry, user, assistant, writeJsonl } from "./helpers/fixtures.mjs";
import { loadOurs, ROOT } from "./helpers/target.mjs";

const { SessionManager } = loadOurs();
const native = createRequire(import.meta.url)(path.join(ROOT, "native.js"));

/** Runs `fn` with every native function counted; returns the calls by name. @param {() => void} fn */
function crossings(fn) {
  /** @type {string[]} */
  const calls = [];
  const restore = [];
  const wrap = (/** @type {any} */ owner, /** @type {string} */ name, /** @type {string} */ label) => {
    const original = owner[name];
    if (typeof original !== "function" || name === "constructor") return;
    owner[name] = function (/** @type {any[]} */ ...args) {
      calls.push(label);
      return original.apply(this, args);
    };
    restore.push(() => (owner[name] = original));
  };
  for (const name of Object.keys(native)) if (name !== "NativeSession") wrap(native, name, name);
  const cls = native.NativeSession;
  for (const name of Object.getOwnPropertyNames(cls.prototype)) wrap(cls.prototype, name, name);
  // The class's statics cannot be reassigned (nor proxied as they are): the module's class is
  // replaced, while this runs, by a stand-in that counts each static and calls the real one.
  native.NativeSession = new Proxy(function NativeSession() {}, {
    get(_, name) {
      const value = Reflect.get(cls, name);
      if (typeof value !== "function" || typeof name !== "string" || name === "prototype") return value;
      return (/** @type {any[]} */ ...args) => {
        calls.push(`NativeSession.${name}`);
        return value.apply(cls, args);
      };
    },
  });
  restore.push(() => (native.NativeSession = cls));
  try {
    fn();
  } finally {
    for (const r of restore) r();
  }
  return calls;
}

function sessionFile(t, cwd = "/work/project") {
  const dir = tempDir(t);
  const file = path.join(dir, "s.jsonl");
  const h = header({ cwd });
  writeJsonl(file, [h, msgEntry("a1", null, user("hello")), msgEntry("a2", "a1", assistant("hi"))]);
  return { dir, file };
}

test("open of a session file is one native call, and the manager answers from it", (t) => {
  const { file } = sessionFile(t);
  let sm;
  const calls = crossings(() => (sm = SessionManager.open(file)));
  assert.deepEqual(calls, ["NativeSession.openFile"]);
  assert.equal(sm.getCwd(), "/work/project");
  assert.equal(sm.getLeafId(), "a2");
  assert.equal(sm.getSessionFile(), file);
  assert.deepEqual(
    sm.getEntries().map((e) => e.id),
    ["a1", "a2"],
  );
});

test("open with a cwd override and with a session dir is one native call too", (t) => {
  const { dir, file } = sessionFile(t);
  const other = path.join(dir, "elsewhere");
  let sm;
  const calls = crossings(() => (sm = SessionManager.open(file, other, "/some/where/")));
  assert.deepEqual(calls, ["NativeSession.openFile"]);
  assert.equal(sm.getCwd(), "/some/where");
  assert.equal(sm.getSessionDir(), other);
  assert.ok(fs.statSync(other).isDirectory(), "the session dir is made, as the reference makes it");
});

test("setSessionFile on a manager is the load's call, and the session id it had before", (t) => {
  const { dir, file } = sessionFile(t);
  const sm = SessionManager.create("/work/project", dir);
  const calls = crossings(() => sm.setSessionFile(file));
  // The id tells a refused file that left the session as it was from one after which the core
  // had already started a fresh session (see lib/load.js).
  assert.deepEqual(calls, ["sessionId", "setSessionFile"]);
  assert.equal(sm.getLeafId(), "a2");
});

test("what idle parsing needs is asked for when idle, and the entries are parsed then", async (t) => {
  const { file } = sessionFile(t);
  /** @type {any} */
  let sm;
  const during = crossings(() => (sm = SessionManager.open(file)));
  assert.deepEqual(during, ["NativeSession.openFile"]);
  // Idle slices run after the running job: they ask for the positions and parse every entry.
  await new Promise((resolve) => setTimeout(resolve, 50));
  // getEntries then has every object already: it asks only for the positions.
  const later = crossings(() => sm.getEntries());
  assert.deepEqual(later, ["entryPositions"]);
});

test("a manager opened and asked at once parses its entries itself", (t) => {
  const { file } = sessionFile(t);
  const calls = crossings(() => SessionManager.open(file).getEntries());
  assert.ok(calls.length > 2, `getEntries without idle time must read the lines: ${calls.join(", ")}`);
});

test("branch moves the leaf in one native call, which answers where it now is", (t) => {
  const { file } = sessionFile(t);
  const sm = SessionManager.open(file);
  const calls = crossings(() => sm.branch("a1"));
  assert.deepEqual(calls, ["branch"]);
  assert.equal(sm.getLeafId(), "a1");
  assert.deepEqual(
    sm.getBranch().map((e) => e.id),
    ["a1"],
  );
  sm.appendMessage(user("again"));
  assert.equal(sm.getLeafEntry().parentId, "a1");
});
