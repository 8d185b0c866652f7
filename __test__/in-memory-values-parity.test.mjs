// Random operation sequences on in-memory sessions whose entries hold values JSON cannot write
// (BigInt, cycles, a throwing toJSON), run on the reference and on ours with the very same payload
// objects. After every step both must give the same answers: entries, branch, context, projection,
// tree, labels, name, leaf. Ids are random on each side, so they are compared by the step that
// made them; payloads by identity (the objects given are the objects returned, on both sides).
// The parity suite covers ordinary values and files; this covers what only an in-memory session
// accepts, where ours gives the core skeletons of the entries (lib/session-manager.js skeletonOf).
//   MEMVAL_SEED (default 1), MEMVAL_RUNS (default 60), MEMVAL_STEPS (default 40).
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadOurs, loadReference } from "./helpers/target.mjs";

const SEED = Number(process.env.MEMVAL_SEED ?? 1);
const RUNS = Number(process.env.MEMVAL_RUNS ?? 60);
const STEPS = Number(process.env.MEMVAL_STEPS ?? 40);
const CWD = "/tmp/memval";

/** mulberry32 */
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)], chance: (p) => next() < p };
}

/** A value JSON.stringify refuses, or an ordinary one. */
function payload(r, n) {
  switch (r.int(5)) {
    case 0:
      return { n, big: BigInt(n) * 1000n };
    case 1: {
      const o = { n, list: [1, 2] };
      o.self = o;
      o.list.push(o);
      return o;
    }
    case 2:
      return { n, toJSON() {
        throw new Error("toJSON must not be called for an in-memory session");
      } };
    default:
      return { n, text: `plain ${n}` };
  }
}

function message(r, n) {
  const role = r.pick(["user", "assistant", "toolResult", "custom"]);
  const m = { role, content: [{ type: "text", text: `m${n}` }], timestamp: n, extra: payload(r, n) };
  if (role === "assistant") Object.assign(m, { provider: r.pick(["p1", "p2"]), model: `model-${n}`, usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { total: 0 } } });
  if (role === "toolResult") Object.assign(m, { toolCallId: `t${n}`, toolName: "bash" });
  if (role === "custom") Object.assign(m, { customType: "x", display: true });
  return m;
}

/** One side: a manager, and the ids it made in step order. */
class Side {
  constructor(SM) {
    this.SM = SM;
    this.sm = SM.inMemory(CWD);
    this.step = new Map(); // id -> step number
  }
  note(id, n) {
    if (typeof id === "string" && !this.step.has(id)) this.step.set(id, n);
  }
  idAt(k) {
    for (const [id, n] of this.step) if (n === k) return id;
    return undefined;
  }
}

/** Everything a caller can read, with ids replaced by the step that made them. */
function answers(side) {
  const { sm } = side;
  const s = (id) => (id === null || id === undefined ? id : (side.step.get(id) ?? `?${typeof id}`));
  const shape = (e) => [e.type, s(e.id), s(e.parentId), e.message ?? e.data ?? e.details ?? e.summary ?? e.label ?? e.name ?? e.content ?? null];
  const tree = (nodes) => nodes.map((n) => [s(n.entry.id), n.label, tree(n.children)]);
  const ctx = sm.buildSessionContext();
  const projection = sm.buildSessionProjection();
  return {
    leaf: s(sm.getLeafId()),
    leafEntry: sm.getLeafEntry() === undefined ? undefined : s(sm.getLeafEntry().id),
    count: sm.getEntryCount(),
    entries: sm.getEntries().map(shape),
    branch: sm.getBranch().map(shape),
    // The caller's messages as they are; those made from entries carry the entry's clock time.
    context: ctx.messages.map((m) => ("extra" in m ? m : { ...m, timestamp: typeof m.timestamp, ...("fromId" in m && { fromId: s(m.fromId) }) })),
    model: ctx.model,
    thinking: ctx.thinkingLevel,
    projection: projection.entries.map((e) => [s(e.sourceEntry.id), e.messages.length]),
    tree: tree(sm.getTree()),
    labels: [...side.step.keys()].map((id) => sm.getLabel(id) ?? null),
    name: sm.getSessionName(),
  };
}

function runSequence(seed, refSM, ourSM) {
  const r = rng(seed);
  const sides = [new Side(refSM), new Side(ourSM)];
  for (let n = 1; n <= STEPS; n++) {
    // Targets are entries the session has now (a branched session drops the others).
    const live = sides[0].sm.getEntries().map((e) => sides[0].step.get(e.id));
    const pickStep = () => r.pick(live);
    const op = live.length === 0 ? 0 : r.int(12);
    const args = {
      msg: message(r, n),
      data: payload(r, n),
      target: pickStep(),
      label: r.pick(["first", "second", undefined, ""]),
      name: r.pick(["a name", "", "  spaced  "]),
      level: r.pick(["low", "high"]),
    };
    let desc;
    for (const side of sides) {
      const { sm } = side;
      const targetId = side.idAt(args.target);
      let id;
      switch (op) {
        case 0:
        case 1:
        case 2:
          desc = "appendMessage";
          id = sm.appendMessage(args.msg);
          break;
        case 3:
          desc = "appendCustomEntry";
          id = sm.appendCustomEntry("ext", args.data);
          break;
        case 4:
          desc = "appendCustomMessageEntry";
          id = sm.appendCustomMessageEntry("note", `shown ${n}`, true, args.data);
          break;
        case 5:
          desc = "appendLabelChange";
          id = sm.appendLabelChange(targetId, args.label);
          break;
        case 6:
          desc = "appendCompaction";
          id = sm.appendCompaction(`summary ${n}`, targetId, 1000, args.data);
          break;
        case 7:
          desc = "branch";
          sm.branch(targetId);
          break;
        case 8:
          desc = "branchWithSummary";
          id = sm.branchWithSummary(targetId, `left ${n}`, args.data);
          break;
        case 9:
          desc = "appendSessionInfo / thinking level";
          id = n % 2 ? sm.appendSessionInfo(args.name) : sm.appendThinkingLevelChange(args.level);
          break;
        case 10: {
          desc = "createBranchedSession";
          sm.createBranchedSession(targetId);
          // Re-created label records get new ids on each side: numbered in entry order.
          for (const e of sm.getEntries()) side.note(e.id, `L${n}:${e.targetId === undefined ? "" : side.step.get(e.targetId)}`);
          break;
        }
        case 11: {
          desc = "preview (inMemory of header and branch)";
          const preview = side.SM.inMemory(CWD, undefined, [sm.getHeader(), ...sm.getBranch()]);
          preview.appendMessage(args.msg);
          side.previewAnswers = answers({ sm: preview, step: side.step });
          break;
        }
      }
      side.note(id, n);
    }
    const [a, b] = sides.map(answers);
    assert.deepStrictEqual(b, a, `seed ${seed}, step ${n} (${desc})`);
    if (op === 11) assert.deepStrictEqual(sides[1].previewAnswers, sides[0].previewAnswers, `seed ${seed}, step ${n}: the preview`);
  }
}

test(`${RUNS} random in-memory sequences with values JSON cannot write answer as the reference`, async () => {
  const ref = (await loadReference()).SessionManager;
  const ours = loadOurs().SessionManager;
  for (let i = 0; i < RUNS; i++) runSequence(SEED * 100_003 + i, ref, ours);
});
