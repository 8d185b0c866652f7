#!/usr/bin/env node
// Every published platform still compiles, lint-clean: `cargo clippy -D warnings` of the addon, the
// core and the CLI for each target in scripts/platforms.js, through cargo-zigbuild so the C part
// (zstd) is compiled for the target too. Code behind `cfg(windows)` or `cfg(target_os = "macos")`
// never compiles in a Linux build; this is where a change that breaks it is caught. `npm test`
// runs it; it links nothing (the full builds are `npm run build:platforms`).
//
//   node scripts/check-platforms.js [--only suffix,…]
"use strict";

const { spawnSync } = require("node:child_process");
const path = require("node:path");
const { PLATFORMS, platform } = require("./platforms.js");
const { zigToolsPath, ensureRustTargets, emptyLibnode } = require("./build-platforms.js");

const root = path.resolve(__dirname, "..");

function main() {
  const at = process.argv.indexOf("--only");
  const rows = at > 0 ? process.argv[at + 1].split(",").map((s) => platform(s.trim())) : PLATFORMS;
  ensureRustTargets(rows);
  const env = { ...process.env, PATH: zigToolsPath(), LIBNODE_PATH: emptyLibnode() };
  const failed = [];
  for (const row of rows) {
    const started = Date.now();
    // The target's own flags (musl's dynamic C library) change what is compiled; the linker's do not matter here.
    const rustflags = (row.rustflags ?? []).join(" ").replace(/-C link-arg=\S+/g, "").trim();
    const args = ["clippy", "--target", row.zig, "-p", "pi-session-native", "-p", "pi-session-core", "-p", "pi-sessions-cli", "--lib", "--", "-D", "warnings"];
    const r = spawnSync("cargo-zigbuild", args, { cwd: root, stdio: "inherit", env: { ...env, ...(row.env ?? {}), RUSTFLAGS: rustflags } });
    const ok = !r.error && r.status === 0;
    if (!ok) failed.push(row.suffix);
    console.log(`check-platforms: ${row.suffix} (${row.triple}) ${ok ? "compiles, clippy clean" : "FAILED"} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  if (failed.length) console.error(`check-platforms: failed for ${failed.join(", ")}`);
  return failed.length === 0 ? 0 : 1;
}

process.exitCode = main();
