#!/usr/bin/env node
// Big-data benchmark: `npm run bench:scale` (= node bench/scale.mjs). The targets of issue 3
// ("Fast at scale"), each line marked PASS / MISS.
//
// Data: bench/scale-gen.mjs (3,000 sessions ≥ 2 GiB, a 128 MiB and a 1 GiB session, a
// 10,000-entry session), generated once into bench/data/scale/ and reused.
//
// Times: both implementations side by side in this process, alternating in Thue–Morse order
// (A B B A …) with a GC before each measurement; the figure is the median. Exception: the 1 GiB
// session is opened only in child processes (it would not fit both sides in one heap).
// Peak RSS: always from a separate child process per implementation and operation
// (bench/scale-child.mjs prints process.resourceUsage().maxRSS), so one side's memory never
// pollutes the other's. First onProgress and event-loop delay are also from those children (a
// process that runs only that listing).
//
// Environment:
//   SCALE_ONLY=list,open      run only the sections whose key contains one of these strings
//                             (sections: list (= list + listAll), find (findById,
//                             findMostRecentSession), walk, grow, open128, open1g, perTurn,
//                             getTree, forkFrom, createBranchedSession, resume)
//   SCALE_RESUME_RUNS=5       child runs per implementation and line of the resume section
//   SCALE_RESUME_RUNS_1G=3    the same, on the 1 GiB session
//   SCALE_RESUME_DATA=text,mb128,gb1   the resume section's sessions (default: all three)
//   SCALE_REPS=2              in-process repetitions per implementation of the slow operations
//   SCALE_MIN_TIME_MS=300     per measurement, for the per-turn calls
//   SCALE_MEASUREMENTS=4      measurements per implementation, for the per-turn calls
//   SCALE_NO_CHILDREN=1       skip the child processes (no RSS figures; for quick iterations)
import { fork, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SELF = fileURLToPath(import.meta.url);
if (typeof globalThis.gc !== "function") {
  const r = spawnSync(process.execPath, ["--expose-gc", ...process.execArgv, SELF, ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}

const HERE = path.dirname(SELF);
const CHILD = path.join(HERE, "scale-child.mjs");
// Child processes are started by a small spawner forked now, while this process is small: on
// Linux a new process starts with its parent's RSS as its maxRSS (the high-water mark survives
// fork + execve), so children spawned from this process, once it holds sessions of both
// implementations, would report at least that.
const spawner = fork(CHILD, ["--spawner"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
const pendingChildren = new Map();
let childSeq = 0;
spawner.on("message", (m) => {
  pendingChildren.get(m.id)?.(m);
  pendingChildren.delete(m.id);
});
const spawnViaSpawner = (argv, env) =>
  new Promise((resolve) => {
    const id = ++childSeq;
    pendingChildren.set(id, resolve);
    spawner.send({ id, argv, env });
  });
const RESULTS = path.join(HERE, "scale-results.json");
const { loadReference, loadOurs, ROOT } = await import("../__test__/helpers/target.mjs");
const { ensureScaleData, SCALE_CWD } = await import("./scale-gen.mjs");

const ONLY = (process.env.SCALE_ONLY ?? "").split(",").map((s) => s.trim()).filter(Boolean);
const REPS = Math.max(1, Number(process.env.SCALE_REPS ?? 2));
const MIN_TIME_MS = Number(process.env.SCALE_MIN_TIME_MS ?? 300);
const MEASUREMENTS = Math.max(1, Number(process.env.SCALE_MEASUREMENTS ?? 4));
const CHILDREN = !process.env.SCALE_NO_CHILDREN;
const ELD_RESOLUTION_MS = 10;

const now = () => performance.now();
const log = (...a) => console.error(...a);
const gc = () => {
  globalThis.gc();
  globalThis.gc();
};
const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const popcount = (n) => {
  let c = 0;
  for (; n; n &= n - 1) c++;
  return c;
};
const wanted = (key) => !ONLY.length || ONLY.some((f) => key.toLowerCase().includes(f.toLowerCase()));

// ---------------------------------------------------------------- data and implementations
const t0 = now();
const loadStart = os.loadavg()[0];
const data = await ensureScaleData(log);
const many = data.many;
const agentDir = many.agentDir;
process.env.PI_CODING_AGENT_DIR = agentDir;

const reference = await loadReference();
let ours = null;
let oursError = null;
try {
  ours = loadOurs();
  if (typeof ours?.SessionManager?.open !== "function") throw new Error("index.js does not export SessionManager");
} catch (error) {
  oursError = String(error?.message ?? error).split("\n")[0];
  ours = null;
}
const impls = [{ key: "reference", mod: reference }, ...(ours ? [{ key: "ours", mod: ours }] : [])];
for (const impl of impls) {
  impl.SM = impl.mod.SessionManager;
  impl.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `pi-scale-${impl.key}-`));
  impl.ops = await import(`./scale-ops.mjs?impl=${impl.key}`);
}
const { clearListingCaches } = impls[0].ops;
const implKeys = impls.map((i) => i.key);
/** Thue–Morse order over the implementations, n measurements each. */
const order = (n) => Array.from({ length: n * impls.length }, (_, j) => (impls.length === 1 ? 0 : popcount(j) & 1));

const MB = (b) => `${(b / 1e6).toFixed(b < 10e6 ? 1 : 0)} MB`;
console.log(`pi-session-native scale benchmark — node ${process.version}, ${os.cpus().length} CPU(s), ${os.platform()}/${os.arch()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM`);
console.log(
  `data: ${many.count} sessions, ${MB(many.totalBytes)} (largest ${MB(many.largestBytes)}, ${many.over50MB} ≥ 50 MiB) in ${path.relative(ROOT, many.sessionDir)}; ` +
    `${data.mb128 && !data.mb128.skipped ? `${MB(data.mb128.bytes)} session (${data.mb128.entries} entries)` : "no 128 MiB session"}; ` +
    `${data.gb1 && !data.gb1.skipped ? `${MB(data.gb1.bytes)} session (${data.gb1.entries} entries)` : `no 1 GiB session (${data.gb1?.skipped ?? "not generated"})`}; ` +
    `${data.e10k.entries}-entry session (${MB(data.e10k.bytes)})` +
    `${data.text3k && !data.text3k.skipped ? `; 3,000-turn text session (${MB(data.text3k.bytes)}, ${data.text3k.entries} entries)` : ""}`,
);
if (!ours) console.log(`ours: could not load ${path.join(ROOT, "index.js")} (${oursError}) — benchmarking the reference alone`);

// ---------------------------------------------------------------- child processes (RSS)
async function child(implKey, op, args = {}) {
  if (!CHILDREN) return null;
  const r = await spawnViaSpawner(["--expose-gc", CHILD, implKey, op, JSON.stringify(args)], { ...process.env, PI_CODING_AGENT_DIR: agentDir });
  const lines = (r.stdout ?? "").trim().split("\n").filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines[i]);
    } catch {}
  }
  // The process died (V8 heap limit, native crash): report why.
  const err = (r.stderr ?? "").split("\n").filter(Boolean);
  const reason =
    err.find((l) => /out of memory|heap limit|Invalid string length|RangeError|FATAL|Error:/i.test(l)) ?? err[err.length - 1] ?? "no output";
  return { ok: false, impl: implKey, op, failed: `exit ${r.status ?? r.signal}: ${reason.trim().slice(0, 200)}` };
}
async function childBoth(op, argsFor) {
  if (!CHILDREN) return null;
  const out = {};
  for (const impl of impls) {
    settleDisk();
    log(`  child: ${impl.key} ${op}...`);
    out[impl.key] = await child(impl.key, op, typeof argsFor === "function" ? argsFor(impl) : argsFor);
    const o = out[impl.key];
    if (o && !o.ok) log(`    failed: ${o.failed}`);
    else if (o) log(`    ${fmtMs(o.ms)}, peak RSS ${fmtMb(o.maxRssMb)}`);
  }
  return out;
}

