#!/usr/bin/env node
// Fetch Bun from the npm registry and print the path of its binary.
//
//   node scripts/fetch-bun.js     -> /…/.cache/bun-1.4.5/node_modules/@oven/bun-linux-x64/bin/bun
//
// Bun publishes its builds as npm packages @oven/bun-<os>-<arch>[-baseline][-musl]; each holds
// the binary in bin/bun. Installed once into .cache/bun-<version>/ (gitignored) the way
// scripts/fetch-node.js installs Node (its installCached); later calls only check the binary.
//
// The version is pinned, so every run tests the same Bun. Linux x64 with glibc only: the x64
// build needs AVX2 (else the -baseline build is taken); the musl builds need a musl libstdc++
// and a newer musl than Debian bookworm's, which scripts/fetch-bun-musl.js puts together for
// `npm run test:platforms`. scripts/test-bun.js uses this. Exit code 1 with a message on stderr
// when Bun cannot be had.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { installCached, versionOf } = require("./fetch-node.js");

const BUN_VERSION = "1.4.5";
const cacheDir = path.resolve(__dirname, "..", ".cache", `bun-${BUN_VERSION}`);

/** The package for this machine: AVX2 decides between the default and the -baseline build. */
function packageName() {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(`fetch-bun: only linux-x64 (glibc) is set up here, not ${process.platform}-${process.arch}`);
  }
  let cpuinfo = "";
  try {
    cpuinfo = fs.readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    // No /proc: take the build that runs on every x64 CPU.
  }
  return /\bavx2\b/.test(cpuinfo) ? "@oven/bun-linux-x64" : "@oven/bun-linux-x64-baseline";
}

/** Path of a working Bun of the pinned version, installing it into .cache/ if needed. */
function fetchBun() {
  const name = packageName();
  return installCached({
    what: "fetch-bun",
    spec: `${name}@${BUN_VERSION}`,
    dir: cacheDir,
    binaryOf: (dir) => path.join(dir, "node_modules", name, "bin", "bun"),
    ready: (binary) => versionOf(binary) === BUN_VERSION,
  });
}

module.exports = { fetchBun, BUN_VERSION };

if (require.main === module) {
  try {
    console.log(fetchBun());
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
