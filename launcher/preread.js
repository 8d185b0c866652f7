"use strict";
// The session pi is about to open, read ahead on a thread of the addon while pi loads its own
// code (~0.4 s before it opens anything): opening a big session is mostly reading and scanning
// its file, which needs nothing of pi. The core takes what was read only if the open is of that
// file, unchanged (crates/pi-session-core/src/file/preread.rs); otherwise it is dropped, and a
// read nobody took is dropped after FORGET_MS.
//
// Which session: what pi's own createSessionManager would open, for the two cases that need no
// listing and no prompt: `--session <path>` (an argument that looks like a path, as pi decides,
// naming an existing file) and `-c`/`--continue` with the default session dir of the current
// directory (or `--session-dir`/PI_CODING_AGENT_SESSION_DIR). Anything else, and a settings file
// that moves the session dir, reads nothing ahead. PI_NATIVE_PREREAD=0 turns it off.
const fs = require("node:fs");
const path = require("node:path");

/** A read not taken by then is dropped. */
const FORGET_MS = 30_000;

/** The options of pi's argument parser (cli/args.js) that decide which session it opens.
 * @param {string[]} args */
function sessionArgs(args) {
  /** @type {{ session: string | undefined, sessionDir: string | undefined, continue: boolean, other: boolean }} */
  const o = { session: undefined, sessionDir: undefined, continue: false, other: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--session" && i + 1 < args.length) o.session = args[++i];
    else if (a === "--session-dir" && i + 1 < args.length) o.sessionDir = args[++i];
    else if (a === "--continue" || a === "-c") o.continue = true;
    // These open something else (a new in-memory session, a fork, a picker), or nothing.
    else if (["--no-session", "--fork", "--resume", "-r", "--help", "-h", "--list-models", "--export"].includes(a)) o.other = true;
  }
  return o;
}

/** Whether a settings file of the agent dir or of the project names its own session dir.
 * @param {string} agentDir @param {string} cwd */
function settingsMoveSessions(agentDir, cwd) {
  for (const file of [path.join(agentDir, "settings.json"), path.join(cwd, ".pi", "settings.json")]) {
    try {
      if (/"sessionDir"\s*:/.test(fs.readFileSync(file, "utf8"))) return true;
    } catch {}
  }
  return false;
}

/** The session file pi will open for `args`, run in `cwd`, when it is one we can tell; else null.
 * @param {string[]} args @param {string} cwd @returns {string | null} */
function sessionToReadAhead(args, cwd) {
  const o = sessionArgs(args);
  if (o.other) return null;
  // Where sessions live is the core's decision, as for the factories pi will call.
  const native = require("../native.js");
  if (o.session !== undefined) {
    // pi's resolveSessionPath: a path when it has a separator or the .jsonl extension.
    if (!(o.session.includes("/") || o.session.includes("\\") || o.session.endsWith(".jsonl"))) return null;
    const file = native.resolvePath(o.session, cwd);
    return fs.statSync(file, { throwIfNoEntry: false })?.isFile() ? file : null;
  }
  if (!o.continue) return null;
  const sessionDir = o.sessionDir ?? (process.env.PI_CODING_AGENT_SESSION_DIR || undefined);
  if (sessionDir === undefined && settingsMoveSessions(native.agentDir(), cwd)) return null;
  // The place of continueRecent, without making the directory.
  const place = native.sessionPlace(cwd, sessionDir || null, false);
  if (!fs.existsSync(place.dir)) return null;
  return require("../lib/store.js").findMostRecentSession(place.dir, place.shared ? place.cwd : null);
}

/** Starts reading ahead the session pi will open for `args`, if it is one we can tell. Never
 * throws: reading ahead is only ever a head start. @param {string[]} args @param {string} [cwd] */
function readAhead(args, cwd = process.cwd()) {
  const off = process.env.PI_NATIVE_PREREAD;
  if (off === "0" || off === "false") return null;
  try {
    const file = sessionToReadAhead(args, cwd);
    if (file === null) return null;
    const native = require("../native.js");
    native.prereadSession(file);
    setTimeout(() => native.forgetPreread(), FORGET_MS).unref();
    return file;
  } catch {
    return null;
  }
}

module.exports = { readAhead, sessionToReadAhead };
