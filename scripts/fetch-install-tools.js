#!/usr/bin/env node
// The package managers and the registry the install tests use, fetched from the npm registry on
// first use into .cache/<tool>-<version>/ (gitignored) as scripts/fetch-node.js fetches Node:
//
//   node scripts/fetch-install-tools.js            fetch all, print each one's entry script
//
//   verdaccio  a private npm registry, run on 127.0.0.1 for the registry installs (321 packages,
//              64 MB: too many to pin as a devDependency every `npm ci` would install)
//   pnpm       `pnpm add -g` from that registry
//   yarn       yarn 1 (classic), `yarn global add`: yarn 2+ has no global installs
//
// Bun comes from scripts/fetch-bun.js. Each is pinned, so every run tests the same tools; each
// entry is a JS script, run with the Node the test chose. Throws (exit code 1) saying why when a
// tool cannot be had.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { installCached } = require("./fetch-node.js");

const root = path.resolve(__dirname, "..");

/** Pinned versions and the script each package runs as its command. */
const TOOLS = {
  verdaccio: { version: "6.10.4", entry: "bin/verdaccio" },
  pnpm: { version: "12.25.1", entry: "bin/pnpm.mjs" },
  yarn: { version: "1.22.22", entry: "bin/yarn.js" },
};

function versionIn(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
}

/** The entry script of tool `name` at its pinned version, installing it into .cache/ if needed. */
function fetchTool(name) {
  const tool = TOOLS[name];
  if (!tool) throw new Error(`fetch-install-tools: no tool ${name} (known: ${Object.keys(TOOLS).join(", ")})`);
  const pkgDir = (dir) => path.join(dir, "node_modules", name);
  return installCached({
    what: "fetch-install-tools",
    spec: `${name}@${tool.version}`,
    dir: path.join(root, ".cache", `${name}-${tool.version}`),
    binaryOf: (dir) => path.join(pkgDir(dir), tool.entry),
    ready: (entry) => fs.existsSync(entry) && versionIn(path.dirname(path.dirname(entry))) === tool.version,
  });
}

module.exports = { TOOLS, fetchTool };

if (require.main === module) {
  try {
    for (const name of Object.keys(TOOLS)) console.log(`${name} ${TOOLS[name].version}: ${fetchTool(name)}`);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
