// Runs one seeded operation sequence on two SessionManager implementations (A = reference,
// B = implementation under test) and compares, after every step: the operation's return value
// (or error message), every getter and free function on the resulting state, and the normalized
// bytes of every file under each side's temp root.

import assert from "node:assert";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import util from "node:util";

import { olderReferenceListing, READLINE_SPLITS_AT_SEPARATORS } from "../helpers/older-reference.mjs";
import { DataGen } from "./data.mjs";
import { MtimeClock, snapshot } from "./files.mjs";
import { cloneAwkward, encodeCwdLikeReference, keyOrderDiff, Normalizer } from "./normalize.mjs";
import { GARBAGE_WITHOUT_NEWLINE, GenContext, genEpilogue, genStart, genStep, Ref } from "./ops.mjs";
import { Rng } from "./prng.mjs";

const SYNTHETIC_JSONL =
  '\n  \n{"type":"session","version":3,"id":"syn","timestamp":"2001-01-01T00:00:00.000Z","cwd":"/x"}\n5\nnull\n"s"\n{bad json\n[1,2]\nfalse\n0\n' +
  '  {"type":"message","id":"abcdef01","parentId":null,"timestamp":"2001-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}  \r\n' +
  '{"b":1,"2":"two","1":"one","n":1e21,"u":"\\u2028\\ud800"}\n\n';

class Mismatch extends Error {}

/**
 * How a sequence spells its session dirs. Most sequences use absolute paths; one seed in four runs
 * from a directory inside the temp root and passes the dirs relative to it, spelled untidily
 * (`./x`, `x/`, `x//`, `a/../x`, `..`), as `--session-dir ./custom` does. The choice depends on the
 * seed only (it draws nothing from the sequence's Rng, so the operations generated are the same).
 */
export const RELATIVE_LAYOUTS = [
  { home: "", sessDir: "./sessions", otherDir: "other-sessions" },
  { home: "", sessDir: "sessions/", otherDir: "./other-sessions/" },
  { home: "", sessDir: "misc/../sessions", otherDir: "other-sessions//" },
  { home: "misc", sessDir: "../sessions", otherDir: "../other-sessions/" },
  { home: "misc", sessDir: ".././sessions//", otherDir: "..//other-sessions" },
  { home: "proj", sessDir: "../misc/../sessions", otherDir: "../other-sessions" },
];

export function layoutOf(seed) {
  if (seed % 4 !== 3) return null;
  return RELATIVE_LAYOUTS[Math.floor(seed / 4) % RELATIVE_LAYOUTS.length];
}

function makeSide(label, mod, layout) {
  const tmp = fs.realpathSync(os.tmpdir());
  const root = fs.mkdtempSync(path.join(tmp, "pi-parity-"));
  const side = {
    label,
    mod,
    root,
    // The process cwd while this side runs (relative session dirs are relative to it).
    home: path.join(root, layout?.home ?? ""),
    cwd: path.join(root, "proj"),
    cwd2: path.join(root, "other proj:ü"),
    sessDir: path.join(root, "sessions"),
    otherDir: path.join(root, "other-sessions"),
    agentDir: path.join(root, "agent"),
    miscDir: path.join(root, "misc"),
    norm: new Normalizer().addRoot(root),
    clock: new MtimeClock(),
    ids: [],
    idIndex: new Map(),
    sids: [],
    sidIndex: new Set(),
    files: [],
    sm: null,
  };
  for (const d of [side.cwd, side.cwd2, side.sessDir, side.miscDir]) fs.mkdirSync(d, { recursive: true });
  if (layout) {
    side.sessDir = layout.sessDir;
    side.otherDir = layout.otherDir;
  }
  return side;
}

function defaultDirOf(side, cwd) {
  return path.join(side.agentDir, "sessions", `--${encodeCwdLikeReference(cwd)}--`);
}

