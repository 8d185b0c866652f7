// The platforms we publish for are one table (scripts/platforms.js). The loader's choice of binary
// (lib/native-platform.js, shipped), the npm/<platform>/ package manifests and package.json's napi
// targets must all say what the table says, or a user's npm installs a package the loader never
// looks for.
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";

import { ROOT } from "./helpers/target.mjs";

const require = createRequire(import.meta.url);
const { PLATFORMS, BINARY_NAME, binaryFile } = require("../scripts/platforms.js");
const { platformSuffix } = require("../lib/native-platform.js");
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));

test("the loader picks each platform's binary by the name the table gives it", () => {
  for (const row of PLATFORMS) {
    assert.equal(platformSuffix(row.os, row.cpu, row.libc === "musl"), row.suffix, `${row.os}/${row.cpu}/${row.libc ?? ""}`);
  }
});

test("the loader names no binary for a platform we do not build", () => {
  for (const [os, cpu] of [["linux", "ia32"], ["linux", "riscv64"], ["freebsd", "x64"], ["win32", "ia32"], ["darwin", "ppc64"]]) {
    assert.equal(platformSuffix(os, cpu, false), null, `${os}/${cpu}`);
  }
});

test("package.json's napi targets are the table's Rust targets", () => {
  assert.deepEqual(manifest.napi.targets, PLATFORMS.map((p) => p.triple));
  assert.equal(manifest.napi.binaryName, BINARY_NAME);
});

test("every platform package declares the os, cpu and libc npm selects it by, and carries one binary", () => {
  const dirs = fs.readdirSync(path.join(ROOT, "npm")).sort();
  assert.deepEqual(dirs, PLATFORMS.map((p) => p.suffix).sort(), "one npm/ folder per row, and no other");
  for (const row of PLATFORMS) {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "npm", row.suffix, "package.json"), "utf8"));
    assert.equal(pkg.name, `${BINARY_NAME}-${row.suffix}`);
    assert.equal(pkg.version, manifest.version, `${row.suffix}: same version as the root package`);
    assert.deepEqual(pkg.os, [row.os]);
    assert.deepEqual(pkg.cpu, [row.cpu]);
    assert.deepEqual(pkg.libc, row.libc ? [row.libc] : undefined, `${row.suffix}: libc`);
    assert.equal(pkg.main, binaryFile(row));
    assert.deepEqual(pkg.files, [binaryFile(row)]);
    const readme = fs.readFileSync(path.join(ROOT, "npm", row.suffix, "README.md"), "utf8");
    assert.match(readme, new RegExp(`\`${row.triple}\``), `${row.suffix}: its README names the Rust target`);
  }
});
