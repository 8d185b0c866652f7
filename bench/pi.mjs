#!/usr/bin/env node
// `npm run bench:pi` (= node bench/pi.mjs): the real pi agent (the bundled CLI of
// @earendil-works/pi-coding-agent) on its own session store ("stock") against `pi-native`
// (bin/pi-native.js: the same agent on pi-session-native), both in one run, with each target
// line marked PASS or MISS. See bench/README.md ("The pi agent").
//
// Data: bench/pi-data.mjs (3,000 sessions of the scale set, 1,000 of them in the project).
// The interactive TUI runs in a detached tmux pane (__test__/e2e/pi-tui-tmux.mjs) with a
// scripted no-network model provider (__test__/e2e/pi-tui-faux.mjs); a time is from the
// keypress until the screen shows the whole list (the header no longer says "Loading", and the
// scroll indicator counts every session).
//
// Environment:
//   BENCH_PI_ONLY=picker,session,help,migrate   sections to run (default: all)
//   BENCH_PI_REPS=2          runs per implementation of the picker and --session lines
//   BENCH_PI_STARTS=21       runs per side of the startup lines
//   BENCH_PI_NODE=22         Node major that runs pi (22 or 24; fetched into .cache/ if needed)
//   BENCH_PI_POLL_MS=25      how often the screen is read while a time runs (each read is a
//                            tmux process: reading more often takes CPU from pi)
//   BENCH_PI_VARIANTS=stock,native-cold,native-warm   the picker and --session variants to run
//                            (leaving one out prints no ratio for it: for quick iterations)
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { TmuxPane, tmuxMissing } from "../__test__/e2e/pi-tui-tmux.mjs";
import { ensurePiData } from "./pi-data.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "..");
const require = createRequire(import.meta.url);
const AGENT = path.join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent");
const STOCK_CLI = path.join(AGENT, "dist", "bundle", "cli.js");
const PI_NATIVE = path.join(ROOT, "bin", "pi-native.js");
const FAUX = path.join(ROOT, "__test__", "e2e", "pi-tui-faux.mjs");
const RSS_PRELOAD = path.join(HERE, "pi-rss.mjs");
const RESULTS = path.join(HERE, "data", "pi", "results.json");

const ONLY = (process.env.BENCH_PI_ONLY ?? "").split(",").map((s) => s.trim()).filter(Boolean);
const REPS = Math.max(1, Number(process.env.BENCH_PI_REPS ?? 2));
const STARTS = Math.max(3, Number(process.env.BENCH_PI_STARTS ?? 21));
const NODE_MAJOR = Number(process.env.BENCH_PI_NODE ?? 22);
const POLL_MS = Math.max(1, Number(process.env.BENCH_PI_POLL_MS ?? 25));
const runs = (section) => !ONLY.length || ONLY.some((o) => section.includes(o));

const log = (...a) => console.error(...a);
const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** The session calls bench/pi-rss.mjs times. */
const TIMED_CALLS = ["getBranch", "getEntries", "buildSessionContext", "buildSessionProjection"];
const fmtMsFine = (ms) => (ms == null ? "–" : ms < 100 ? `${ms.toFixed(1)} ms` : fmtMs(ms));
const fmtMs = (ms) => (ms == null ? "–" : ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);

// ------------------------------------------------------------------------------ setup
const missing = tmuxMissing();
if (missing) {
  console.error(`bench:pi needs tmux: ${missing}`);
  process.exit(1);
}
if (!fs.existsSync(PI_NATIVE)) {
  console.error(`bench:pi needs ${path.relative(ROOT, PI_NATIVE)}`);
  process.exit(1);
}
const node =
  Number(process.versions.node.split(".")[0]) === NODE_MAJOR ? process.execPath : require(path.join(ROOT, "scripts", "fetch-node.js")).fetchNode(NODE_MAJOR);
const data = await ensurePiData(log);

const IMPLS = {
  stock: { argv: [node, STOCK_CLI], agentDir: data.agentStock, env: {} },
  native: { argv: [node, PI_NATIVE], agentDir: data.agentNative, env: { PI_NATIVE_AGENT: AGENT, PI_NATIVE_STRICT: "1" } },
};