// ---------------------------------------------------------------- measurement helpers
/**
 * Waits until the files earlier runs wrote are on disk (`sync`). forkFrom and
 * createBranchedSession write 134 MB per run; without this, the kernel's write-back of the
 * previous run (either implementation's) throttles the writes of the next one, which then measures
 * 2-6× slower depending on what ran before it.
 */
function settleDisk() {
  if (process.platform !== "win32") spawnSync("sync", { stdio: "ignore" });
}

/**
 * Slow operations: per repetition, setup (untimed), GC, one timed call, teardown; the
 * implementations alternate in Thue–Morse order. Returns { [impl]: { ms: median, all, error } }.
 */
async function slow(spec, reps = REPS) {
  const res = Object.fromEntries(impls.map((i) => [i.key, { all: [], error: null }]));
  for (const i of order(reps)) {
    const impl = impls[i];
    const r = res[impl.key];
    if (r.error) continue;
    let state;
    try {
      state = await spec.setup?.(impl);
      settleDisk();
      gc();
      const t = now();
      const v = await spec.run(impl, state);
      const ms = now() - t;
      r.all.push(ms);
      log(`    ${impl.key}: ${fmtMs(ms)}`);
      spec.after?.(impl, v, ms, r);
    } catch (error) {
      r.error = String(error?.message ?? error).split("\n")[0];
    } finally {
      try {
        await spec.teardown?.(impl, state);
      } catch {}
    }
  }
  for (const r of Object.values(res)) r.ms = r.error ? null : median(r.all);
  return res;
}

/** Fast per-call operations: the run.mjs method (batches of k calls, median per call). */
function fast(makeState, callName, dropState) {
  const res = {};
  const states = {};
  for (const impl of impls) {
    res[impl.key] = { samples: [], measurementMedians: [], error: null };
    try {
      states[impl.key] = makeState(impl);
      const call = impl.ops.makeCall(states[impl.key].sm, callName);
      const batch = impl.ops.compileBatch(call);
      // Warm up (200 ms) and pick k so a sample takes ≥ ~2 ms.
      let k = 1;
      let elapsed = 0;
      while (elapsed < 200) {
        const dt = impl.ops.runBatch(batch, k);
        elapsed += dt;
        if (dt < 2) k = Math.min(k * Math.max(2, Math.ceil(2 / Math.max(dt, 0.001))), 1 << 20);
      }
      Object.assign(res[impl.key], { k, batch });
    } catch (error) {
      res[impl.key].error = String(error?.message ?? error).split("\n")[0];
    }
  }
  for (const i of order(MEASUREMENTS)) {
    const impl = impls[i];
    const r = res[impl.key];
    if (r.error) continue;
    gc();
    const samples = [];
    let measured = 0;
    try {
      while (measured < MIN_TIME_MS || samples.length < 5) {
        const dt = impl.ops.runBatch(r.batch, r.k);
        measured += dt;
        samples.push(dt / r.k);
      }
    } catch (error) {
      r.error = String(error?.message ?? error).split("\n")[0];
      continue;
    }
    r.samples.push(...samples);
    r.measurementMedians.push(median(samples));
  }
  for (const impl of impls) {
    const r = res[impl.key];
    r.ms = r.error ? null : median(r.samples);
    r.calls = r.samples.length * (r.k ?? 0);
    delete r.batch;
    delete r.samples;
    dropState?.(states[impl.key]);
  }
  return res;
}

// ---------------------------------------------------------------- report rows
const rows = []; // { label, ref, ours, ratio, target, status, indent }
const results = []; // structured, for scale-results.json
const fmtMs = (ms) => {
  if (ms == null || !Number.isFinite(ms)) return "–";
  if (ms < 1e-3) return `${(ms * 1e6).toFixed(0)} ns`;
  if (ms < 1) return `${(ms * 1e3).toPrecision(3)} µs`;
  if (ms < 1000) return `${ms.toPrecision(3)} ms`;
  return `${(ms / 1000).toPrecision(3)} s`;
};
const fmtMb = (mb) => (mb == null || !Number.isFinite(mb) ? "–" : `${mb.toFixed(0)} MB`);
const failedCell = (x) => (x?.failed ? `failed: ${x.failed}` : x?.error ? `failed: ${x.error}` : null);

/**
 * A timing row. speedup: required reference/ours factor (≥), or maxRatio: required ours/reference (≤).
 */
