#!/usr/bin/env node
// Runs the JS test suite (every __test__/*.test.mjs, as `npm test` does) under other Node
// majors than the one running this script, with the addon built once: one binary loads on all.
//
//   node scripts/test-node-versions.js          Node 22, 24 and 26
//   node scripts/test-node-versions.js 26       only Node 26
//
// The Node binaries come from the npm registry (scripts/fetch-node.js, cached in .cache/). The
// fetched Node's directory goes first on PATH, so anything a test spawns as `node` is that
// version too. A major equal to the current one is left out (the caller's own run covers it).
// The tests that drive the real agent (AGENT_DRIVING below) are left out of these reruns: they
// spawn the agent on Node 22, 24 and 26 themselves from whatever Node runs them, so the caller's
// own run (`npm test`'s main pass) has already run the agent on each of these majors once. So is
// the install test (INSTALLING), which installs on Node 22 whatever Node runs it.
//
// Set PI_TEST_NODE_VERSIONS=0 to skip (offline machines). On GitHub Actions it skips by itself:
// the workflow's matrix runs `npm test` under each Node version with actions/setup-node.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { fetchNode } = require("./fetch-node.js");

const root = path.resolve(__dirname, "..");
const DEFAULT_MAJORS = ["22", "24", "26"];

// Each of these spawns the agent with the Nodes of AGENT_MAJORS (__test__/helpers/agent-runs.mjs),
// whatever Node runs the file; a rerun would repeat the same agent runs (minutes each).
const AGENT_DRIVING = ["agent-e2e.test.mjs", "pi-cli.test.mjs", "pi-native.test.mjs", "pi-tui.test.mjs"];
// These install the package with npm, pnpm, yarn and bun on Node 22, whatever Node runs the file:
// a rerun would repeat the same installs (half a minute).
const INSTALLING = ["install-paths.test.mjs"];
const MAIN_PASS_ONLY = [...AGENT_DRIVING, ...INSTALLING];

function testFiles() {
  const all = fs.readdirSync(path.join(root, "__test__")).filter((f) => f.endsWith(".test.mjs") || f.endsWith(".test.js"));
  for (const name of MAIN_PASS_ONLY) {
    if (!all.includes(name)) throw new Error(`test-node-versions: MAIN_PASS_ONLY names ${name}, which is not in __test__/`);
  }
  return all
    .filter((f) => !MAIN_PASS_ONLY.includes(f))
    .sort()
    .map((f) => path.join("__test__", f));
}

/** The totals at the end of a TAP report ("# tests 812", "# pass 812", …); null when there are none. */
function tapCounts(file) {
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
  const counts = {};
  for (const m of text.matchAll(/^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) counts[m[1]] = Number(m[2]);
  return "tests" in counts ? counts : null;
}

function main() {
  const setting = process.env.PI_TEST_NODE_VERSIONS;
  if (setting === "0" || setting === "false") {
    console.log("test-node-versions: skipped (PI_TEST_NODE_VERSIONS=0)");
    return 0;
  }
  if (process.env.GITHUB_ACTIONS === "true") {
    console.log("test-node-versions: skipped on GitHub Actions (the workflow's matrix of Node versions covers them)");
    return 0;
  }
  const current = process.versions.node.split(".")[0];
  const majors = (process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_MAJORS).filter((m) => m !== current);

  // Fetch every binary first, so a missing one fails before minutes of tests.
  const binaries = [];
  for (const major of majors) {
    try {
      binaries.push({ major, node: fetchNode(major) });
    } catch (error) {
      console.error(`test-node-versions: no Node ${major}: ${error.message}`);
      console.error("Set PI_TEST_NODE_VERSIONS=0 to skip these runs on a machine without registry access.");
      return 1;
    }
  }

  const files = testFiles();
  const results = [];
  for (const { major, node } of binaries) {
    const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
    console.log(`\n--- node ${version}: node --test over ${files.length} files (${node}); left out, as they drive the agent on each Node themselves: ${AGENT_DRIVING.join(", ")}; and, as it installs on Node 22 itself: ${INSTALLING.join(", ")}`);
    const env = { ...process.env, PATH: [path.dirname(node), process.env.PATH].join(path.delimiter) };
    // Dots on the terminal; a TAP copy on the side for the totals (skips show there too).
    const tap = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pi-node-versions-")), "report.tap");
    const started = Date.now();
    const r = spawnSync(
      node,
      ["--test", "--test-concurrency=2", "--test-reporter=dot", "--test-reporter-destination=stdout", "--test-reporter=tap", `--test-reporter-destination=${tap}`, ...files],
      { cwd: root, env, stdio: "inherit" },
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const counts = tapCounts(tap);
    fs.rmSync(path.dirname(tap), { recursive: true, force: true });
    const passed = !r.error && r.status === 0;
    const tally = counts ? `${counts.tests} tests: ${counts.pass} passed, ${counts.fail} failed, ${counts.skipped} skipped, ${counts.todo} todo` : "no totals";
    results.push({ version, seconds, passed, tally, why: r.error ? r.error.message : `exit code ${r.status}` });
    console.log(`\n--- node ${version}: ${passed ? "passed" : "FAILED"} in ${seconds} s (${tally})`);
  }

  for (const { version, seconds, passed, tally, why } of results) {
    console.log(`test-node-versions: node ${version} ${passed ? "passed" : `FAILED (${why})`} in ${seconds} s; ${tally}`);
  }
  return results.every((r) => r.passed) ? 0 : 1;
}

process.exitCode = main();
