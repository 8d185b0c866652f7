// Preloaded by bench/pi.mjs into the pi it starts (NODE_OPTIONS=--import=…): at exit, writes
// this process's peak RSS (process.resourceUsage().maxRSS, KiB) and its CPU time (user + system,
// ms) to $PI_BENCH_RSS_FILE as JSON.
import fs from "node:fs";

const file = process.env.PI_BENCH_RSS_FILE;
if (file) {
  process.on("exit", () => {
    try {
      const u = process.resourceUsage();
      fs.writeFileSync(file, JSON.stringify({ maxRssKiB: u.maxRSS, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 }));
    } catch {}
  });
}
