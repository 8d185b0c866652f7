#!/usr/bin/env node
// Runs the JS test suite (every __test__/*.test.mjs, as `npm test` does) under other Node
// majors than the one running this script, with the addon built once: one binary loads on all.
//
//   node scripts/test-node-versions.js          Node 22 and 24
//   node scripts/test-node-versions.js 24       only Node 24
//
// The Node binaries come from the npm registry (scripts/fetch-node.js, cached in .cache/). The
// fetched Node's directory goes first on PATH, so anything a test spawns as `node` is that
// version too. A major equal to the current one is left out (the caller's own run covers it).
//
// Set PI_TEST_NODE_VERSIONS=0 to skip (offline machines). On GitHub Actions it skips by itself:
// the workflow's matrix runs `npm test` under each Node version with actions/setup-node.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { fetchNode } = require("./fetch-node.js");

const root = path.resolve(__dirname, "..");
const DEFAULT_MAJORS = ["22", "24"];

function testFiles() {
  return fs
    .readdirSync(path.join(root, "__test__"))
    .filter((f) => f.endsWith(".test.mjs") || f.endsWith(".test.js"))
    .sort()
    .map((f) => path.join("__test__", f));
}

function main() {
  const setting = process.env.PI_TEST_NODE_VERSIONS;
  if (setting === "0" || setting === "false") {
    console.log("test-node-versions: skipped (PI_TEST_NODE_VERSIONS=0)");
    return 0;
  }
  if (process.env.GITHUB_ACTIONS === "true") {
    console.log("test-node-versions: skipped on GitHub Actions (the workflow matrix covers Node 20/22/24)");
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
    console.log(`\n--- node ${version}: node --test over ${files.length} files (${node})`);
    // The agent-driving tests already ran the agent on Node 22 and 24 in the first run.
    const env = {
      ...process.env,
      PATH: [path.dirname(node), process.env.PATH].join(path.delimiter),
      PI_TEST_AGENT_RUNS_DONE: "1",
    };
    const started = Date.now();
    const r = spawnSync(node, ["--test", "--test-concurrency=2", "--test-reporter=dot", ...files], {
      cwd: root,
      env,
      stdio: "inherit",
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const passed = !r.error && r.status === 0;
    results.push({ version, seconds, passed, why: r.error ? r.error.message : `exit code ${r.status}` });
    console.log(`\n--- node ${version}: ${passed ? "passed" : "FAILED"} in ${seconds} s`);
  }

  for (const { version, seconds, passed, why } of results) {
    console.log(`test-node-versions: node ${version} ${passed ? "passed" : `FAILED (${why})`} in ${seconds} s`);
  }
  return results.every((r) => r.passed) ? 0 : 1;
}

process.exitCode = main();
