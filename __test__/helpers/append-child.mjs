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
//     seed        seed of the sizes chosen
//
// stdout protocol, one line each: `file <path>`, `ready`, then the id of every append, printed
// only after the append returned (stdout is a pipe: synchronous on POSIX). On an error while
// opening: `error <code> <message>` and exit code 3; while appending: the same and exit code 4.
import { Worker } from "node:worker_threads";

import { loadOurs } from "./target.mjs";

const { SessionManager } = loadOurs();

const opts = JSON.parse(process.argv[2] ?? "{}");
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

const count = opts.count ?? Infinity;
const tag = `p${process.pid}`;
let total = 0;
for (let i = 0; i < count && !(opts.maxBytes && total >= opts.maxBytes); i++) {
  const big = opts.bigEvery && i % opts.bigEvery === opts.bigEvery - 1;
  const size = opts.bigOnly
    ? 262144 + Math.floor(rand() * 786432)
    : big
      ? 16384 + Math.floor(rand() * 114688)
      : 20 + Math.floor(rand() * 300);
  total += size;
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
}
out("done");
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
