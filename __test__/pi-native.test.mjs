// pi-native and pi-session-native/register: how the user's own pi agent is put on our store, and
// how it refuses to be when it should not (a newer agent, an unsupported version, strict mode).
// The agent runs on Node >= 22.19, so each scenario is run with Node 22, 24 and 26 (agentNode,
// helpers/agent-runs.mjs), whatever Node runs this file; the pure checks run here directly.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";

import { AGENT_MAJORS, agentNode } from "./helpers/agent-runs.mjs";
import { tempDir } from "./helpers/fixtures.mjs";
import { ROOT } from "./helpers/target.mjs";

const require = createRequire(import.meta.url);
const piAgent = require(path.join(ROOT, "launcher", "pi-agent.js"));
const whereAgent = require(path.join(ROOT, "launcher", "find-agent.js"));
// Its real path: the checkout's node_modules may be a link (a git worktree sharing one install).
const AGENT = fs.realpathSync(path.join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent"));
const PI_NATIVE = path.join(ROOT, "bin", "pi-native.js");
const EXT = path.join(ROOT, "__test__", "e2e", "pi-cli-ext.ts");
const REGISTER_APP = path.join(ROOT, "__test__", "e2e", "register-app.mjs");
const FAUX = ["-e", EXT, "--provider", "pi-cli-faux", "--model", "faux-cli"];

/** The Node binaries that run the agent (AGENT_MAJORS), those that can be had (the others say why). */
function agentNodes() {
  const nodes = AGENT_MAJORS.map(agentNode);
  for (const { major, skip } of nodes) if (skip) console.log(`# pi-native: Node ${major} skipped: ${skip}`);
  return nodes.filter((n) => !n.skip);
}
const NODES = agentNodes();

/** A project dir, an agent dir and an environment that isolates one run from the user's own. */
function sandbox(t, extraEnv = {}) {
  const root = tempDir(t, "pi-native-");
  const project = path.join(root, "project");
  const agentDir = path.join(root, "agent");
  fs.mkdirSync(project);
  fs.mkdirSync(agentDir);
  const env = { ...process.env, HOME: root, PI_CODING_AGENT_DIR: agentDir, PI_NATIVE_AGENT: AGENT, PI_OFFLINE: "1", ...extraEnv };
  for (const key of ["PI_NATIVE_STRICT", "PI_NATIVE_DISABLE", "PI_NATIVE_ANY_VERSION", "PI_NATIVE_TRACE"]) {
    if (!(key in extraEnv)) delete env[key];
  }
  const trace = path.join(root, "trace.jsonl");
  return { root, project, agentDir, env, trace };
}

function run(node, args, { cwd, env }) {
  const r = spawnSync(node, args, { cwd, env, encoding: "utf8", timeout: 120_000, input: "" });
  if (r.error) throw r.error;
  return r;
}

function traceOf(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

function sessionFiles(agentDir) {
  const dir = path.join(agentDir, "sessions");
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith(".jsonl"));
}

/**
 * A copy of the agent package whose bundle differs as `edit` says (its package.json and the chunk
 * that defines SessionManager), everything else linked to the real one. Returns its directory.
 */
function agentCopy(t, { version, addMethod, engines } = {}) {
  const root = tempDir(t, "pi-agent-copy-");
  // Modules of the copy resolve the agent's dependencies from the real node_modules.
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(root, "node_modules"));
  // Named as every install names it (register.mjs only looks at modules under such a path).
  const dir = path.join(root, "@earendil-works", "pi-coding-agent");
  fs.mkdirSync(path.join(dir, "dist"), { recursive: true });
  for (const name of fs.readdirSync(AGENT)) {
    if (name !== "dist" && name !== "package.json") fs.symlinkSync(path.join(AGENT, name), path.join(dir, name));
  }
  for (const name of fs.readdirSync(path.join(AGENT, "dist"))) {
    if (name !== "bundle") fs.symlinkSync(path.join(AGENT, "dist", name), path.join(dir, "dist", name));
  }
  fs.cpSync(path.join(AGENT, "dist", "bundle"), path.join(dir, "dist", "bundle"), { recursive: true });
  const pkg = JSON.parse(fs.readFileSync(path.join(AGENT, "package.json"), "utf8"));
  if (version) pkg.version = version;
  if (engines) pkg.engines = { node: engines };
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  if (addMethod) {
    const { file } = piAgent.bundleClassModule(dir);
    const text = fs.readFileSync(file, "utf8");
    const patched = text.replace(/var SessionManager=class (\w+)\{/, (m) => `${m}${addMethod}(){return 1}`);
    assert.notEqual(patched, text, "the class definition was found in the bundle");
    fs.writeFileSync(file, patched);
  }
  return dir;
}

describe("the shape check (no agent run)", () => {
  test("names public statics and methods the agent's class has and ours lacks", () => {
    class Agent {
      static create() {}
      static brandNew() {}
      appendMessage() {}
      exportAsPdf() {}
      _internal() {}
    }
    class Ours {
      static create() {}
      appendMessage() {}
    }
    assert.deepEqual(piAgent.shapeDrift(Agent, Ours, new Set(["_internal"])), ["static brandNew", "exportAsPdf"]);
  });

  test("finds nothing missing between pi 1.6.0's class and ours", async () => {
    if (!NODES.length) return;
    const probe = `const a=require(${JSON.stringify(path.join(ROOT, "launcher", "pi-agent.js"))});
      a.loadBundledClass(${JSON.stringify(AGENT)}).then((C)=>{
        const { SessionManager } = require(${JSON.stringify(path.join(ROOT, "index.js"))});
        console.log(JSON.stringify(a.shapeDrift(C, SessionManager, a.privateNames(${JSON.stringify(AGENT)}))));
      })`;
    const r = run(NODES[0].node, ["-e", probe], { cwd: ROOT, env: process.env });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), []);
  });

  test("takes the agent's private members from its declaration file", () => {
    const names = piAgent.privateNames(AGENT);
    for (const name of ["_buildIndex", "_rewriteFile", "fileEntries", "byId"]) assert.ok(names.has(name), name);
    assert.ok(!names.has("_persist"), "_persist is public in 1.6.0's declarations");
    assert.ok(!names.has("appendMessage"));
  });

  test("accepts pi 1.6.x and nothing else", () => {
    for (const v of ["1.6.0", "1.6.3", "1.6.10-rc.1"]) assert.ok(piAgent.SUPPORTED_VERSIONS.test(v), v);
    for (const v of ["1.7.0", "1.5.9", "2.6.0", "", "1.60.0"]) assert.ok(!piAgent.SUPPORTED_VERSIONS.test(v), v);
  });
});

