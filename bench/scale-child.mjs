#!/usr/bin/env node
// One measurement in a fresh process, for peak RSS that belongs to one implementation and one
// operation: `node --expose-gc bench/scale-child.mjs <reference|ours> <op> '<json args>'`.
// Prints one JSON line on stdout: { ok, ms, maxRssMb, ... } or { ok: false, failed: "<reason>" }.
// maxRssMb is process.resourceUsage().maxRSS (peak resident set of this whole process: Node, the
// module, the operation), read right after the operation and before anything else is computed;
// vmHwmMb is Linux's VmHWM for the same process, as a cross-check. Run it from a small parent:
// on Linux the maxRSS a process starts with is its parent's RSS (scale.mjs uses `--spawner`).
//
// Ops (args in the JSON):
//   baseline                          load the module only (idle RSS with the module loaded)
//   list      { cwd, dir, clearCache, agentDir }     SessionManager.list(cwd, dir, onProgress)
//   listAll   { clearCache, agentDir }              SessionManager.listAll(onProgress) (PI_CODING_AGENT_DIR)
//   open      { file, sessionDir }                  SessionManager.open(file, sessionDir)
//   openContext { file, sessionDir }                open + buildSessionContext, + size of the
//                                                   context messages as JSON (the materialized part)
//   perTurn   { file, sessionDir, call, iterations } open (untimed), then `call` repeated
//   forkFrom  { file, targetCwd, sessionDir }
//   createBranchedSession { file, sessionDir }     open (untimed), then createBranchedSession(leaf)
//   grow      { sessionDir, mb }                   a new session, then turns appended until their tool
//                                                   output totals `mb` MB (each output a new string)
//   resume    { file, untimed, timed, timedCalls, firstKeptId }  replays the agent's recorded call sequences
//                                                   (bench/resume-sequences.mjs): `untimed` (names,
//                                                   run first, off the clock), then `timed` and
//                                                   the no-argument calls `timedCalls`, then
//                                                   readTranscriptPage({ limit: transcriptPage })
//                                                   when `transcriptPage` is given; a
//                                                   sequence that does not start with open gets
//                                                   an untimed SessionManager.open(file) first
//   floor     { file }                             what reading the file and JSON.parse of every
//                                                   line costs (16 MiB chunks: a 1 GiB file does not
//                                                   fit in one string)
//   objectsWrite { file, dir }                      (ours) writes the objects a resume hands out to
//                                                   `dir` (bench/objects.mjs)
//   objectsParse { file, dir }                      reading the file, then JSON.parse of those
//                                                   objects: the floor of making them
import fs from "node:fs";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseResumeObjects, writeResumeObjects } from "./objects.mjs";
import { clearListingCaches, makeCall } from "./scale-ops.mjs";
import { replayStep, steps } from "./resume-sequences.mjs";

const [implKey, op, argJson = "{}"] = process.argv.slice(2);
const args = JSON.parse(argJson);
const now = () => performance.now();
const gc = () => globalThis.gc?.();
const rssMb = () => process.resourceUsage().maxRSS / 1024;
/** Linux: this process image's own RSS high-water mark (VmHWM), for cross-checking maxRSS. */
const vmHwmMb = () => {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
};
const out = (o) => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};
/** Linux: this thread's time on a CPU and waiting in the run queue for one (ms, schedstat), the
 * whole process's CPU time (every thread's, those that have ended included: getrusage), and each
 * other living thread's CPU time by thread id, or null. The kernel adds a running thread's time
 * when it next switches, so a 50 µs sleep first brings them up to date (else they lag by up to a
 * tick). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));
const schedOf = (/** @type {string} */ file) => fs.readFileSync(file, "utf8").split(" ").map(Number);
const threadSched = () => {
  try {
    Atomics.wait(PAUSE, 0, 0, 0.05);
    const [cpu, wait] = schedOf("/proc/thread-self/schedstat");
    const all = process.cpuUsage();
    const self = fs.readlinkSync("/proc/thread-self").split("/").pop();
    /** @type {Map<string, number>} */
    const living = new Map();
    for (const tid of fs.readdirSync("/proc/self/task")) {
      if (tid === self) continue;
      try {
        living.set(tid, schedOf(`/proc/self/task/${tid}/schedstat`)[0] / 1e6);
      } catch {
        // Ended between the listing and the read: its time is in the process's.
      }
    }
    return Number.isFinite(cpu) && Number.isFinite(wait) ? { cpuMs: cpu / 1e6, waitMs: wait / 1e6, processMs: (all.user + all.system) / 1e3, living } : null;
  } catch {
    return null;
  }
};

/** Of the window between two threadSched() readings (null if the second is): how long the thread
 * that runs the calls was on a CPU, how long it was ready but waited for one (the machine's other
 * threads had them), how much CPU the process's other threads took (V8's compilers and
 * collector, ours), and of that how much went to threads that had ended by the window's end:
 * V8's workers live as long as the process, ours are made for a call and end with it. */