function timeRow(label, res, { speedup, maxRatio, maxMs, note, floor } = {}) {
  const ref = res.reference;
  const our = res.ours;
  const ratio = ref?.ms && our?.ms ? our.ms / ref.ms : null;
  let target = "";
  let status = "";
  if (speedup) target = `≥ ${speedup}× faster`;
  if (maxRatio) target = `ratio ≤ ${maxRatio}`;
  if (maxMs) target = `ours ≤ ${maxMs} ms`;
  if (target) {
    if (!ours) status = "n/a";
    else if (our?.ms == null) status = "MISS";
    else if (maxMs) status = our.ms <= maxMs ? "PASS" : "MISS";
    else if (ref?.ms == null) status = "PASS (reference failed)";
    else status = (speedup ? ref.ms / our.ms >= speedup : ratio <= maxRatio) ? "PASS" : "MISS";
  }
  rows.push({
    label,
    ref: failedCell(ref) ?? fmtMs(ref?.ms),
    ours: ours ? (failedCell(our) ?? fmtMs(our?.ms)) : "n/a",
    ratio: ratio == null ? "" : `${ratio < 0.1 ? ratio.toFixed(3) : ratio.toFixed(2)} (${ratio <= 1 ? `${(1 / ratio).toFixed(1)}× faster` : `${ratio.toFixed(1)}× slower`})`,
    target,
    status,
    floor: floor === undefined ? "" : fmtMs(floor),
  });
  results.push({ kind: "time", label, reference: ref, ours: our, ratio, target, status, note, floorMs: floor });
}

/** A sub-row from the child processes: peak RSS (with an optional ours-only bound). */
function rssRow(label, kids, { maxMb, targetText, check } = {}) {
  if (!kids) return;
  const ref = kids.reference;
  const our = kids.ours;
  let target = "";
  let status = "";
  if (maxMb || check) {
    target = targetText ?? `ours ≤ ${maxMb} MB`;
    status = !ours ? "n/a" : !our?.ok ? "MISS" : (check ? check(our) : our.maxRssMb <= maxMb) ? "PASS" : "MISS";
  }
  rows.push({
    label: `  ${label}`,
    ref: ref?.ok ? fmtMb(ref.maxRssMb) : ref ? `failed (${fmtMb(ref.maxRssMb)})` : "–",
    ours: ours ? (our?.ok ? fmtMb(our.maxRssMb) : our ? `failed (${fmtMb(our.maxRssMb)})` : "–") : "n/a",
    ratio: ref?.ok && our?.ok ? `${(our.maxRssMb / ref.maxRssMb).toFixed(2)}` : "",
    target,
    status,
  });
  results.push({ kind: "rss", label, reference: ref, ours: our, target, status });
}

/** A sub-row of another per-implementation figure (ms), with an ours-only bound. */
function metricRow(label, refV, ourV, { maxMs, targetText } = {}) {
  let target = "";
  let status = "";
  if (maxMs != null) {
    target = targetText ?? `ours ≤ ${maxMs} ms`;
    status = !ours ? "n/a" : ourV == null ? "MISS" : ourV <= maxMs ? "PASS" : "MISS";
  }
  rows.push({ label: `  ${label}`, ref: fmtMs(refV), ours: ours ? fmtMs(ourV) : "n/a", ratio: "", target, status });
  results.push({ kind: "metric", label, reference: refV, ours: ourV, target, status });
}

function noteRow(text) {
  rows.push({ label: `  ${text}`, ref: "", ours: "", ratio: "", target: "", status: "", note: true });
}

// ---------------------------------------------------------------- sections
const sessionsLabel = `${many.count.toLocaleString("en-US")} sessions, ${MB(many.totalBytes)}`;

async function listRun(impl, kind) {
  const h = (await import("node:perf_hooks")).monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  let first = null;
  const start = now();
  h.enable();
  const onProgress = () => {
    if (first === null) first = now() - start;
  };
  const result = kind === "list" ? await impl.SM.list(SCALE_CWD, many.sessionDir, onProgress) : await impl.SM.listAll(onProgress);
  const ms = now() - start;
  h.disable();
  return { ms, firstProgressMs: first, eldMaxMs: h.max / 1e6, count: result.length, paths: result.map((s) => s.path).sort().join("\n") };
}

