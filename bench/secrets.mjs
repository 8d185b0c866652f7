#!/usr/bin/env node
// Secrets benchmark: `npm run bench:secrets` (= node bench/secrets.mjs). Issue 34 asks that
// `pi-sessions secrets --all` over a whole agent dir take about as long as `pi-sessions search
// --all` reading the same dir.
//
// The data: 1,000 sessions of ~600 MB in all, written by the scale set's session writer
// (bench/scale-gen.mjs: prose, tool output, base64 images, compactions, branches) into
// bench/data/secrets/ (gitignored, reused while its manifest matches): 960 small (5 KB-400 KB),
// 36 of 3-12 MB, 4 of 50-70 MB. 20 sessions get one more entry holding a fake key (assembled
// here at run time), so the scan has something to report.
//
// Both commands run as the CLI runs (`node bin/pi-sessions.js`, PI_CODING_AGENT_DIR set), in
// child processes, alternating, BENCH_RUNS times each (default 3) after one warm-up run each
// (which also builds the listing cache `search` reads its session list from); the page cache is
// warm for both. Printed: the median wall time of each, and the ratio secrets / search.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SCALE_CWD, writeSession } from "./scale-gen.mjs";
import { mulberry32 } from "./data-gen.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DATA = path.join(HERE, "data", "secrets");
const AGENT = path.join(DATA, "agent");
const DIR = path.join(AGENT, "sessions", `--${SCALE_CWD.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
const BIN = path.join(HERE, "..", "bin", "pi-sessions.js");
// 2: the plan draws from data-gen's mulberry32 (it had its own xorshift).
const VERSION = 2;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MiB = 1 << 20;

/** The plan's seeded choices, an integer in [0, n) (the sessions' content is scale-gen's). */
function rng(seed) {
  const rand = mulberry32(seed);
  return (n) => Math.floor(rand() * n);
}

async function generate() {
  const manifest = path.join(DATA, "manifest.json");
  if (fs.existsSync(manifest)) {
    const m = JSON.parse(fs.readFileSync(manifest, "utf8"));
    const ok = m.version === VERSION && m.files.every(([f, n]) => fs.statSync(path.join(DIR, f), { throwIfNoEntry: false })?.size === n);
    if (ok) return m;
  }
  console.error("bench:secrets: writing 1,000 sessions (~600 MB) into bench/data/secrets/ …");
  fs.rmSync(DATA, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const next = rng(0x5ec7);
  const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const chars = (n) => Array.from({ length: n }, () => ALNUM[next(ALNUM.length)]).join("");
  const files = [];
  let ms = Date.UTC(2025, 0, 2, 9, 0, 0);
  let total = 0;
  for (let i = 0; i < 1000; i++) {
    const kind = i % 250 === 125 ? "large" : i % 28 === 3 ? "medium" : "small";
    const targetBytes =
      kind === "large" ? (50 + next(21)) * MiB : kind === "medium" ? (3 + next(10)) * MiB : 5_000 + next(next(4) === 0 ? 400_000 : 120_000);
    const r = await writeSession(DIR, 0x200000 + i, ms, {
      targetBytes,
      rich: kind !== "small",
      imageRate: kind === "large" ? 0.3 : 0.05,
      imgMin: 40_000,
      imgMax: kind === "large" ? 1_500_000 : 600_000,
      outMin: 200,
      outMax: kind === "large" ? 30_000 : 6_000,
      bigOut: kind === "large" ? 0.25 : 0.04,
    });
    ms = r.lastMs + 3_600_000;
    if (i % 50 === 7) {
      // A tool output that printed a credential: one more line, after the session's last one.
      const key = ["sk", "ant", "api03", chars(93) + "AA"].join("-");
      const line = {
        type: "message",
        id: "5ec7e700",
        parentId: null,
        timestamp: new Date(ms).toISOString(),
        message: { role: "toolResult", toolCallId: "c", toolName: "bash", content: [{ type: "text", text: `ANTHROPIC_API_KEY=${key}` }], isError: false, timestamp: ms },
      };
      fs.appendFileSync(r.file, `${JSON.stringify(line)}\n`);
    }
    const bytes = fs.statSync(r.file).size;
    total += bytes;
    files.push([path.basename(r.file), bytes]);
  }
  const m = { version: VERSION, totalBytes: total, files };
  fs.writeFileSync(manifest, JSON.stringify(m));
  return m;
}

function run(args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, PI_CODING_AGENT_DIR: AGENT, NO_COLOR: "1" },
    encoding: "utf8",
    maxBuffer: 64 * MiB,
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { ms, status: r.status, out: r.stdout };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const m = await generate();
const SECRETS = ["secrets", "--all", "--json"];
const SEARCH = ["search", "zebra-crossing", "--all", "--json"];
const warm = [run(SECRETS), run(SEARCH)];
const found = JSON.parse(warm[0].out);
const times = { secrets: [], search: [] };
for (let k = 0; k < RUNS; k++) {
  for (const [name, args] of k % 2 ? [["search", SEARCH], ["secrets", SECRETS]] : [["secrets", SECRETS], ["search", SEARCH]]) {
    times[name].push(run(args).ms);
  }
}
const a = median(times.secrets);
const b = median(times.search);
console.log(`data: ${m.files.length} sessions, ${(m.totalBytes / 1e6).toFixed(0)} MB (bench/data/secrets)`);
console.log(`secrets --all: ${a.toFixed(0)} ms (median of ${RUNS}; found ${found.findings} in ${found.sessions.length} sessions, exit ${warm[0].status})`);
console.log(`search --all:  ${b.toFixed(0)} ms (median of ${RUNS})`);
console.log(`ratio secrets / search: ${(a / b).toFixed(2)} (< 1: the audit is faster than search)`);