// npm on Windows installs `pi` as shims (cmd-shim), not as a link: the texts it writes, for a
// package script `rel` (backslashes in the .cmd, slashes in the .ps1 and sh ones).
const shims = {
  cmd: (rel) => [
    "@ECHO off", "GOTO start", ":find_dp0", "SET dp0=%~dp0", "EXIT /b", ":start", "SETLOCAL", "CALL :find_dp0", "",
    'IF EXIST "%dp0%\\node.exe" (', '  SET "_prog=%dp0%\\node.exe"', ") ELSE (", '  SET "_prog=node"', "  SET PATHEXT=%PATHEXT:;.JS;=;%", ")", "",
    `endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\\${rel.replaceAll("/", "\\")}" %*`, "",
  ].join("\r\n"),
  // cmd-shim before 4.0.
  cmdOld: (rel) => `@IF EXIST "%~dp0\\node.exe" (\r\n  "%~dp0\\node.exe"  "%~dp0\\${rel.replaceAll("/", "\\")}" %*\r\n) ELSE (\r\n  @SETLOCAL\r\n  @SET PATHEXT=%PATHEXT:;.JS;=;%\r\n  node  "%~dp0\\${rel.replaceAll("/", "\\")}" %*\r\n)\r\n`,
  ps1: (rel) => [
    "#!/usr/bin/env pwsh", "$basedir=Split-Path $MyInvocation.MyCommand.Definition -Parent", "", '$exe=""',
    'if ($PSVersionTable.PSVersion -lt "6.0" -or $IsWindows) {', '  $exe=".exe"', "}", "$ret=0", 'if (Test-Path "$basedir/node$exe") {',
    "  if ($MyInvocation.ExpectingInput) {", `    $input | & "$basedir/node$exe"  "$basedir/${rel}" $args`, "  } else {",
    `    & "$basedir/node$exe"  "$basedir/${rel}" $args`, "  }", "  $ret=$LASTEXITCODE", "} else {", "  if ($MyInvocation.ExpectingInput) {",
    `    $input | & "node$exe"  "$basedir/${rel}" $args`, "  } else {", `    & "node$exe"  "$basedir/${rel}" $args`, "  }", "  $ret=$LASTEXITCODE", "}", "exit $ret", "",
  ].join("\n"),
  sh: (rel) => [
    "#!/bin/sh", `basedir=$(dirname "$(echo "$0" | sed -e 's,\\\\,/,g')")`, "", 'case `uname` in', '    *CYGWIN*|*MINGW*|*MSYS*) basedir=`cygpath -w "$basedir"`;;', "esac", "",
    'if [ -x "$basedir/node" ]; then', `  exec "$basedir/node"  "$basedir/${rel}" "$@"`, "else ", `  exec node  "$basedir/${rel}" "$@"`, "fi", "",
  ].join("\n"),
};
// The agent's bin (its package.json), the script npm's shims for `pi` start.
const CLI_REL = "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js";

/** A synthetic Windows tree (`C:\...` names, case-insensitive) for piAgent's lookup options. */
function windowsTree(files) {
  const byName = new Map(Object.entries(files).map(([name, text]) => [name.toLowerCase(), text]));
  return {
    isFile: (file) => byName.has(file.toLowerCase()),
    isExecutable: () => assert.fail("Windows has no execute bit to ask for"),
    readHead: (file) => byName.get(file.toLowerCase()) ?? null,
    realpath: (file) => file,
  };
}