if (wanted("list")) {
  log(`list / listAll over ${sessionsLabel} (${REPS}× each side, in process)...`);
  const counts = {};
  const second = Object.fromEntries(impls.map((i) => [i.key, { all: [] }]));
  const sameSet = new Set();
  const listRes = await slow(
    {
      setup: (impl) => {
        if (impl.key === "ours") clearListingCaches(agentDir);
      },
      run: (impl) => listRun(impl, "list"),
      after: async (impl, v, _ms, r) => {
        counts[impl.key] = v.count;
        sameSet.add(v.paths);
        r.firstProgress = [...(r.firstProgress ?? []), v.firstProgressMs];
        r.eld = [...(r.eld ?? []), v.eldMaxMs];
      },
      teardown: async (impl) => {
        // The second call on the unchanged directory (ours: warm listing cache).
        gc();
        const v = await listRun(impl, "list");
        second[impl.key].all.push(v.ms);
      },
    },
    REPS,
  );
  for (const r of Object.values(second)) r.ms = median(r.all);
  log(`  listAll...`);
  const listAllRes = await slow(
    {
      setup: (impl) => {
        if (impl.key === "ours") clearListingCaches(agentDir);
      },
      run: (impl) => listRun(impl, "listAll"),
      after: (impl, v, _ms, r) => {
        counts[`${impl.key}/listAll`] = v.count;
        sameSet.add(v.paths);
        r.firstProgress = [...(r.firstProgress ?? []), v.firstProgressMs];
        r.eld = [...(r.eld ?? []), v.eldMaxMs];
      },
    },
    REPS,
  );
  const listArgs = { cwd: SCALE_CWD, dir: many.sessionDir, agentDir };
  const kidsCold = await childBoth("list", { ...listArgs, clearCache: true });
  // Right after the cold child: ours finds the cache that run persisted, in a new process.
  const kidsWarm = await childBoth("list", { ...listArgs, clearCache: false });
  const kidsAll = await childBoth("listAll", { agentDir, clearCache: true });

  const listTargets = (kids, label, res) => {
    timeRow(label, res, { speedup: 10 });
    rssRow("peak RSS (own process)", kids, { maxMb: 256 });
    metricRow("first onProgress call (own process)", kids?.reference?.firstProgressMs, kids?.ours?.firstProgressMs, { maxMs: 50 });
    metricRow(
      `max event-loop delay (own process; monitorEventLoopDelay max, ${ELD_RESOLUTION_MS} ms resolution included)`,
      kids?.reference?.eldMaxMs,
      kids?.ours?.eldMaxMs,
      { maxMs: 20 + ELD_RESOLUTION_MS, targetText: `ours blocked ≤ 20 ms (max ≤ ${20 + ELD_RESOLUTION_MS} ms)` },
    );
    metricRow(
      "  same, in this process (worst of the runs)",
      Math.max(...(res.reference?.eld ?? [NaN])),
      res.ours ? Math.max(...(res.ours.eld ?? [NaN])) : null,
    );
  };
  listTargets(kidsCold, `list(cwd, dir): ${sessionsLabel}, cold cache`, listRes);
  listTargets(kidsAll, `listAll() (PI_CODING_AGENT_DIR): ${sessionsLabel}, cold cache`, listAllRes);
  timeRow(`list(cwd, dir) again, unchanged dir (2nd call, same process)`, second, { speedup: 100 });
  timeRow(`list(cwd, dir) in a new process, unchanged dir (persisted cache)`, kidsWarm ?? {}, { speedup: 100 });
  rssRow("peak RSS (own process)", kidsWarm, { maxMb: 256 });
  const countsText = Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(", ");
  if (sameSet.size > 1) noteRow(`WARNING: the implementations listed different sets of files (${countsText})`);
  results.push({ kind: "listCounts", counts, sameFiles: sameSet.size <= 1 });
}

if (wanted("find")) {
  // findById and findMostRecentSession read session headers in readdirSync's order until one
  // matches: the id readdirSync lists last, and a cwd no session has, make them read every one.
  const names = fs.readdirSync(many.sessionDir).filter((n) => n.endsWith(".jsonl"));
  const lastFile = path.join(many.sessionDir, names[names.length - 1]);
  const firstLine = (file) => {
    const fd = fs.openSync(file, "r");
    try {
      const buf = Buffer.alloc(64 << 10);
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      return JSON.parse(buf.toString("utf8", 0, n).split("\n")[0]);
    } finally {
      fs.closeSync(fd);
    }
  };
  const { id: lastId, cwd: lastCwd } = firstLine(lastFile);
  log(`findById / findMostRecentSession over ${sessionsLabel} (${REPS}× each side, in process)...`);
  const byId = await slow({
    run: (impl) => {
      const found = impl.SM.findById(lastCwd, lastId, many.sessionDir);
      if (found !== lastFile) throw new Error(`findById found ${found}`);
    },
  });
  const recent = await slow({
    run: (impl) => {
      const found = impl.mod.findMostRecentSession(many.sessionDir, "/no/such/project");
      if (found !== null) throw new Error(`findMostRecentSession found ${found}`);
    },
  });
  timeRow(`findById of the session readdirSync lists last: ${sessionsLabel}, every header read`, byId);
  timeRow(`findMostRecentSession(dir, a cwd no session has): every header read`, recent);
}

const file128 = data.mb128 && !data.mb128.skipped ? data.mb128.file : null;
if (wanted("walk")) {
  // Not a target of the issue: what a script that reads a whole directory synchronously costs
  // (one child process per implementation; every session opened and its context built).
  log(`walk: open + buildSessionContext of each of the ${sessionsLabel} in one loop...`);
  const kids = await childBoth("walk", (impl) => ({ dir: many.sessionDir, sessionDir: path.join(impl.tmp, "walk") }));
  if (kids) {
    timeRow(`walk ${sessionsLabel} in one synchronous loop (open + buildSessionContext each)`, { reference: kids.reference, ours: kids.ours });
    rssRow("peak RSS (own process)", kids);
    if (kids.reference?.ok && kids.ours?.ok && kids.reference.messages !== kids.ours.messages) noteRow("WARNING: the contexts differ in length");
  }
}

if (wanted("grow")) {
  // Not a target of the issue: a session that grows by 100 MB of tool output in one process. The
  // reference holds the messages; ours holds them too, and reads long lines back from the file.
  log("grow: a new session, 100 MB of tool output appended...");
  const kids = await childBoth("grow", (impl) => ({ sessionDir: path.join(impl.tmp, "grow"), mb: 100 }));
  if (kids) {
    timeRow("grow a new session by 100 MB of tool output (3,125 turns)", { reference: kids.reference, ours: kids.ours });
    rssRow("peak RSS (own process)", kids);
  }
  for (const impl of impls) fs.rmSync(path.join(impl.tmp, "grow"), { recursive: true, force: true });
}

if (wanted("open128") && file128) {
  log(`open of the ${MB(data.mb128.bytes)} session (${REPS + 1}× each side)...`);
  const res = await slow(
    {
      setup: (impl) => path.join(impl.tmp, "open128"),
      run: (impl, dir) => impl.SM.open(file128, dir),
    },
    REPS + 1,
  );
  timeRow(`open: ${MB(data.mb128.bytes)} session (${data.mb128.entries.toLocaleString("en-US")} entries)`, res, { speedup: 5 });
  rssRow("peak RSS (own process)", await childBoth("open", (impl) => ({ file: file128, sessionDir: path.join(impl.tmp, "open128") })));
}