function windowCpu(before, after) {
  if (!after) return null;
  const cpuMs = after.cpuMs - before.cpuMs;
  const othersMs = Math.max(0, after.processMs - before.processMs - cpuMs);
  let livingMs = 0;
  for (const [tid, ms] of after.living) livingMs += ms - (before.living.get(tid) ?? 0);
  return { cpuMs, waitMs: after.waitMs - before.waitMs, othersMs, endedMs: Math.max(0, othersMs - livingMs) };
}

async function loadImpl(key) {
  const { loadReference, loadOurs } = await import("../__test__/helpers/target.mjs");
  return key === "reference" ? loadReference() : loadOurs();
}

/** Runs an async listing with the event-loop monitor and the first-progress clock. */
async function timedListing(run) {
  const h = monitorEventLoopDelay({ resolution: 10 });
  let firstProgressMs = null;
  let progressCalls = 0;
  const start = now();
  h.enable();
  const result = await run((/* loaded, total, partial */) => {
    progressCalls++;
    if (firstProgressMs === null) firstProgressMs = now() - start;
  });
  const ms = now() - start;
  h.disable();
  return { result, ms, firstProgressMs, progressCalls, eldMaxMs: h.max / 1e6, eldP99Ms: h.percentile(99) / 1e6 };
}

