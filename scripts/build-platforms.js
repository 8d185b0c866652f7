#!/usr/bin/env node
// `npm run build:platforms`: build the addon for every platform in scripts/platforms.js on this
// one Linux machine, pack each binary with its npm/<suffix>/ manifest and the LICENSE, and pack the
// nine tarballs (eight platform packages and the root package) into one folder, ready for
// `npm publish`.
//
//   node scripts/build-platforms.js                       all eight, into dist/
//   node scripts/build-platforms.js --only darwin-arm64,win32-x64-gnu
//   node scripts/build-platforms.js --out DIR --no-pack   binaries only (DIR/<file>.node)
//
// Everything comes from the registries: the Rust targets from rustup, zig and cargo-zigbuild from
// PyPI (pinned, in a virtualenv under .cache/zig-tools/), so a fresh machine needs only Rust,
// Node and Python 3. zig links every target, Linux glibc ones against glibc 2.17 symbols (older
// than any Node that runs pi needs). Windows is built with the GNU ABI: the MSVC targets need
// Microsoft's SDK libraries, which no registry here serves (README: "Platforms").
//
// Reproducible: the same commit built anywhere gives the same binaries. Paths of this checkout and
// of the cargo registry are remapped out of them, link times are the commit's (SOURCE_DATE_EPOCH),
// the toolchain is pinned (rust-toolchain is the
// machine's, named in the SHA256SUMS file), and npm packs with fixed times. DIR/SHA256SUMS lists
// every tarball and binary; building twice and comparing it is the check.
"use strict";

const { spawnSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { PLATFORMS, platform, binaryFile } = require("./platforms.js");
const { packPlatform, packRoot } = require("./pack.js");

const root = path.resolve(__dirname, "..");
const ZIG_TOOLS = { ziglang: "0.17.1", "cargo-zigbuild": "0.24.1" };

function log(message) {
  console.log(`build-platforms: ${message}`);
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", ...options });
  if (r.error || r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} failed (${r.error ? r.error.message : `exit ${r.status}`})`);
  }
}

function output(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: "utf8", ...options });
  return r.error || r.status !== 0 ? null : r.stdout.trim();
}

function parseArgs(argv) {
  const options = { out: path.join(root, "dist"), only: null, pack: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--out") options.out = path.resolve(argv[++i]);
    else if (arg === "--only") options.only = argv[++i].split(",").map((s) => platform(s.trim()));
    else if (arg === "--no-pack") options.pack = false;
    else throw new Error(`unknown argument ${arg} (see the header of scripts/build-platforms.js)`);
  }
  return options;
}

/** PATH with the pinned zig and cargo-zigbuild first, installing them when missing. */
function zigToolsPath() {
  const venv = path.join(root, ".cache", "zig-tools");
  const bin = path.join(venv, process.platform === "win32" ? "Scripts" : "bin");
  const stamp = path.join(venv, "versions.json");
  const wanted = JSON.stringify(ZIG_TOOLS);
  if (!fs.existsSync(stamp) || fs.readFileSync(stamp, "utf8") !== wanted) {
    log(`installing ${Object.entries(ZIG_TOOLS).map(([n, v]) => `${n}==${v}`).join(" ")} into .cache/zig-tools/`);
    fs.rmSync(venv, { recursive: true, force: true });
    run("python3", ["-m", "venv", venv]);
    run(path.join(bin, "pip"), [
      "install",
      "--quiet",
      "--disable-pip-version-check",
      ...Object.entries(ZIG_TOOLS).map(([n, v]) => `${n}==${v}`),
    ]);
    fs.writeFileSync(stamp, wanted);
  }
  // cargo-zigbuild runs `python3 -m ziglang` when there is no `zig` on PATH: the venv's python.
  return [bin, process.env.PATH].join(path.delimiter);
}

function ensureRustTargets(rows) {
  const installed = new Set((output("rustup", ["target", "list", "--installed"]) ?? "").split("\n"));
  const missing = rows.map((r) => r.triple).filter((t) => !installed.has(t));
  if (missing.length > 0) {
    log(`rustup target add ${missing.join(" ")}`);
    run("rustup", ["target", "add", ...missing]);
  }
}

/**
 * napi-build's set-up for windows-gnu insists on a `libnode.dll` to link against. The addon takes
 * every Node-API symbol from node.exe at load time (napi's dyn-symbols), so an empty archive
 * satisfies the link without adding an import: nothing is resolved from it.
 */
function emptyLibnode() {
  const dir = path.join(root, "target", "platforms", "libnode");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "libnode.dll"), "");
  fs.writeFileSync(path.join(dir, "libnode.a"), "!<arch>\n");
  return dir;
}

function cargoHome() {
  return process.env.CARGO_HOME || path.join(os.homedir(), ".cargo");
}

/**
 * The time the Windows linker writes into the PE header (its TimeDateStamp, otherwise the clock
 * at the link: the one byte range two builds of one commit differed in): SOURCE_DATE_EPOCH when
 * the caller sets it, else the commit's time, else 0 outside a git checkout.
 */
function sourceDateEpoch() {
  if (process.env.SOURCE_DATE_EPOCH) return process.env.SOURCE_DATE_EPOCH;
  return output("git", ["log", "-1", "--format=%ct"]) || "0";
}

function build(row, pathWithZig, epoch) {
  const rustflags = [
    `--remap-path-prefix=${root}=/pi-session-native`,
    `--remap-path-prefix=${cargoHome()}=/cargo`,
    ...(row.rustflags ?? []),
  ];
  const env = { ...process.env, PATH: pathWithZig, RUSTFLAGS: rustflags.join(" "), SOURCE_DATE_EPOCH: epoch, ...(row.env ?? {}) };
  if (row.os === "win32") env.LIBNODE_PATH = emptyLibnode();
  const started = Date.now();
  run("cargo", ["zigbuild", "--release", "--locked", "--target", row.zig, "-p", "pi-session-native"], { env });
  const seconds = (Date.now() - started) / 1000;
  const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, "target");
  return { file: path.join(targetDir, row.triple, "release", row.artifact), seconds };
}

function sha256(file) {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const rows = options.only ?? PLATFORMS;
  ensureRustTargets(rows);
  const pathWithZig = zigToolsPath();
  const epoch = sourceDateEpoch();
  fs.mkdirSync(options.out, { recursive: true });

  const results = [];
  for (const row of rows) {
    log(`${row.suffix}: cargo zigbuild --target ${row.zig}`);
    const { file, seconds } = build(row, pathWithZig, epoch);
    const binary = path.join(options.out, binaryFile(row));
    fs.copyFileSync(file, binary);
    const result = { row, binary, seconds, bytes: fs.statSync(binary).size };
    if (options.pack) result.tarball = packPlatform(row, binary, options.out).tarball;
    results.push(result);
    log(`${row.suffix}: built in ${seconds.toFixed(0)} s, ${(result.bytes / 1024 / 1024).toFixed(2)} MiB`);
  }
  const files = results.flatMap((r) => [r.binary, r.tarball].filter(Boolean));
  if (options.pack) files.push(packRoot(options.out).tarball);

  const rustc = output("rustc", ["--version"]);
  const sums = files.map((f) => `${sha256(f)}  ${path.basename(f)}`).join("\n");
  fs.writeFileSync(path.join(options.out, "SHA256SUMS"), `# ${rustc}\n${sums}\n`);

  console.log("");
  for (const r of results) {
    console.log(
      `  ${r.row.suffix.padEnd(20)} ${r.row.triple.padEnd(28)} ${`${r.seconds.toFixed(0)} s`.padStart(6)}  ${(r.bytes / 1024 / 1024).toFixed(2)} MiB`,
    );
  }
  log(`${files.length} files in ${path.relative(root, options.out) || "."}/ (SHA256SUMS beside them)`);
}

module.exports = { zigToolsPath, ensureRustTargets, emptyLibnode };

if (require.main === module) {
  try {
    main();
  } catch (error) {
    console.error(`build-platforms: ${error.message}`);
    process.exitCode = 1;
  }
}
