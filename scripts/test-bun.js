#!/usr/bin/env node
// Runs the behaviour suites (__test__/behavior-*.test.mjs), the parity suite
// (__test__/parity.test.mjs) and the additions (ADDITIONS below, whose
// PI_SESSION_* variables set at run time are where Bun differs: it does not write process.env
// through to the C environment, so the addon reads them from JS) under Bun, with the addon as built: Bun loads Node-API addons, and
// this package's loader (native.js) and JS shell (lib/) run there unchanged.
//
//   node scripts/test-bun.js            every file below, one `bun test` process per file
//   node scripts/test-bun.js <file>…    only these
//
// Bun comes from the npm registry (scripts/fetch-bun.js, pinned, cached in .cache/), unless
// PI_TEST_BUN_BINARY names one (scripts/test-platforms.js: Bun's musl builds, with the musl
// binaries named by PI_SESSION_NATIVE_PATH). Set PI_TEST_BUN=0 to skip (offline machines); it
// skips by itself where fetch-bun.js has no build (anything but linux-x64 with glibc) and on
// GitHub Actions, like scripts/test-node-versions.js.
//
// What Bun's node:test is (Bun 1.4.5, tried here): node:test runs only under `bun test`, which maps
// it onto Bun's own runner; `bun <file>` refuses with "Cannot use test outside of the test
// runner". Under `bun test`, describe/it/test, before/after/beforeEach/afterEach, t.after,
// t.test, t.skip/t.todo and the skip/todo options, t.plan, t.signal, t.diagnostic, mock.fn,
// mock.method and mock.timers work; t.assert.snapshot() throws ERR_NOT_IMPLEMENTED. Subtests made
// with t.test count inside their parent, the tests of a skipped describe are not counted at all,
// and a test times out after 5 s unless told otherwise (Node has no default timeout), so the runs
// below pass --timeout. None of our suites here uses snapshots.
//
// Two things of Bun's runtime (not of node:test) that the suites meet, and how they meet them:
// - process.env writes do not reach the C environment: os.homedir() keeps the HOME the process
//   started with. The tests that expand `~` take their home from useHome()
//   (__test__/helpers/fixtures.mjs), which on such a runtime uses the process's own HOME; each
//   file runs here with HOME set to a fresh temp dir (PI_TEST_HOME says which), never the user's.
// - Bun's readline ends lines at U+2028/U+2029, as Node 24+ does, so listings of the reference
//   come from Node 22 (__test__/helpers/older-reference.mjs), which this script's Node fetches.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { fetchBun } = require("./fetch-bun.js");

const root = path.resolve(__dirname, "..");

// Files of the behaviour and parity suites that Bun does not run, each with the reason. None:
// every file runs, every test in it.
const LEFT_OUT = {};

// Per test; Node's runner has no default timeout. The slowest test (forkFrom over 1,500 occupied
// file names) takes ~6 s on a slow disk under either runtime.
const TIMEOUT_MS = 300_000;

/**
 * The suites of the additions beyond the reference (docs/library.md, "Additions beyond the
 * reference"), open-crossings (the native calls an open makes, which go through Bun's Node-API as
 * through Node's), and lazy-entries and lazy-observations (entries whose big members are read on
 * first use must look like the reference's plain objects to Bun's JSON, inspect, structuredClone
 * and assert too).
 */
const ADDITIONS = ["flush.test.mjs", "dispose.test.mjs", "entries-since.test.mjs", "reserved-ids.test.mjs", "restore-missing.test.mjs", "open-crossings.test.mjs", "lazy-entries.test.mjs", "lazy-observations.test.mjs"];

function suiteFiles() {
  const names = fs.readdirSync(path.join(root, "__test__")).filter((f) => /^behavior-.*\.test\.mjs$/.test(f) || f === "parity.test.mjs" || ADDITIONS.includes(f));
  for (const name of ADDITIONS) {
    if (!names.includes(name)) throw new Error(`test-bun: ADDITIONS names ${name}, which is not one of the suites' files`);
  }
  for (const name of Object.keys(LEFT_OUT)) {
    if (!names.includes(name)) throw new Error(`test-bun: LEFT_OUT names ${name}, which is not one of the suites' files`);
  }
  return names.filter((f) => !(f in LEFT_OUT)).sort();
}