async function main() {
  const mod = await loadImpl(implKey);
  const SM = mod.SessionManager;
  if (args.agentDir) process.env.PI_CODING_AGENT_DIR = args.agentDir;
  gc();
  const rssBefore = rssMb();
  switch (op) {
    case "baseline":
      return { ms: 0, maxRssMb: rssMb() };
    case "list":
    case "listAll": {
      const cleared = args.clearCache ? clearListingCaches(args.agentDir) : [];
      const r = await timedListing((onProgress) =>
        op === "list" ? SM.list(args.cwd, args.dir, onProgress) : SM.listAll(onProgress),
      );
      const maxRssMb = rssMb();
      return { ms: r.ms, maxRssMb, rssBeforeMb: rssBefore, sessions: r.result.length, firstProgressMs: r.firstProgressMs, progressCalls: r.progressCalls, eldMaxMs: r.eldMaxMs, eldP99Ms: r.eldP99Ms, clearedCaches: cleared.length };
    }
    case "open": {
      const t = now();
      const sm = SM.open(args.file, args.sessionDir);
      const ms = now() - t;
      const maxRssMb = rssMb();
      return { ms, maxRssMb, rssBeforeMb: rssBefore, leaf: sm.getLeafId() };
    }
    case "openContext": {
      const t = now();
      const sm = SM.open(args.file, args.sessionDir);
      const openMs = now() - t;
      const t2 = now();
      const ctx = sm.buildSessionContext();
      const contextMs = now() - t2;
      const maxRssMb = rssMb();
      // Measured after the RSS reading: what the caller holds as JS objects.
      let materializedBytes = 0;
      for (const m of ctx.messages) materializedBytes += Buffer.byteLength(JSON.stringify(m));
      return { ms: openMs + contextMs, openMs, contextMs, maxRssMb, rssBeforeMb: rssBefore, contextMessages: ctx.messages.length, materializedBytes };
    }
    case "walk": {
      // A script that reads every session of a directory in one synchronous loop.
      const files = fs
        .readdirSync(args.dir)
        .filter((f) => f.endsWith(".jsonl"))
        .sort()
        .map((f) => path.join(args.dir, f));
      let messages = 0;
      const t = now();
      for (const f of files) messages += SM.open(f, args.sessionDir).buildSessionContext().messages.length;
      const ms = now() - t;
      return { ms, maxRssMb: rssMb(), rssBeforeMb: rssBefore, sessions: files.length, messages };
    }
    case "perTurn": {
      const sm = SM.open(args.file, args.sessionDir);
      const call = makeCall(sm, args.call);
      call(); // first call outside the clock (lazy caches are part of open's cost, not per turn)
      const n = args.iterations ?? 100;
      const t = now();
      for (let i = 0; i < n; i++) call();
      const ms = (now() - t) / n;
      return { ms, maxRssMb: rssMb(), rssBeforeMb: rssBefore, iterations: n };
    }
    case "grow": {
      const sm = SM.create("/bench/grow", args.sessionDir);
      const t = now();
      const turns = Math.ceil((args.mb * 1e6) / 32_000);
      for (let i = 0; i < turns; i++) {
        sm.appendMessage({ role: "user", content: `turn ${i}`, timestamp: i });
        sm.appendMessage({ role: "assistant", content: [{ type: "toolCall", id: `t${i}`, name: "bash", arguments: { command: "make" } }], provider: "p", model: "m", timestamp: i });
        // 32 KB of tool output, unlike any other (so no string is shared between turns).
        const text = `${i}:`.padEnd(32_000, String.fromCharCode(97 + (i % 26)));
        sm.appendMessage({ role: "toolResult", toolCallId: `t${i}`, toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: i });
      }
      const ms = now() - t;
      const messages = sm.buildSessionContext().messages.length;
      return { ms, maxRssMb: rssMb(), rssBeforeMb: rssBefore, messages };
    }
    case "resume": {
      const ctx = { SM, file: args.file, sm: null, firstKeptId: args.firstKeptId, sink: 0 };
      const untimed = [...steps(...(args.untimed ?? [])), ...(args.untimedCalls ?? []).map((method) => ({ static: false, method, args: [] }))];
      const timed = [...steps(...(args.timed ?? [])), ...(args.timedCalls ?? []).map((method) => ({ static: false, method, args: [] }))];
      if (!(untimed[0] ?? timed[0])?.static) ctx.sm = SM.open(args.file);
      for (const step of untimed) replayStep(ctx, step);
      const afterUntimedMb = rssMb();
      gc();
      const before = threadSched();
      const t = now();
      for (const step of timed) replayStep(ctx, step);
      if (args.transcriptPage) ctx.sink += ctx.sm.readTranscriptPage({ limit: args.transcriptPage }).items.length;
      const ms = now() - t;
      const main = before && windowCpu(before, threadSched());
      return { ms, maxRssMb: rssMb(), rssBeforeMb: rssBefore, afterUntimedMb, calls: timed.length, sink: ctx.sink, main };
    }
    case "floor": {
      // A fresh process reading the file and parsing every line (the parsed lines are dropped).
      const t = now();
      const fd = fs.openSync(args.file, "r");
      const buf = Buffer.allocUnsafe(16 << 20);
      let carry = null;
      let lines = 0;
      let pos = 0;
      try {
        for (;;) {
          const n = fs.readSync(fd, buf, 0, buf.length, pos);
          if (n === 0) break;
          pos += n;
          const view = buf.subarray(0, n);
          let start = 0;
          for (let nl = view.indexOf(10, 0); nl !== -1; nl = view.indexOf(10, start)) {
            const text = carry ? Buffer.concat([carry, view.subarray(start, nl)]).toString("utf8") : view.toString("utf8", start, nl);
            carry = null;
            if (text) {
              JSON.parse(text);
              lines++;
            }
            start = nl + 1;
          }
          if (start < n) carry = carry ? Buffer.concat([carry, view.subarray(start)]) : Buffer.from(view.subarray(start));
        }
        if (carry?.length) {
          try {
            JSON.parse(carry.toString("utf8"));
            lines++;
          } catch {}
        }
      } finally {
        fs.closeSync(fd);
      }
      const ms = now() - t;
      return { ms, maxRssMb: rssMb(), rssBeforeMb: rssBefore, lines };
    }
    case "objectsWrite":
      return { ms: 0, entries: writeResumeObjects(SM, args.file, args.dir), maxRssMb: rssMb() };
    case "objectsParse": {
      const r = parseResumeObjects(args.file, args.dir);
      return { ...r, ms: r.readMs + r.skeletonsMs, maxRssMb: rssMb(), rssBeforeMb: rssBefore };
    }
    case "forkFrom": {
      const t = now();
      SM.forkFrom(args.file, args.targetCwd, args.sessionDir);
      const ms = now() - t;
      return { ms, maxRssMb: rssMb(), rssBeforeMb: rssBefore };
    }
    case "createBranchedSession": {
      const sm = SM.open(args.file, args.sessionDir);
      const leaf = sm.getLeafId();
      const afterOpen = rssMb();
      const t = now();
      sm.createBranchedSession(leaf);
      const ms = now() - t;
      return { ms, maxRssMb: rssMb(), rssAfterOpenMb: afterOpen, rssBeforeMb: rssBefore };
    }
    default:
      throw new Error(`unknown op ${op}`);
  }
}

if (implKey === "--spawner") {
  // Started by scale.mjs while it is small; starts the measuring children for it, so that they do
  // not inherit a big parent's RSS high-water mark (see scale.mjs).
  const { spawnSync } = await import("node:child_process");
  process.on("message", ({ id, argv, env }) => {
    const r = spawnSync(process.execPath, argv, { encoding: "utf8", env, maxBuffer: 64 << 20 });
    process.send({ id, status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr });
  });
  process.on("disconnect", () => process.exit(0));
} else if (implKey) {
  try {
    const r = await main();
    out({ ok: true, impl: implKey, op, ...r, vmHwmMb: vmHwmMb() });
  } catch (error) {
    const reason = String(error?.message ?? error).split("\n")[0];
    out({ ok: false, impl: implKey, op, failed: `${error?.name ?? "Error"}: ${reason}`, code: error?.code, maxRssMb: rssMb() });
  }
  process.exit(0);
}
