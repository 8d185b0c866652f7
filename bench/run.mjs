#!/usr/bin/env node
// Benchmark: reference SessionManager (@earendil-works/pi-coding-agent) vs ours (/work/main/index.js),
// both in ONE process. Usage: `npm run bench` (= node bench/run.mjs).
//
// Environment:
//   BENCH_IMPL=reference      both sides are the reference (a second module instance): harness self-test,
//                             ratios should hover around 1.0
//   BENCH_ONLY=open,getTree   run only operations whose key contains one of these strings
//   BENCH_MIN_TIME_MS=500     minimum measured time per measurement (default 500)
//   BENCH_MEASUREMENTS=4      measurements per implementation per operation (default 4, Thue–Morse order ABBABAAB)
//
// Method: per operation, each implementation is set up and warmed up, then measured in alternating
// order (A B B A B A A B) with a GC before each measurement. A measurement runs samples (batches of
// k calls, k chosen so a sample takes ≥ ~2 ms for fast operations: short samples are
// rarely preempted on a loaded machine, so the median stays close to on-CPU time) until it has ≥ BENCH_MIN_TIME_MS
// of measured time and ≥ 5 samples — except for slow operations (one call ≥ BENCH_MIN_TIME_MS / 5):
// there the 5-call minimum applies to each implementation's measurements together (spread as 2,1,1,1
// over 4 measurements), plus ≥ BENCH_MIN_TIME_MS per measurement, so that a full run stays within
// ~3 minutes even when one side needs seconds per call. The reported figure is
// the median per-call time over all samples of that implementation. Operations that write use a
// separate temp copy per implementation.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const SELF = fileURLToPath(import.meta.url);
if (typeof globalThis.gc !== "function") {
  const r = spawnSync(process.execPath, ["--expose-gc", ...process.execArgv, SELF, ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  process.exit(r.status ?? 1);
}

const { loadReference, loadOurs, REFERENCE_PATH, ROOT } = await import("../__test__/helpers/target.mjs");
const { ensureData, BENCH_CWD } = await import("./data-gen.mjs");

const HERE = path.dirname(SELF);
const DATA_DIR = path.join(HERE, "data");
const RESULTS = path.join(HERE, "results.json");
const MIN_TIME_MS = Number(process.env.BENCH_MIN_TIME_MS ?? 500);
const MEASUREMENTS = Math.max(1, Number(process.env.BENCH_MEASUREMENTS ?? 4));
const MIN_SAMPLES = 5;
const SAMPLE_TARGET_MS = 2;
const WARMUP_MS = 200;
const ONLY = (process.env.BENCH_ONLY ?? "").split(",").map((s) => s.trim()).filter(Boolean);
const SELF_TEST = process.env.BENCH_IMPL === "reference";

const now = () => performance.now();
const log = (...a) => console.error(...a);
const gc = () => {
  globalThis.gc();
  globalThis.gc();
};
const popcount = (n) => {
  let c = 0;
  for (; n; n &= n - 1) c++;
  return c;
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// ---------------------------------------------------------------- implementations
const t0 = now();
// An agent dir of the bench's own, made before either implementation loads: ours keeps its
// listing cache there, so the listing lines measure what a pi user gets (an agent dir always
// exists for them; the cache is warm after the first listing) whatever the machine's ~/.pi holds,
// and the bench never writes into the user's own agent dir. Cold listings: bench:scale.
const AGENT_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "pi-bench-agent-"));
process.env.PI_CODING_AGENT_DIR = AGENT_DIR;
const loadStart = os.loadavg()[0];
const reference = await loadReference();
let ours = null;
let oursError = null;
if (SELF_TEST) {
  // A second, independent instance of the reference module (its own functions / JIT state).
  ours = await import(`${pathToFileURL(REFERENCE_PATH).href}?bench-second-instance`);
} else {
  try {
    ours = loadOurs();
    if (typeof ours?.SessionManager?.open !== "function") throw new Error("index.js does not export SessionManager");
  } catch (error) {
    oursError = String(error?.message ?? error).split("\n")[0];
    ours = null;
  }
}

const data = ensureData(DATA_DIR, log);

const impls = [
  { key: "reference", mod: reference },
  ...(ours ? [{ key: "ours", mod: ours }] : []),
];
for (const impl of impls) {
  impl.SM = impl.mod.SessionManager;
  impl.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `pi-bench-${impl.key}-`));
  impl.bigCopy = path.join(impl.tmp, path.basename(data.bigFile));
  fs.copyFileSync(data.bigFile, impl.bigCopy);
  impl.copies = 0;
  impl.readonlySm = null;
  impl.readonly = () => (impl.readonlySm ??= impl.SM.open(impl.bigCopy));
}

