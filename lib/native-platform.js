// Which published binary fits this process: the platform suffix the loader (native.js) looks
// for. Kept apart from native.js so a test can ask it about every platform, not only this one.
"use strict";

const fs = require("node:fs");

/** Whether this Linux process runs on musl libc (Alpine and friends) rather than glibc. */
function isMusl() {
  // The process's own answer first: the loader its executable names. The system's answers below
  // can differ from it (a musl build of Node or Bun run on a glibc system, or the other way round).
  const own = libcOfExecutable("/proc/self/exe");
  if (own !== null) return own === "musl";
  // Cheapest next: the ldd script names its libc.
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

/** How much of an executable is read for its program headers (they follow the ELF header). */
const ELF_HEAD_BYTES = 4096;
/** A program header's type: the path of the dynamic loader. */
const PT_INTERP = 3;

/**
 * The C library the dynamic loader named by the 64-bit little-endian ELF executable `file` belongs
 * to ("musl" or "glibc"); null when that cannot be told (not such an ELF file, statically linked,
 * unreadable, another loader).
 * @param {string} file @returns {"musl" | "glibc" | null}
 */
function libcOfExecutable(file) {
  let fd;
  try {
    fd = fs.openSync(file, "r");
    const loader = loaderOf(fd);
    if (loader === null) return null;
    if (loader.includes("/ld-musl-")) return "musl";
    if (loader.includes("/ld-linux-")) return "glibc";
    return null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The loader path in the PT_INTERP program header of the ELF file open as `fd`; null if none.
 * @param {number} fd */
function loaderOf(fd) {
  const head = Buffer.alloc(ELF_HEAD_BYTES);
  const length = fs.readSync(fd, head, 0, ELF_HEAD_BYTES, 0);
  // "\x7fELF", 64-bit, little-endian: what every published Linux target (x64, arm64) is.
  if (length < 64 || head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2 || head[5] !== 1) return null;
  const phoff = Number(head.readBigUInt64LE(32));
  const phentsize = head.readUInt16LE(54);
  const phnum = head.readUInt16LE(56);
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (phentsize < 56 || at + 56 > length) return null;
    if (head.readUInt32LE(at) !== PT_INTERP) continue;
    // (Usually right after the headers; elsewhere in a binary whose loader was changed later.)
    const size = Math.min(Number(head.readBigUInt64LE(at + 32)), ELF_HEAD_BYTES);
    const path = Buffer.alloc(size);
    const got = fs.readSync(fd, path, 0, size, Number(head.readBigUInt64LE(at + 8)));
    return path.toString("latin1", 0, got).replace(/\0.*$/s, "");
  }
  return null;
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

module.exports = { isMusl, libcOfExecutable, platformSuffix };
