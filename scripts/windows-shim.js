// `pi-sessions` as a Windows user runs it after `npm install -g pi-session-native`: through the
// `pi-sessions.cmd` shim npm writes, found on PATH by cmd.exe. Used by scripts/test-windows.js,
// under Wine.
//
// The install is laid out as npm lays out a global install on Windows, whose prefix is Node's own
// folder (`C:\Program Files\nodejs`, here a folder of that name under .cache/, space included):
//   <prefix>\node.exe                                    (a hard link to Node for Windows)
//   <prefix>\pi-sessions.cmd, pi-sessions.ps1, pi-sessions   (written by npm's own cmd-shim)
//   <prefix>\node_modules\pi-session-native\             (the root tarball as a release packs it)
//   <prefix>\node_modules\pi-session-native\node_modules\pi-session-native-win32-x64-gnu\
//                                                         (the platform package with the DLL)
// No npm runs under Wine (Node for Windows comes without it, and the tarballs are not unpacked
// by npm here); the shims are the ones npm's cmd-shim writes, taken from the npm that runs this.
//
// Each command runs as the last line of a batch file (`pi-sessions ... > out 2> err`), as a user's
// script would: Wine quotes a Linux argv for the Windows
// command line with backslash escapes, which cmd.exe does not read, so a command line with quoted
// arguments cannot be handed to `cmd /c` directly. PI_SESSION_NATIVE_PATH is cleared there, so
// the addon is the one the platform package holds, found as an install finds it.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const assert = require("node:assert/strict");

const root = path.resolve(__dirname, "..");

/** A Linux path as Wine's Z: drive shows it. */
function winPath(p) {
  return `Z:${p.replaceAll("/", "\\")}`;
}

