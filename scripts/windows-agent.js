// `pi-native` as a Windows user runs it: the agent installed globally by npm (`pi.cmd` in Node's
// folder), pi-session-native installed the same way (`pi-native.cmd`), both found by cmd.exe on
// PATH. Used by scripts/test-windows.js, under Wine 10 (Wine 8 cannot run npm's shims as written).
//
// The layout is windows-shim.js's global install, plus the agent:
//   <prefix>\pi.cmd, pi.ps1, pi                              (npm's cmd-shim, to the agent's bin)
//   <prefix>\node_modules\@earendil-works\pi-coding-agent\   (the pinned devDependency, copied,
//        with its dependency closure in its own node_modules\, as `npm install -g` leaves it)
// The agent runs a scripted provider (__test__/e2e/pi-cli-ext.ts, no network), in print mode.
//
// What is checked, each through the shims alone (no variable says where the agent is):
//   - `pi-native --native-status` finds `pi` on PATH through pi.cmd and runs on the native store;
//   - a turn with pi-native writes a session under the dir a Windows cwd encodes to (--C--...--);
//   - stock `pi -c` continues that session in the same file, and pi-native `-c` continues stock's;
//   - a prompt on stdin, a bad --mode (exit code 1 and its message), stdout and stderr are
//     the same through pi-native as through stock pi.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const assert = require("node:assert/strict");
const { install, writeShim, runBatch, cmdRunsTheRest, dropGotoTrick, winPath } = require("./windows-shim.js");

const root = path.resolve(__dirname, "..");
const AGENT_NAME = "@earendil-works/pi-coding-agent";
const EXT = path.join(root, "__test__", "e2e", "pi-cli-ext.ts");
const FAUX = `-e "${winPath(EXT)}" --provider pi-cli-faux --model faux-cli`;

/** The package dir of `name` as Node resolves it from `from` (a package dir), or null. */
function packageDir(name, from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", ...name.split("/"));
    if (fs.existsSync(path.join(candidate, "package.json"))) return fs.realpathSync(candidate);
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * The agent with every package it needs at run time, into `<prefix>\node_modules\<agent>`: its
 * dependencies (and theirs) flattened into its own node_modules\, as a global install is.
 */
function installAgent(prefix) {
  const source = packageDir(AGENT_NAME, root);
  const dest = path.join(prefix, "node_modules", ...AGENT_NAME.split("/"));
  fs.cpSync(source, dest, { recursive: true, dereference: true, filter: (f) => !f.startsWith(path.join(source, "node_modules")) });
  const seen = new Map();
  const queue = [source];
  while (queue.length) {
    const from = queue.shift();
    const manifest = JSON.parse(fs.readFileSync(path.join(from, "package.json"), "utf8"));
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      if (seen.has(name)) continue;
      const dir = packageDir(name, from);
      if (!dir) continue; // an optional dependency for another platform
      seen.set(name, dir);
      queue.push(dir);
    }
  }
  for (const [name, dir] of seen) {
    fs.cpSync(dir, path.join(dest, "node_modules", ...name.split("/")), { recursive: true, dereference: true });
  }
  const { bin } = JSON.parse(fs.readFileSync(path.join(dest, "package.json"), "utf8"));
  writeShim(path.join(dest, bin.pi), path.join(prefix, "pi"));
  return { dest, packages: seen.size };
}

/** The session files under `agentDir`'s sessions dir, relative to it. */
function sessionFiles(agentDir) {
  const dir = path.join(agentDir, "sessions");
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => f.replaceAll("\\", "/"))
    .sort();
}