function setEnv(side) {
  process.env.PI_CODING_AGENT_DIR = side.agentDir;
  if (process.cwd() !== side.home) process.chdir(side.home);
}

/** Resolve symbolic references for one side; everything else is deep-cloned. */
function resolve(side, v) {
  if (v instanceof Ref) {
    const { kind, arg } = v;
    switch (kind) {
      case "id":
        return side.ids[arg];
      case "sid":
        return side.sids[arg];
      case "file":
        return side.files[arg].abs;
      case "cwd":
      case "cwd2":
      case "sessDir":
      case "otherDir":
      case "agentDir":
      case "miscDir":
      case "root":
        return side[kind];
      case "defaultDir":
        return defaultDirOf(side, side.cwd);
      case "path":
        return path.join(side[arg.base], arg.rel);
      case "curFile":
        return side.sm?.getSessionFile();
      case "curSid":
        return side.sm?.getSessionId();
      case "abortedSignal":
        return AbortSignal.abort();
      default:
        throw new Error(`harness: unknown ref ${kind}`);
    }
  }
  if (v === null || typeof v !== "object" || v instanceof Date) return cloneAwkward(v);
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) if (i in v) out[i] = resolve(side, v[i]);
    return out;
  }
  const out = {};
  for (const k of Object.keys(v)) {
    Object.defineProperty(out, k, { value: resolve(side, v[k]), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function errorMessage(e) {
  if (e instanceof Error) return e.message;
  return `non-Error thrown: ${String(e)}`;
}

/** Run fn, capturing its value or the message of what it threw. */
async function capture(fn) {
  try {
    let v = fn();
    if (v && typeof v.then === "function") v = await v;
    return { ok: v };
  } catch (e) {
    return { threw: errorMessage(e) };
  }
}

function captureSync(fn) {
  try {
    return { ok: fn() };
  } catch (e) {
    return { threw: errorMessage(e) };
  }
}

function normCapture(side, c) {
  if ("threw" in c) return { threw: side.norm.string(c.threw) };
  return { ok: side.norm.value(c.ok) };
}

async function applyOp(side, op) {
  setEnv(side);
  const args = resolve(side, op.args);
  if (op.pre?.write) {
    const p = resolve(side, op.pre.write);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, op.pre.content);
  }
  const SM = side.mod.SessionManager;
  const c = await capture(() => {
    switch (op.call) {
      case "sm":
        return side.sm[op.method](...args);
      case "static":
        if (op.list && side.listing) return side.listing(op.method, args);
        return SM[op.method](...args);
      case "fn":
        return side.mod[op.method](...args);
      case "migrate": {
        const r = side.mod.migrateSessionEntries(args[0]);
        return { returned: r, entries: args[0] };
      }
      default:
        throw new Error(`harness: unknown call ${op.call}`);
    }
  });
  if ("ok" in c && c.ok instanceof SM) {
    if (op.becomesCurrent) side.sm = c.ok;
    return { ok: { $manager: true } };
  }
  if (op.list && "ok" in c && Array.isArray(c.ok)) {
    const times = c.ok.map((s) => (s?.modified instanceof Date ? s.modified.getTime() : NaN));
    for (let i = 1; i < times.length; i++) {
      if (!(times[i - 1] >= times[i])) return { ok: c.ok, unsorted: i };
    }
  }
  return c;
}

/** Sort a list() result canonically inside runs of equal (normalized) `modified`. */
function canonicalRuns(list) {
  const out = [];
  let run = [];
  const flush = () => {
    run.sort((a, b) => {
      const ka = JSON.stringify(a);
      const kb = JSON.stringify(b);
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
    out.push(...run);
    run = [];
  };
  let prev;
  for (const item of list) {
    const key = JSON.stringify(item?.modified);
    if (run.length && key !== prev) flush();
    run.push(item);
    prev = key;
  }
  flush();
  return out;
}

/** New entry ids and session ids of the current manager, registered in a fixed order. */
function harvest(side) {
  const sm = side.sm;
  if (!sm) return;
  setEnv(side);
  try {
    for (const e of sm.getEntries()) {
      if (e && typeof e.id === "string" && !side.idIndex.has(e.id)) {
        side.idIndex.set(e.id, side.ids.length);
        side.ids.push(e.id);
        side.norm.registerId(e.id);
      }
    }
  } catch {
    // Reported by the sweep.
  }
  try {
    const sid = sm.getSessionId();
    if (typeof sid === "string" && !side.sidIndex.has(sid)) {
      side.sidIndex.add(sid);
      side.sids.push(sid);
      side.norm.registerId(sid);
    }
  } catch {
    // Reported by the sweep.
  }
}

/** Read-only view of side A used to generate the next operation. */
function stateOf(side) {
  const sm = side.sm;
  setEnv(side);
  const entries = [];
  let curFile;
  try {
    const branch = new Set(sm.getBranch().map((e) => e.id));
    for (const e of sm.getEntries()) {
      if (!e || typeof e.id !== "string" || !side.idIndex.has(e.id)) continue;
      entries.push({ k: side.idIndex.get(e.id), type: e.type, role: e.message?.role, onBranch: branch.has(e.id) });
    }
    curFile = sm.getSessionFile();
  } catch {
    // A broken state shows up in the comparison.
  }
  const curFileExists = typeof curFile === "string" && fs.existsSync(curFile);
  return { entries, idCount: side.ids.length, files: side.files, sidCount: side.sids.length, curFile, curFileExists };
}

function sweepParams(g) {
  const { entries, idCount } = g.state;
  const rng = g.rng;
  const pickId = () => (entries.length && rng.chance(0.85) ? entries[rng.int(entries.length)].k : idCount && rng.chance(0.5) ? rng.int(idCount) : -1);
  return {
    entry: pickId(),
    children: pickId(),
    label: pickId(),
    branch: pickId(),
    ctx: pickId(),
    unknown: g.unknownId(),
    synthetic: rng.chance(0.15),
  };
}

/** Every getter and free function on the current state, as [name, capture] pairs. */
function sweep(side, p) {
  const sm = side.sm;
  const m = side.mod;
  const idOf = (k) => (k >= 0 ? side.ids[k] : p.unknown);
  setEnv(side);
  const out = [];
  const add = (name, f) => out.push([name, captureSync(f)]);
  add("getLeafId", () => sm.getLeafId());
  add("getLeafEntry", () => sm.getLeafEntry());
  add("getEntry(k)", () => sm.getEntry(idOf(p.entry)));
  add("getEntry(unknown)", () => sm.getEntry(p.unknown));
  add("getChildren(null)", () => sm.getChildren(null));
  add("getChildren(k)", () => sm.getChildren(idOf(p.children)));
  add("getLabel(k)", () => sm.getLabel(idOf(p.label)));
  add("getLabel(ghost-id)", () => sm.getLabel("ghost-id"));
  add("getBranch()", () => sm.getBranch());
  add("getBranch(k)", () => sm.getBranch(idOf(p.branch)));
  add("getTree", () => sm.getTree());
  add("getHeader", () => sm.getHeader());
  add("getEntries", () => sm.getEntries());
  add("getEntryCount", () => sm.getEntryCount());
  add("getSessionName", () => sm.getSessionName());
  add("buildContextEntries", () => sm.buildContextEntries());
  add("buildSessionProjection", () => sm.buildSessionProjection());
  add("buildSessionContext", () => sm.buildSessionContext());
  add("getSessionFile", () => sm.getSessionFile());
  add("getSessionDir", () => sm.getSessionDir());
  add("isPersisted", () => sm.isPersisted());
  add("usesDefaultSessionDir", () => sm.usesDefaultSessionDir());
  add("getCwd", () => sm.getCwd());
  add("getSessionId", () => sm.getSessionId());

  let entries = [];
  let leaf = null;
  let file;
  try {
    entries = sm.getEntries();
    leaf = sm.getLeafId();
    file = sm.getSessionFile();
  } catch {
    // Already captured above.
  }
  add("fn.buildSessionContext(entries, leaf)", () => m.buildSessionContext(entries, leaf));
  add("fn.buildSessionContext(entries)", () => m.buildSessionContext(entries));
  add("fn.buildSessionContext(entries, unknown)", () => m.buildSessionContext(entries, p.unknown));
  add("fn.buildContextEntries(entries, leaf)", () => m.buildContextEntries(entries, leaf));
  add("fn.buildSessionProjection(entries, leaf)", () => m.buildSessionProjection(entries, leaf));
  add("fn.getLatestCompactionEntry(entries)", () => m.getLatestCompactionEntry(entries));
  // The list of calls must not depend on this side's state (it is compared index by index),
  // so calls that need an entry or a file yield a marker when there is none.
  const ctxEntry = p.ctx >= 0 ? entries.find((e) => e?.id === side.ids[p.ctx]) : undefined;
  add("fn.sessionEntryToContextMessages(entry)", () => (ctxEntry ? m.sessionEntryToContextMessages(ctxEntry) : { $noEntry: true }));
  add("fn.projectContextEntry(entry)", () => (ctxEntry ? m.projectContextEntry(ctxEntry, undefined) : { $noEntry: true }));
  const fileExists = typeof file === "string" && fs.existsSync(file);
  if (p.synthetic) {
    add("fn.parseSessionEntries(text)", () => m.parseSessionEntries(SYNTHETIC_JSONL));
  } else {
    // Both sides parse the same text (the files differ where we write on purpose: asWeWrite).
    const text = fileExists ? asWeWrite(fs.readFileSync(file, "utf8")) : undefined;
    add("fn.parseSessionEntries(text)", () => (text !== undefined ? m.parseSessionEntries(text) : { $noFile: true }));
  }
  add("fn.loadEntriesFromFile(file)", () => (typeof file === "string" ? m.loadEntriesFromFile(file) : { $noFile: true }));
  add("fn.findMostRecentSession(sessDir)", () => m.findMostRecentSession(side.sessDir));
  add("fn.findMostRecentSession(sessDir, cwd)", () => m.findMostRecentSession(side.sessDir, side.cwd));
  add("fn.findMostRecentSession(defaultDir, cwd2)", () => m.findMostRecentSession(defaultDirOf(side, side.cwd2), side.cwd2));
  return out;
}

function describeArg(v) {
  if (v instanceof Ref) {
    if (v.kind === "id" || v.kind === "file" || v.kind === "sid") return `<${v.kind}#${v.arg}>`;
    if (v.kind === "path") return `<${v.arg.base}>/${v.arg.rel}`;
    return `<${v.kind}>`;
  }
  return util.inspect(v, { depth: 3, breakLength: Infinity, compact: true, maxStringLength: 60, maxArrayLength: 6 });
}

export function describeOp(op) {
  const args = op.args.map(describeArg).join(", ");
  const pre = op.pre?.write ? ` [after writing ${JSON.stringify(op.pre.content)} to ${describeArg(op.pre.write)}]` : "";
  const recv = op.call === "static" ? "SessionManager." : op.call === "sm" ? "sm." : "";
  return `${recv}${op.method ?? op.name}(${args})${pre}`;
}

function truncate(s, n = 6000) {
  return s.length > n ? `${s.slice(0, n)}\n… (${s.length - n} more chars)` : s;
}

function check(what, expected, actual) {
  try {
    assert.deepStrictEqual(actual, expected);
  } catch (e) {
    throw new Mismatch(`${what}: values differ (- reference, + implementation)\n${truncate(e.message)}`);
  }
  const d = keyOrderDiff(expected, actual);
  if (d) {
    throw new Mismatch(`${what}: key order differs at ${d.path}\n  reference:      ${JSON.stringify(d.a)}\n  implementation: ${JSON.stringify(d.b)}`);
  }
}

function firstLineDiff(a, b) {
  const la = a.split("\n");
  const lb = b.split("\n");
  for (let i = 0; i < Math.max(la.length, lb.length); i++) {
    if (la[i] !== lb[i]) {
      return `line ${i + 1}:\n  reference:      ${truncate(JSON.stringify(la[i]), 1500)}\n  implementation: ${truncate(JSON.stringify(lb[i]), 1500)}`;
    }
  }
  return "(no line differs)";
}

/** The reference's bytes of a file as we write them where we differ on purpose: an entry appended
 * to the garbage file without a final newline goes on a line of its own (docs/behaviour.md: an
 * append never starts after another writer's torn bytes), where the reference glues it on.
 * Applied to both sides, so that the reference against itself compares equal too.
 * @param {string} text */
function asWeWrite(text) {
  const glued = text.startsWith(GARBAGE_WITHOUT_NEWLINE) && text.length > GARBAGE_WITHOUT_NEWLINE.length && text[GARBAGE_WITHOUT_NEWLINE.length] !== "\n";
  return glued ? `${GARBAGE_WITHOUT_NEWLINE}\n${text.slice(GARBAGE_WITHOUT_NEWLINE.length)}` : text;
}

function compareSnapshots(snapA, snapB) {
  const names = (s) => s.map((it) => (it.isDir ? `${it.name}/` : it.name));
  check("file set under the temp root", names(snapA), names(snapB));
  for (let i = 0; i < snapA.length; i++) {
    const a = snapA[i];
    const b = snapB[i];
    if (a.isDir) continue;
    if (asWeWrite(a.text) !== asWeWrite(b.text)) {
      throw new Mismatch(`bytes of ${a.name} differ (normalized), ${firstLineDiff(a.text, b.text)}`);
    }
  }
}

// Removal runs in the background: on some disks (ext4 mounted with `discard`) unlinking is slow
// enough to dominate the suite's run time if done synchronously. Node waits for it before exiting;
// Bun's test runner does not, so the suite awaits removalsDone() in an after hook.
const removals = new Set();
function removeRoot(root) {
  const removal = fs.promises.rm(root, { recursive: true, force: true }).catch(() => {});
  removals.add(removal);
  removal.then(() => removals.delete(removal));
}

/** Resolves when every temp root given to removeRoot is gone. */
export async function removalsDone() {
  await Promise.all([...removals]);
}

/**
 * Run one sequence. Throws an Error carrying the seed, the failing step, the op log and the
 * kept temp roots on the first difference.
 * @param {{ seed: number, steps: number, modA: object, modB: object, implName: string }} o
 */
export async function runSequence({ seed, steps, modA, modB, implName, onStep }) {
  const rng = new Rng(seed);
  const g = new GenContext(rng, new DataGen(rng));
  const layout = layoutOf(seed);
  const A = makeSide("reference", modA, layout);
  const B = makeSide(implName, modB, layout);
  // Where this Node's readline ends lines at U+2028/U+2029 (Node >= 24), the reference's
  // list()/listAll() cut messages holding them (helpers/older-reference.mjs): the reference side's
  // listings are answered by the reference under Node 22, over the same files. (With
  // PARITY_IMPL=reference, side B keeps this Node's answers, and differs on exactly those sessions.)
  if (READLINE_SPLITS_AT_SEPARATORS) A.listing = olderReferenceListing;
  const log = [];
  const savedEnv = process.env.PI_CODING_AGENT_DIR;
  const savedCwd = process.cwd();
  let stepNo = -1;
  let ok = false;
  try {
    check("CURRENT_SESSION_VERSION", A.norm.value(modA.CURRENT_SESSION_VERSION), B.norm.value(modB.CURRENT_SESSION_VERSION));
    const epilogue = genEpilogue();
    const total = steps + 1 + epilogue.length;
    for (stepNo = 0; stepNo < total; stepNo++) {
      g.state = A.sm ? stateOf(A) : { entries: [], idCount: 0, files: A.files, sidCount: 0 };
      const op = stepNo === 0 ? genStart(g) : stepNo <= steps ? genStep(g) : epilogue[stepNo - steps - 1];
      log.push(`${String(stepNo).padStart(3)}: ${describeOp(op)}`);

      const rA = await applyOp(A, op);
      const rB = await applyOp(B, op);
      if (rA.unsorted !== undefined) throw new Error(`harness: reference list() not sorted by modified at ${rA.unsorted}`);
      if (rB.unsorted !== undefined) throw new Mismatch(`result of ${op.name}: implementation's list is not sorted by modified (index ${rB.unsorted})`);
      let nA = normCapture(A, rA);
      let nB = normCapture(B, rB);
      if (op.list && Array.isArray(nA.ok) && Array.isArray(nB.ok)) {
        nA = { ok: canonicalRuns(nA.ok) };
        nB = { ok: canonicalRuns(nB.ok) };
      }
      onStep?.(op, rA);
      check(`result of ${op.name}`, nA, nB);
      if (!A.sm) throw new Error("harness: the start operation did not produce a manager");
      if (!B.sm) throw new Mismatch("the start operation produced no manager on the implementation");

      harvest(A);
      harvest(B);

      const snapA = snapshot(A.root, A.norm);
      const snapB = snapshot(B.root, B.norm);
      compareSnapshots(snapA, snapB);
      const filesOf = (snap) => snap.filter((it) => !it.isDir && it.rel.endsWith(".jsonl")).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      A.files = filesOf(snapA);
      B.files = filesOf(snapB);
      A.clock.settle(A.root, A.norm, snapA);
      B.clock.settle(B.root, B.norm, snapB);

      g.state = stateOf(A);
      const p = sweepParams(g);
      const sA = sweep(A, p);
      const sB = sweep(B, p);
      for (let i = 0; i < sA.length; i++) {
        const [name, cA] = sA[i];
        const [nameB, cB] = sB[i];
        if (nameB !== name) throw new Error(`harness: sweep order (${name} vs ${nameB})`);
        check(`after step: ${name}`, normCapture(A, cA), normCapture(B, cB));
      }
    }
    // Anything the last sweep wrote (e.g. a repair by loadEntriesFromFile) is still compared.
    stepNo = "final";
    compareSnapshots(snapshot(A.root, A.norm), snapshot(B.root, B.norm));
    ok = true;
  } catch (e) {
    const kind = e instanceof Mismatch ? "PARITY MISMATCH" : "HARNESS ERROR";
    const detail = e instanceof Mismatch ? e.message : (e?.stack ?? String(e));
    const msg = [
      `${kind} (seed=${seed}, step ${stepNo}; ${steps} steps + start + epilogue, implementation=${implName})`,
      `op: ${log[log.length - 1] ?? "(none)"}`,
      ...(layout ? [`layout: cwd <ROOT>/${layout.home}, sessDir ${JSON.stringify(layout.sessDir)}, otherDir ${JSON.stringify(layout.otherDir)}`] : []),
      detail,
      `replay: PARITY_SEED=${seed} PARITY_RUNS=1 PARITY_STEPS=${steps}${implName === "reference" ? " PARITY_IMPL=reference" : ""} node --test __test__/parity.test.mjs`,
      `temp roots kept: reference=${A.root} implementation=${B.root}`,
      "op log:",
      ...log,
    ].join("\n");
    const err = new Error(msg);
    err.seed = seed;
    throw err;
  } finally {
    process.chdir(savedCwd);
    if (savedEnv === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = savedEnv;
    if (ok) {
      removeRoot(A.root);
      removeRoot(B.root);
    }
  }
}