/** npm's cmd-shim module, from the npm on PATH. */
function cmdShimModule() {
  const r = spawnSync("npm", ["root", "-g"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`npm root -g: ${r.stderr}`);
  const dir = path.join(r.stdout.trim(), "npm", "node_modules", "cmd-shim");
  if (!fs.existsSync(dir)) throw new Error(`npm's cmd-shim is not at ${dir}`);
  return dir;
}

/** Lay out the global install under `base`; the prefix folder. */
function install(base, node, dll) {
  const { packRoot } = require("./pack.js");
  const prefix = path.join(base, "Program Files", "nodejs");
  fs.rmSync(base, { recursive: true, force: true });
  fs.mkdirSync(prefix, { recursive: true });
  try {
    fs.linkSync(node, path.join(prefix, "node.exe"));
  } catch {
    fs.copyFileSync(node, path.join(prefix, "node.exe"));
  }
  const { tarball } = packRoot(path.join(base, "tarballs"));
  const pkg = path.join(prefix, "node_modules", "pi-session-native");
  fs.mkdirSync(pkg, { recursive: true });
  const tar = spawnSync("tar", ["-xzf", tarball, "-C", pkg, "--strip-components=1"], { encoding: "utf8" });
  if (tar.status !== 0) throw new Error(`tar: ${tar.stderr}`);
  const { platform, binaryFile } = require("./platforms.js");
  const row = platform("win32-x64-gnu");
  const platformPkg = path.join(pkg, "node_modules", `pi-session-native-${row.suffix}`);
  fs.mkdirSync(platformPkg, { recursive: true });
  fs.copyFileSync(path.join(root, "npm", row.suffix, "package.json"), path.join(platformPkg, "package.json"));
  fs.copyFileSync(dll, path.join(platformPkg, binaryFile(row)));
  // Every bin of the package (pi-sessions, pi-native), as npm links them.
  const { bin } = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8"));
  for (const [name, script] of Object.entries(bin)) writeShim(path.join(pkg, script), path.join(prefix, name));
  return prefix;
}

/** cmd-shim as npm calls it for a bin entry: from the script, to `to` (+ .cmd, .ps1). */
function writeShim(from, to) {
  const script = `require(${JSON.stringify(cmdShimModule())})(process.argv[1], process.argv[2]).catch((e) => { console.error(e); process.exit(1); })`;
  const shim = spawnSync(process.execPath, ["-e", script, from, to], { encoding: "utf8" });
  if (shim.status !== 0) throw new Error(`cmd-shim: ${shim.stderr}`);
}

// npm's shim ends in `endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%" ...`.
const GOTO_TRICK = "endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & ";

/** Whether this Wine's cmd runs the rest of a line after a failed goto, as cmd.exe does. */
function cmdRunsTheRest(wine, work, prefix) {
  const probe = runBatch(wine, work, "goto-probe", prefix, "goto #_undefined_# 2>NUL || echo ran");
  return probe.stdout?.includes("ran") === true;
}

/** The shim `file` (npm's .cmd) without its goto clause, for a cmd that cannot run it; the original kept beside it. */
function dropGotoTrick(file) {
  const text = fs.readFileSync(file, "utf8");
  assert.equal(text.split(GOTO_TRICK).length, 2, `npm's shim has the goto clause once:\n${text}`);
  fs.writeFileSync(`${file}.npm`, text);
  fs.writeFileSync(file, text.replace(GOTO_TRICK, "endLocal & "));
}

/**
 * Run `line` (a cmd.exe command line) from a batch file under Wine, with `prefix` first on PATH
 * and `vars` set; its exit code, stdout and stderr.
 */
function runBatch(wine, work, name, prefix, line, vars = {}, cwd = null) {
  const out = path.join(work, `${name}.out`);
  const err = path.join(work, `${name}.err`);
  const bat = path.join(work, `${name}.bat`);
  const lines = [
    "@echo off",
    ...(cwd ? [`cd /d "${winPath(cwd)}"`] : []),
    `set "PATH=${winPath(prefix)};%PATH%"`,
    "set PI_SESSION_NATIVE_PATH=",
    ...Object.entries(vars).map(([k, v]) => `set "${k}=${v}"`),
    // The last line, so cmd's exit code is the command's (as at a prompt). Not `call`: Wine 8's
    // cmd sets ERRORLEVEL 1 after any called batch file, whatever its `exit /b` says.
    `${line} > "${winPath(out)}" 2> "${winPath(err)}"`,
  ];
  fs.writeFileSync(bat, `${lines.join("\r\n")}\r\n`);
  const status = wine(["cmd", "/c", winPath(bat)], path.join(work, `${name}.wine.txt`), 120_000);
  const read = (f) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : null);
  return { status, stdout: read(out), stderr: read(err), line };
}

/**
 * The checks; throws on the first that fails. `wine(args, outFile, timeoutMs)` runs Wine in the
 * runner's prefix with PI_SESSION_NATIVE_PATH removed from its environment.
 */
