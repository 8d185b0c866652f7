#!/usr/bin/env node
// What making the objects of a resume costs V8 at the least, next to what ours takes:
// `node bench/objects-floor.mjs [session.jsonl …]` (default: the scale bench's 12 MB and 136 MB
// text sessions, `npm run bench:scale` makes them).
//
// The floor here is `JSON.parse` of the objects the first getBranch() hands out, in a fresh
// process (bench/objects.mjs says what is written, and why that is the floor). Next to it, the
// same process reads the file and parses the context's messages (content included), which an
// interactive resume also needs. Then ours: a fresh process's first getBranch() after open(),
// median of RUNS (env OBJECTS_FLOOR_RUNS, default 5). `npm run bench:scale` puts the same floor
// next to its resume lines.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseResumeObjects, writeResumeObjects } from "./objects.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, "..");
const RUNS = Math.max(1, Number(process.env.OBJECTS_FLOOR_RUNS ?? 5));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** In a fresh child: ours, open() then the first getBranch(). */
async function firstBranch(file) {
  const { loadOurs } = await import("../__test__/helpers/target.mjs");
  const { SessionManager } = await loadOurs();
  const sm = SessionManager.open(file);
  globalThis.gc?.();
  const t = performance.now();
  const n = sm.getBranch().length;
  return { ms: performance.now() - t, entries: n };
}

const child = (op, ...args) =>
  JSON.parse(execFileSync(process.execPath, ["--expose-gc", "--max-old-space-size=4096", fileURLToPath(import.meta.url), "--child", op, ...args], { encoding: "utf8" }));

if (process.argv[2] === "--child") {
  const [op, file, dir] = process.argv.slice(3);
  let r;
  if (op === "write") {
    const { loadOurs } = await import("../__test__/helpers/target.mjs");
    r = writeResumeObjects((await loadOurs()).SessionManager, file, dir);
  } else r = op === "parse" ? parseResumeObjects(file, dir) : await firstBranch(file);
  process.stdout.write(JSON.stringify(r));
} else {
  const scale = path.join(HERE, "data", "scale", "single");
  const files = process.argv.slice(2);
  if (files.length === 0) {
    for (const set of ["text12", "text128"]) {
      const d = path.join(scale, set);
      const f = fs.existsSync(d) ? fs.readdirSync(d).find((x) => x.endsWith(".jsonl")) : undefined;
      if (f) files.push(path.join(d, f));
    }
  }
  if (files.length === 0) {
    console.error("objects-floor: no session given, and no scale data yet (npm run bench:scale makes it)");
    process.exit(2);
  }
  for (const f of files) {
    if (!fs.existsSync(f)) {
      console.error(`objects-floor: no such file: ${f}`);
      process.exit(2);
    }
  }
  console.log(`node ${process.version}; medians of ${RUNS} fresh processes each`);
  for (const file of files) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "objects-floor-"));
    try {
      const n = child("write", file, dir);
      const parsed = [];
      const ours = [];
      for (let i = 0; i < RUNS; i++) {
        parsed.push(child("parse", file, dir));
        ours.push(child("branch", file).ms);
      }
      const mb = (f) => (fs.statSync(path.join(dir, f)).size / 1e6).toFixed(2);
      const m = (k) => median(parsed.map((p) => p[k])).toFixed(1);
      console.log(`${path.relative(ROOT, file)} (${(fs.statSync(file).size / 1e6).toFixed(1)} MB, ${n} entries on the branch)`);
      const row = (label, ms, note = "") => console.log(`  ${label.padEnd(56)} ${ms.padStart(7)} ms${note}`);
      row("read the file", m("readMs"));
      row(`JSON.parse of the branch's skeletons (${mb("skeletons.json")} MB)`, m("skeletonsMs"), "   <- the floor of the first getBranch()");
      row(`JSON.parse of the context's messages (${mb("context.json")} MB)`, m("contextMs"));
      row("ours: the first getBranch() after open()", median(ours).toFixed(1));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}
