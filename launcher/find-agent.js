"use strict";
// Where the user's pi agent is installed, and which version it is (see findAgent), for
// bin/pi-native.js, register.mjs and the diagnosis; launcher/pi-agent.js then checks and installs
// into what was found.
const fs = require("node:fs");
const path = require("node:path");
const { sessionError } = require("../lib/errors.js");
const { env } = require("./env.js");

const AGENT_PACKAGE = "@earendil-works/pi-coding-agent";
/** The agent's own requirement (its package.json `engines`), when it does not say. */
const DEFAULT_MIN_NODE = "22.19.0";

/** The agent package directory at or above `start` (a file or a directory), or null. */
function packageDirAbove(start) {
  let dir = start;
  try {
    if (!fs.statSync(dir).isDirectory()) dir = path.dirname(dir);
  } catch {
    return null;
  }
  for (;;) {
    const pkg = readJson(path.join(dir, "package.json"));
    if (pkg && pkg.name === AGENT_PACKAGE) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

/** `node_modules/@earendil-works/pi-coding-agent` in `start` or a directory above it, or null. */
function installedAbove(start) {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", ...AGENT_PACKAGE.split("/"));
    if (readJson(path.join(candidate, "package.json"))?.name === AGENT_PACKAGE) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

/** Windows' own PATHEXT when the environment has none. */
const DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC";

/** `env[name]`, on win32 by any case of the name (an injected env is a plain object, and Windows
 * spells it `Path`). */
function envVar(env, name, platform) {
  if (platform !== "win32") return env[name];
  const key = Object.keys(env).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

/** The host's file checks, replaced in tests (a synthetic Windows tree on Linux). */
const hostFs = {
  /** @param {string} file */
  isFile(file) {
    try {
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  },
  /** @param {string} file */
  isExecutable(file) {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
  /** The first 64 KiB of a file as text, or null. @param {string} file */
  readHead(file) {
    let fd;
    try {
      fd = fs.openSync(file, "r");
      const buf = Buffer.alloc(64 * 1024);
      return buf.toString("utf8", 0, fs.readSync(fd, buf, 0, buf.length, 0));
    } catch {
      return null;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  },
  /** @param {string} file */
  realpath(file) {
    try {
      return fs.realpathSync(file);
    } catch {
      return file; // a dangling link: keep the name
    }
  },
};

/**
 * How `pi` is looked up: the platform, its environment, its path rules and the file checks (all
 * the host's unless given).
 * @typedef {{ platform?: string, env?: Record<string, string | undefined>, pathApi?: typeof path,
 *   fs?: Partial<typeof hostFs> }} LookupOptions
 */
function lookup(/** @type {LookupOptions} */ options = {}) {
  const platform = options.platform ?? process.platform;
  return {
    platform,
    env: options.env ?? process.env,
    pathApi: options.pathApi ?? (platform === "win32" ? path.win32 : path.posix),
    fs: { ...hostFs, ...options.fs },
  };
}

/**
 * The first executable named `name` on PATH, or null. On win32 as Windows looks: each directory in
 * turn, the name with each PATHEXT extension in order (then `.ps1`, what PowerShell runs; npm
 * writes `pi.cmd` and `pi.ps1`), quotes around a directory removed, no execute bit asked for.
 * @param {string} name @param {LookupOptions} [options]
 */
function onPath(name, options) {
  const { platform, env, pathApi, fs: files } = lookup(options);
  const win = platform === "win32";
  let exts = [""];
  if (win) {
    exts = (envVar(env, "PATHEXT", platform) || DEFAULT_PATHEXT).split(";").filter(Boolean);
    if (!exts.some((e) => e.toUpperCase() === ".PS1")) exts.push(".PS1");
  }
  for (let dir of (envVar(env, "PATH", platform) || "").split(pathApi.delimiter)) {
    if (win) dir = dir.replace(/^"(.*)"$/, "$1");
    if (!dir) continue;
    for (const ext of exts) {
      const file = pathApi.join(dir, name + ext.toLowerCase());
      if (files.isFile(file) && (win || files.isExecutable(file))) return file;
    }
  }
  return null;
}

// The script an npm shim runs (cmd-shim: `pi.cmd`, `pi.ps1` and the sh `pi` of a Windows global
// install), as written relative to the shim's own directory.
const SHIM_SCRIPT = [
  // "%_prog%"  "%dp0%\node_modules\...\cli.js" %*   (older: "%~dp0\node.exe"  "%~dp0\...\cli.js" %*)
  { ext: /\.(cmd|bat)$/i, re: /"%(?:dp0%|~dp0)\\([^"%]+)"\s+%\*/ },
  // & "$basedir/node$exe"  "$basedir/node_modules/.../cli.js" $args
  { ext: /\.ps1$/i, re: /"\$basedir\/([^"$]+)"\s+\$args/ },
  // exec "$basedir/node"  "$basedir/node_modules/.../cli.js" "$@"
  { ext: /^[^.]*$|\.sh$/i, re: /"\$basedir\/([^"$]+)"\s+"\$@"/ },
];

/**
 * The JS script an npm shim at `file` (with the text `text`) runs, or null when it is no shim.
 * @param {string} file @param {string} text @param {typeof path} [pathApi]
 */
function shimScript(file, text, pathApi = path) {
  const base = pathApi.basename(file);
  for (const { ext, re } of SHIM_SCRIPT) {
    if (!ext.test(base)) continue;
    const m = re.exec(text);
    if (m) return pathApi.join(pathApi.dirname(file), ...m[1].split(/[\\/]+/));
  }
  return null;
}

/**
 * Where `pi` on PATH leads: `file`, the name PATH gave; `script`, what it runs (its real path, or
 * for an npm shim the JS script the shim starts); `shim`, whether it was one. Null: no `pi`.
 * @param {LookupOptions} [options]
 * @returns {{ file: string, script: string, shim: boolean } | null}
 */
function resolvePi(options) {
  const o = lookup(options);
  const file = onPath("pi", o);
  if (!file) return null;
  const real = o.fs.realpath(file);
  const base = o.pathApi.basename(real);
  // A .cmd or .ps1 is always a script to read; a file without extension only when it is a sh
  // script (not a link into a package, which realpath has followed, nor a binary).
  if (/\.(cmd|bat|ps1)$/i.test(base) || (!/\.[cm]?js$/i.test(base) && (o.fs.readHead(real) ?? "").startsWith("#!/bin/sh"))) {
    const text = o.fs.readHead(real);
    const script = text === null ? null : shimScript(real, text, o.pathApi);
    if (script) return { file, script: o.fs.realpath(script), shim: true };
  }
  return { file, script: real, shim: false };
}

/** Whether a file starts like a compiled executable (ELF, Mach-O, PE) rather than a script. */
function isCompiledBinary(file) {
  let fd;
  try {
    fd = fs.openSync(file, "r");
    const head = Buffer.alloc(4);
    const n = fs.readSync(fd, head, 0, 4, 0);
    if (n < 2) return false;
    const magic = head.readUInt32BE(0);
    return (
      magic === 0x7f454c46 || // ELF
      [0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe].includes(magic) || // Mach-O
      (head[0] === 0x4d && head[1] === 0x5a) // PE ("MZ")
    );
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Where the user's pi agent is installed: `PI_NATIVE_AGENT` (the package directory, or any file
 * in it), else the real path of `pi` on PATH, else `node_modules/@earendil-works/pi-coding-agent`
 * above the current directory, else next to this package (a global install of both). `pi` on
 * PATH is looked up as the platform does (`options`: another platform's, in tests); an npm shim
 * (`pi.cmd`, `pi.ps1` on Windows) is followed to the JS script it runs.
 * @param {string} [cwd] @param {LookupOptions} [options]
 * @returns {{ dir: string, how: string }}
 */
function findAgent(cwd = process.cwd(), options = undefined) {
  const override = env.agent();
  if (override) {
    const dir = packageDirAbove(path.resolve(cwd, override));
    if (!dir) {
      throw sessionError(
        "AGENT_NOT_FOUND",
        `PI_NATIVE_AGENT=${override} is not (inside) the ${AGENT_PACKAGE} package`,
      );
    }
    return { dir, how: "PI_NATIVE_AGENT" };
  }
  const notes = [];
  const found = resolvePi(options);
  if (found) {
    const { file: pi, script: real } = found;
    const ownBin = path.resolve(__dirname, "..", "bin", "pi-native.js");
    if (real === ownBin) {
      notes.push(`\`pi\` on PATH (${pi}) is pi-native itself`);
    } else if (isCompiledBinary(real)) {
      notes.push(
        `\`pi\` on PATH (${real}) is a compiled single binary, which cannot be patched; ` +
          `install pi with npm (npm install -g ${AGENT_PACKAGE}) or set PI_NATIVE_AGENT`,
      );
    } else {
      // A symlink into the package (npm on Unix), a shim's script in it (npm on Windows: pi.cmd,
      // pi.ps1), or a shim beside the package's node_modules whose script could not be read.
      const dir = packageDirAbove(real) ?? installedAbove(path.dirname(pi));
      if (dir) return { dir, how: `\`pi\` on PATH (${found.shim ? `${pi} -> ${real}` : pi})` };
      notes.push(`\`pi\` on PATH (${real}) is not part of the ${AGENT_PACKAGE} package`);
    }
  }
  const local = installedAbove(cwd);
  if (local) return { dir: local, how: `node_modules above ${cwd}` };
  // Installed side by side with this package (npm install -g pi-session-native <agent>).
  const beside = installedAbove(path.resolve(__dirname, ".."));
  if (beside) return { dir: beside, how: "installed beside pi-session-native" };
  throw sessionError(
    "AGENT_NOT_FOUND",
    `cannot find the pi agent (${AGENT_PACKAGE})${notes.length ? `: ${notes.join("; ")}` : ""}; ` +
      "install it (npm install -g @earendil-works/pi-coding-agent) or set PI_NATIVE_AGENT to its directory",
  );
}

/** The agent package's version and the Node it needs. */
function agentInfo(dir) {
  const pkg = readJson(path.join(dir, "package.json")) || {};
  const engines = typeof pkg.engines?.node === "string" ? /^>=\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(pkg.engines.node) : null;
  return { dir, version: String(pkg.version ?? ""), minNode: engines ? engines[1] : DEFAULT_MIN_NODE };
}

module.exports = { AGENT_PACKAGE, agentInfo, findAgent, onPath, packageDirAbove, resolvePi, shimScript };