function checkShim({ wine, node, dll, base, log = (s) => process.stdout.write(s) }) {
  const prefix = install(base, node, dll);
  const work = path.join(base, "runs");
  fs.mkdirSync(work, { recursive: true });
  const shimText = fs.readFileSync(path.join(prefix, "pi-sessions.cmd"), "utf8");
  assert.match(shimText, /node_modules\\pi-session-native\\bin\\pi-sessions\.js/, "the .cmd shim starts the package's bin script");
  const direct = `"${winPath(path.join(prefix, "node.exe"))}" "${winPath(path.join(prefix, "node_modules", "pi-session-native", "bin", "pi-sessions.js"))}"`;
  // `demo --dir D` writes the agent dir D\agent (its sessions under D\agent\sessions).
  const demoDir = path.join(base, "pi demo");
  const agent = path.join(demoDir, "agent");
  const agentVars = { PI_CODING_AGENT_DIR: winPath(agent) };
  const results = [];
  const run = (name, line, vars) => {
    const r = runBatch(wine, work, name, prefix, line, vars);
    results.push(r);
    log(`  ${line}: exit ${r.status}, ${r.stdout?.length ?? "no"} bytes of stdout, ${r.stderr?.length ?? "no"} of stderr\n`);
    return r;
  };
  const detail = (r) => `${r.line}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

  // npm's shim ends in `endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%" ...`:
  // the failed goto ends the batch file, and cmd.exe still runs the rest of that line, so node's
  // exit code is the shim's. Wine 8's cmd ends the batch there without running the `||` part:
  // the shim exits 0 and node never starts. A probe of that alone tells whether this cmd does it;
  // where it does not, the checks run on the shim with only that clause taken out (what is
  // checked then is everything but the trick: PATHEXT finding the .cmd, %dp0% with a space,
  // node.exe beside it, %* with quoted arguments, output and exit codes).
  const runsTheRest = cmdRunsTheRest(wine, work, prefix);
  const help0 = run("help-npm-shim", "pi-sessions --help");
  let shimUsed = "npm's cmd-shim, verbatim";
  if (!runsTheRest) {
    assert.equal(help0.stdout, "", `this cmd skips the rest of a line after a failed goto, yet the shim printed\n${detail(help0)}`);
    dropGotoTrick(path.join(prefix, "pi-sessions.cmd"));
    shimUsed = "npm's cmd-shim without its `goto #_undefined_# 2>NUL || title %COMSPEC%` clause (this cmd ends the batch there without running the rest of the line)";
    log(`  ${shimUsed}\n`);
  }
  const help = runsTheRest ? help0 : run("help", "pi-sessions --help");
  assert.equal(help.status, 0, detail(help));
  assert.equal(help.stderr, "", detail(help));
  for (const command of ["list", "show", "tree", "stats", "verify", "rm", "prune", "demo"]) {
    assert.ok(help.stdout.includes(`  ${command}`), `--help names ${command}\n${detail(help)}`);
  }
  const helpDirect = run("help-direct", `${direct} --help`);
  assert.equal(help.stdout, helpDirect.stdout, "the shim's --help is node's own, byte for byte");

  const commandHelp = run("help-list", "pi-sessions help list");
  assert.equal(commandHelp.status, 0, detail(commandHelp));
  assert.ok(commandHelp.stdout.includes("--cwd DIR"), detail(commandHelp));

  // An argument with a space, through %*.
  const demo = run("demo", `pi-sessions demo --dir "${winPath(demoDir)}" --color never`);
  assert.equal(demo.status, 0, detail(demo));
  const files = fs.readdirSync(path.join(agent, "sessions"), { recursive: true }).filter((f) => f.endsWith(".jsonl"));
  assert.equal(files.length, 3, `demo wrote 3 sessions under "${agent}": ${files.join(", ")}`);

  const list = run("list", "pi-sessions list --all --json", agentVars);
  assert.equal(list.status, 0, detail(list));
  const sessions = JSON.parse(list.stdout);
  assert.equal(sessions.length, 3, detail(list));
  for (const s of sessions) assert.ok(s.path.startsWith(winPath(agent) + "\\"), `${s.path} is under the agent dir`);
  const listDirect = run("list-direct", `${direct} list --all --json`, agentVars);
  assert.equal(list.stdout, listDirect.stdout, "the shim's list is node's own, byte for byte");

  const text = run("list-text", "pi-sessions list --all --color never", agentVars);
  assert.equal(text.status, 0, detail(text));
  for (const s of sessions) assert.ok(text.stdout.includes(s.id.slice(0, 8)), `the listing shows ${s.id}\n${detail(text)}`);

  // A usage error: exit code 2 and the message on stderr, through the shim.
  const bad = run("unknown", "pi-sessions no-such-command");
  assert.equal(bad.status, 2, detail(bad));
  assert.equal(bad.stdout, "", detail(bad));
  assert.match(bad.stderr, /unknown command 'no-such-command'/, detail(bad));
  return { prefix, results, shimUsed, cmdRunsTheRest: runsTheRest };
}

module.exports = { checkShim, install, writeShim, runBatch, cmdRunsTheRest, dropGotoTrick, winPath };