describe("finding `pi` on PATH, and following npm's Windows shims (no agent run)", () => {
  const NPM = "C:\\Users\\u\\AppData\\Roaming\\npm";
  const CLI = `${NPM}\\node_modules\\@earendil-works\\pi-coding-agent\\dist\\bundle\\cli.js`;
  const win = (files, env) => ({ platform: "win32", pathApi: path.win32, env, fs: windowsTree(files) });

  test("a pi.cmd shim leads to the agent's cli.js beside it, as each cmd-shim version writes it", () => {
    for (const shim of [shims.cmd, shims.cmdOld]) {
      const o = win({ [`${NPM}\\pi.cmd`]: shim(CLI_REL) }, { Path: `C:\\Windows\\system32;${NPM}`, PATHEXT: ".COM;.EXE;.BAT;.CMD" });
      assert.deepEqual(whereAgent.resolvePi(o), { file: `${NPM}\\pi.cmd`, script: CLI, shim: true });
    }
  });

  test("PATHEXT decides the extension, PATH order the directory; a quoted directory counts", () => {
    const files = { [`${NPM}\\pi.cmd`]: shims.cmd(CLI_REL), [`${NPM}\\pi.ps1`]: shims.ps1(CLI_REL), [`${NPM}\\pi`]: shims.sh(CLI_REL), "C:\\Other\\pi.bat": "@echo other" };
    const env = { PATH: `"${NPM}";C:\\Other`, PATHEXT: ".COM;.EXE;.BAT;.CMD" };
    assert.equal(whereAgent.onPath("pi", win(files, env)), `${NPM}\\pi.cmd`, "the bare sh shim is not what Windows runs");
    assert.equal(whereAgent.onPath("pi", win(files, { ...env, PATH: `C:\\Other;${NPM}` })), "C:\\Other\\pi.bat");
    // Without PATHEXT, Windows' default list (.CMD before .PS1).
    assert.equal(whereAgent.onPath("pi", win(files, { Path: NPM })), `${NPM}\\pi.cmd`);
  });

  test("a pi.ps1 shim alone (PowerShell's) leads to the same script", () => {
    const o = win({ [`${NPM}\\pi.ps1`]: shims.ps1(CLI_REL) }, { Path: NPM, PATHEXT: ".EXE;.CMD" });
    assert.deepEqual(whereAgent.resolvePi(o), { file: `${NPM}\\pi.ps1`, script: CLI, shim: true });
  });

  test("a .cmd that is no npm shim is reported as itself; no pi on PATH is null", () => {
    const o = win({ "C:\\Tools\\pi.cmd": "@echo off\r\nnode C:\\elsewhere\\pi.js %*\r\n" }, { Path: "C:\\Tools" });
    assert.deepEqual(whereAgent.resolvePi(o), { file: "C:\\Tools\\pi.cmd", script: "C:\\Tools\\pi.cmd", shim: false });
    assert.equal(whereAgent.resolvePi(win({}, { Path: "C:\\Tools" })), null);
  });

  test("shimScript reads each shim format and nothing else", () => {
    assert.equal(whereAgent.shimScript(`${NPM}\\pi.CMD`, shims.cmd(CLI_REL), path.win32), CLI);
    assert.equal(whereAgent.shimScript(`${NPM}\\pi.ps1`, shims.ps1(CLI_REL), path.win32), CLI);
    assert.equal(whereAgent.shimScript(`${NPM}\\pi`, shims.sh(CLI_REL), path.win32), CLI);
    assert.equal(whereAgent.shimScript("/usr/bin/pi", shims.sh("../lib/x/cli.js"), path.posix), "/usr/lib/x/cli.js");
    assert.equal(whereAgent.shimScript(`${NPM}\\pi.ps1`, shims.cmd(CLI_REL), path.win32), null, "a .cmd's text in a .ps1");
    assert.equal(whereAgent.shimScript(`${NPM}\\pi.cmd`, "@echo off\r\n", path.win32), null);
  });

  test("on Linux PATHEXT means nothing and a file must be executable", (t) => {
    const dir = tempDir(t, "pi-path-");
    fs.writeFileSync(path.join(dir, "pi.cmd"), shims.cmd(CLI_REL));
    fs.writeFileSync(path.join(dir, "pi"), "#!/bin/sh\n");
    const env = { PATH: dir, PATHEXT: ".CMD" };
    assert.equal(whereAgent.onPath("pi", { platform: "linux", env }), null, "pi is not executable");
    fs.chmodSync(path.join(dir, "pi"), 0o755);
    assert.equal(whereAgent.onPath("pi", { platform: "linux", env }), path.join(dir, "pi"));
  });

  test("findAgent follows a real pi.cmd shim (win32 lookup) to the agent package its script is in", (t) => {
    const root = tempDir(t, "pi-shim-");
    // The shim's directory holds no node_modules: only its script says where the agent is.
    const bin = path.join(root, "npm");
    fs.mkdirSync(bin);
    fs.mkdirSync(path.join(root, "lib", "node_modules", "@earendil-works"), { recursive: true });
    fs.symlinkSync(AGENT, path.join(root, "lib", "node_modules", "@earendil-works", "pi-coding-agent"));
    fs.writeFileSync(path.join(bin, "pi.cmd"), shims.cmd(`../lib/${CLI_REL}`));
    const saved = process.env.PI_NATIVE_AGENT;
    delete process.env.PI_NATIVE_AGENT;
    t.after(() => { if (saved !== undefined) process.env.PI_NATIVE_AGENT = saved; });
    const found = whereAgent.findAgent(root, { platform: "win32", pathApi: path, env: { Path: bin, PATHEXT: ".EXE;.CMD" } });
    assert.equal(found.dir, AGENT);
    assert.equal(found.how, `\`pi\` on PATH (${path.join(bin, "pi.cmd")} -> ${path.join(AGENT, "dist", "bundle", "cli.js")})`);
  });
});