function envFor(impl, agentDir = IMPLS[impl].agentDir, extra = {}) {
  const env = { ...process.env, HOME: data.home, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", ...IMPLS[impl].env, ...extra };
  for (const k of ["PI_NATIVE_TRACE", "PI_NATIVE_DISABLE", "PI_SESSION_LIST_CACHE", "NODE_OPTIONS", "PI_CODING_AGENT_SESSION_DIR"]) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

/** Removes pi-session-native's listing cache (and any older one) from an agent dir (a "cold" run). */
function dropCache(agentDir) {
  for (const f of fs.readdirSync(agentDir)) {
    if (f === ".pi-session-native" || f.includes("cache")) fs.rmSync(path.join(agentDir, f), { recursive: true, force: true });
  }
}

/** Whether pi-native left its listing cache in an agent dir (lib/listing.js: `.pi-session-native/`). */
function hasCache(agentDir) {
  return fs.existsSync(path.join(agentDir, ".pi-session-native"));
}

/** Reads every session once, so that no run pays for the disk. */
function warmPageCache() {
  const sessions = path.join(data.agentStock, "sessions");
  const buf = Buffer.allocUnsafe(16 << 20);
  for (const dir of fs.readdirSync(sessions)) {
    for (const f of fs.readdirSync(path.join(sessions, dir))) {
      const fd = fs.openSync(path.join(sessions, dir, f), "r");
      while (fs.readSync(fd, buf, 0, buf.length, null) > 0);
      fs.closeSync(fd);
    }
  }
}

const results = { node: process.versions.node, agentNode: node, data, lines: [] };
const table = [];
function line(name, stock, native, { target, pass, ratio, fmt = fmtMs, note = "" }) {
  const r = ratio ?? (stock && native != null ? native / stock : null);
  const verdict = pass == null ? "" : pass ? "PASS" : "MISS";
  table.push([name, fmt(stock), fmt(native), r == null ? "–" : `${r.toFixed(3)}×`, target ?? "", verdict, note]);
  results.lines.push({ name, stock, native, ratio: r, target, verdict, note });
}

// ------------------------------------------------------------------------------ the picker
const TUI_ARGS = ["-ne", "-e", FAUX, "--model", "faux/faux-1"];
const loaded = (scope) => (screen) => {
  const title = scope === "current" ? "Resume Session (Current Folder)" : "Resume Session (All)";
  const mark = scope === "current" ? "◉ Current Folder" : "◉ All";
  if (!screen.includes(title) || !screen.includes(mark) || /Loading \d/.test(screen)) return false;
  return /\(\d+\/\d+\)/.test(screen);
};
const shownCount = (screen) => Number(/\(\d+\/(\d+)\)/.exec(screen)?.[1]);

/**
 * One interactive pi: start, wait for the editor, /resume (time to the whole current-project
 * list), Tab (time to the whole list of all projects), quit.
 */
function pickerRun(impl, cold) {
  const agentDir = IMPLS[impl].agentDir;
  if (cold) dropCache(agentDir);
  const pane = new TmuxPane(`bench-${impl}`);
  try {
    pane.start({ argv: [...IMPLS[impl].argv, ...TUI_ARGS], cwd: data.projectCwd, env: envFor(impl), width: 160, height: 45 });
    pane.waitFor((s) => s.includes("faux-1") && s.includes(data.projectCwd), { timeoutMs: 60_000, what: "pi's editor" });
    pane.type("/resume");
    pane.waitFor((s) => s.includes("/resume"), { timeoutMs: 10_000, what: "/resume typed" });
    const t0 = performance.now();
    pane.keys("Enter");
    const current = pane.waitFor(loaded("current"), { timeoutMs: 600_000, intervalMs: POLL_MS, what: "the current project's sessions" });
    const currentMs = performance.now() - t0;
    const t1 = performance.now();
    pane.keys("Tab");
    const all = pane.waitFor(loaded("all"), { timeoutMs: 600_000, intervalMs: POLL_MS, what: "all sessions" });
    const allMs = performance.now() - t1;
    return { currentMs, allMs, currentCount: shownCount(current.screen), allCount: shownCount(all.screen) };
  } finally {
    pane.kill();
  }
}

/** Runs `fn(variant)` for each variant REPS times, rotating the order; returns per-variant lists. */
function alternate(variants, fn) {
  const out = Object.fromEntries(variants.map((v) => [v, []]));
  for (let rep = 0; rep < REPS; rep++) {
    const order = variants.map((_, i) => variants[(i + rep) % variants.length]);
    for (const v of order) out[v].push(fn(v, rep));
  }
  return out;
}

const ALL_VARIANTS = ["stock", "native-cold", "native-warm"];
const VARIANTS = process.env.BENCH_PI_VARIANTS ? ALL_VARIANTS.filter((v) => process.env.BENCH_PI_VARIANTS.split(",").includes(v)) : ALL_VARIANTS;
const implOf = (v) => (v === "stock" ? "stock" : "native");

if (runs("picker")) {
  warmPageCache();
  log(`picker: ${REPS} run(s) each of ${VARIANTS.join(", ")} (stock reads ${(data.projectBytes / 1e6).toFixed(0)} MB, then ${(data.totalBytes / 1e6).toFixed(0)} MB)...`);
  const r = alternate(VARIANTS, (v) => {
    // A warm run needs the cache an earlier run left; when there is none, an untimed run makes it.
    if (v === "native-warm" && !hasCache(IMPLS.native.agentDir)) pickerRun("native", false);
    const res = pickerRun(implOf(v), v === "native-cold");
    log(`  ${v}: /resume ${fmtMs(res.currentMs)} (${res.currentCount} sessions), Tab ${fmtMs(res.allMs)} (${res.allCount})`);
    return res;
  });
  results.picker = r;
  const expected = `${data.projectSessions}/${data.sessions}`;
  const counts = new Set(Object.values(r).flat().map((x) => `${x.currentCount}/${x.allCount}`));
  const countNote = counts.size === 1 && counts.has(expected) ? "" : `sessions shown (current/all): ${[...counts].join(", ")}; expected ${expected}`;
  const med = (v, k) => median((r[v] ?? []).map((x) => x[k]));
  for (const [k, label, target, limit] of [
    ["currentMs", `/resume painted: ${data.projectSessions} sessions of the project`, "≤ 0.1×", 0.1],
    ["allMs", `  then Tab painted: all ${data.sessions} sessions`, "≤ 0.2×", 0.2],
  ]) {
    for (const v of ["native-warm", "native-cold"]) {
      const s = med("stock", k);
      const n = med(v, k);
      line(`${label} (${v === "native-warm" ? "warm cache" : "cold cache"})`, s, n, { target, pass: s && n != null ? n / s <= limit : null, note: countNote });
    }
  }
}

// ------------------------------------------------------------------------------ --session <no match>
if (runs("session")) {
  log(`--session <no match> -p x: ${REPS} run(s) each...`);
  const r = alternate(VARIANTS, (v) => {
    const impl = implOf(v);
    if (v === "native-cold") dropCache(IMPLS.native.agentDir);
    const t0 = performance.now();
    const p = spawnSync(IMPLS[impl].argv[0], [...IMPLS[impl].argv.slice(1), "--session", "no-such-session-anywhere", "-p", "x"], {
      cwd: data.projectCwd,
      env: envFor(impl),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    const ms = performance.now() - t0;
    if (p.status !== 1 || !/No session found/.test(p.stderr)) throw new Error(`${v}: --session exited ${p.status}: ${p.stderr}`);
    log(`  ${v}: ${fmtMs(ms)}`);
    return ms;
  });
  results.session = r;
  for (const v of ["native-warm", "native-cold"]) {
    const s = median(r.stock ?? []);
    const n = median(r[v] ?? []);
    line(`pi --session <no match> -p x: list + listAll (${v === "native-warm" ? "warm cache" : "cold cache"})`, s, n, { target: "≤ 0.2×", pass: s && n != null ? n / s <= 0.2 : null });
  }
}

// ------------------------------------------------------------------------------ startup
/** Wall ms and the node process's own peak RSS (MiB) of one `pi <args>` run. */
function timedStart(impl, args, agentDir) {
  const rssFile = path.join(os.tmpdir(), `pi-bench-rss-${process.pid}.txt`);
  fs.rmSync(rssFile, { force: true });
  const env = envFor(impl, agentDir, { NODE_OPTIONS: `--import=${pathToUrl(RSS_PRELOAD)}`, PI_BENCH_RSS_FILE: rssFile });
  const t0 = performance.now();
  const p = spawnSync(IMPLS[impl].argv[0], [...IMPLS[impl].argv.slice(1), ...args], { cwd: data.projectCwd, env, stdio: ["ignore", "ignore", "pipe"] });
  const ms = performance.now() - t0;
  if (p.status !== 0) throw new Error(`${impl} ${args.join(" ")} exited ${p.status}: ${p.stderr}`);
  let rss = null;
  let cpu = null;
  try {
    const u = JSON.parse(fs.readFileSync(rssFile, "utf8"));
    rss = u.maxRssKiB / 1024;
    cpu = u.cpuMs;
  } catch {}
  fs.rmSync(rssFile, { force: true });
  return { ms, rss, cpu };
}

/**
 * The figures of two paired start series: wall = median of the per-pair differences b - a (a
 * pair runs back to back, so machine drift cancels), cpu = the same for CPU time.
 */
function pairedDiff(r) {
  const d = (k) => median(r.a.map((x, i) => r.b[i][k] - x[k]));
  return { wall: d("ms"), cpu: d("cpu"), a: median(r.a.map((x) => x.ms)), b: median(r.b.map((x) => x.ms)) };
}
const signed = (x, unit) => (x == null ? "–" : `${x >= 0 ? "+" : ""}${x.toFixed(x < 10 && x > -10 ? 1 : 0)} ${unit}`);
function pathToUrl(p) {
  return new URL(`file://${p}`).href;
}

/** STARTS runs of each of two starts, alternating; returns per-side { ms[], rss[] }. */
function pairedStarts(a, b) {
  const out = { a: [], b: [] };
  a();
  b();
  for (let i = 0; i < STARTS; i++) {
    const first = i % 2 ? ["b", b] : ["a", a];
    const second = i % 2 ? ["a", a] : ["b", b];
    out[first[0]].push(first[1]());
    out[second[0]].push(second[1]());
  }
  return out;
}

if (runs("help")) {
  log(`startup: pi --help, ${STARTS} runs each...`);
  const r = pairedStarts(
    () => timedStart("stock", ["--help"], data.agentEmpty),
    () => timedStart("native", ["--help"], data.agentEmpty),
  );
  results.help = r;
  const d = pairedDiff(r);
  line("startup: pi --help (empty agent dir)", d.a, d.b, { target: "≤ +50 ms", pass: d.wall <= 50, note: `${signed(d.wall, "ms")} wall, ${signed(d.cpu, "ms")} cpu (paired medians)` });
  // The same in the agent dirs of the other lines: each side where it has run before (for
  // pi-native: with the listing cache it left there, if an earlier section made one).
  const r2 = pairedStarts(
    () => timedStart("stock", ["--help"], data.agentStock),
    () => timedStart("native", ["--help"], data.agentNative),
  );
  results.helpInAgentDirs = r2;
  const d2 = pairedDiff(r2);
  const cache = hasCache(data.agentNative);
  line(`startup: pi --help (3,000 sessions${cache ? ", pi-native's cache" : ""})`, d2.a, d2.b, { target: "≤ +50 ms", pass: d2.wall <= 50, note: `${signed(d2.wall, "ms")} wall, ${signed(d2.cpu, "ms")} cpu` });
}

if (runs("register")) {
  // An SDK program that imports the agent, with and without `--import pi-session-native/register`
  // (the hook only appends one call to the module defining the class).
  const app = path.join(os.tmpdir(), `pi-bench-register-${process.pid}`);
  fs.mkdirSync(path.join(app, "node_modules", "@earendil-works"), { recursive: true });
  const link = (target, name) => fs.existsSync(path.join(app, "node_modules", name)) || fs.symlinkSync(target, path.join(app, "node_modules", name));
  link(ROOT, "pi-session-native");
  link(AGENT, path.join("@earendil-works", "pi-coding-agent"));
  fs.writeFileSync(path.join(app, "package.json"), '{"name":"app","type":"module"}\n');
  fs.writeFileSync(path.join(app, "app.mjs"), 'import { SessionManager } from "@earendil-works/pi-coding-agent";\nSessionManager.inMemory("/tmp");\n');
  const start = (withRegister) => () => {
    const rssFile = path.join(os.tmpdir(), `pi-bench-rss-${process.pid}.txt`);
    fs.rmSync(rssFile, { force: true });
    const args = [`--import=${pathToUrl(RSS_PRELOAD)}`, ...(withRegister ? ["--import", "pi-session-native/register"] : []), "app.mjs"];
    const t0 = performance.now();
    const p = spawnSync(node, args, { cwd: app, env: { ...process.env, PI_BENCH_RSS_FILE: rssFile }, stdio: ["ignore", "ignore", "pipe"] });
    const ms = performance.now() - t0;
    if (p.status !== 0) throw new Error(`app ${withRegister ? "with" : "without"} register exited ${p.status}: ${p.stderr}`);
    let cpu = null;
    try {
      cpu = JSON.parse(fs.readFileSync(rssFile, "utf8")).cpuMs;
    } catch {}
    return { ms, cpu, rss: null };
  };
  log(`startup: an SDK program importing the agent, with and without register, ${STARTS} runs each...`);
  const r = pairedStarts(start(false), start(true));
  const d = pairedDiff(r);
  line("startup: node [--import pi-session-native/register] app importing the agent", d.a, d.b, { target: "≤ +50 ms", pass: d.wall <= 50, note: `${signed(d.wall, "ms")} wall, ${signed(d.cpu, "ms")} cpu (paired medians)` });
  fs.rmSync(app, { recursive: true, force: true });
}

if (runs("migrate")) {
  // Stock pi reads every *.jsonl in the agent dir's root at each start (migrateSessionsFromAgentRoot,
  // run by `--help` too): whatever pi-native leaves there must not slow it down.
  if (!hasCache(data.agentNative)) {
    spawnSync(node, [PI_NATIVE, "--session", "no-such-session-anywhere", "-p", "x"], { cwd: data.projectCwd, env: envFor("native"), stdio: "ignore" });
  }
  const left = fs
    .readdirSync(data.agentNative)
    .filter((f) => fs.statSync(path.join(data.agentNative, f)).isFile())
    .map((f) => `${f} ${(fs.statSync(path.join(data.agentNative, f)).size / 1e6).toFixed(1)} MB`);
  log(`stock start after pi-native: ${STARTS} runs each (pi-native left in the agent dir: ${left.join(", ")})...`);
  const r = pairedStarts(
    () => timedStart("stock", ["--help"], data.agentStock),
    () => timedStart("stock", ["--help"], data.agentNative),
  );
  results.migrate = { ...r, left };
  const d = pairedDiff(r);
  const sr = median(r.a.map((x) => x.rss));
  const nr = median(r.b.map((x) => x.rss));
  // Columns: "stock pi" = the agent dir pi-native never ran in, "pi-native" = the one it listed in.
  line("stock pi --help: agent dir pi-native never ran in / listed in", d.a, d.b, { target: "≤ +10 ms", pass: d.wall <= 10, note: `${signed(d.wall, "ms")} wall, ${signed(d.cpu, "ms")} cpu` });
  line("  ↳ peak RSS", sr, nr, { target: "≤ +5 MB", pass: nr - sr <= 5, fmt: (x) => (x == null ? "–" : `${x.toFixed(0)} MB`), note: signed(nr - sr, "MB") });
}

// ------------------------------------------------------------------------------ resume a big session
// What a user waits for when pi resumes a session: the whole `pi --session <file> -p x` process
// (open, the agent's setup, one turn, exit) with its peak RSS, and in the TUI the time from start
// until the session's last message is on screen. Sessions of bench/scale-gen.mjs: the text-heavy
// ones of issue 32 (parts text12 and text128, bench/text-gen.mjs: compacted, side branches, some
// images), the 3,000-turn one and the 128 MiB one of images and tool output (text3k, mb128),
// each run on a fresh copy (a turn appends).
if (runs("resume")) {
  const { ensureScaleData } = await import("./scale-gen.mjs");
  const scale = await ensureScaleData(log, { only: ["text12", "text128", "text3k", "mb128"] });
  const mb = (bytes) => (bytes / 1e6).toFixed(bytes < 20e6 ? 1 : 0);
  const sets = [
    scale.text12 && !scale.text12.skipped && { key: "text12", rec: scale.text12, label: `${mb(scale.text12.bytes)} MB text session (3,000 turns, side branches, a compaction)` },
    scale.text128 && !scale.text128.skipped && {
      key: "text128",
      rec: scale.text128,
      label: `${mb(scale.text128.bytes)} MB text session (${scale.text128.messages.toLocaleString("en-US")} messages, ${scale.text128.compactions} compactions)`,
      targets: { print: 0.5, tui: 0.5, rss: 0.6, firstBranch: 50 },
    },
    scale.text3k && !scale.text3k.skipped && { key: "text3k", rec: scale.text3k, label: `${mb(scale.text3k.bytes)} MB text session (3,000 turns, no branches)` },
    scale.mb128 && !scale.mb128.skipped && { key: "mb128", rec: scale.mb128, label: `${mb(scale.mb128.bytes)} MB session (images, tool output)` },
  ].filter(Boolean);
  // A fresh copy of a session per run (pi appends its turn), removed after the run: the four
  // sessions are ~280 MB per side.
  const copyOf = (file, impl) => {
    const dir = path.join(os.tmpdir(), `pi-bench-resume-${process.pid}-${impl}`);
    fs.mkdirSync(dir, { recursive: true });
    const copy = path.join(dir, path.basename(file));
    fs.copyFileSync(file, copy);
    return copy;
  };
  const header = (file) => JSON.parse(fs.readFileSync(file, "utf8").slice(0, 4096).split("\n")[0]);
  /** What identifies the session's last message on screen: its first words (the text generator's
   * sessions end with a known reply; the others with the faux provider's footer). */
  const lastOnScreen = (rec) => (rec.lastText ? rec.lastText.slice(0, 40) : null);
  for (const set of sets) {
    const file = set.rec.file;
    const cwd = header(file).cwd;
    fs.mkdirSync(cwd, { recursive: true });
    log(`resume: ${set.label}, ${REPS} run(s) each...`);
    const rss = { stock: [], native: [] };
    // The session calls pi makes in that process (bench/pi-rss.mjs times them): what the first
    // getBranch() costs where pi calls it.
    const calls = { print: { stock: [], native: [] }, tui: { stock: [], native: [] } };
    const callsFile = (impl) => path.join(os.tmpdir(), `pi-bench-calls-${process.pid}-${impl}.json`);
    const callsEnv = (impl) => ({ NODE_OPTIONS: `--import=${pathToUrl(RSS_PRELOAD)}`, PI_BENCH_CALLS: impl, PI_BENCH_CALLS_FILE: callsFile(impl) });
    const takeCalls = (impl, into) => {
      try {
        into[impl].push(JSON.parse(fs.readFileSync(callsFile(impl), "utf8")));
      } catch {
        into[impl].push({});
      }
      fs.rmSync(callsFile(impl), { force: true });
    };
    const print = alternate(["stock", "native"], (impl) => {
      const copy = copyOf(file, impl);
      const rssFile = path.join(os.tmpdir(), `pi-bench-rss-${process.pid}-${impl}.json`);
      try {
        const t0 = performance.now();
        const p = spawnSync(IMPLS[impl].argv[0], [...IMPLS[impl].argv.slice(1), ...TUI_ARGS, "--session", copy, "-p", "one more turn"], {
          cwd,
          env: envFor(impl, undefined, { ...callsEnv(impl), PI_BENCH_RSS_FILE: rssFile }),
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
        });
        const ms = performance.now() - t0;
        if (p.status !== 0) throw new Error(`${impl}: pi --session -p exited ${p.status}: ${p.stderr}`);
        const peak = JSON.parse(fs.readFileSync(rssFile, "utf8")).maxRssKiB / 1024;
        rss[impl].push(peak);
        takeCalls(impl, calls.print);
        log(`  print ${impl}: ${fmtMs(ms)}, peak RSS ${peak.toFixed(0)} MB`);
        return ms;
      } finally {
        fs.rmSync(rssFile, { force: true });
        fs.rmSync(copy, { force: true });
      }
    });
    const t = set.targets ?? {};
    const s = median(print.stock);
    const n = median(print.native);
    line(`pi --session <${set.label}> -p x, whole process`, s, n, t.print ? { target: `≤ ${t.print}×`, pass: s && n != null ? n / s <= t.print : null } : {});
    const rs = median(rss.stock);
    const rn = median(rss.native);
    const mbFmt = (x) => (x == null ? "–" : `${x.toFixed(0)} MB`);
    line(`  ↳ peak RSS of that process`, rs, rn, t.rss ? { fmt: mbFmt, target: `≤ ${t.rss}×`, pass: rs && rn != null ? rn / rs <= t.rss : null } : { fmt: mbFmt });
    const marker = lastOnScreen(set.rec);
    const tui = alternate(["stock", "native"], (impl) => {
      const copy = copyOf(file, impl);
      const pane = new TmuxPane(`bench-resume-${impl}`);
      try {
        const t0 = performance.now();
        pane.start({ argv: [...IMPLS[impl].argv, ...TUI_ARGS, "--session", copy], cwd, env: envFor(impl, undefined, callsEnv(impl)), width: 160, height: 45 });
        const shown = marker ? (sc) => sc.includes(marker) && sc.includes("faux-1") : (sc) => sc.includes("faux-1") && sc.includes(cwd);
        pane.waitFor(shown, { timeoutMs: 120_000, intervalMs: POLL_MS, what: marker ? "the session's last message" : "the resumed session" });
        const ms = performance.now() - t0;
        log(`  tui ${impl}: ${fmtMs(ms)}`);
        return ms;
      } finally {
        pane.kill();
        takeCalls(impl, calls.tui);
        fs.rmSync(copy, { force: true });
      }
    });
    const ts = median(tui.stock);
    const tn = median(tui.native);
    const what = marker ? "last message on screen" : "TUI painted";
    line(`pi --session <${set.label}>: ${what}`, ts, tn, t.tui ? { target: `≤ ${t.tui}×`, pass: ts && tn != null ? tn / ts <= t.tui : null } : {});
    // The first getBranch() as pi calls it: after its own setup, on whatever the store did in
    // the meantime (ours makes the entry objects while the event loop is idle).
    for (const [mode, label] of [
      ["print", "-p"],
      ["tui", "TUI"],
    ]) {
      const first = (impl) => median(calls[mode][impl].map((c) => c.getBranch?.first));
      const all = (impl) => median(calls[mode][impl].map((c) => TIMED_CALLS.reduce((sum, m) => sum + (c[m]?.ms ?? 0), 0)));
      const fs1 = first("stock");
      const fn1 = first("native");
      line(`  ↳ ${label}: the agent's first getBranch()`, fs1, fn1, t.firstBranch ? { fmt: fmtMsFine, target: `≤ ${t.firstBranch} ms`, pass: fn1 != null ? fn1 <= t.firstBranch : null } : { fmt: fmtMsFine });
      line(`  ↳ ${label}: all its getBranch, getEntries, buildSessionContext/Projection calls`, all("stock"), all("native"), { fmt: fmtMsFine });
    }
  }
  for (const impl of ["stock", "native"]) fs.rmSync(path.join(os.tmpdir(), `pi-bench-resume-${process.pid}-${impl}`), { recursive: true, force: true });
}

// ------------------------------------------------------------------------------ report
const header = ["line", "stock pi", "pi-native", "ratio", "target", "", "note"];
const rows = [header, ...table];
const widths = header.map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
console.log(`\npi ${JSON.parse(fs.readFileSync(path.join(AGENT, "package.json"), "utf8")).version} on Node ${spawnSync(node, ["-v"], { encoding: "utf8" }).stdout.trim()}; ${data.sessions} sessions (${(data.totalBytes / 1e9).toFixed(2)} GB), ${data.projectSessions} in the project (${(data.projectBytes / 1e9).toFixed(2)} GB); medians of ${REPS} (picker, --session) / ${STARTS} (starts) runs`);
for (const r of rows) console.log(r.map((c, i) => String(c).padEnd(widths[i])).join("  ").trimEnd());
const verdicts = table.map((r) => r[5]).filter(Boolean);
console.log(`\n${verdicts.filter((v) => v === "PASS").length} PASS, ${verdicts.filter((v) => v === "MISS").length} MISS; load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
fs.writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
