#!/usr/bin/env node
// `pi-native`: the user's own pi agent, started on pi-session-native's session store.
//
//   pi-native [pi arguments...]     runs the installed agent's bundled CLI with those arguments;
//                                   stdin, stdout, stderr and the exit code are the agent's own
//   pi-native --native-status       says which store pi would run on, and why; starts nothing
//
// The agent is found by PI_NATIVE_AGENT, else the real path of `pi` on PATH (PATHEXT-aware on
// Windows, where npm installs `pi` as `pi.cmd`/`pi.ps1` shims: the JS script a shim starts is
// followed instead), else node_modules above the current directory (lib/pi-agent.js). The agent's
// CLI then runs in this process, on process.execPath, as the shim would have run it. Before anything is patched its version and the
// shape of its SessionManager class are checked; on a mismatch pi runs on its own store, with one
// line on stderr (PI_NATIVE_STRICT=1: exit 1 instead). PI_NATIVE_TRACE=<file> logs each static
// call with the store that served it; PI_NATIVE_DISABLE=1 runs the stock store. Restore mode
// (PI_SESSION_RESTORE_MISSING) is on unless the environment says otherwise.
"use strict";

const path = require("node:path");
const { pathToFileURL } = require("node:url");

// As the agent's own bin does: compiled code is cached across starts.
require("node:module").enableCompileCache?.();

const agent = require("../launcher/pi-agent.js");

function fail(message) {
  process.stderr.write(`pi-native: ${message}\n`);
  process.exit(1);
}

function status(found, info, verdict) {
  const addon = Object.keys(require.cache).find((file) => file.endsWith(".node"));
  const own = require("../package.json");
  const lines = [
    verdict.ok
      ? `store:  native (${own.name} ${own.version} serves every SessionManager static of the agent)`
      : `store:  stock (${verdict.reason})`,
    `agent:  ${info.dir} ${info.version} (found by ${found.how})`,
    `node:   ${process.version} (pi needs >= ${info.minNode})`,
  ];
  if (addon) lines.push(`addon:  ${addon}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}

async function main() {
  const args = process.argv.slice(2);
  let found;
  try {
    found = agent.findAgent();
  } catch (error) {
    fail(error.message);
  }
  const info = agent.agentInfo(found.dir);
  if (!agent.versionAtLeast(process.versions.node, info.minNode)) {
    fail(`pi ${info.version} needs Node >= ${info.minNode}; this is Node ${process.version}`);
  }
  let AgentClass;
  try {
    AgentClass = await agent.loadBundledClass(found.dir);
  } catch (error) {
    fail(error.message);
  }
  if (args[0] === "--native-status") {
    const verdict = agent.check(AgentClass, info);
    status(found, info, verdict);
    return;
  }
  let installed;
  try {
    installed = agent.install(AgentClass, info, "pi-native");
  } catch (error) {
    fail(error.message.replace(/^pi-native: /, ""));
  }
  // A session directory removed while pi runs (an `rm -rf .pi` between two turns) is made again
  // and the session written back whole, instead of an ENOENT in the middle of a turn; set
  // PI_SESSION_RESTORE_MISSING=0 for the reference's behaviour.
  if (installed.store === "native" && process.env.PI_SESSION_RESTORE_MISSING === undefined) {
    process.env.PI_SESSION_RESTORE_MISSING = "1";
  }
  // The agent reads its own entry point from argv[1] (to find its package, e.g. for `pi update`).
  const bundle = path.join(found.dir, "dist", "bundle");
  process.argv = [process.argv[0], path.join(bundle, "cli.js"), ...args];
  await import(pathToFileURL(path.join(bundle, "cli-runtime.js")).href);
}

main().catch((error) => {
  process.stderr.write(`pi-native: ${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
