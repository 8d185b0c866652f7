"use strict";
// Path rules of the reference: tilde and file:// handling, resolution against process.cwd(), the
// agent directory and the per-cwd default session directory. Node's own `path` does the work so the
// results are exactly what the reference computes.
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { fileURLToPath } = require("node:url");

/**
 * The reference's normalizeWindowsShellPath, which its normalizePath applies on Windows: a Git
 * Bash, MSYS, Cygwin or WSL drive path (`/c/x`, `/cygdrive/c/x`, `/mnt/c/x`) as a Windows one
 * (`C:\\x`). The core applies the same rule (paths::win32::from_shell_path); path-rules.test.mjs
 * holds the two to the same answers. @param {string} p
 */
function fromShellPath(p) {
  if (!p.startsWith("/") || p.startsWith("//") || p.includes("\\")) return p;
  const match = p.match(/^\/(?:mnt\/|cygdrive\/)?([a-z])(?:\/(.*))?$/i);
  if (!match) return p;
  return `${match[1].toUpperCase()}:\\${match[2]?.replaceAll("/", "\\") ?? ""}`;
}

function normalizePath(input) {
  const normalized = process.platform === "win32" ? fromShellPath(input) : input;
  const home = os.homedir();
  if (normalized === "~") return home;
  if (normalized.startsWith("~/") || (process.platform === "win32" && normalized.startsWith("~\\"))) {
    return path.join(home, normalized.slice(2));
  }
  if (/^file:\/\//.test(normalized)) return fileURLToPath(normalized);
  return normalized;
}

function resolvePath(input, baseDir = process.cwd()) {
  const normalized = normalizePath(input);
  return path.isAbsolute(normalized) ? path.resolve(normalized) : path.resolve(normalizePath(baseDir), normalized);
}

/** Paths compare resolved, and case-insensitively on Windows. */
function pathsEqual(a, b) {
  const api = process.platform === "win32" ? path.win32 : path.posix;
  const ka = api.resolve(a);
  const kb = api.resolve(b);
  return api === path.win32 ? ka.toLowerCase() === kb.toLowerCase() : ka === kb;
}

/** `PI_CODING_AGENT_DIR` (tilde-expanded, not made absolute) or `~/.pi/agent`; read at call time. */
function getAgentDir() {
  const env = process.env.PI_CODING_AGENT_DIR;
  return env ? normalizePath(env) : path.join(os.homedir(), ".pi", "agent");
}

function getSessionsDir() {
  return path.join(getAgentDir(), "sessions");
}

/** `<agentDir>/sessions/--<cwd with / \ : as ->--` (not created). */
function getDefaultSessionDirPath(cwd, agentDir = getAgentDir()) {
  const resolvedCwd = resolvePath(cwd);
  const encoded = `--${resolvedCwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  return path.join(resolvePath(agentDir), "sessions", encoded);
}

/** The default session directory for a cwd, created when missing. */
function getDefaultSessionDir(cwd, agentDir = getAgentDir()) {
  const dir = getDefaultSessionDirPath(cwd, agentDir);
  if (!fs.existsSync(dir)) {
    // PI_SESSION_PRIVATE=1: new session directories are the user's alone (0700 on Unix). The
    // native module is asked only here, when a directory is made, so that this file keeps
    // loading without it for the path rules alone.
    const private_ = require("../native.js").privateFilesFromEnv();
    fs.mkdirSync(dir, { recursive: true, mode: private_ ? 0o700 : 0o777 });
  }
  return dir;
}

module.exports = {
  fromShellPath,
  normalizePath,
  resolvePath,
  pathsEqual,
  getAgentDir,
  getSessionsDir,
  getDefaultSessionDirPath,
  getDefaultSessionDir,
};