/** The counts of `bun test`'s closing summary (" 12 pass", " 0 fail", …); null if it printed none. */
function countsOf(output) {
  const counts = { pass: 0, fail: 0, skip: 0, todo: 0 };
  let seen = false;
  for (const m of output.matchAll(/^\s*(\d+) (pass|fail|skip|todo)\s*$/gm)) {
    counts[m[2]] = Number(m[1]);
    seen = true;
  }
  return seen ? counts : null;
}

function runFile(bun, file) {
  // A HOME of its own: Bun cannot move HOME at run time (see above), and tests write under it.
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-bun-home-")));
  const started = Date.now();
  try {
    const r = spawnSync(bun, ["test", "--timeout", String(TIMEOUT_MS), `./${path.join("__test__", file)}`], {
      cwd: root,
      env: { ...process.env, HOME: home, PI_TEST_HOME: home },
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
    const output = `${r.stdout ?? ""}${r.stderr ?? ""}`;
    return { file, seconds: (Date.now() - started) / 1000, status: r.status, error: r.error, output, counts: countsOf(output) };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

function main() {
  const setting = process.env.PI_TEST_BUN;
  if (setting === "0" || setting === "false") {
    console.log("test-bun: skipped (PI_TEST_BUN=0)");
    return 0;
  }
  if (process.env.GITHUB_ACTIONS === "true") {
    console.log("test-bun: skipped on GitHub Actions (run it on linux-x64: node scripts/test-bun.js)");
    return 0;
  }
  if (process.platform !== "linux" || process.arch !== "x64") {
    console.log(`test-bun: skipped on ${process.platform}-${process.arch} (scripts/fetch-bun.js fetches linux-x64 glibc builds only)`);
    return 0;
  }
  let bun = process.env.PI_TEST_BUN_BINARY;
  try {
    bun ??= fetchBun();
  } catch (error) {
    console.error(`test-bun: no Bun: ${error.message}`);
    console.error("Set PI_TEST_BUN=0 to skip this run on a machine without registry access.");
    return 1;
  }
  const version = spawnSync(bun, ["--version"], { encoding: "utf8" }).stdout.trim();
  const files = process.argv.length > 2 ? process.argv.slice(2).map((f) => path.basename(f)) : suiteFiles();
  console.log(`--- bun ${version}: bun test over ${files.length} files (${bun})`);
  for (const [name, why] of Object.entries(LEFT_OUT)) console.log(`left out: ${name}: ${why}`);

  const started = Date.now();
  const total = { pass: 0, fail: 0, skip: 0, todo: 0 };
  const failed = [];
  for (const file of files) {
    const run = runFile(bun, file);
    const c = run.counts;
    if (c) for (const k of Object.keys(total)) total[k] += c[k];
    // A skip or a todo is a failure here as in CI: every test of these suites runs under Bun.
    const ok = !run.error && run.status === 0 && c && c.fail === 0 && c.skip === 0 && c.todo === 0 && c.pass > 0;
    const what = c ? `${c.pass} pass, ${c.fail} fail, ${c.skip} skip, ${c.todo} todo` : run.error ? run.error.message : "no summary printed";
    console.log(`${ok ? "ok    " : "FAILED"} ${file}: ${what} (${run.seconds.toFixed(1)} s)`);
    if (!ok) {
      failed.push(file);
      process.stdout.write(run.output.replace(/^/gm, "    "));
    }
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const leftOut = Object.keys(LEFT_OUT).length;
  console.log(
    `test-bun: bun ${version}: ${files.length} files, ${total.pass} passed, ${total.fail} failed, ${total.skip} skipped, ${total.todo} todo; ${leftOut} files left out; ${seconds} s`,
  );
  if (failed.length) console.log(`test-bun: FAILED: ${failed.join(", ")}`);
  return failed.length ? 1 : 0;
}

process.exitCode = main();