if (wanted("open1g")) {
  if (!data.gb1 || data.gb1.skipped) {
    noteRow(`open + buildSessionContext of 1 GiB: SKIPPED (${data.gb1?.skipped ?? "not generated"})`);
  } else if (!CHILDREN) {
    noteRow("open + buildSessionContext of 1 GiB: skipped (SCALE_NO_CHILDREN)");
  } else {
    log(`open + buildSessionContext of the ${MB(data.gb1.bytes)} session (child processes only)...`);
    const kids = await childBoth("openContext", (impl) => ({ file: data.gb1.file, sessionDir: path.join(impl.tmp, "open1g") }));
    const base = await childBoth("baseline", {});
    const res = Object.fromEntries(Object.entries(kids).map(([k, v]) => [k, v?.ok ? { ms: v.ms, openMs: v.openMs, contextMs: v.contextMs } : { failed: v?.failed ?? "no result" }]));
    timeRow(`open + buildSessionContext: ${MB(data.gb1.bytes)} session (own processes)`, res, { speedup: 5 });
    const ourMat = kids.ours?.materializedBytes;
    const ourIdle = base.ours?.maxRssMb ?? 0;
    rssRow("peak RSS (own process)", kids, {
      targetText: `ours − idle (${fmtMb(ourIdle)}) ≤ 2 × context${ourMat != null ? ` (${(ourMat / 2 ** 20).toFixed(1)} MB)` : ""}`,
      check: (o) => o.maxRssMb - ourIdle <= (2 * o.materializedBytes) / 2 ** 20,
    });
    metricRow("  of which open", kids.reference?.openMs, kids.ours?.openMs);
    metricRow("  of which buildSessionContext", kids.reference?.contextMs, kids.ours?.contextMs);
    const mats = impls.map((i) => (kids[i.key]?.ok ? `${i.key} ${kids[i.key].contextMessages} messages, ${MB(kids[i.key].materializedBytes)} as JSON` : `${i.key} –`));
    noteRow(`context: ${mats.join("; ")}; idle process with the module loaded: ${impls.map((i) => `${i.key} ${fmtMb(base[i.key]?.maxRssMb)}`).join(", ")}`);
    if (kids.reference?.ok && kids.ours?.ok && kids.reference.contextMessages !== kids.ours.contextMessages) noteRow("WARNING: the contexts differ in length");
  }
}

const file10k = data.e10k.file;
const copy10k = (impl, tag) => {
  const f = path.join(impl.tmp, `10k-${tag}-${Date.now()}-${Math.random().toString(36).slice(2)}.jsonl`);
  fs.copyFileSync(file10k, f);
  return f;
};
const PER_TURN = ["appendMessage", "buildSessionContext", "buildSessionProjection", "getBranch", "getEntries", "getLeafEntry"];
if (wanted("perTurn")) {
  log(`per-turn calls on the ${data.e10k.entries.toLocaleString("en-US")}-entry session...`);
  const readonly = {};
  for (const impl of impls) {
    const f = copy10k(impl, "ro");
    readonly[impl.key] = { file: f, sm: impl.SM.open(f, impl.tmp) };
  }
  for (const call of PER_TURN) {
    log(`  ${call}`);
    const res =
      call === "appendMessage"
        ? fast(
            (impl) => {
              const f = copy10k(impl, "append");
              return { file: f, sm: impl.SM.open(f, impl.tmp) };
            },
            call,
            (st) => st && fs.rmSync(st.file, { force: true }),
          )
        : fast((impl) => readonly[impl.key], call);
    timeRow(`${call}${call === "appendMessage" ? " (persisted)" : ""}: ${data.e10k.entries.toLocaleString("en-US")}-entry session`, res, { maxRatio: 0.5 });
    rssRow(
      "peak RSS (own process: open + 100 calls)",
      await childBoth("perTurn", (impl) => ({ file: call === "appendMessage" ? copy10k(impl, "child") : readonly[impl.key].file, sessionDir: impl.tmp, call, iterations: 100 })),
    );
  }
}

if (wanted("getTree")) {
  log("getTree...");
  const st = {};
  for (const impl of impls) {
    const f = copy10k(impl, "tree");
    st[impl.key] = { file: f, sm: impl.SM.open(f, impl.tmp) };
  }
  const res = fast((impl) => st[impl.key], "getTree");
  timeRow(`getTree: ${data.e10k.entries.toLocaleString("en-US")}-entry session`, res, { speedup: 3 });
  rssRow("peak RSS (own process: open + 20 calls)", await childBoth("perTurn", (impl) => ({ file: st[impl.key].file, sessionDir: impl.tmp, call: "getTree", iterations: 20 })));
}

if (wanted("forkFrom") && file128) {
  log(`forkFrom of the ${MB(data.mb128.bytes)} session...`);
  const forkDir = (impl) => path.join(impl.tmp, "forks");
  const clean = (impl) => fs.rmSync(forkDir(impl), { recursive: true, force: true });
  const res = await slow({ setup: clean, run: (impl) => impl.SM.forkFrom(file128, `${SCALE_CWD}-fork`, forkDir(impl)), teardown: clean }, REPS + 1);
  timeRow(`forkFrom: ${MB(data.mb128.bytes)} session`, res, { speedup: 5 });
  rssRow("peak RSS (own process)", await childBoth("forkFrom", (impl) => ({ file: file128, targetCwd: `${SCALE_CWD}-fork`, sessionDir: forkDir(impl) })));
  for (const impl of impls) clean(impl);
}

if (wanted("createBranchedSession") && file128) {
  log(`createBranchedSession of the ${MB(data.mb128.bytes)} session...`);
  const dir = (impl) => path.join(impl.tmp, "branched");
  const res = await slow(
    {
      setup: (impl) => {
        fs.rmSync(dir(impl), { recursive: true, force: true });
        const sm = impl.SM.open(file128, dir(impl));
        return { sm, leaf: sm.getLeafId() };
      },
      run: (_impl, st) => st.sm.createBranchedSession(st.leaf),
      teardown: (impl) => fs.rmSync(dir(impl), { recursive: true, force: true }),
    },
    REPS + 1,
  );
  timeRow(`createBranchedSession(leaf): ${MB(data.mb128.bytes)} session (open not timed)`, res, { speedup: 5 });
  rssRow("peak RSS (own process: open + branch)", await childBoth("createBranchedSession", (impl) => ({ file: file128, sessionDir: dir(impl) })));
  for (const impl of impls) fs.rmSync(dir(impl), { recursive: true, force: true });
}

