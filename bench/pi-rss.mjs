// Preloaded by bench/pi.mjs into the pi it starts (NODE_OPTIONS=--import=…): at exit, writes
// this process's peak RSS (process.resourceUsage().maxRSS, KiB) and its CPU time (user + system,
// ms) to $PI_BENCH_RSS_FILE as JSON.
//
// With PI_BENCH_CALLS=stock or native, it also times the session calls pi makes that build or
// walk entries (getBranch, getEntries, buildSessionContext, buildSessionProjection) on the class
// that serves them (the agent's bundled SessionManager for stock, ours for pi-native), and writes
// after each such call, per method, { n, ms, first } (first: the first call's time, in ms) to
// $PI_BENCH_CALLS_FILE: a TUI is killed, not exited, so the file is kept current.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const file = process.env.PI_BENCH_RSS_FILE;
if (file) {
  process.on("exit", () => {
    try {
      const u = process.resourceUsage();
      fs.writeFileSync(file, JSON.stringify({ maxRssKiB: u.maxRSS, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 }));
    } catch {}
  });
}

const TIMED = ["getBranch", "getEntries", "buildSessionContext", "buildSessionProjection"];
const callsFile = process.env.PI_BENCH_CALLS_FILE;
const which = process.env.PI_BENCH_CALLS;
if (callsFile && (which === "stock" || which === "native")) {
  const require = createRequire(import.meta.url);
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const Class =
    which === "native"
      ? require(root).SessionManager
      : await require(path.join(root, "launcher", "pi-agent.js")).loadBundledClass(process.env.PI_NATIVE_AGENT ?? path.join(root, "node_modules", "@earendil-works", "pi-coding-agent"));
  /** @type {Record<string, { n: number, ms: number, first: number }>} */
  const stats = {};
  for (const name of TIMED) {
    const f = Class.prototype[name];
    if (typeof f !== "function") continue;
    Class.prototype[name] = function (...args) {
      const t = performance.now();
      try {
        return f.apply(this, args);
      } finally {
        const ms = performance.now() - t;
        const s = (stats[name] ??= { n: 0, ms: 0, first: ms });
        s.n++;
        s.ms += ms;
        try {
          fs.writeFileSync(callsFile, JSON.stringify(stats));
        } catch {}
      }
    };
  }
}
