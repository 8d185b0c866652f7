#!/usr/bin/env node
// Keeps the declared MSRV (`rust-version` in the top-level Cargo.toml) true.
//
//   node scripts/check-msrv.js
//
// This machine has one Rust toolchain, so the MSRV cannot be proved by building with the old
// compiler. Two checks stand in for that, and `npm test` runs both:
//   1. here: every package of the locked dependency graph declares a `rust-version` no newer than
//      ours (a dependency that needs a newer compiler makes the whole build need it);
//   2. clippy's `incompatible_msrv` lint (denied in `[workspace.lints]`, run by `npm test`):
//      our own code calls no std API stabilized after our `rust-version`.
// What neither sees is language syntax newer than the MSRV; the README says so.
"use strict";

const { spawnSync } = require("node:child_process");
const path = require("node:path");

const root = path.resolve(__dirname, "..");

function parseVersion(v) {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(v ?? "");
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null;
}

function newer(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

const r = spawnSync("cargo", ["metadata", "--format-version", "1", "--locked"], {
  cwd: root,
  encoding: "utf8",
  maxBuffer: 256 << 20,
});
if (r.error || r.status !== 0) {
  console.error(`check-msrv: cargo metadata failed: ${r.error ? r.error.message : r.stderr}`);
  process.exit(1);
}
const meta = JSON.parse(r.stdout);
const members = new Set(meta.workspace_members);
const inGraph = new Set(meta.resolve.nodes.map((n) => n.id));

const ours = meta.packages.filter((p) => members.has(p.id));
const declared = new Set(ours.map((p) => p.rust_version));
if (declared.size !== 1 || ours.some((p) => !p.rust_version)) {
  console.error(
    "check-msrv: every workspace package must take `rust-version.workspace = true`; found " +
      ours.map((p) => `${p.name}=${p.rust_version ?? "none"}`).join(", "),
  );
  process.exit(1);
}
const msrvText = [...declared][0];
const msrv = parseVersion(msrvText);

const tooNew = meta.packages
  .filter((p) => inGraph.has(p.id) && !members.has(p.id))
  .filter((p) => {
    const v = parseVersion(p.rust_version);
    return v && newer(v, msrv);
  });
if (tooNew.length) {
  console.error(`check-msrv: rust-version ${msrvText} is not true; these locked dependencies need newer:`);
  for (const p of tooNew) console.error(`  ${p.name} ${p.version}: rust-version ${p.rust_version}`);
  process.exit(1);
}
const highest = meta.packages
  .filter((p) => inGraph.has(p.id) && !members.has(p.id) && parseVersion(p.rust_version))
  .sort((a, b) => (newer(parseVersion(a.rust_version), parseVersion(b.rust_version)) ? -1 : 1))[0];
console.log(
  `check-msrv: rust-version ${msrvText}; no locked dependency needs newer` +
    (highest ? ` (highest: ${highest.name} ${highest.version} at ${highest.rust_version})` : ""),
);