// ---------------------------------------------------------------- resume as pi does (issue 16)
// The agent's own call sequences (bench/resume-sequences.mjs, recorded by
// bench/record-agent-calls.mjs), each replayed in a fresh child process per implementation on a
// session opened in that process; the median of several runs (implementations alternating). FLOOR,
// for the lines that open the session and take its branch: what a fresh process needs at the
// least to read the file and make the objects the first getBranch() hands out (`JSON.parse` of
// them, bench/objects.mjs; child ops `objectsWrite`, `objectsParse`), and for the first
// getBranch() alone, the making. What the reference does instead, read the file and JSON.parse
// every line (child op `floor`), is a note of its own.
const RESUME_RUNS = Math.max(1, Number(process.env.SCALE_RESUME_RUNS ?? 5));
const RESUME_RUNS_1G = Math.max(1, Number(process.env.SCALE_RESUME_RUNS_1G ?? 3));
const RESUME_DATA = (process.env.SCALE_RESUME_DATA ?? "").split(",").map((x) => x.trim()).filter(Boolean);
const RESUME_SCENARIOS = {
  sdk: { label: "SDK resume (open + createAgentSession)", timed: ["open", "sdk-resume"], floor: "read+objects" },
  interactive: { label: "interactive resume (pi --session: open, first frames, footer)", timed: ["tui-resume"], floor: "read+objects" },
  tree: { label: "/tree after resume (resume untimed)", untimed: ["tui-resume"], timed: ["tui-tree"] },
  turn: { label: "a turn after resume (interactive; resume untimed)", untimed: ["tui-resume"], timed: ["tui-turn"], writes: true },
  sdkTurn: { label: "a tool-call turn after SDK resume (resume untimed)", untimed: ["open", "sdk-resume"], timed: ["turn-tool"], writes: true },
  compact: { label: "manual /compact after resume (interactive; resume untimed)", untimed: ["tui-resume"], timed: ["tui-compact"], writes: true },
  // As the issue's table measures them: the first calls after an open pay for whatever the open
  // left to do, the repetitions for what each call costs.
  firstTree: { label: "getTree() ×5, the first after open (open untimed)", untimed: ["open"], timedCalls: Array(5).fill("getTree") },
  firstEntries: {
    label: "getBranch() + getEntries() ×50, the first after open (open untimed)",
    untimed: ["open"],
    timedCalls: Array.from({ length: 50 }, () => ["getBranch", "getEntries"]).flat(),
  },
  // Issue 32: what pi's first calls after a resume cost, each on its own.
  resumeTree: { label: "interactive resume + the first /tree", timed: ["tui-resume", "tui-tree"], floor: "read+objects" },
  firstBranch: { label: "the first getBranch() after open (open untimed)", untimed: ["open"], timedCalls: ["getBranch"], floor: "objects" },
  footerWalk: {
    label: "the footer's getEntries() walk after open + getBranch() (untimed)",
    untimed: ["open"],
    untimedCalls: ["getBranch"],
    timedCalls: ["getEntries"],
  },
  openBranchContextEntries: {
    label: "open + getBranch() + buildSessionContext() + getEntries(), in one process",
    timed: ["open"],
    timedCalls: ["getBranch", "buildSessionContext", "getEntries"],
    floor: "read+objects",
  },
  // The transcript read model is ours alone: the reference's line is what a UI showing the last
  // page has to do with it today (every entry of the path parsed to show the last 50).
  lastPage: {
    label: "last transcript page of 50 after open (ours: open + readTranscriptPage; reference, which has none: open + getBranch())",
    timed: ["open"],
    timedCallsFor: { reference: ["getBranch"] },
    transcriptPageFor: { ours: 50 },
  },
};

/**
 * The floor of a resume set's lines (see above): the objects its first getBranch() hands out,
 * written once by ours, then `set.runs` fresh processes reading the file and parsing them.
 * Returns { objectsMs, readAndObjectsMs, entries } (medians), or null when a child failed.
 */
async function objectsFloor(set) {
  log("  floor: read the file + JSON.parse of the objects the first getBranch() hands out");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-scale-objects-"));
  try {
    const w = await child("ours", "objectsWrite", { file: set.file, dir });
    if (!w?.ok) {
      log(`    failed: ${w?.failed}`);
      return null;
    }
    const runs = [];
    for (let i = 0; i < set.runs; i++) {
      settleDisk();
      const o = await child("ours", "objectsParse", { file: set.file, dir });
      if (!o?.ok) {
        log(`    failed: ${o?.failed}`);
        return null;
      }
      runs.push(o);
      log(`    read ${fmtMs(o.readMs)} + objects ${fmtMs(o.skeletonsMs)} (${o.entries} entries)`);
    }
    return { objectsMs: median(runs.map((o) => o.skeletonsMs)), readAndObjectsMs: median(runs.map((o) => o.ms)), entries: w.entries };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * n child runs per implementation of `op`, in Thue–Morse order. prepare(impl, run) may return
 * { args, cleanup } (e.g. a fresh copy of the file for sequences that append).
 * Returns { [impl]: { ok, ms (median), all, maxRssMb (median), main (medians: the calling thread's
 * CPU time and wait for one, the other threads' CPU time and of it the ended threads', Linux;
 * else null), failed } }.
 */
async function childRuns(op, prepare, n) {
  const res = Object.fromEntries(impls.map((i) => [i.key, { all: [], rss: [], sched: [], failed: null }]));
  let run = 0;
  for (const i of order(n)) {
    const impl = impls[i];
    const r = res[impl.key];
    if (r.failed) continue;
    const { args, cleanup } = prepare(impl, run++);
    settleDisk();
    const o = await child(impl.key, op, args);
    cleanup?.();
    if (!o?.ok) {
      r.failed = o?.failed ?? "no result";
      log(`    ${impl.key}: failed: ${r.failed}`);
      continue;
    }
    r.all.push(o.ms);
    r.rss.push(o.maxRssMb);
    if (o.main) r.sched.push(o.main);
    r.last = o;
    log(`    ${impl.key}: ${fmtMs(o.ms)}, peak RSS ${fmtMb(o.maxRssMb)}`);
  }
  for (const r of Object.values(res)) {
    r.ok = !r.failed && r.all.length > 0;
    r.ms = r.ok ? median(r.all) : null;
    r.maxRssMb = r.ok ? median(r.rss) : null;
    // (Linux) the medians of the runs' CPU times (see the child's `main`).
    r.main = r.ok && r.sched.length === r.all.length ? Object.fromEntries(["cpuMs", "waitMs", "othersMs", "endedMs"].map((k) => [k, median(r.sched.map((m) => m[k]))])) : null;
  }
  return res;
}

/** The entry pi's default keepRecentTokens (20,000) would keep from: a user message ~80,000 chars back. */
function firstKeptFor(file) {
  const sm = reference.SessionManager.open(file, path.join(impls[0].tmp, "firstKept"));
  const branch = sm.getBranch();
  let chars = 0;
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i];
    if (e.type === "compaction") return e.firstKeptEntryId;
    chars += JSON.stringify(e).length;
    if (chars >= 80_000 && e.type === "message" && e.message.role === "user") return e.id;
  }
  return branch[0]?.id;
}

