#!/usr/bin/env node
// `pi-sessions`: look into, check and repair pi session files. Everything happens in Rust
// (crates/pi-sessions-cli); this file hands the arguments to the addon and exits with its code.
"use strict";

const native = require("../native.js");

// The Rust side reads COLUMNS for the terminal width; Node knows it, the environment may not.
if (process.stdout.isTTY && !process.env.COLUMNS && process.stdout.columns) {
  process.env.COLUMNS = String(process.stdout.columns);
}

process.exitCode = native.runCli(process.argv.slice(2));