/** A copy of this package's JS outside the checkout (no agent above or beside it), on the built addon. */
function packageCopy(t) {
  const dir = path.join(tempDir(t, "pi-native-alone-"), "pi-session-native");
  for (const name of ["bin", "launcher", "lib"]) fs.cpSync(path.join(ROOT, name), path.join(dir, name), { recursive: true });
  for (const name of ["index.js", "native.js", "package.json"]) fs.copyFileSync(path.join(ROOT, name), path.join(dir, name));
  const binary = fs.readdirSync(ROOT).find((f) => f.endsWith(".node"));
  return { piNative: path.join(dir, "bin", "pi-native.js"), env: { PI_SESSION_NATIVE_PATH: path.join(ROOT, binary) } };
}

/** No JS stack frame ("    at f (file:1:2)") anywhere in a run's output. */
function assertNoStack(r) {
  assert.doesNotMatch(`${r.stdout}\n${r.stderr}`, /^\s+at .+[:(]/m, "no stack trace");
}

describe("pi-native's own flags, on any Node (no agent run)", () => {
  const { ownFlag } = require(path.join(ROOT, "launcher", "diagnosis.js"));

  test("its flags are read before `--` only, and --version wins over --help as in the agent", () => {
    assert.equal(ownFlag(["--native-status"]), "status");
    assert.equal(ownFlag(["-p", "--help"]), "help");
    assert.equal(ownFlag(["-h"]), "help");
    assert.equal(ownFlag(["--help", "-v"]), "version");
    assert.equal(ownFlag(["--", "--help", "--version", "--native-status"]), null);
    assert.equal(ownFlag(["-p", "say --help"]), null);
  });

  // An agent copy that asks for a Node no machine has stands in for Node 20 under pi 1.6.0.
  test("with an agent that needs a newer Node, --native-status names what is missing and exits 1", (t) => {
    const s = sandbox(t, { PI_NATIVE_AGENT: agentCopy(t, { engines: ">=99.0.0" }) });
    const r = run(process.execPath, [PI_NATIVE, "--native-status"], { cwd: s.project, env: s.env });
    assert.equal(r.status, 1);
    assert.equal(r.stderr, "");
    assertNoStack(r);
    assert.match(r.stdout, /^store: {2}none: pi cannot start here \(pi 1\.6\.0 needs Node >= 99\.0\.0; this is Node v[\d.]+\)$/m);
    assert.match(r.stdout, /^agent: {2}.* 1\.6\.0 \(found by PI_NATIVE_AGENT\)$/m);
    assert.match(r.stdout, /^check: {2}version 1\.6\.0 is one pi-native supports \(1\.6\.x\); its SessionManager was not checked \(pi does not load on this Node\)$/m);
    assert.match(r.stdout, /^node: {3}v[\d.]+ \(pi needs >= 99\.0\.0\): too old for pi$/m);
    assert.match(r.stdout, /^addon: {2}\/.*\.node$/m, "the addon loads, and its file is named");
  });

  test("with an agent that needs a newer Node, --help shows pi-native's own help and why pi's is missing", (t) => {
    const s = sandbox(t, { PI_NATIVE_AGENT: agentCopy(t, { engines: ">=99.0.0" }) });
    const r = run(process.execPath, [PI_NATIVE, "--help"], { cwd: s.project, env: s.env });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^pi-native — your pi agent/);
    for (const name of ["--native-status", "PI_NATIVE_AGENT", "PI_NATIVE_STRICT", "PI_NATIVE_ANY_VERSION", "PI_NATIVE_DISABLE", "PI_NATIVE_TRACE", "PI_SESSION_RESTORE_MISSING"]) {
      assert.ok(r.stdout.includes(name), `the help names ${name}`);
    }
    assert.match(r.stdout, /\npi's own help is not shown: pi 1\.6\.0 needs Node >= 99\.0\.0; this is Node v[\d.]+\.\n$/);
  });

  test("with an agent that needs a newer Node, --version prints both versions and says pi does not run here", (t) => {
    const s = sandbox(t, { PI_NATIVE_AGENT: agentCopy(t, { engines: ">=99.0.0" }) });
    const r = run(process.execPath, [PI_NATIVE, "--version"], { cwd: s.project, env: s.env });
    assert.equal(r.status, 0);
    assert.equal(r.stdout, "1.6.0\npi-native 0.1.0 (pi-session-native)\n");
    assert.match(r.stderr, /^pi-native: pi 1\.6\.0 needs Node >= 99\.0\.0; this is Node v[\d.]+, so pi does not run here\n$/);
  });

  test("with an agent that needs a newer Node, a run exits 1 with one line saying so", (t) => {
    const s = sandbox(t, { PI_NATIVE_AGENT: agentCopy(t, { engines: ">=99.0.0" }) });
    const r = run(process.execPath, [PI_NATIVE, "-p", "hello"], { cwd: s.project, env: s.env });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^pi-native: pi 1\.6\.0 needs Node >= 99\.0\.0; this is Node v[\d.]+\n$/);
  });

  test("without any agent to find, --native-status, --help and --version say so and how to get one", (t) => {
    const alone = packageCopy(t);
    const s = sandbox(t, alone.env);
    const env = { ...s.env, PATH: path.dirname(process.execPath) };
    delete env.PI_NATIVE_AGENT;
    const status = run(process.execPath, [alone.piNative, "--native-status"], { cwd: s.project, env });
    assert.equal(status.status, 1);
    assertNoStack(status);
    assert.match(status.stdout, /^store: {2}none: pi cannot start here \(cannot find the pi agent \(@earendil-works\/pi-coding-agent\); install it \(npm install -g @earendil-works\/pi-coding-agent\) or set PI_NATIVE_AGENT to its directory\)$/m);
    assert.match(status.stdout, /^agent: {2}not found$/m);
    assert.match(status.stdout, /^check: {2}not done: cannot find the pi agent/m);
    const help = run(process.execPath, [alone.piNative, "--help"], { cwd: s.project, env });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^pi-native — /);
    assert.match(help.stdout, /\npi's own help is not shown: cannot find the pi agent .*\.\n$/);
    const version = run(process.execPath, [alone.piNative, "--version"], { cwd: s.project, env });
    assert.equal(version.status, 1);
    assert.equal(version.stdout, "pi-native 0.1.0 (pi-session-native)\n");
    assert.match(version.stderr, /^pi-native: cannot find the pi agent/);
  });
});