if (wanted("resume")) {
  if (!CHILDREN) noteRow("resume as pi does: skipped (SCALE_NO_CHILDREN; it runs in child processes only)");
  const sets = [
    data.text12 && !data.text12.skipped && {
      key: "text12",
      file: data.text12.file,
      label: `${MB(data.text12.bytes)} text session (3,000 turns, side branches, a compaction; ${data.text12.messages.toLocaleString("en-US")} messages)`,
      scenarios: ["interactive", "resumeTree", "sdk", "turn", "firstEntries", "openBranchContextEntries"],
      targets: { interactive: 0.4, resumeTree: 0.4 },
      runs: RESUME_RUNS,
    },
    data.text128 && !data.text128.skipped && {
      key: "text128",
      file: data.text128.file,
      label: `${MB(data.text128.bytes)} text session (${data.text128.messages.toLocaleString("en-US")} messages, a compaction every ~600 kB)`,
      scenarios: ["interactive", "resumeTree", "firstBranch", "footerWalk", "openBranchContextEntries", "turn"],
      targets: { openBranchContextEntries: 0.2 },
      msTargets: { firstBranch: 50, footerWalk: 50 },
      runs: RESUME_RUNS,
    },
    data.text3k && !data.text3k.skipped && {
      key: "text",
      file: data.text3k.file,
      label: `${MB(data.text3k.bytes)} text session (3,000 turns, ${data.text3k.messages.toLocaleString("en-US")} messages, written by the reference)`,
      scenarios: ["sdk", "interactive", "tree", "turn", "sdkTurn", "compact", "firstTree", "firstEntries"],
      targets: { interactive: 0.6, firstTree: 0.8, firstEntries: 0.8 },
      runs: RESUME_RUNS,
    },
    file128 && {
      key: "mb128",
      file: file128,
      label: `${MB(data.mb128.bytes)} session (images, tool output; ${data.mb128.entries.toLocaleString("en-US")} entries)`,
      scenarios: ["sdk", "interactive", "tree", "turn", "compact", "firstTree", "firstEntries"],
      targets: { interactive: 0.2, tree: 0.2, firstTree: 0.8, firstEntries: 0.8 },
      runs: RESUME_RUNS,
    },
    data.gb1 && !data.gb1.skipped && {
      key: "gb1",
      file: data.gb1.file,
      label: `${MB(data.gb1.bytes)} session (${data.gb1.entries.toLocaleString("en-US")} entries)`,
      scenarios: ["interactive", "firstTree", "firstEntries", "lastPage"],
      targets: { interactive: 0.2, firstTree: 0.8, firstEntries: 0.8 },
      rssAtMostReference: ["interactive"],
      runs: RESUME_RUNS_1G,
    },
  ].filter((x) => x && (!RESUME_DATA.length || RESUME_DATA.includes(x.key)));
  if (data.gb1?.skipped && (!RESUME_DATA.length || RESUME_DATA.includes("gb1"))) noteRow(`resume as pi does, 1 GiB session: SKIPPED (${data.gb1.skipped})`);
  for (const set of CHILDREN ? sets : []) {
    log(`resume as pi does: ${set.label} (${set.runs} child runs per side and line)...`);
    noteRow(`resume as pi does — ${set.label}; the agent's recorded call sequences, each run in a fresh process`);
    log("  read + JSON.parse of every line (what the reference does)");
    const floorRuns = [];
    for (let i = 0; i < set.runs; i++) {
      settleDisk();
      const o = await child("reference", "floor", { file: set.file });
      if (o?.ok) floorRuns.push(o.ms);
      log(`    ${o?.ok ? fmtMs(o.ms) : `failed: ${o?.failed}`}`);
    }
    const floorMs = median(floorRuns);
    noteRow(`  read + JSON.parse of every line, in a fresh process (what the reference does): ${fmtMs(floorMs)}`);
    const objects = await objectsFloor(set);
    const floors = { "read+objects": objects?.readAndObjectsMs, objects: objects?.objectsMs };
    const firstKeptId = set.scenarios.includes("compact") ? firstKeptFor(set.file) : undefined;
    const group = { kind: "resume", set: set.key, file: path.relative(ROOT, set.file), floorMs, floorRuns, objects, lines: {} };
    for (const key of set.scenarios) {
      const sc = RESUME_SCENARIOS[key];
      log(`  ${sc.label}`);
      const res = await childRuns(
        "resume",
        (impl, run) => {
          const base = {
            untimed: sc.untimed ?? [],
            untimedCalls: sc.untimedCalls ?? [],
            timed: sc.timed ?? [],
            timedCalls: sc.timedCallsFor?.[impl.key] ?? sc.timedCalls ?? [],
            transcriptPage: sc.transcriptPageFor?.[impl.key],
            firstKeptId,
          };
          if (!sc.writes) return { args: { ...base, file: set.file } };
          const copy = path.join(impl.tmp, `resume-${set.key}-${key}-${run}-${path.basename(set.file)}`);
          fs.copyFileSync(set.file, copy);
          return { args: { ...base, file: copy }, cleanup: () => fs.rmSync(copy, { force: true }) };
        },
        set.runs,
      );
      const maxRatio = set.targets[key];
      const maxMs = set.msTargets?.[key];
      timeRow(`  ${sc.label}`, res, { maxRatio, maxMs, floor: sc.floor === undefined ? undefined : floors[sc.floor] });
      // Where the main thread's time went (Linux): its own work, and waiting for a core while
      // the process's other threads (V8's compilers and collector, ours) had both of this
      // machine's; then how much CPU those other threads took in the window, and of it the
      // threads that ended within it (ours). The ratios are of the two sides' CPU times.
      if (key === "interactive" && res.reference?.main && res.ours?.main) {
        const [r, o] = [res.reference.main, res.ours.main];
        const cpuRow = (label, key, show, ratio = true) => rows.push({ label, ref: show(r), ours: show(o), ratio: ratio ? (o[key] / r[key]).toFixed(2) : "", target: "", status: "" });
        cpuRow("    ↳ its main thread on a CPU (waiting for one)", "cpuMs", (m) => `${fmtMs(m.cpuMs)} (${fmtMs(m.waitMs)})`);
        cpuRow("    ↳ the process's other threads on a CPU", "othersMs", (m) => fmtMs(m.othersMs));
        cpuRow("      ↳ of it, threads that ended within the window (ours: reading, checking, batches)", "endedMs", (m) => fmtMs(m.endedMs), false);
        results.push({ kind: "mainThread", label: sc.label, reference: r, ours: o });
      }
      if (key === "interactive" || set.rssAtMostReference?.includes(key)) {
        const atMost = set.rssAtMostReference?.includes(key);
        rssRow(
          "peak RSS (own process)",
          res,
          atMost ? { targetText: "ours ≤ reference", check: (o) => res.reference?.ok && o.maxRssMb <= res.reference.maxRssMb } : {},
        );
      }
      // The replay sums what it read (entries, messages, tree nodes): both sides must agree.
      const sinks = impls.map((i) => res[i.key]?.last?.sink);
      if (sinks.length > 1 && sinks.every((x) => x != null) && sinks[0] !== sinks[1]) noteRow(`    WARNING: the replays read different results (${impls.map((i, j) => `${i.key} ${sinks[j]}`).join(", ")})`);
      for (const i of impls) delete res[i.key]?.last;
      group.lines[key] = { label: sc.label, reference: res.reference, ours: res.ours, target: maxRatio ?? null, sinks };
    }
    results.push(group);
  }
}

