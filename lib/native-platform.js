// Which published binary fits this process: the platform suffix the loader (native.js) looks
// for. Kept apart from native.js so a test can ask it about every platform, not only this one.
"use strict";

const fs = require("node:fs");

/** Whether this Linux process runs on musl libc (Alpine and friends) rather than glibc. */
function isMusl() {
  // Cheapest first: the ldd script names its libc.
  try {
    return fs.readFileSync("/usr/bin/ldd", "utf8").includes("musl");
  } catch {
    // No ldd there; ask Node instead.
  }
  // Typed loosely: `excludeNetwork` (Node 22+) and the report's shape are not in @types/node's.
  const reporter = /** @type {any} */ (process.report);
  if (reporter && typeof reporter.getReport === "function") {
    const excludeNetwork = reporter.excludeNetwork;
    try {
      reporter.excludeNetwork = true;
      const report = reporter.getReport();
      const header = report && (typeof report === "string" ? JSON.parse(report).header : report.header);
      // Node built against glibc reports the glibc version it runs on; on musl there is none.
      if (header) return !header.glibcVersionRuntime;
    } catch {
      // Fall through to the default.
    } finally {
      reporter.excludeNetwork = excludeNetwork;
    }
  }
  return false;
}

/**
 * The napi-rs platform suffix of the binary for a platform, arch and C library, or null when none
 * is published for it. The rows of scripts/platforms.js, which a test holds this to.
 */
function platformSuffix(platform, arch, musl) {
  if (platform === "linux" && (arch === "x64" || arch === "arm64")) {
    return `linux-${arch}-${musl ? "musl" : "gnu"}`;
  }
  if (platform === "darwin" && (arch === "x64" || arch === "arm64")) {
    return `darwin-${arch}`;
  }
  if (platform === "win32" && arch === "x64") return "win32-x64-gnu";
  if (platform === "win32" && arch === "arm64") return "win32-arm64-gnullvm";
  return null;
}

module.exports = { isMusl, platformSuffix };
