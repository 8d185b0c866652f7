#!/usr/bin/env node
// Builds the native addon with the project's own pinned napi CLI (node_modules/@napi-rs/cli):
//
//   node scripts/build-addon.js            the `prepare` script (see below)
//   node scripts/build-addon.js --build    `npm run build`: napi build --platform --release
//   node scripts/build-addon.js --debug    `npm run build:debug`: the same without --release
//
// The CLI is started as `node <its bin>`, never through `npx napi`: under `npm install -g
// <checkout>` npm runs `prepare` in global mode, where npx looks `napi` up on the registry (a 404)
// instead of in the checkout's node_modules.
//
// As `prepare`: in a source checkout, `npm install` / `npm ci` also builds the addon, so the
// tests and the benchmark can run straight away. npm runs `prepare` only in a checkout (and for a
// git or folder dependency, after installing its devDependencies), never when the package is
// installed from the registry; the published package.json carries no lifecycle script at all
// (scripts/pack.js drops them), so a user's install runs nothing of ours. Without a Cargo.toml
// beside package.json there is nothing to build and this script does nothing; without cargo it
// says so and does nothing. Set PI_SESSION_NATIVE_SKIP_BUILD=1 to skip the build (CI jobs that
// download a prebuilt binary do), or install with --ignore-scripts.
"use strict";

const { spawn, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const isWindows = process.platform === "win32";
const NAPI_ARGS = ["build", "--platform", "--no-js", "--dts", "native.d.ts"];

function log(message) {
  console.log(`pi-session-native: ${message}`);
}

/** The pinned napi CLI's script in this checkout's node_modules, or null when it is not installed. */
function napiCli() {
  let manifest;
  try {
    manifest = require.resolve("@napi-rs/cli/package.json", { paths: [root] });
  } catch {
    return null;
  }
  const { bin } = JSON.parse(fs.readFileSync(manifest, "utf8"));
  const script = path.resolve(path.dirname(manifest), typeof bin === "string" ? bin : bin.napi);
  return fs.existsSync(script) ? script : null;
}

/**
 * Moves each file napi built in `outDir` to the checkout root, unless the one there has the same
 * bytes. A new file replaces the old by rename, so a process that has the old addon loaded (a
 * test running beside `npm install -g <checkout>`, which builds again) never sees it truncated.
 */
function publishBuilt(outDir) {
  for (const name of fs.readdirSync(outDir)) {
    const built = path.join(outDir, name);
    const target = path.join(root, name);
    if (fs.existsSync(target) && fs.readFileSync(target).equals(fs.readFileSync(built))) {
      fs.rmSync(built);
      continue;
    }
    fs.renameSync(built, target);
  }
}

/** Off a terminal (a CI log, `npm install` piped), cargo shows no progress bar, and its last step,
 * the optimized link, prints nothing for a minute or more: a line this often says it goes on. */
const HEARTBEAT_MS = 15_000;

/** Runs `cmd args` with this process's stdio; resolves to spawnSync's `{ status, signal, error }`. */
function runVisibly(cmd, args, options) {
  return new Promise((resolve) => {
    const started = Date.now();
    const beat = process.stdout.isTTY
      ? null
      : setInterval(() => log(`still building (${Math.round((Date.now() - started) / 1000)} s)...`), HEARTBEAT_MS);
    const done = (/** @type {any} */ r) => {
      if (beat) clearInterval(beat);
      resolve(r);
    };
    const child = spawn(cmd, args, { ...options, stdio: "inherit" });
    child.on("error", (error) => done({ error }));
    child.on("close", (status, signal) => done({ status, signal }));
  });
}

/** Runs `napi build` (release unless `debug`); resolves to the exit code, after saying why on a
 * failure. */
async function napiBuild({ debug = false } = {}) {
  const cli = napiCli();
  if (!cli) {
    console.error(
      "pi-session-native: the pinned napi CLI (@napi-rs/cli) is not in node_modules: " +
        "run `npm install` in the checkout first (it installs the dev dependencies, then builds).",
    );
    return 1;
  }
  // Built beside cargo's output (target/ is ignored by git), then moved into place.
  const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, "target");
  fs.mkdirSync(targetDir, { recursive: true });
  const outDir = fs.mkdtempSync(path.join(targetDir, "napi-out-"));
  const args = [...NAPI_ARGS, "--output-dir", outDir, ...(debug ? [] : ["--release"])];
  log(`building the native addon (cargo, ${debug ? "debug" : "release"}; a first build takes a few minutes): napi ${args.join(" ")}`);
  try {
    const build = await runVisibly(process.execPath, [cli, ...args], { cwd: root });
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
    publishBuilt(outDir);
    return 0;
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
}

function hasCargo() {
  const cargo = spawnSync("cargo", ["--version"], { stdio: "ignore", shell: isWindows });
  return !cargo.error && cargo.status === 0;
}

/** The oldest Node the dev dependencies run on: the pi agent 1.6.0 and its packages need 22.19. */
const DEV_NODE = [22, 19];

/** On an older Node, one line on what npm's EBADENGINE warnings above it mean. */
function explainEngines() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > DEV_NODE[0] || (major === DEV_NODE[0] && minor >= DEV_NODE[1])) return;
  log(
    `this is Node ${process.version}. npm's EBADENGINE warnings are about the dev dependencies: ` +
      "the pi agent 1.6.0 and its packages need Node >= 22.19 (two packages under @napi-rs/cli " +
      "need 22). They do not stop the install: the library and pi-sessions run on this Node; " +
      "pi, and so pi-native, needs 22.19 or later.",
  );
}

/** The `prepare` script: build when this is a checkout with cargo, else say why not and succeed. */
async function prepare() {
  if (!fs.existsSync(path.join(root, "Cargo.toml"))) {
    return 0; // Installed from a tarball or the registry: nothing to build.
  }
  explainEngines();
  const skip = process.env.PI_SESSION_NATIVE_SKIP_BUILD;
  if (skip && skip !== "0") {
    log("PI_SESSION_NATIVE_SKIP_BUILD is set; not building the native addon.");
    return 0;
  }
  if (!hasCargo()) {
    log(
      "cargo was not found, so the native addon was not built. Install Rust (https://rustup.rs) " +
        "and run `npm run build`, or set PI_SESSION_NATIVE_PATH to a prebuilt .node file.",
    );
    return 0;
  }
  return napiBuild();
}

module.exports = { napiBuild, napiCli };

if (require.main === module) {
  const mode = process.argv[2];
  const run =
    mode === "--build" ? napiBuild() : mode === "--debug" ? napiBuild({ debug: true }) : mode === undefined ? prepare() : null;
  if (run === null) {
    console.error(`build-addon: unknown argument ${mode} (see the header of scripts/build-addon.js)`);
    process.exitCode = 2;
  } else {
    run.then((code) => {
      process.exitCode = code;
    });
  }
}