// ---------------------------------------------------------------- report
const header = { label: "operation", ref: "reference", ours: "ours", ratio: "ratio (ours/ref)", target: "target", status: "status", floor: "FLOOR" };
const all = [header, ...rows];
// The FLOOR column (see the resume section) only when a line has one.
const cols = ["label", "ref", "ours", "ratio", "target", "status", ...(rows.some((r) => r.floor) ? ["floor"] : [])];
const width = Object.fromEntries(cols.map((c) => [c, Math.max(...all.filter((r) => !r.note).map((r) => String(r[c] ?? "").length))]));
const fmtRow = (r) =>
  r.note
    ? r.label
    : cols
        .map((c) => (c === "label" || c === "target" || c === "status" ? String(r[c] ?? "").padEnd(width[c]) : String(r[c] ?? "").padStart(width[c])))
        .join("  ")
        .trimEnd();
console.log("");
console.log(fmtRow(header));
console.log(cols.map((c) => "-".repeat(width[c])).join("  "));
for (const r of rows) console.log(fmtRow(r));
console.log("");
const statuses = results.filter((r) => r.status);
const pass = statuses.filter((r) => r.status.startsWith("PASS")).length;
const miss = statuses.filter((r) => r.status === "MISS").length;
console.log(`targets: ${pass} PASS, ${miss} MISS${statuses.length - pass - miss ? `, ${statuses.length - pass - miss} n/a` : ""}`);
console.log(
  `times: median; in this process, implementations alternating (slow ops ${REPS}–${REPS + 1} runs each, per-turn calls ${MEASUREMENTS} measurements × ≥ ${MIN_TIME_MS} ms each), ` +
    `except the 1 GiB session (one child process each) and the resume section (median of ${RESUME_RUNS} child runs per side, ${RESUME_RUNS_1G} on 1 GiB; FLOOR, in fresh processes: reading the file and JSON.parse of the objects the first getBranch() hands out, for the lines that open a session and take its branch; that JSON.parse alone for the first getBranch()). Peak RSS, first onProgress and event-loop delay: one child process per implementation and operation.`,
);
console.log(`peak RSS of this process (both implementations): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
console.log(`load average (1 min) at start / end: ${loadStart.toFixed(2)} / ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} CPU(s) — other load adds noise`);
console.log(`total time: ${((now() - t0) / 1000).toFixed(0)} s; results: ${path.relative(process.cwd(), RESULTS) || RESULTS}`);

fs.writeFileSync(
  RESULTS,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      platform: `${os.platform()}/${os.arch()}`,
      cpus: os.cpus().length,
      mode: ours ? "reference-vs-ours" : "reference-only",
      oursLoadError: oursError,
      settings: { reps: REPS, minTimeMs: MIN_TIME_MS, measurements: MEASUREMENTS, children: CHILDREN, only: ONLY },
      data: {
        many: { count: many.count, totalBytes: many.totalBytes, largestBytes: many.largestBytes, over50MB: many.over50MB },
        mb128: data.mb128 && { bytes: data.mb128.bytes, entries: data.mb128.entries, skipped: data.mb128.skipped },
        gb1: data.gb1 && { bytes: data.gb1.bytes, entries: data.gb1.entries, skipped: data.gb1.skipped },
        e10k: { bytes: data.e10k.bytes, entries: data.e10k.entries },
        text3k: data.text3k && { bytes: data.text3k.bytes, entries: data.text3k.entries, messages: data.text3k.messages, skipped: data.text3k.skipped },
      },
      table: rows,
      results,
      loadAverage: { start: loadStart, end: os.loadavg()[0] },
      totalSeconds: Math.round((now() - t0) / 1000),
    },
    null,
    2,
  )}\n`,
);
for (const impl of impls) fs.rmSync(impl.tmp, { recursive: true, force: true });
process.exit(0);