console.log(
  `pi-session-native benchmark — node ${process.version}, ${os.cpus().length} CPU(s), ${os.platform()}/${os.arch()}`,
);
console.log(
  `data: 3,000-turn session ${(data.bigBytes / 1048576).toFixed(1)} MB (${data.bigLines} lines); ` +
    `${data.manyFiles} sessions ${(data.manyBytes / 1048576).toFixed(1)} MB (${data.manyLargeFiles} of 1-2 MB)`,
);
if (SELF_TEST) console.log("BENCH_IMPL=reference: both columns are the reference (self-test; ratios should be ≈ 1.0)");
else if (!ours) {
  console.log(`ours: could not load ${path.join(ROOT, "index.js")} (${oursError}) — benchmarking the reference alone`);
}

// ---------------------------------------------------------------- workloads
const sampleIds = (() => {
  const entries = impls[0].readonly().getEntries();
  const ids = [];
  for (let i = 0; ids.length < 1024; i = (i + 7919) % entries.length) ids.push(entries[i].id);
  return ids;
})();
for (const impl of impls) {
  // One module instance per implementation: separate JIT feedback for each side's call sites.
  impl.opsModule = await import(`./ops.mjs?impl=${impl.key}`);
  impl.ops = new Map(impl.opsModule.makeOps({ data, BENCH_CWD, sampleIds }).map((op) => [op.key, op]));
}
const OPS = [...impls[0].ops.values()].map(({ key, label }) => ({ key, label }));

// ---------------------------------------------------------------- measurement
/** Warm up and pick the batch size k (calls per sample). */
async function warmup(key, impl) {
  const op = impl.ops.get(key);
  const state = await op.setup?.(impl);
  try {
    let k = 1;
    let elapsed = 0;
    let lastPerCall = 0;
    while (elapsed < WARMUP_MS) {
      const dt = await impl.opsModule.runBatch(op, impl, state, k);
      op.afterSample?.(impl, state);
      elapsed += dt;
      lastPerCall = dt / k;
      if (dt < SAMPLE_TARGET_MS) k = Math.min(k * Math.max(2, Math.ceil(SAMPLE_TARGET_MS / Math.max(dt, 0.001))), 1 << 20);
    }
    return { k, slow: k === 1 && lastPerCall * MIN_SAMPLES >= MIN_TIME_MS };
  } finally {
    await op.teardown?.(state);
  }
}

async function measure(key, impl, k, minSamples) {
  const op = impl.ops.get(key);
  const state = await op.setup?.(impl);
  gc();
  const samples = [];
  let measured = 0;
  let calls = 0;
  try {
    while (measured < MIN_TIME_MS || samples.length < minSamples) {
      const dt = await impl.opsModule.runBatch(op, impl, state, k);
      op.afterSample?.(impl, state);
      measured += dt;
      calls += k;
      samples.push(dt / k);
    }
  } finally {
    await op.teardown?.(state);
  }
  return { samples, calls };
}

const results = [];
const errors = [];
for (const op of OPS) {
  if (ONLY.length && !ONLY.some((f) => op.key.toLowerCase().includes(f.toLowerCase()))) continue;
  const opStart = now();
  const per = {};
  for (const impl of impls) {
    per[impl.key] = { samples: [], calls: 0, measurementMedians: [], error: null, k: 1, slow: false };
    try {
      gc();
      Object.assign(per[impl.key], await warmup(op.key, impl));
    } catch (error) {
      per[impl.key].error = String(error?.message ?? error).split("\n")[0];
    }
  }
  // Alternate in Thue–Morse order (A B B A B A A B ...): with an even number of measurements both
  // implementations sit at the same average position in time, which cancels linear drift.
  const order = [];
  for (let j = 0; j < MEASUREMENTS * impls.length; j++) {
    order.push(impls.length === 1 ? 0 : popcount(j) & 1);
  }
  for (const i of order) {
    const impl = impls[i];
    const r = per[impl.key];
    if (r.error) continue;
    try {
      // Slow ops: spread the 5-call minimum over this implementation's remaining measurements.
      const remaining = MEASUREMENTS - r.measurementMedians.length;
      const minSamples = r.slow ? Math.max(1, Math.ceil((MIN_SAMPLES - r.samples.length) / remaining)) : MIN_SAMPLES;
      const { samples, calls } = await measure(op.key, impl, r.k, minSamples);
      r.samples.push(...samples);
      r.calls += calls;
      r.measurementMedians.push(median(samples));
    } catch (error) {
      r.error = String(error?.message ?? error).split("\n")[0];
    }
  }
  const row = { key: op.key, operation: op.label };
  for (const impl of impls) {
    const r = per[impl.key];
    row[impl.key] = r.error
      ? { error: r.error }
      : {
          medianMs: median(r.samples),
          samples: r.samples.length,
          calls: r.calls,
          callsPerSample: r.k,
          measurementMediansMs: r.measurementMedians,
        };
    if (r.error) errors.push(`${op.label} [${impl.key}]: ${r.error}`);
  }
  if (!ours) row.ours = null;
  row.ratio =
    row.reference?.medianMs && row.ours?.medianMs ? row.ours.medianMs / row.reference.medianMs : null;
  results.push(row);
  log(`  ${op.label}: done in ${((now() - opStart) / 1000).toFixed(1)} s`);
}

