#!/usr/bin/env node
// `pi-native`: the user's own pi agent, started on pi-session-native's session store.
//
//   pi-native [pi arguments...]     runs the installed agent's bundled CLI with those arguments;
//                                   stdin, stdout, stderr and the exit code are the agent's own
//   pi-native --native-status       says which store pi would run on, and why, or what is missing
//   pi-native --help / --version    pi-native's own part first, then the agent's
//
// The three diagnostics (launcher/diagnosis.js) answer on any Node this package loads on, Node 20
// included, where the agent itself does not run: they say what is missing instead of failing.
// The agent is found by PI_NATIVE_AGENT, else the real path of `pi` on PATH (PATHEXT-aware on
// Windows, where npm installs `pi` as `pi.cmd`/`pi.ps1` shims: the JS script a shim starts is
// followed instead), else node_modules above the current directory (launcher/find-agent.js). The agent's
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
const diagnosis = require("../launcher/diagnosis.js");

function fail(message) {
  process.stderr.write(`pi-native: ${message}\n`);
  process.exit(1);
}

/** `--native-status`: the diagnosis, the class check where the agent loads; exit 1 when pi cannot start. */
async function nativeStatus(d) {
  if (d.blocker) {
    process.stdout.write(diagnosis.statusText(d));
    return 1;
  }
  let AgentClass;
  try {
    AgentClass = await agent.loadBundledClass(d.found.dir);
  } catch (error) {
    process.stdout.write(diagnosis.statusText(d, { loadError: error.message }));
    return 1;
  }
  process.stdout.write(diagnosis.statusText(d, { verdict: agent.check(AgentClass, d.info) }));
  return 0;
}

async function main() {
  const args = process.argv.slice(2);
  const flag = diagnosis.ownFlag(args);
  const d = diagnosis.diagnose();
  if (flag === "status") {
    process.exitCode = await nativeStatus(d);
    return;
  }
  if (flag === "version") {
    const answer = diagnosis.versionAnswer(d);
    process.stdout.write(answer.stdout);
    process.stderr.write(answer.stderr);
    process.exitCode = answer.code;
    return;
  }
  if (flag === "help") {
    // pi-native's part first: the agent's help ends the process when it is printed.
    process.stdout.write(diagnosis.helpText(d));
    if (d.blocker) return;
  }
  if (d.blocker) fail(d.blocker);
  // The session pi will open is read on another thread while pi loads (launcher/preread.js).
  require("../launcher/preread.js").readAhead(args);
  const found = d.found;
  const info = d.info;
  let AgentClass;
  try {
    AgentClass = await agent.loadBundledClass(found.dir);
  } catch (error) {
    fail(error.message);
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
