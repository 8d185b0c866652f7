// Packing the published tarballs: the root package and one package per platform.
//
// The root package is packed from a staged copy of the files `npm pack` would take, with two
// changes to its package.json: the platform packages become its optionalDependencies (npm installs
// the one whose os/cpu/libc fit the machine), and the checkout's lifecycle scripts are dropped,
// so installing the published package runs no script at all. A platform package is packed from
// a staged copy of npm/<suffix>/ with its binary and the LICENSE. Both are packed with
// --ignore-scripts: packing builds nothing. Both carry the repository's LICENSE.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { PLATFORMS, BINARY_NAME, binaryFile } = require("./platforms.js");

const root = path.resolve(__dirname, "..");
const isWindows = process.platform === "win32";

// Scripts npm runs on an install of a package (or of a git checkout of it); none may ship.
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare"];

function npm(args, cwd) {
  const r = spawnSync(isWindows ? "npm.cmd" : "npm", args, { cwd, encoding: "utf8", shell: isWindows });
  if (r.error || r.status !== 0) {
    throw new Error(`npm ${args.join(" ")} in ${cwd} failed (${r.error ? r.error.message : `exit ${r.status}`}):\n${r.stderr}`);
  }
  return r.stdout;
}

/** `npm pack` of `dir` into `dest`; the tarball's path and npm's report of it. */
function packDir(dir, dest) {
  dest = path.resolve(dest);
  fs.mkdirSync(dest, { recursive: true });
  const [info] = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", dest], dir));
  return { tarball: path.join(dest, info.filename), info };
}

// `files` takes the checkout's built addon along, for a git dependency: npm installs one by
// running prepare (the build) in a clone and packing that. The release's root package leaves the
// binaries to the platform packages.
const isBinary = (file) => file.endsWith(".node");

/**
 * The root package.json as published: platform packages as optional dependencies, no install
 * scripts, no binary in `files`.
 */
function publishedManifest(manifest) {
  const published = { ...manifest, scripts: { ...manifest.scripts }, files: manifest.files.filter((f) => !isBinary(f)) };
  for (const name of INSTALL_SCRIPTS) delete published.scripts[name];
  published.optionalDependencies = Object.fromEntries(
    PLATFORMS.map((p) => [`${BINARY_NAME}-${p.suffix}`, manifest.version]),
  );
  return published;
}

/** Pack the root package into `dest` (through a staged copy under `stage`). */
function packRoot(dest, stage = path.join(path.resolve(dest), ".stage-root")) {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const [listing] = JSON.parse(npm(["pack", "--dry-run", "--json", "--ignore-scripts"], root));
  fs.rmSync(stage, { recursive: true, force: true });
  for (const { path: file } of listing.files.filter((f) => !isBinary(f.path))) {
    fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true });
    fs.copyFileSync(path.join(root, file), path.join(stage, file));
  }
  fs.writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(publishedManifest(manifest), null, 2)}\n`);
  try {
    return packDir(stage, dest);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * Pack the platform package of `row` with `binary` into `dest`, from a staged copy of
 * npm/<suffix>/ (under `stage`) with the binary and the repository's LICENSE added: npm packs a
 * LICENSE whatever `files` says, and nothing is left behind in npm/<suffix>/.
 */
function packPlatform(row, binary, dest, stage = path.join(path.resolve(dest), `.stage-${row.suffix}`)) {
  const dir = path.join(root, "npm", row.suffix);
  fs.rmSync(stage, { recursive: true, force: true });
  fs.mkdirSync(stage, { recursive: true });
  for (const name of fs.readdirSync(dir)) {
    if (!name.endsWith(".node")) fs.copyFileSync(path.join(dir, name), path.join(stage, name));
  }
  fs.copyFileSync(path.join(root, "LICENSE"), path.join(stage, "LICENSE"));
  fs.copyFileSync(binary, path.join(stage, binaryFile(row)));
  try {
    return packDir(stage, dest);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

module.exports = { INSTALL_SCRIPTS, packRoot, packPlatform, publishedManifest };