function records(file) {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/**
 * The checks; throws on the first that fails. `wine(args, outFile, timeoutMs)` runs Wine 10 in
 * the runner's prefix. `node` is node.exe of Node for Windows (22 or later: the agent's floor).
 */
function checkAgent({ wine, node, dll, base, log = (s) => process.stdout.write(s) }) {
  const prefix = install(base, node, dll);
  const agent = installAgent(prefix);
  log(`  the agent and ${agent.packages} packages it needs, into ${path.relative(base, agent.dest)}\n`);
  const work = path.join(base, "runs");
  fs.mkdirSync(work, { recursive: true });
  if (!cmdRunsTheRest(wine, work, prefix)) {
    // Wine 8: see windows-shim.js. The checks are of pi-native, so both shims lose the clause alike.
    for (const name of ["pi.cmd", "pi-native.cmd"]) dropGotoTrick(path.join(prefix, name));
    log("  this cmd ends a batch at a failed goto: npm's shims run without that clause\n");
  } else {
    log("  npm's shims run as npm wrote them\n");
  }
  const project = path.join(base, "my project");
  fs.mkdirSync(project, { recursive: true });
  const agentDir = path.join(base, "agent home", "agent");
  const trace = path.join(base, "trace.jsonl");
  const vars = { PI_CODING_AGENT_DIR: winPath(agentDir), PI_OFFLINE: "1", PI_NATIVE_TRACE: winPath(trace) };
  const detail = (r) => `${r.line}: exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
  // Wine's own warnings on stderr (XDG_RUNTIME_DIR) are not the program's.
  const clean = (text) => (text ?? "").replace(/^error: XDG_RUNTIME_DIR is invalid.*\r?\n/gm, "");
  const run = (name, line) => {
    const r = runBatch(wine, work, name, prefix, line, vars, project);
    r.stderr = clean(r.stderr);
    log(`  ${line}: exit ${r.status}\n`);
    return r;
  };

  const status = run("native-status", "pi-native --native-status");
  assert.equal(status.status, 0, detail(status));
  assert.match(status.stdout, /^store: {2}native /m, detail(status));
  assert.match(status.stdout, /found by `pi` on PATH \(.*pi\.cmd -> .*cli\.js\)/, detail(status));

  const first = run("turn-native", `pi-native ${FAUX} -p "hello from windows"`);
  assert.equal(first.status, 0, detail(first));
  assert.equal(first.stdout.trim(), "You said: hello from windows", detail(first));
  const files = sessionFiles(agentDir);
  assert.equal(files.length, 1, `one session after the first turn: ${files.join(", ")}`);
  // The session dir is the Windows cwd encoded as the agent encodes it on Windows.
  const encoded = `--${winPath(project).replace(/^[/\\]+/, "").replace(/[/\\:]/g, "-")}--`;
  assert.equal(files[0].split("/")[0], encoded, `the session dir of ${winPath(project)}`);
  const file = path.join(agentDir, "sessions", files[0]);
  const header = records(file)[0];
  assert.equal(header.type, "session");
  assert.equal(header.cwd, winPath(project));
  const traced = records(trace);
  assert.ok(traced.some((e) => e.event === "static" && e.store === "native"), `pi-native's statics ran on the native store: ${JSON.stringify(traced)}`);

  const stock = run("continue-stock", `pi ${FAUX} -c -p "second, stock"`);
  assert.equal(stock.status, 0, detail(stock));
  assert.equal(stock.stdout.trim(), "You said: second, stock", detail(stock));
  const native = run("continue-native", `pi-native ${FAUX} -c -p "third, native"`);
  assert.equal(native.status, 0, detail(native));
  assert.equal(native.stdout.trim(), "You said: third, native", detail(native));
  assert.deepEqual(sessionFiles(agentDir), files, "both continued the one session file");
  const after = records(file);
  const texts = after
    .filter((r) => r.type === "message" && r.message.role === "user")
    .map((r) => (typeof r.message.content === "string" ? r.message.content : r.message.content.map((b) => b.text).join("")));
  assert.deepEqual(texts, ["hello from windows", "second, stock", "third, native"]);
  assert.equal(after[0].id, header.id, "the header stayed");

  // Stdin, stdout, stderr and the exit code pass through as the stock shim passes them.
  fs.writeFileSync(path.join(work, "prompt.txt"), "piped prompt\r\n");
  for (const [name, args] of [
    ["stdin", `${FAUX} -p < "${winPath(path.join(work, "prompt.txt"))}"`],
    ["bad-mode", `${FAUX} --mode nonsense -p "x"`],
  ]) {
    const theirs = run(`${name}-stock`, `pi ${args}`);
    const ours = run(`${name}-native`, `pi-native ${args}`);
    assert.equal(ours.status, theirs.status, `${name}: exit codes\n${detail(theirs)}\n${detail(ours)}`);
    assert.equal(ours.stdout, theirs.stdout, `${name}: stdout\n${detail(theirs)}\n${detail(ours)}`);
    assert.equal(ours.stderr, theirs.stderr, `${name}: stderr\n${detail(theirs)}\n${detail(ours)}`);
    if (name === "stdin") assert.match(ours.stdout, /piped prompt/, detail(ours));
    if (name === "bad-mode") {
      assert.equal(ours.status, 1, detail(ours));
      assert.match(ours.stderr, /Invalid mode "nonsense"/, detail(ours));
    }
  }
  return { prefix };
}

module.exports = { checkAgent };
