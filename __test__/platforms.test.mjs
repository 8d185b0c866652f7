// The platforms we publish for are one table (scripts/platforms.js). The loader's choice of binary
// (lib/native-platform.js, shipped), the npm/<platform>/ package manifests and package.json's napi
// targets must all say what the table says, or a user's npm installs a package the loader never
// looks for.
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import { ROOT } from "./helpers/target.mjs";

const require = createRequire(import.meta.url);
const { PLATFORMS, BINARY_NAME, binaryFile } = require("../scripts/platforms.js");
const { platformSuffix, libcOfExecutable } = require("../lib/native-platform.js");
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

/**
 * A 64-bit little-endian ELF executable's first bytes: its header and program headers, the
 * loader's path (if any) at `interpAt`. @param {{ loader?: string, interpAt?: number, elfClass?: number }} o
 */
function elfWith({ loader, interpAt = 64 + 2 * 56, elfClass = 2 }) {
  const phnum = 2;
  const size = Math.max(interpAt + (loader?.length ?? 0) + 1, 64 + phnum * 56);
  const b = Buffer.alloc(size);
  b.writeUInt32BE(0x7f454c46, 0);
  b[4] = elfClass;
  b[5] = 1; // little-endian
  b.writeBigUInt64LE(64n, 32); // program headers right after this header
  b.writeUInt16LE(56, 54);
  b.writeUInt16LE(phnum, 56);
  b.writeUInt32LE(1, 64); // PT_LOAD first, as linkers write them
  if (loader !== undefined) {
    b.writeUInt32LE(3, 64 + 56); // PT_INTERP
    b.writeBigUInt64LE(BigInt(interpAt), 64 + 56 + 8);
    b.writeBigUInt64LE(BigInt(loader.length + 1), 64 + 56 + 32);
    b.write(loader, interpAt, "latin1");
  }
  return b;
}

test("the loader asks the running executable which C library it was linked for", (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-elf-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (/** @type {string} */ name, /** @type {Buffer} */ bytes) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, bytes);
    return f;
  };
  assert.equal(libcOfExecutable(file("musl-x64", elfWith({ loader: "/lib/ld-musl-x86_64.so.1" }))), "musl");
  assert.equal(libcOfExecutable(file("musl-arm64", elfWith({ loader: "/lib/ld-musl-aarch64.so.1" }))), "musl");
  assert.equal(libcOfExecutable(file("glibc-x64", elfWith({ loader: "/lib64/ld-linux-x86-64.so.2" }))), "glibc");
  assert.equal(libcOfExecutable(file("glibc-arm64", elfWith({ loader: "/lib/ld-linux-aarch64.so.1" }))), "glibc");
  // A loader path placed after the first page, where tools that change it put the new one.
  assert.equal(libcOfExecutable(file("moved", elfWith({ loader: "/opt/musl/lib/ld-musl-x86_64.so.1", interpAt: 9000 }))), "musl");
  // Cannot be told: statically linked, another loader, 32-bit, not ELF, cut short, missing.
  assert.equal(libcOfExecutable(file("static", elfWith({}))), null);
  assert.equal(libcOfExecutable(file("other", elfWith({ loader: "/system/bin/linker64" }))), null);
  assert.equal(libcOfExecutable(file("elf32", elfWith({ loader: "/lib/ld-musl-x86_64.so.1", elfClass: 1 }))), null);
  assert.equal(libcOfExecutable(file("text", Buffer.from("#!/bin/sh\necho not an executable\n".repeat(4)))), null);
  assert.equal(libcOfExecutable(file("short", elfWith({ loader: "/lib/ld-musl-x86_64.so.1" }).subarray(0, 100))), null);
  assert.equal(libcOfExecutable(path.join(dir, "missing")), null);
  // This Node: a dynamically linked Node built for glibc reports the glibc it runs on.
  const own = libcOfExecutable(process.execPath);
  if (process.platform === "linux" && own !== null) {
    const header = /** @type {any} */ (process.report.getReport()).header;
    assert.equal(own, header.glibcVersionRuntime ? "glibc" : "musl");
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
