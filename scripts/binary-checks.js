// Structural checks of a built addon, for platforms whose binaries cannot run on this machine
// (and as a first step for those that can). Read with LLVM's object tools, which understand ELF,
// Mach-O and PE alike (Debian's `llvm`; scripts/test-platforms.js installs it when missing):
//
//   - the file format and architecture are the platform's;
//   - `napi_register_module_v1`, the entry Node looks for, is exported;
//   - every library it needs is a system library of that platform, and every undefined symbol is
//     either a Node-API one (resolved from the host process) or comes from such a library;
//   - Linux glibc: no symbol version newer than the glibc the build targets; musl: nothing of glibc;
//   - the binary is no bigger than twice the linux-x64-gnu one.
//
// Each check returns { name, ok, detail } so the caller prints every result, failed or not.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");

const NODE_API = /^_?(napi_|node_api_)/;

function tool(name, args) {
  const r = spawnSync(name, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.error || r.status !== 0) {
    throw new Error(`${name} ${args.join(" ")} failed: ${r.error ? r.error.message : r.stderr.trim()}`);
  }
  return r.stdout;
}

const check = (name, ok, detail) => ({ name, ok: Boolean(ok), detail });

/** Names and (ELF) versions of the undefined symbols, strong and weak. */
function undefinedElf(file) {
  return tool("llvm-nm", ["-D", "--undefined-only", file])
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((parts) => parts.length === 2)
    .map(([kind, sym]) => {
      const at = sym.indexOf("@");
      return { weak: kind === "w" || kind === "v", name: at < 0 ? sym : sym.slice(0, at), version: at < 0 ? null : sym.slice(at).replace(/^@+/, "") };
    });
}

function definedElf(file) {
  return new Set(
    tool("llvm-nm", ["-D", "--defined-only", file])
      .split("\n")
      .map((line) => line.trim().split(/\s+/)[2])
      .filter(Boolean)
      .map((s) => s.split("@")[0]),
  );
}

function needed(file) {
  const out = tool("llvm-readobj", ["--needed-libs", file]);
  const list = out.slice(out.indexOf("NeededLibraries [") + "NeededLibraries [".length, out.lastIndexOf("]"));
  return list.split("\n").map((s) => s.trim()).filter(Boolean);
}

