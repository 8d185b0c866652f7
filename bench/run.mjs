#!/usr/bin/env node
// Benchmark: reference SessionManager (@earendil-works/pi-coding-agent) vs ours (/work/main/index.js),
// both in ONE process. Usage: `npm run bench` (= node bench/run.mjs).
//
// Environment:
//   BENCH_IMPL=reference      both sides are the reference (a second module instance): harness self-test,
//                             ratios should hover around 1.0
//   BENCH_ONLY=open,getTree   run only operations whose key contains one of these strings
//   BENCH_MIN_TIME_MS=500     minimum measured time per measurement (default 500)
//   BENCH_MEASUREMENTS=3      measurements per implementation per operation (default 3, alternated ABBAAB…)
//
// Method: per operation, each implementation is set up and warmed up, then measured in alternating
// order (A B B A A B …) with a GC before each measurement. A measurement runs samples (batches of
// k calls, k chosen so a sample takes ≥ ~10 ms for fast operations) until it has ≥ BENCH_MIN_TIME_MS
// of measured time, ≥ 5 samples and ≥ 5 calls. The reported figure is the median per-call time over
// all samples of that implementation. Operations that write use a separate temp copy per implementation.
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
const MEASUREMENTS = Math.max(1, Number(process.env.BENCH_MEASUREMENTS ?? 3));
const MIN_SAMPLES = 5;
const MIN_CALLS = 5;
const SAMPLE_TARGET_MS = 10;
const WARMUP_MS = 200;
const ONLY = (process.env.BENCH_ONLY ?? "").split(",").map((s) => s.trim()).filter(Boolean);
const SELF_TEST = process.env.BENCH_IMPL === "reference";

const now = () => performance.now();
const log = (...a) => console.error(...a);
const gc = () => {
  globalThis.gc();
  globalThis.gc();
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// ---------------------------------------------------------------- implementations
const t0 = now();
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

const userMsg = () => ({
  role: "user",
  content: [{ type: "text", text: "Please run the test suite again and fix whatever fails in src/session/store.rs." }],
  timestamp: Date.now(),
});
const assistantMsg = () => ({
  role: "assistant",
  content: [
    { type: "thinking", thinking: "The user wants the tests rerun. ".repeat(12), thinkingSignature: "c2ln".repeat(16) },
    { type: "text", text: "Running the test suite now; I will fix failures as they show up. ".repeat(4) },
    { type: "toolCall", id: "toolu_01BenchCallAbcdefghijklm", name: "bash", arguments: { command: "cargo test -p pi-session-core", timeout: 120 } },
  ],
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-opus-4-1",
  usage: {
    input: 81234,
    output: 412,
    cacheRead: 80011,
    cacheWrite: 1200,
    totalTokens: 161657,
    cost: { input: 0.243702, output: 0.00618, cacheRead: 0.024003, cacheWrite: 0, total: 0.273885 },
  },
  stopReason: "toolUse",
  timestamp: Date.now(),
});
const TOOL_OUTPUT = Array.from(
  { length: 60 },
  (_, i) => `test session::store::tests::case_${i} ... ${i % 17 === 0 ? "FAILED" : "ok"} (${(i * 0.37).toFixed(2)}s)`,
).join("\n");
const toolResultMsg = () => ({
  role: "toolResult",
  toolCallId: "toolu_01BenchCallAbcdefghijklm",
  toolName: "bash",
  content: [{ type: "text", text: TOOL_OUTPUT }],
  isError: false,
  timestamp: Date.now(),
});

/** Fresh manager on a fresh copy of the 3,000-turn file (for appends). */
function openCopy(impl) {
  const file = path.join(impl.tmp, `append-${impl.copies++}.jsonl`);
  fs.copyFileSync(data.bigFile, file);
  return { file, sm: impl.SM.open(file) };
}
const dropCopy = (st) => fs.rmSync(st.file, { force: true });

const OPS = [
  {
    key: "open",
    label: "open (3,000-turn file)",
    run: (impl) => impl.SM.open(impl.bigCopy),
  },
  { key: "buildSessionContext", label: "buildSessionContext", setup: (impl) => impl.readonly(), run: (_, sm) => sm.buildSessionContext() },
  {
    key: "getBranch+getEntries",
    label: "getBranch + getEntries",
    setup: (impl) => impl.readonly(),
    run: (_, sm) => {
      sm.getBranch();
      return sm.getEntries();
    },
  },
  { key: "getTree", label: "getTree", setup: (impl) => impl.readonly(), run: (_, sm) => sm.getTree() },
  { key: "getLeafEntry", label: "getLeafEntry", setup: (impl) => impl.readonly(), run: (_, sm) => sm.getLeafEntry() },
  {
    key: "getEntry",
    label: "getEntry",
    setup: (impl) => ({ sm: impl.readonly(), i: 0 }),
    run: (_, st) => st.sm.getEntry(sampleIds[st.i++ & 1023]),
  },
  {
    key: "appendMessage",
    label: "appendMessage (persisted)",
    setup: (impl) => openCopy(impl),
    run: (_, st) => st.sm.appendMessage(userMsg()),
    teardown: dropCopy,
  },
  {
    key: "agentTurn",
    label: "agent turn (3 appends + context)",
    setup: (impl) => openCopy(impl),
    run: (_, st) => {
      st.sm.appendMessage(userMsg());
      st.sm.appendMessage(assistantMsg());
      st.sm.appendMessage(toolResultMsg());
      return st.sm.buildSessionContext();
    },
    teardown: dropCopy,
  },
  {
    key: "list",
    label: `list(cwd, dir) ${data.manyFiles} sessions`,
    async: true,
    run: (impl) => impl.SM.list(BENCH_CWD, data.manyDir),
  },
  {
    key: "listAll",
    label: `listAll(dir) ${data.manyFiles} sessions`,
    async: true,
    run: (impl) => impl.SM.listAll(data.manyDir),
  },
  {
    key: "forkFrom",
    label: "forkFrom (3,000-turn file)",
    setup: (impl) => {
      const dir = path.join(impl.tmp, "forks");
      fs.mkdirSync(dir, { recursive: true });
      return dir;
    },
    run: (impl, dir) => impl.SM.forkFrom(impl.bigCopy, `${BENCH_CWD}-fork`, dir),
    afterSample: (_, dir) => {
      for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f), { force: true });
    },
  },
];

