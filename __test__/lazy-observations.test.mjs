// Entries with lazy members (lib/lazy.js) against the reference's plain objects, by seeded random
// sequences of what code does with entries: read a member, list keys, serialize, clone, spread,
// inspect, assign, delete, freeze, seal, and then the manager's own calls over the entries it
// handed out (a branch serialized whole reads ahead over many holders; the context; the tree;
// moving the leaf; pi's turn-boundary preview, a manager in memory of the branch's objects;
// createBranchedSession, which copies the objects held; appends, and a new manager of the file
// as it was written, whose entries are read anew). Each sequence runs on a
// session the reference wrote, with big and small values around the size where a value becomes
// lazy, opened by the reference and by this package (half of them with every file read as a big
// session, values left in the file), each side on its own copy of the file; after every step
// both sides must have answered alike (ours with the ids and times of what it appended replaced
// by the reference's).
// lazy-entries.test.mjs pins each observation by example; this looks for the orders of them
// that no example thought of.
//
// Environment: LAZY_OBS_SEED (first seed, default 1), LAZY_OBS_RUNS (default 40),
// LAZY_OBS_STEPS (default 60).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import util from "node:util";

import { tempDir } from "./helpers/fixtures.mjs";
import { loadOurs, loadReference, tuneFor } from "./helpers/target.mjs";
import { Rng } from "./parity/prng.mjs";

const { SessionManager } = loadOurs();
const Reference = (await loadReference()).SessionManager;

const SEED = Number(process.env.LAZY_OBS_SEED ?? 1);
const RUNS = Number(process.env.LAZY_OBS_RUNS ?? 40);
const STEPS = Number(process.env.LAZY_OBS_STEPS ?? 60);

/** Sizes around the core's threshold for a lazy value (256 bytes as written), and big ones. */
const SIZES = [3, 120, 250, 256, 300, 2_000, 20_000];
const text = (rng, tag) => {
  const n = rng.pick(SIZES);
  const unit = rng.pick([`${tag} `, "é中 ", "\u{1F600} ", 'q"\\\n\t ']);
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
};
const usage = (rng) => ({ input: rng.int(5000), output: rng.int(900), cacheRead: 0, cacheWrite: 0, totalTokens: 7, cost: { input: 0.25, output: 1e-7, cacheRead: 0, cacheWrite: -0, total: 0.3 } });

