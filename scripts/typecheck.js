#!/usr/bin/env node
// Type test for the hand-written index.d.ts (CI runs this; so can you).
//
//   node scripts/typecheck.js
//
// Compiles, without emitting anything:
//   __test__/types/tsconfig.json      consumer code against index.d.ts and the reference's
//                                     session-manager.d.ts (assignability both ways,
//                                     @ts-expect-error cases), declaration files included
//   __test__/types/tsconfig.dts.json  index.d.ts alone, with only Node's types
// and checks that the runtime names declared in index.d.ts, those re-exported by index.mjs
// and those of the reference's session-manager.d.ts are the same list.
// Exits non-zero if anything fails.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const projects = ["__test__/types/tsconfig.json", "__test__/types/tsconfig.dts.json"];

function tscCommand() {
  let manifestPath;
  try {
    manifestPath = require.resolve("typescript/package.json", { paths: [root] });
  } catch {
    console.error("typecheck: the `typescript` package is not installed; run `npm ci` first.");
    process.exit(1);
  }
  const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin.tsc;
  return { file: path.resolve(path.dirname(manifestPath), bin), version: manifest.version };
}

/** Names of `export declare const|function|class` in a declaration file. */
function declaredValues(file) {
  const text = fs.readFileSync(path.join(root, file), "utf8");
  return [...text.matchAll(/^export declare (?:const|function|class) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]).sort();
}

/** Names in the `export const { ... } = ...` list of index.mjs. */
function mjsExports() {
  const text = fs.readFileSync(path.join(root, "index.mjs"), "utf8");
  const list = /export const \{([^}]*)\}/.exec(text);
  return list ? list[1].split(",").map((name) => name.trim()).filter(Boolean).sort() : [];
}

/** Runtime exports that are additions beyond the reference (see README), in index.mjs too. */
const ADDED_EXPORTS = ["MAX_SESSION_TRANSCRIPT_PAGE_SIZE"];

function checkSurface() {
  const ours = declaredValues("index.d.ts");
  const lists = {
    "index.mjs": mjsExports(),
    "reference session-manager.d.ts": [
      ...declaredValues("node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.d.ts"),
      ...ADDED_EXPORTS,
    ].sort(),
  };
  let ok = true;
  for (const [name, names] of Object.entries(lists)) {
    const missing = ours.filter((n) => !names.includes(n));
    const extra = names.filter((n) => !ours.includes(n));
    if (missing.length || extra.length) {
      ok = false;
      console.error(
        `typecheck: runtime exports of index.d.ts and ${name} differ: ` +
          `only in index.d.ts [${missing.join(", ")}], only in ${name} [${extra.join(", ")}]`,
      );
    }
  }
  console.log(`typecheck: ${ours.length} runtime exports, same in index.d.ts, index.mjs and the reference (plus ${ADDED_EXPORTS.length} added): ${ok}`);
  return ok;
}

const tsc = tscCommand();
let failed = !checkSurface();
for (const project of projects) {
  console.log(`typecheck: tsc ${tsc.version} --noEmit -p ${project}`);
  const result = spawnSync(process.execPath, [tsc.file, "--noEmit", "-p", project], {
    cwd: root,
    stdio: "inherit",
  });
  if (result.error) {
    console.error(`typecheck: could not run tsc: ${result.error.message}`);
    failed = true;
  } else if (result.status !== 0) {
    failed = true;
  }
}

if (failed) {
  console.error("typecheck: FAILED");
  process.exit(1);
}
console.log("typecheck: ok");