const versionKey = (v) => v.split(".").map(Number);
function newerThan(a, b) {
  const [x, y] = [versionKey(a), versionKey(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  }
  return false;
}

const ELF_MACHINE = { x64: "EM_X86_64", arm64: "EM_AARCH64" };
const GLIBC_LIBS = ["libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"];
const MUSL_LIBS = ["libc.so", "libgcc_s.so.1"];

/**
 * `systemSymbols`: the symbols the platform's libraries define (a Set), when a copy of them is at
 * hand; undefined symbols outside it and outside Node-API fail the check.
 */
function elfChecks(row, file, { systemSymbols, systemName } = {}) {
  const results = [];
  const headers = tool("llvm-readobj", ["--file-headers", file]);
  results.push(check("ELF 64-bit shared object for the architecture", headers.includes("Class: 64-bit") && headers.includes(ELF_MACHINE[row.cpu]) && /Type: SharedObject/.test(headers), headers.match(/Machine: (\S+)/)?.[1]));
  results.push(check("exports napi_register_module_v1", definedElf(file).has("napi_register_module_v1")));
  const libs = needed(file);
  const allowed = row.libc === "musl" ? MUSL_LIBS : GLIBC_LIBS;
  results.push(check(`needs only ${row.libc} system libraries`, libs.every((l) => allowed.includes(l)), libs.join(", ")));
  const symbols = undefinedElf(file);
  const versions = [...new Set(symbols.map((s) => s.version).filter(Boolean))];
  if (row.libc === "musl") {
    results.push(check("no glibc symbol versions (nor any versioned symbol)", versions.length === 0, versions.join(", ") || "none"));
  } else {
    const limit = row.zig.match(/\.(\d+\.\d+)$/)?.[1];
    const glibc = versions.filter((v) => v.startsWith("GLIBC_")).map((v) => v.slice(6));
    const newest = glibc.reduce((a, b) => (newerThan(b, a) ? b : a), "0");
    results.push(check(`no glibc symbol newer than ${limit}`, limit && !newerThan(newest, limit), `newest GLIBC_${newest}`));
  }
  const strong = symbols.filter((s) => !s.weak && !NODE_API.test(s.name));
  if (systemSymbols) {
    const missing = strong.filter((s) => !systemSymbols.has(s.name)).map((s) => s.name);
    results.push(check(`every other undefined symbol is defined by ${systemName}`, missing.length === 0, missing.length ? `missing: ${missing.join(", ")}` : `${strong.length} symbols`));
  } else if (row.libc !== "musl") {
    const unversioned = strong.filter((s) => !s.version).map((s) => s.name);
    results.push(check("every other undefined symbol is versioned by glibc or libgcc", unversioned.length === 0, unversioned.join(", ") || `${strong.length} symbols`));
  }
  return results;
}

const MACHO_CPU = { x64: "X86_64", arm64: "ARM64" };
const MACOS_LIBS = ["/usr/lib/libSystem.B.dylib", "/usr/lib/libiconv.2.dylib", "/usr/lib/libcharset.1.dylib"];

function machoChecks(row, file) {
  const results = [];
  const headers = tool("llvm-objdump", ["--macho", "--private-header", file]);
  results.push(check("Mach-O dylib for the architecture", headers.includes(MACHO_CPU[row.cpu]) && headers.includes("DYLIB"), headers.split("\n").find((l) => l.includes("MH_MAGIC"))?.trim()));
  const exported = tool("llvm-nm", ["--defined-only", "--extern-only", file]);
  results.push(check("exports napi_register_module_v1", /\s_napi_register_module_v1$/m.test(exported)));
  const dylibs = tool("llvm-objdump", ["--macho", "--dylibs-used", file])
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(" (")[0])
    .filter(Boolean);
  const [self, ...deps] = dylibs;
  results.push(check("install name carries no build path", self === "@rpath/pi-session-native.node", self));
  results.push(check("links only macOS system libraries", deps.every((d) => MACOS_LIBS.includes(d)), deps.join(", ")));
  const undef = tool("llvm-nm", ["-m", "--undefined-only", file]).split("\n").map((l) => l.trim()).filter(Boolean);
  const odd = undef.filter((l) => !/\(from (libSystem|libiconv|libcharset)\)$/.test(l) && !/external _(napi_|node_api_)\w+$/.test(l));
  results.push(check("every undefined symbol is Node-API (looked up in the host) or from libSystem", odd.length === 0, odd.length ? odd.slice(0, 10).join("; ") : `${undef.length} symbols`));
  return results;
}

const PE_MACHINE = { x64: "COFF-x86-64", arm64: "COFF-ARM64" };
// What a Rust std + zstd DLL imports on Windows 10 and later: the kernel, the Universal CRT
// (api-ms-win-crt-*), the API sets and the system DLLs std uses.
const WINDOWS_DLL = /^(kernel32|ntdll|advapi32|bcrypt|bcryptprimitives|userenv|ws2_32|shell32|ole32|combase|oleaut32|api-ms-win-[a-z0-9-]+)\.dll$/i;

function peChecks(row, file) {
  const results = [];
  const imports = tool("llvm-readobj", ["--coff-imports", "--coff-exports", file]);
  const format = imports.match(/Format: (\S+)/)?.[1];
  results.push(check("PE DLL for the architecture", format === PE_MACHINE[row.cpu], format));
  results.push(check("exports napi_register_module_v1", /Name: napi_register_module_v1\b/.test(imports)));
  const dlls = [...imports.matchAll(/^\s*Name: (\S+\.dll)\s*$/gim)].map((m) => m[1]);
  results.push(check("imports only Windows system DLLs (no node.exe or libnode)", dlls.length > 0 && dlls.every((d) => WINDOWS_DLL.test(d)), dlls.join(", ")));
  const napiImports = [...imports.matchAll(/Symbol: ((napi|node_api)_\w+)/g)].map((m) => m[1]);
  results.push(check("Node-API is not imported (resolved from the host at load)", napiImports.length === 0, napiImports.slice(0, 5).join(", ") || "none"));
  return results;
}

/** All structural checks of one platform's binary; `reference` is the linux-x64-gnu binary. */
function structuralChecks(row, file, reference, extra = {}) {
  const results =
    row.os === "linux" ? elfChecks(row, file, extra) : row.os === "darwin" ? machoChecks(row, file) : peChecks(row, file);
  const size = fs.statSync(file).size;
  const limit = 2 * fs.statSync(reference).size;
  results.push(check("no bigger than twice the linux-x64-gnu binary", size <= limit, `${(size / 1048576).toFixed(2)} MiB (limit ${(limit / 1048576).toFixed(2)})`));
  return results;
}

module.exports = { structuralChecks, definedElf };
