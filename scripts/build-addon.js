#!/usr/bin/env node
// `prepare` script of pi-session-native: in a source checkout, `npm install` / `npm ci` also
// builds the native addon, so the tests and the benchmark can run straight away:
//   npx napi build --platform --release --no-js --dts native.d.ts
// npm runs `prepare` only in a checkout (and for a git dependency), never when the package is
// installed from the registry; the published package.json carries no lifecycle script at all
// (scripts/pack.js drops them), so a user's install runs nothing of ours. Without a Cargo.toml
// beside package.json there is nothing to build and this script does nothing.
//
// Set PI_SESSION_NATIVE_SKIP_BUILD=1 to skip the build (CI jobs that download a prebuilt
// binary do), or install with --ignore-scripts.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const isWindows = process.platform === "win32";

function log(message) {
  console.log(`pi-session-native: ${message}`);
}

function main() {
  if (!fs.existsSync(path.join(root, "Cargo.toml"))) {
    return 0; // Installed from the registry: nothing to build.
  }
  const skip = process.env.PI_SESSION_NATIVE_SKIP_BUILD;
  if (skip && skip !== "0") {
    log("PI_SESSION_NATIVE_SKIP_BUILD is set; not building the native addon.");
    return 0;
  }
  const cargo = spawnSync("cargo", ["--version"], { stdio: "ignore", shell: isWindows });
  if (cargo.error || cargo.status !== 0) {
    log(
      "cargo was not found, so the native addon was not built. Install Rust (https://rustup.rs) " +
        "and run `npm run build`, or set PI_SESSION_NATIVE_PATH to a prebuilt .node file.",
    );
    return 0;
  }

  const args = ["napi", "build", "--platform", "--release", "--no-js", "--dts", "native.d.ts"];
  log(`building the native addon: npx ${args.join(" ")}`);
  const build = spawnSync("npx", args, { cwd: root, stdio: "inherit", shell: isWindows });
  if (build.error || build.status !== 0) {
    const reason = build.error
      ? build.error.message
      : build.signal
        ? `killed by ${build.signal}`
        : `exit code ${build.status}`;
    console.error(
      `\npi-session-native: building the native addon FAILED (${reason}).\n` +
        "Fix the build error above, or set PI_SESSION_NATIVE_SKIP_BUILD=1 to install without building.",
    );
    return build.status || 1;
  }
  return 0;
}

process.exitCode = main();