// ---------------------------------------------------------------- measurement
async function runBatch(op, impl, state, k) {
  const start = now();
  if (op.async) for (let i = 0; i < k; i++) await op.run(impl, state);
  else for (let i = 0; i < k; i++) op.run(impl, state);
  return now() - start;
}

/** Warm up and pick the batch size k (calls per sample). */
async function warmup(op, impl) {
  const state = await op.setup?.(impl);
  try {
    let k = 1;
    let elapsed = 0;
    let rounds = 0;
    while (elapsed < WARMUP_MS || rounds < 2) {
      const dt = await runBatch(op, impl, state, k);
      op.afterSample?.(impl, state);
      elapsed += dt;
      rounds++;
      if (dt < SAMPLE_TARGET_MS) k = Math.min(k * Math.max(2, Math.ceil(SAMPLE_TARGET_MS / Math.max(dt, 0.001))), 1 << 20);
    }
    return k;
  } finally {
    await op.teardown?.(state);
  }
}

async function measure(op, impl, k) {
  const state = await op.setup?.(impl);
  gc();
  const samples = [];
  let measured = 0;
  let calls = 0;
  try {
    while (measured < MIN_TIME_MS || samples.length < MIN_SAMPLES || calls < MIN_CALLS) {
      const dt = await runBatch(op, impl, state, k);
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
    per[impl.key] = { samples: [], calls: 0, measurementMedians: [], error: null, k: 1 };
    try {
      gc();
      per[impl.key].k = await warmup(op, impl);
    } catch (error) {
      per[impl.key].error = String(error?.message ?? error).split("\n")[0];
    }
  }
  // Alternate: A B B A A B ... (each implementation gets MEASUREMENTS measurements).
  const order = [];
  for (let m = 0; m < MEASUREMENTS; m++) {
    const pair = impls.map((_, i) => i);
    order.push(...(m % 2 ? pair.reverse() : pair));
  }
  for (const i of order) {
    const impl = impls[i];
    const r = per[impl.key];
    if (r.error) continue;
    try {
      const { samples, calls } = await measure(op, impl, r.k);
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
  `${MEASUREMENTS} alternating measurements per implementation, each ≥ ${MIN_TIME_MS} ms and ≥ ${MIN_SAMPLES} samples; GC before each. ` +
    `Writes go to separate temp copies per implementation.`,
);
if (SELF_TEST) console.log("(self-test: both columns are the reference)");
console.log(`peak RSS (whole process, both implementations): ${peakRssMb.toFixed(0)} MB`);
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
      settings: { minTimeMs: MIN_TIME_MS, measurementsPerImpl: MEASUREMENTS, minSamples: MIN_SAMPLES, minCalls: MIN_CALLS },
      data: {
        bigBytes: data.bigBytes,
        bigLines: data.bigLines,
        manyFiles: data.manyFiles,
        manyBytes: data.manyBytes,
        manyLargeFiles: data.manyLargeFiles,
      },
      results,
      peakRssMb: Math.round(peakRssMb),
      totalSeconds: +((now() - t0) / 1000).toFixed(1),
    },
    null,
    2,
  )}\n`,
);

for (const impl of impls) fs.rmSync(impl.tmp, { recursive: true, force: true });
process.exit(0);