const OLD_NODE = !piAgent.versionAtLeast(process.versions.node, "22.19.0");
describe(`pi-native on this Node (${process.version}), older than pi 1.6.0 needs`, { skip: !OLD_NODE && "this Node runs the agent: the runs below cover it" }, () => {
  test("--native-status prints the diagnosis and exits 1, without a stack trace", (t) => {
    const s = sandbox(t);
    const r = run(process.execPath, [PI_NATIVE, "--native-status"], { cwd: s.project, env: s.env });
    assert.equal(r.status, 1);
    assert.equal(r.stderr, "");
    assertNoStack(r);
    assert.match(r.stdout, /^store: {2}none: pi cannot start here \(pi 1\.6\.0 needs Node >= 22\.19\.0; this is Node v\d+\.\d+\.\d+\)$/m);
    assert.match(r.stdout, /^node: {3}v[\d.]+ \(pi needs >= 22\.19\.0\): too old for pi$/m);
    assert.match(r.stdout, /^addon: {2}\/.*\.node$/m);
  });

  test("--help and --version answer, and a run exits 1 with one line", (t) => {
    const s = sandbox(t);
    const help = run(process.execPath, [PI_NATIVE, "--help"], { cwd: s.project, env: s.env });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /\npi's own help is not shown: pi 1\.6\.0 needs Node >= 22\.19\.0; this is Node v[\d.]+\.\n$/);
    const version = run(process.execPath, [PI_NATIVE, "--version"], { cwd: s.project, env: s.env });
    assert.equal(version.stdout, "1.6.0\npi-native 0.1.0 (pi-session-native)\n");
    const r = run(process.execPath, [PI_NATIVE, "--model", "x", "-p", "hello"], { cwd: s.project, env: s.env });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^pi-native: pi 1\.6\.0 needs Node >= 22\.19\.0; this is Node v\d+\.\d+\.\d+\n$/);
  });
});

test("on a Node without module.registerHooks, register says so in one line and the program runs", { skip: piAgent.versionAtLeast(process.versions.node, "22.15.0") && "this Node has registerHooks" }, () => {
  const r = spawnSync(process.execPath, ["--import", path.join(ROOT, "register.mjs"), "-e", "process.stdout.write('ran')"], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "ran");
  assert.match(r.stderr, /^pi-session-native\/register: Node v[\d.]+ has no module\.registerHooks \(22\.15 or later\); the pi agent keeps its own session store\n$/);
});