// ---------------------------------------------------------------- report
function fmt(ms) {
  if (ms == null || !Number.isFinite(ms)) return "–";
  if (ms < 1e-3) return `${(ms * 1e6).toFixed(0)} ns`;
  if (ms < 1) return `${(ms * 1e3).toPrecision(3)} µs`;
  if (ms < 1000) return `${ms.toPrecision(3)} ms`;
  return `${(ms / 1000).toPrecision(3)} s`;
}
const cell = (r) => (r == null ? "n/a" : r.error ? "error" : fmt(r.medianMs));
const rows = [
  ["operation", "reference", "ours", "ratio"],
  ...results.map((r) => [r.operation, cell(r.reference), cell(r.ours), r.ratio == null ? "n/a" : r.ratio.toFixed(2)]),
];
const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
const line = (row) => row.map((v, c) => (c === 0 ? v.padEnd(widths[c]) : v.padStart(widths[c]))).join("   ");
console.log("");
console.log(line(rows[0]));
console.log(widths.map((w) => "-".repeat(w)).join("   "));
for (const row of rows.slice(1)) console.log(line(row));
console.log("");
for (const e of errors) console.log(`error: ${e}`);
const peakRssMb = process.resourceUsage().maxRSS / 1024;
console.log(
  `median time per call; ratio = ours / reference: < 1 means ours is faster (0.50 = twice as fast), > 1 means ours is slower.`,
);
console.log(
  `${MEASUREMENTS} alternating measurements per implementation, each ≥ ${MIN_TIME_MS} ms and ≥ ${MIN_SAMPLES} samples ` +
    `(ops slower than ${MIN_TIME_MS / MIN_SAMPLES} ms/call: ≥ ${MIN_SAMPLES} calls over all measurements); GC before each. ` +
    `Writes go to separate temp copies per implementation.`,
);
if (SELF_TEST) console.log("(self-test: both columns are the reference)");
console.log(`peak RSS (whole process, both implementations): ${peakRssMb.toFixed(0)} MB`);
console.log(
  `load average (1 min) at start / end: ${loadStart.toFixed(2)} / ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} CPU(s) — other load adds noise`,
);
console.log(`total time: ${((now() - t0) / 1000).toFixed(1)} s; results: ${path.relative(process.cwd(), RESULTS) || RESULTS}`);

fs.writeFileSync(
  RESULTS,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      platform: `${os.platform()}/${os.arch()}`,
      cpus: os.cpus().length,
      mode: SELF_TEST ? "reference-vs-reference" : ours ? "reference-vs-ours" : "reference-only",
      oursLoadError: oursError,
      settings: { minTimeMs: MIN_TIME_MS, measurementsPerImpl: MEASUREMENTS, minSamples: MIN_SAMPLES, slowOpMinCallsTotal: MIN_SAMPLES },
      data: {
        bigBytes: data.bigBytes,
        bigLines: data.bigLines,
        manyFiles: data.manyFiles,
        manyBytes: data.manyBytes,
        manyLargeFiles: data.manyLargeFiles,
      },
      results,
      peakRssMb: Math.round(peakRssMb),
      loadAverage: { start: loadStart, end: os.loadavg()[0] },
      totalSeconds: +((now() - t0) / 1000).toFixed(1),
    },
    null,
    2,
  )}\n`,
);

for (const impl of impls) fs.rmSync(impl.tmp, { recursive: true, force: true });
fs.rmSync(AGENT_DIR, { recursive: true, force: true });
process.exit(0);
