#!/usr/bin/env node
// `pi-sessions`: look into, check and repair pi session files. Everything happens in Rust
// (crates/pi-sessions-cli); this file hands the arguments to the addon and exits with its code.
"use strict";

const path = require("node:path");
const native = require("../native.js");

// The Rust side reads COLUMNS for the terminal width; Node knows it, the environment may not.
if (process.stdout.isTTY && !process.env.COLUMNS && process.stdout.columns) {
  process.env.COLUMNS = String(process.stdout.columns);
}

// Under `npm run demo` (a checkout's script, or a project's that runs this bin) there may be no
// `pi-sessions` on PATH: the commands the demo suggests then start this script the same way,
// relative to where npm was run (PI_SESSIONS_COMMAND, read by the CLI's environment).
if (process.env.npm_lifecycle_event === "demo" && !process.env.PI_SESSIONS_COMMAND) {
  const script = path.relative(process.env.INIT_CWD || process.cwd(), __filename);
  process.env.PI_SESSIONS_COMMAND = `node ${/^[\w./\\:-]+$/.test(script) ? script : JSON.stringify(script)}`;
}

process.exitCode = native.runCli(process.argv.slice(2));