for (const { major, node } of NODES) {
  describe(`pi-native on Node ${major}`, () => {
    test("--native-status names the native store, the agent, its version and how it was found", (t) => {
      const s = sandbox(t);
      const r = run(node, [PI_NATIVE, "--native-status"], { cwd: s.project, env: s.env });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, "");
      assert.match(r.stdout, /^store: {2}native \(pi-session-native /m);
      assert.match(r.stdout, new RegExp(`^agent: {2}${AGENT.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} 1\\.6\\.0 \\(found by PI_NATIVE_AGENT\\)$`, "m"));
      assert.match(r.stdout, /^node: {3}v\d/m);
      assert.deepEqual(sessionFiles(s.agentDir), [], "status starts no session");
    });

    test("a print run is served by our store, and every static call the agent made says so", (t) => {
      const s = sandbox(t);
      const env = { ...s.env, PI_NATIVE_TRACE: s.trace };
      const r = run(node, [PI_NATIVE, ...FAUX, "-p", "hello there"], { cwd: s.project, env });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), "You said: hello there");
      const trace = traceOf(s.trace);
      assert.deepEqual(trace[0] && [trace[0].event, trace[0].store, trace[0].version], ["start", "native", "1.6.0"]);
      const statics = trace.filter((e) => e.event === "static");
      assert.ok(statics.length >= 1, "the agent made a static call");
      assert.ok(statics.every((e) => e.store === "native"));
      assert.deepEqual(trace.filter((e) => e.event === "stock-call"), [], "no stock instance was ever called");
      assert.equal(sessionFiles(s.agentDir).length, 1);
    });

    test("finds the agent through the real path of `pi` on PATH", (t) => {
      const s = sandbox(t);
      const bin = path.join(s.root, "bin");
      fs.mkdirSync(bin);
      fs.symlinkSync(path.join(AGENT, "dist", "bundle", "cli.js"), path.join(bin, "pi"));
      const env = { ...s.env, PATH: `${bin}${path.delimiter}${s.env.PATH}` };
      delete env.PI_NATIVE_AGENT;
      const r = run(node, [PI_NATIVE, "--native-status"], { cwd: s.project, env });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /found by `pi` on PATH \(/);
      assert.ok(r.stdout.includes(AGENT), r.stdout);
    });

    test("follows a `pi` on PATH that is an npm shim (the sh one of a Windows install) to the agent it starts", (t) => {
      const s = sandbox(t);
      const bin = path.join(s.root, "bin");
      fs.mkdirSync(bin);
      fs.mkdirSync(path.join(s.root, "lib", "node_modules", "@earendil-works"), { recursive: true });
      fs.symlinkSync(AGENT, path.join(s.root, "lib", "node_modules", "@earendil-works", "pi-coding-agent"));
      fs.writeFileSync(path.join(bin, "pi"), shims.sh(`../lib/${CLI_REL}`), { mode: 0o755 });
      const env = { ...s.env, PATH: `${bin}${path.delimiter}${s.env.PATH}`, PI_NATIVE_TRACE: s.trace };
      delete env.PI_NATIVE_AGENT;
      const status = run(node, [PI_NATIVE, "--native-status"], { cwd: s.project, env });
      assert.equal(status.status, 0, status.stderr);
      assert.ok(status.stdout.includes(`found by \`pi\` on PATH (${path.join(bin, "pi")} -> ${path.join(AGENT, "dist", "bundle", "cli.js")})`), status.stdout);
      // Arguments, stdout and the exit code are the agent's.
      const r = run(node, [PI_NATIVE, ...FAUX, "-p", "through the shim"], { cwd: s.project, env });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), "You said: through the shim");
      assert.ok(traceOf(s.trace).filter((e) => e.event === "static").every((e) => e.store === "native"));
      const bad = run(node, [PI_NATIVE, "--no-such-option-here"], { cwd: s.project, env });
      assert.notEqual(bad.status, 0);
    });

    test("skips a `pi` on PATH that is pi-native itself (alias by symlink) instead of starting itself", (t) => {
      const s = sandbox(t);
      const bin = path.join(s.root, "bin");
      fs.mkdirSync(bin);
      fs.symlinkSync(PI_NATIVE, path.join(bin, "pi"));
      const env = { ...s.env, PATH: `${bin}${path.delimiter}${s.env.PATH}` };
      delete env.PI_NATIVE_AGENT;
      const r = run(node, [PI_NATIVE, "--native-status"], { cwd: s.project, env });
      assert.equal(r.status, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /found by `pi` on PATH/);
      assert.match(r.stdout, /found by installed beside pi-session-native/);
    });

    test("PI_NATIVE_AGENT naming something that is not the agent exits 1 with one line", (t) => {
      const s = sandbox(t, { PI_NATIVE_AGENT: os.tmpdir() });
      const r = run(node, [PI_NATIVE, "-p", "hello"], { cwd: s.project, env: s.env });
      assert.equal(r.status, 1);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /^pi-native: PI_NATIVE_AGENT=.* is not \(inside\) the @earendil-works\/pi-coding-agent package\n$/);
    });

    test("a newer agent class with a method ours lacks runs on its own store, with one line on stderr", (t) => {
      const copy = agentCopy(t, { addMethod: "exportAsPdf" });
      const s = sandbox(t, { PI_NATIVE_AGENT: copy });
      const env = { ...s.env, PI_NATIVE_TRACE: s.trace };
      const status = run(node, [PI_NATIVE, "--native-status"], { cwd: s.project, env });
      assert.match(status.stdout, /^store: {2}stock \(pi 1\.6\.0's SessionManager has exportAsPdf, which pi-session-native lacks\)$/m);
      const r = run(node, [PI_NATIVE, ...FAUX, "-p", "still works"], { cwd: s.project, env });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), "You said: still works");
      assert.equal(
        r.stderr,
        "pi-native: pi 1.6.0's SessionManager has exportAsPdf, which pi-session-native lacks; running pi on its own session store\n",
      );
      const trace = traceOf(s.trace);
      assert.deepEqual(trace.map((e) => [e.event, e.store]), [["start", "stock"]], "nothing was patched");
      assert.equal(sessionFiles(s.agentDir).length, 1, "the stock store wrote the session");
    });

    test("in strict mode the drift check refuses to start the agent at all", (t) => {
      const copy = agentCopy(t, { addMethod: "exportAsPdf" });
      const s = sandbox(t, { PI_NATIVE_AGENT: copy, PI_NATIVE_STRICT: "1" });
      const r = run(node, [PI_NATIVE, ...FAUX, "-p", "hello"], { cwd: s.project, env: s.env });
      assert.equal(r.status, 1);
      assert.equal(r.stdout, "");
      assert.equal(r.stderr, "pi-native: pi 1.6.0's SessionManager has exportAsPdf, which pi-session-native lacks (PI_NATIVE_STRICT is set)\n");
      assert.deepEqual(sessionFiles(s.agentDir), []);
    });

    test("an agent version outside 1.6.x runs on its own store unless PI_NATIVE_ANY_VERSION is set", (t) => {
      const copy = agentCopy(t, { version: "1.7.0" });
      const s = sandbox(t, { PI_NATIVE_AGENT: copy });
      const r = run(node, [PI_NATIVE, "--native-status"], { cwd: s.project, env: s.env });
      assert.match(r.stdout, /^store: {2}stock \(pi 1\.7\.0 is outside the versions pi-native supports \(1\.6\.x\); set PI_NATIVE_ANY_VERSION=1 to try it anyway\)$/m);
      const anyway = run(node, [PI_NATIVE, "--native-status"], { cwd: s.project, env: { ...s.env, PI_NATIVE_ANY_VERSION: "1" } });
      assert.match(anyway.stdout, /^store: {2}native /m);
    });

    test("without a loadable addon, pi runs on its own store with one line on stderr", (t) => {
      const s = sandbox(t, { PI_SESSION_NATIVE_PATH: path.join(os.tmpdir(), "no-such-addon.node") });
      const r = run(node, [PI_NATIVE, ...FAUX, "-p", "hello"], { cwd: s.project, env: s.env });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), "You said: hello");
      assert.match(r.stderr, /^pi-native: pi-session-native's addon did not load \(.*\); running pi on its own session store\n$/);
      assert.equal(sessionFiles(s.agentDir).length, 1, "the stock store wrote the session");
    });

    test("PI_NATIVE_DISABLE runs the stock store without a word", (t) => {
      const s = sandbox(t, { PI_NATIVE_DISABLE: "1" });
      const env = { ...s.env, PI_NATIVE_TRACE: s.trace };
      const r = run(node, [PI_NATIVE, ...FAUX, "-p", "hello"], { cwd: s.project, env });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, "");
      assert.deepEqual(traceOf(s.trace).map((e) => [e.event, e.store]), [["start", "stock"]]);
    });

    test("a session directory removed in the middle of a turn is made again and the session written back whole", (t) => {
      const s = sandbox(t);
      const sessions = path.join(s.root, "sessions");
      const r = run(node, [PI_NATIVE, ...FAUX, "--session-dir", sessions, "-p", `run: rm -rf ${sessions}`], { cwd: s.project, env: s.env });
      assert.equal(r.status, 0, r.stderr);
      const files = fs.readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
      assert.equal(files.length, 1);
      const records = fs.readFileSync(path.join(sessions, files[0]), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      const roles = records.filter((e) => e.type === "message").map((e) => e.message.role);
      assert.equal(records[0].type, "session", "the header was written back");
      assert.deepEqual(roles, ["system", "user", "assistant", "toolResult", "assistant"], "nothing of the turn was lost");
    });

    test("arguments, stdout and the exit code are the agent's own", (t) => {
      const s = sandbox(t);
      const stock = run(node, [path.join(AGENT, "dist", "bundle", "cli.js"), "--no-such-flag-xyz"], { cwd: s.project, env: s.env });
      const ours = run(node, [PI_NATIVE, "--no-such-flag-xyz"], { cwd: s.project, env: s.env });
      assert.equal(ours.status, stock.status);
      assert.equal(ours.stdout, stock.stdout);
      assert.equal(ours.stderr, stock.stderr);
    });

    test("--help is pi-native's own help, then the agent's exactly", (t) => {
      const s = sandbox(t);
      const help = run(node, [PI_NATIVE, "--help"], { cwd: s.project, env: s.env });
      const stockHelp = run(node, [path.join(AGENT, "dist", "bundle", "cli.js"), "--help"], { cwd: s.project, env: s.env });
      assert.equal(help.status, 0);
      assert.equal(stockHelp.status, 0);
      const marker = "pi's own help follows.\n\n";
      const at = help.stdout.indexOf(marker);
      assert.ok(at > 0, help.stdout.slice(0, 400));
      assert.match(help.stdout.slice(0, at), /^pi-native — [^]*PI_NATIVE_TRACE[^]*\nAgent: .* 1\.6\.0 \(found by PI_NATIVE_AGENT\)\. $/);
      assert.equal(help.stdout.slice(at + marker.length), stockHelp.stdout);
    });

    test("--version is the agent's version line, then pi-native's", (t) => {
      const s = sandbox(t);
      const stock = run(node, [path.join(AGENT, "dist", "bundle", "cli.js"), "--version"], { cwd: s.project, env: s.env });
      const ours = run(node, [PI_NATIVE, "--version"], { cwd: s.project, env: s.env });
      assert.equal(ours.status, 0);
      assert.equal(ours.stderr, "");
      assert.equal(ours.stdout, `${stock.stdout}pi-native 0.1.0 (pi-session-native)\n`);
    });
  });

  describe(`pi-session-native/register on Node ${major}`, () => {
    /** A project whose node_modules has the agent and this package, as an app's would. */
    function app(t, agentDir = AGENT) {
      const s = sandbox(t);
      const modules = path.join(s.project, "node_modules");
      fs.mkdirSync(path.join(modules, "@earendil-works"), { recursive: true });
      fs.symlinkSync(ROOT, path.join(modules, "pi-session-native"));
      fs.symlinkSync(agentDir, path.join(modules, "@earendil-works", "pi-coding-agent"));
      fs.symlinkSync(path.join(ROOT, "node_modules", "@earendil-works", "pi-ai"), path.join(modules, "@earendil-works", "pi-ai"));
      fs.writeFileSync(path.join(s.project, "package.json"), '{"name":"app","type":"module"}\n');
      return s;
    }

    for (const entry of ["main", "bundle"]) {
      test(`an SDK program that never names this package gets our store (${entry} entry): default store, runtime, newSession`, (t) => {
        const s = app(t);
        const r = run(node, ["--import", "pi-session-native/register", REGISTER_APP, s.project, s.agentDir, entry], { cwd: s.project, env: s.env });
        assert.equal(r.status, 0, r.stderr);
        const report = JSON.parse(r.stdout.trim().split("\n").pop());
        assert.deepEqual(
          [report.defaultStore, report.runtimeStore, report.newSessionStore, report.inMemoryStore],
          ["native", "native", "native", "native"],
        );
        assert.deepEqual(report.defaultEntries.slice(0, 3), ["model_change", "thinking_level_change", "message"]);
        assert.ok(fs.existsSync(report.defaultFile), "the default session was written");

        const plain = run(node, [REGISTER_APP, s.project, s.agentDir, entry], { cwd: s.project, env: s.env });
        assert.equal(plain.status, 0, plain.stderr);
        const stock = JSON.parse(plain.stdout.trim().split("\n").pop());
        assert.deepEqual([stock.defaultStore, stock.newSessionStore], ["stock", "stock"], "without the flag nothing changes");
        assert.deepEqual(stock.defaultEntries, report.defaultEntries);
      });
    }

    test("without a loadable addon, register leaves the agent its own store, with one line on stderr", (t) => {
      const s = app(t);
      const env = { ...s.env, PI_SESSION_NATIVE_PATH: path.join(os.tmpdir(), "no-such-addon.node") };
      const r = run(node, ["--import", "pi-session-native/register", REGISTER_APP, s.project, s.agentDir, "main"], { cwd: s.project, env });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /^pi-session-native\/register: pi-session-native's addon did not load \(.*\); running pi on its own session store\n$/);
      assert.equal(JSON.parse(r.stdout.trim().split("\n").pop()).defaultStore, "stock");
    });

    test("a drifted agent class keeps its own store under register, with one line on stderr", (t) => {
      const s = app(t, agentCopy(t, { addMethod: "exportAsPdf" }));
      const r = run(node, ["--import", "pi-session-native/register", REGISTER_APP, s.project, s.agentDir, "bundle"], { cwd: s.project, env: s.env });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(
        r.stderr,
        "pi-session-native/register: pi 1.6.0's SessionManager has exportAsPdf, which pi-session-native lacks; running pi on its own session store\n",
      );
      assert.equal(JSON.parse(r.stdout.trim().split("\n").pop()).defaultStore, "stock");
    });
  });
}
