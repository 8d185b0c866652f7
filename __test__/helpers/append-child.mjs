// A child process that appends to a session file, for the kill and concurrent-writer tests.
//
//   node append-child.mjs '<json options>'
//     file        session file to open (SessionManager.open); or
//     dir         directory to create a new session in (SessionManager.create)
//     count       appends to make, then exit 0 (default: forever, until killed)
//     hold        after `count` appends, wait to be killed instead of exiting (prints `held`
//                 once waiting, after a garbage collection when run with --expose-gc)
//     exclusive   call sm.setExclusive(true) after opening
//     waitGo      after "ready", wait for a line on stdin before appending
//     bigEvery    one append in bigEvery carries 16–128 KB of text (default: never)
//     bigOnly     every append carries 256 KB–1 MB of text (for kills inside a long write)
//     maxBytes    stop (as after `count`) once this much text was appended
//     killAfterMs SIGKILL this process that long after "ready", from a worker thread: the kill
//                 lands at its moment however busy the appending thread or the parent are
//     killInWrite SIGKILL this process from a worker thread as soon as the file has grown by this
//                 many bytes since the first append began: inside that append's `write` when
//                 its entry is larger (the file grows page by page while it is copied in, and
//                 the kernel stops a write killed part-way), so that it leaves a torn line
//     size        every append carries exactly this much text (instead of the sizes above)
//     pauseMs     wait this long between appends
//     untilInput  append until a line arrives on stdin, then print `done` and exit 0 (as a
//                 killInWrite child does when its appends end before the kill)
//     reference   append with the reference's SessionManager instead of ours
//     seed        seed of the sizes chosen
//
// stdout protocol, one line each: `file <path>`, `ready`, then the id of every append, printed
// only after the append returned (stdout is a pipe: synchronous on POSIX). On an error while
// opening: `error <code> <message>` and exit code 3; while appending: the same and exit code 4.
import fs from "node:fs";
import { Worker } from "node:worker_threads";

import { loadOurs, loadReference } from "./target.mjs";

const opts = JSON.parse(process.argv[2] ?? "{}");
const { SessionManager } = opts.reference ? await loadReference() : loadOurs();
const out = (line) => process.stdout.write(`${line}\n`);
const fail = (err, code) => {
  out(`error ${err?.code ?? "NO_CODE"} ${String(err?.message ?? err).replace(/\n/g, " ")}`);
  process.exit(code);
};

let seed = (opts.seed ?? 1) >>> 0;
const rand = () => {
  seed = (seed + 0x9e3779b9) >>> 0;
  let z = seed;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
};

// Started first, so that it is running by the time the appends start.
const killer =
  opts.killAfterMs === undefined
    ? null
    : new Worker(
        `require("node:worker_threads").parentPort.once("message", (ms) =>
           setTimeout(() => process.kill(process.pid, "SIGKILL"), ms));`,
        { eval: true },
      );
// Told the file and its length just before the first append: says it polls, then polls the length
// (no event loop, so nothing here can delay it) and kills this process once the file has grown
// by `over`. The append starts only once it polls.
const inWrite =
  opts.killInWrite === undefined
    ? null
    : new Worker(
        `const fs = require("node:fs");
         const { parentPort } = require("node:worker_threads");
         parentPort.once("message", ({ file, from, over }) => {
           const fd = fs.openSync(file, "r");
           parentPort.postMessage("polling");
           for (;;) if (fs.fstatSync(fd).size >= from + over) process.kill(process.pid, "SIGKILL");
         });`,
        { eval: true },
      );

let sm;
try {
  sm = opts.file ? SessionManager.open(opts.file) : SessionManager.create(opts.dir, opts.dir);
  if (opts.exclusive) sm.setExclusive(true);
} catch (err) {
  fail(err, 3);
}
out(`file ${sm.getSessionFile()}`);
out("ready");
killer?.postMessage(opts.killAfterMs);

if (opts.waitGo) {
  await new Promise((resolve) => {
    process.stdin.once("data", resolve);
  });
  process.stdin.pause();
}

let stop = false;
if (opts.untilInput) process.stdin.once("data", () => (stop = true));

const count = opts.count ?? Infinity;
const tag = `p${process.pid}`;
let total = 0;
for (let i = 0; i < count && !stop && !(opts.maxBytes && total >= opts.maxBytes); i++) {
  const big = opts.bigEvery && i % opts.bigEvery === opts.bigEvery - 1;
  const size =
    opts.size ??
    (opts.bigOnly
      ? 262144 + Math.floor(rand() * 786432)
      : big
        ? 16384 + Math.floor(rand() * 114688)
        : 20 + Math.floor(rand() * 300));
  total += size;
  if (inWrite && i === 0) {
    const file = sm.getSessionFile();
    const polling = new Promise((resolve) => inWrite.once("message", resolve));
    inWrite.postMessage({ file, from: fs.statSync(file).size, over: opts.killInWrite });
    await polling;
  }
  const text = `${tag}-${i}-`.padEnd(size, "abcdefghij"[i % 10]);
  let id;
  try {
    id =
      i % 2 === 0
        ? sm.appendMessage({ role: "user", content: text, timestamp: Date.now() })
        : sm.appendMessage({
            role: "assistant",
            content: [{ type: "text", text }],
            provider: "p",
            model: "m",
            stopReason: "stop",
            timestamp: Date.now(),
          });
  } catch (err) {
    fail(err, 4);
  }
  out(id);
  if (opts.pauseMs) await new Promise((resolve) => setTimeout(resolve, opts.pauseMs));
}
out("done");
// (A killInWrite worker still polls: not killed in time, the process ends here.)
if (opts.untilInput || inWrite) process.exit(0);
// The timer keeps `sm` reachable: once this module's body has run, a manager nothing refers to is
// collected, and an exclusive one's lease goes with it (seen on Node 24 as a holder whose lease
// vanished right after "ready").
if (opts.hold) {
  setInterval(() => sm.getSessionFile(), 60_000);
  // Run with --expose-gc, a holder collects once its module body is done and says `held`, so a
  // test sees the lease as it is after a collection, not by luck before one.
  setImmediate(() => {
    globalThis.gc?.();
    setImmediate(() => out("held"));
  });
}
