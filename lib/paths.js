"use strict";
// getDefaultSessionDir, which the package exports as the reference does: the reference's function
// over a caller's strings, with Node's own `path` so that its answers are exactly the reference's.
// It is a twin: everywhere else the core decides where sessions live (its places and paths rules,
// through the binding), and __test__/path-rules.test.mjs holds this function and its pieces to
// the core's answers. Nothing else in the shell resolves a path.
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { fileURLToPath } = require("node:url");

/**
 * The reference's normalizeWindowsShellPath, which its normalizePath applies on Windows: a Git
 * Bash, MSYS, Cygwin or WSL drive path (`/c/x`, `/cygdrive/c/x`, `/mnt/c/x`) as a Windows one
 * (`C:\\x`). The core's twin is paths::win32::from_shell_path. @param {string} p
 */
function fromShellPath(p) {
  if (!p.startsWith("/") || p.startsWith("//") || p.includes("\\")) return p;
  const match = p.match(/^\/(?:mnt\/|cygdrive\/)?([a-z])(?:\/(.*))?$/i);
  if (!match) return p;
  return `${match[1].toUpperCase()}:\\${match[2]?.replaceAll("/", "\\") ?? ""}`;
}

/** Tilde and file URL expanded (on Windows, shell drive paths too), not resolved. @param {string} input */
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

/** @param {string} input */
function resolvePath(input) {
  return path.resolve(normalizePath(input));
}

/** `PI_CODING_AGENT_DIR` (tilde-expanded, not made absolute) or `~/.pi/agent`; read at call time. */
function getAgentDir() {
  const env = process.env.PI_CODING_AGENT_DIR;
  return env ? normalizePath(env) : path.join(os.homedir(), ".pi", "agent");
}

/** `<agentDir>/sessions/--<cwd with / \ : as ->--`, made when missing.
 * @param {string} cwd @param {string} [agentDir] */
function getDefaultSessionDir(cwd, agentDir = getAgentDir()) {
  const resolvedCwd = resolvePath(cwd);
  const encoded = `--${resolvedCwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  const dir = path.join(resolvePath(agentDir), "sessions", encoded);
  if (!fs.existsSync(dir)) {
    // PI_SESSION_PRIVATE=1: new session directories are the user's alone (0700 on Unix). The
    // native module is asked only here, when a directory is made, so that this file keeps
    // loading without it.
    const private_ = require("../native.js").privateFilesFromEnv();
    fs.mkdirSync(dir, { recursive: true, mode: private_ ? 0o700 : 0o777 });
  }
  return dir;
}

module.exports = { getDefaultSessionDir, fromShellPath };