/** A session of every entry kind, values of every size, a side branch or two; its file. */
function session(t, rng) {
  const dir = tempDir(t, "pi-lazy-obs-");
  const sm = Reference.create("/proj", dir);
  const ids = [];
  const count = 12 + rng.int(30);
  for (let i = 0; i < count; i++) {
    const ts = 1_000 + i;
    const kind = rng.weighted([[5, "user"], [6, "assistant"], [5, "tool"], [1, "compaction"], [1, "custom"], [1, "customMessage"], [1, "branch"], [1, "label"], [1, "model"]]);
    if (kind === "user") ids.push(sm.appendMessage({ role: "user", content: rng.chance(0.5) ? text(rng, "ask") : [{ type: "text", text: text(rng, "ask") }], timestamp: ts }));
    else if (kind === "assistant") {
      const content = [{ type: "thinking", thinking: text(rng, "think"), thinkingSignature: "s" }, { type: "text", text: text(rng, "say") }];
      if (rng.chance(0.5)) content.push({ type: "toolCall", id: `call_${i}`, name: "bash", arguments: { command: text(rng, "cmd") } });
      ids.push(sm.appendMessage({ role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude", usage: usage(rng), stopReason: "toolUse", timestamp: ts }));
    } else if (kind === "tool") {
      const m = { role: "toolResult", toolCallId: `call_${i}`, toolName: "bash", content: [{ type: "text", text: text(rng, "out") }], isError: false, timestamp: ts };
      if (rng.chance(0.5)) m.details = { diff: text(rng, "diff"), lines: [text(rng, "line")] };
      ids.push(sm.appendMessage(m));
    } else if (kind === "compaction" && ids.length > 0) ids.push(sm.appendCompaction(text(rng, "summary"), rng.pick(ids), 12_345, { readFiles: [text(rng, "file")] }, false));
    else if (kind === "custom") ids.push(sm.appendCustomEntry("ext.state", { items: [text(rng, "item")], n: i }));
    else if (kind === "customMessage") ids.push(sm.appendCustomMessageEntry("ext.note", text(rng, "note"), rng.chance(0.5), { extra: text(rng, "x") }));
    else if (kind === "branch" && ids.length > 1) ids.push(sm.branchWithSummary(rng.pick(ids), text(rng, "abandoned"), { notes: text(rng, "n") }, false));
    else if (kind === "label" && ids.length > 0) sm.appendLabelChange(rng.pick(ids), `l${i}`);
    else sm.appendModelChange("anthropic", `m${i}`);
  }
  return sm.getSessionFile();
}

/** The members of an entry that may be lazy, and some that never are. */
const MEMBERS = ["content", "details", "summary", "data", "role", "type", "id", "usage", "customType", "fresh"];
/** What a step assigns or deletes: not what places an entry in the session's tree or says what
 * it is (`id`, `parentId`, `type`, a message's `role`), which the manager keeps as the file has
 * it where the reference follows the caller's change (docs/behaviour.md). */
const MUTABLE = MEMBERS.filter((k) => !["id", "type", "role"].includes(k));

/** Runs `fn` on `side`'s entry `i` (or its message), as the caller's code would: its value, or
 * what it threw (by constructor: the engines word their messages alike only in part). */
function attempt(fn) {
  try {
    return { value: fn() };
  } catch (e) {
    if (process.env.LAZY_OBS_DEBUG) console.error(e);
    return { threw: e?.constructor?.name ?? typeof e };
  }
}

/** One random step on both sides; returns [what, reference's answer, ours]. */
function step(rng, sides, n) {
  const i = rng.int(n);
  const inMessage = rng.chance(0.5);
  const holder = (side) => {
    const e = side.entries[i];
    return inMessage && e.message !== null && typeof e.message === "object" ? e.message : e;
  };
  const action = rng.weighted([
    [6, "read"],
    [2, "keys"],
    [2, "json"],
    [1, "clone"],
    [1, "spread"],
    [1, "inspect"],
    [3, "assign"],
    [2, "delete"],
    [1, "freeze"],
    [1, "seal"],
    [2, "branch"],
    [1, "context"],
    [1, "entries"],
    [1, "preview"],
    [1, "branchTo"],
    [1, "tree"],
    [1, "resetLeaf"],
    [0.15, "fork"],
    [2, "append"],
    [1, "reopen"],
  ]);
  if (action === "append") return append(rng, sides, i);
  const to = rng.int(n);
  const key = rng.pick(action === "assign" || action === "delete" ? MUTABLE : MEMBERS);
  const value = `v${rng.int(1000)}`;
  if (action === "assign" || action === "delete") sides.changed = true;
  const run = (side) => {
    const h = holder(side);
    switch (action) {
      case "read":
        return attempt(() => h[key]);
      case "keys":
        return attempt(() => {
          const forIn = [];
          for (const k in h) forIn.push(k);
          return { keys: Object.keys(h), forIn, entries: Object.entries(h), has: key in h, own: Object.hasOwn(h, key) };
        });
      case "json":
        return attempt(() => JSON.stringify(side.entries[i]));
      case "clone":
        return attempt(() => structuredClone(side.entries[i]));
      case "spread":
        return attempt(() => ({ ...h }));
      case "inspect":
        return attempt(() => util.inspect(side.entries[i], { depth: 8, breakLength: 200 }));
      case "assign":
        return attempt(() => {
          h[key] = value;
          return h[key];
        });
      case "delete":
        return attempt(() => [delete h[key], key in h]);
      case "freeze":
        return attempt(() => Object.isFrozen(Object.freeze(h)));
      case "seal":
        return attempt(() => Object.isSealed(Object.seal(h)));
      case "branch":
        return attempt(() => JSON.stringify(side.sm.getBranch()));
      case "context":
        return attempt(() => side.sm.buildSessionContext());
      case "entries":
        return attempt(() => side.sm.getEntries().every((e, j) => e === side.entries[j]));
      case "preview":
        // What pi does at a turn boundary: a manager in memory of the header and the branch.
        return attempt(() => {
          const branch = side.sm.getBranch();
          const p = side.SM.inMemory("/proj", undefined, [side.sm.getHeader(), ...branch]);
          return { context: p.buildSessionContext(), same: p.getEntries().map((e, j) => e === branch[j]), json: JSON.stringify(p.getBranch()) };
        });
      case "branchTo":
        return attempt(() => {
          side.sm.branch(side.entries[to].id);
          return JSON.stringify(side.sm.getBranch());
        });
      case "tree":
        return attempt(() => JSON.stringify(side.sm.getTree()));
      case "resetLeaf":
        return attempt(() => {
          side.sm.resetLeaf();
          return side.sm.buildSessionContext();
        });
      case "reopen":
        // A new manager of the file as this side wrote it: every entry made anew from its line
        // (the appended ones too), lazily.
        return attempt(() => {
          side.sm = side.SM.open(side.sm.getSessionFile(), path.dirname(side.sm.getSessionFile()));
          side.entries = side.sm.getEntries();
          return JSON.stringify(side.entries);
        });
      case "fork":
        // A new session of the path to an entry: its header's id and time are new, and so are
        // its labels' ids (the sequence ends here: they differ from then on). The new file holds
        // the path's lines as the file has them, where the reference writes the objects as the
        // caller changed them (docs/behaviour.md): it is compared while nothing was changed.
        return attempt(() => {
          const file = side.sm.createBranchedSession(side.entries[to].id);
          const text = file !== undefined && fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").slice(1).join("\n") : null;
          // The path's labels are written anew, under ids of their own, and those differ.
          let entries = JSON.stringify(side.sm.getEntries());
          let lines = text;
          side.sm.getEntries().forEach((e, k) => {
            if (e.type !== "label") return;
            entries = entries.replaceAll(e.id, `label#${k}`);
            lines = lines?.replaceAll(e.id, `label#${k}`) ?? null;
          });
          return { entries, lines: sides.changed ? "not compared" : lines };
        });
    }
    throw new Error(`no action ${action}`);
  };
  const where = ["branchTo", "fork"].includes(action) ? ` to entry ${to}` : ` ${inMessage ? "message." : ""}${key} of entry ${i}`;
  return [`${action}${where}`, run(sides.reference), run(sides.ours), action === "fork"];
}

/** Waits until the clock has passed `ms`; returns the time then. */
function after(ms) {
  let now = Date.now();
  while (now <= ms) now = Date.now();
  return now;
}

/** Appends the same new entry on both sides (the reference first, ours in a later millisecond,
 * so that each appended entry's time is its own), and notes the id and time ours gave it as
 * standing for the reference's (`asReference`). */
function append(rng, sides, i) {
  const ts = 2_000_000 + rng.int(1000);
  const kind = rng.pick(["user", "tool", "custom", "label"]);
  const message =
    kind === "user"
      ? { role: "user", content: rng.chance(0.5) ? text(rng, "more") : [{ type: "text", text: text(rng, "more") }], timestamp: ts }
      : { role: "toolResult", toolCallId: "call_x", toolName: "read", content: [{ type: "text", text: text(rng, "read") }], details: { lines: [text(rng, "l")] }, isError: false, timestamp: ts };
  const data = { items: [text(rng, "state")] };
  const label = `appended ${ts}`;
  const once = (side) =>
    attempt(() => {
      let id;
      if (kind === "custom") id = side.sm.appendCustomEntry("ext.state", structuredClone(data));
      else if (kind === "label") id = side.sm.appendLabelChange(side.entries[i].id, label);
      else id = side.sm.appendMessage(structuredClone(message));
      side.entries = side.sm.getEntries();
      return id;
    });
  sides.clock = after(sides.clock);
  const expected = once(sides.reference);
  sides.clock = after(Math.max(sides.clock, Date.parse(sides.reference.entries.at(-1)?.timestamp ?? "0")));
  const ours = once(sides.ours);
  sides.clock = after(sides.clock);
  if (typeof expected.value === "string" && typeof ours.value === "string") {
    sides.same.set(ours.value, expected.value);
    const [a, b] = [sides.reference.sm.getEntry(expected.value), sides.ours.sm.getEntry(ours.value)];
    if (a && b) sides.same.set(b.timestamp, a.timestamp);
  }
  return [`append ${kind}${kind === "label" ? ` to entry ${i}` : ""}`, expected, ours, false];
}

/** Our answer with the ids and times of the entries ours appended replaced by the reference's
 * (a copy where it changes: the answer may hold our live entries). */
function asReference(value, same) {
  if (same.size === 0) return value;
  const swap = (s) => {
    for (const [ours, theirs] of same) s = s.replaceAll(ours, theirs);
    return s;
  };
  const walk = (v) => {
    if (typeof v === "string") return swap(v);
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.map(walk);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
  };
  return walk(value);
}

/** Where two answers first differ, as text around that place (the reference's, then ours). */
function firstDifference(expected, actual) {
  const text = (v) => util.inspect(v, { depth: Infinity, maxStringLength: Infinity, maxArrayLength: Infinity, breakLength: Infinity });
  const [a, b] = [text(expected), text(actual)];
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  if (i === a.length && i === b.length) return "the same text (a difference inspect does not show)";
  return `at ${i}:\n  reference: ${JSON.stringify(a.slice(Math.max(0, i - 80), i + 80))}\n  ours:      ${JSON.stringify(b.slice(Math.max(0, i - 80), i + 80))}`;
}

for (let r = 0; r < RUNS; r++) {
  const seed = SEED + r;
  const big = seed % 2 === 0;
  test(`seed ${seed}${big ? ", values left in the file" : ""}: every observation of lazy entries matches the reference`, (t) => {
    const rng = new Rng(seed);
    const file = session(t, rng);
    if (big) tuneFor(t, { lazyFileBytes: 0 });
    // Each side its own copy of the file (both append to theirs).
    const open = (SM) => {
      const copy = path.join(tempDir(t, "pi-lazy-obs-side-"), path.basename(file));
      fs.copyFileSync(file, copy);
      const sm = SM.open(copy, path.dirname(copy));
      return { SM, sm, entries: sm.getEntries() };
    };
    const sides = { reference: open(Reference), ours: open(SessionManager), changed: false, same: new Map(), clock: Date.now() };
    assert.equal(sides.ours.entries.length, sides.reference.entries.length);
    const done = [];
    for (let s = 0; s < STEPS; s++) {
      const [what, expected, ours, last] = step(rng, sides, sides.reference.entries.length);
      const actual = asReference(ours, sides.same);
      done.push(what);
      try {
        assert.deepStrictEqual(actual, expected);
      } catch (e) {
        throw new Error(`step ${s}: ${what}: ${firstDifference(expected, actual)}\n(replay: LAZY_OBS_SEED=${seed} LAZY_OBS_RUNS=1; steps: ${done.join("; ")})`, { cause: e });
      }
      if (last) break;
    }
  });
}
