// Drives the real bundled pi CLI for __test__/pi-cli.test.mjs: the same scripted print-mode and
// RPC scenarios, run once by the stock agent (its own dist/bundle/cli.js) and once through
// bin/pi-native.js, each in an isolated tree, against the scripted provider of pi-cli-ext.ts.
//
// A Variant is one such isolated tree: its own HOME, PI_CODING_AGENT_DIR and project dirs, the
// network switched off (PI_OFFLINE, PI_SKIP_VERSION_CHECK, PI_TELEMETRY=0, --offline); any
// attempt at it, and the files of this package each process loaded, are recorded by
// pi-cli-preload.mjs. A run returns what a user sees (exit code, stdout, stderr) and the
// PI_NATIVE_TRACE lines it appended.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { defaultSessionDirFor } from "../helpers/fixtures.mjs";
import { ROOT } from "../helpers/target.mjs";
import { Normalizer } from "../parity/normalize.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export { ROOT };
export const AGENT_PACKAGE = path.join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent");
export const STOCK_CLI = path.join(AGENT_PACKAGE, "dist", "bundle", "cli.js");
export const PI_NATIVE = path.join(ROOT, "bin", "pi-native.js");
const EXTENSION = path.join(here, "pi-cli-ext.ts");
const PRELOAD = path.join(here, "pi-cli-preload.mjs");
export const PROVIDER_ARGS = ["-e", EXTENSION, "--provider", "pi-cli-faux", "--model", "faux-cli", "--offline"];
const RUN_TIMEOUT_MS = 60_000;

export class Variant {
  /**
   * @param {{ base: string, node: string, major: string, impl: "stock" | "native" }} options
   * The tree is `<base>/<major><s|n>`: names of equal length, so that paths (which reach the
   * model's context, and so its token counts) have the same length in both variants.
   */
  constructor({ base, node, major, impl }) {
    this.node = node;
    this.major = major;
    this.impl = impl;
    this.name = `${major}${impl === "stock" ? "s" : "n"}`;
    this.root = path.join(base, this.name);
    this.home = path.join(this.root, "home");
    this.agentDir = path.join(this.root, "agent");
    this.project = path.join(this.root, "project");
    // Outside the tree, so they are not among the files the runs wrote.
    this.traceFile = path.join(base, "logs", `${this.name}.trace.jsonl`);
    this.netLog = path.join(base, "logs", `${this.name}.net.jsonl`);
    this.loadedLog = path.join(base, "logs", `${this.name}.loaded.jsonl`);
    for (const dir of [this.home, this.agentDir, this.project, path.dirname(this.traceFile)]) {
      fs.mkdirSync(dir, { recursive: true });
    }
    // Manual compaction of a short conversation needs a small kept tail; nothing compacts or
    // retries on its own.
    fs.writeFileSync(
      path.join(this.agentDir, "settings.json"),
      `${JSON.stringify({ compaction: { enabled: false, keepRecentTokens: 10 }, retry: { enabled: false } }, null, 2)}\n`,
    );
  }

  env() {
    const env = {
      PATH: process.env.PATH,
      HOME: this.home,
      PI_CODING_AGENT_DIR: this.agentDir,
      PI_OFFLINE: "1",
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
      PI_CLI_NET_LOG: this.netLog,
      PI_CLI_LOADED_LOG: this.loadedLog,
      NODE_OPTIONS: `--import=${PRELOAD}`,
      TERM: "dumb",
      LANG: "C.UTF-8",
      TZ: "UTC",
    };
    // Stock runs get a trace file too: nothing may write to it, as nothing of ours runs there.
    env.PI_NATIVE_TRACE = this.traceFile;
    if (this.impl === "native") {
      env.PI_NATIVE_AGENT = AGENT_PACKAGE;
      // Drift or an unsupported agent fails the run instead of quietly running the stock store.
      env.PI_NATIVE_STRICT = "1";
    }
    return env;
  }

  /** The command line for pi with these arguments, for this variant's implementation. */
  argv(args) {
    return [this.impl === "native" ? PI_NATIVE : STOCK_CLI, ...args];
  }

  traceLength() {
    return fs.existsSync(this.traceFile) ? fs.statSync(this.traceFile).size : 0;
  }

  /** Trace lines appended since byte offset `from`. */
  traceSince(from) {
    if (!fs.existsSync(this.traceFile)) return [];
    const text = fs.readFileSync(this.traceFile).subarray(from).toString("utf8");
    return text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  }

  /** Spawns pi; the caller talks to the child. */
  spawn(args, { cwd = this.project } = {}) {
    return spawn(this.node, this.argv(args), { cwd, env: this.env(), stdio: ["pipe", "pipe", "pipe"] });
  }

  /** Runs pi to completion, stdin given `input` then closed; resolves to {code, signal, stdout, stderr, trace}. */
  run(args, { cwd = this.project, input = "" } = {}) {
    const from = this.traceLength();
    return new Promise((resolve, reject) => {
      const child = this.spawn(args, { cwd });
      child.stdin.on("error", () => {}); // pi may exit before reading it all
      child.stdin.end(input);
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
      child.on("error", reject);
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr, trace: this.traceSince(from) });
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Print mode

/** The sessions of a session dir, oldest first: [{file, id}] (names start with the creation time). */
export function sessionsIn(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => {
      const file = path.join(dir, f);
      const header = JSON.parse(fs.readFileSync(file, "utf8").split("\n")[0]);
      return { file, id: header.id };
    });
}

/**
 * The print-mode scenarios, in order; later ones use the session the first one created.
 * Placeholders in the arguments are filled per variant: {ROOT} the variant's tree, {FIRST_FILE}
 * and {FIRST_ID} the first session's file and id, {FIRST_PREFIX} a unique prefix of that id.
 * `cwd` is relative to the variant's tree (default: project); `input` goes to stdin (default:
 * none, stdin closed). `code` (default 0), `stdout` and `stderr` (a string: equal; a RegExp:
 * matching; stderr unset: empty) are what the stock agent does.
 */
export const PRINT_STEPS = [
  { name: "a new session (-p)", args: ["-p", "hello"], stdout: "You said: hello\n" },
  { name: "continue the most recent session (-c -p)", args: ["-c", "-p", "and again"], stdout: "You said: and again\n" },
  {
    name: "a bash tool call, continuing",
    args: ["-c", "-p", "run: printf 'tool-output\\n'"],
    stdout: "Tool said: tool-output\n",
  },
  {
    name: "open a session by id prefix (--session <prefix>)",
    args: ["--session", "{FIRST_PREFIX}", "-p", "by prefix"],
    stdout: "You said: by prefix\n",
  },
  { name: "open a session by full id (--session <id>)", args: ["--session", "{FIRST_ID}", "-p", "by id"], stdout: "You said: by id\n" },
  { name: "open a session by file (--session <file>)", args: ["--session", "{FIRST_FILE}", "-p", "by file"], stdout: "You said: by file\n" },
  { name: "fork a session file (--fork <file>)", args: ["--fork", "{FIRST_FILE}", "-p", "forked by file"], stdout: "You said: forked by file\n" },
  {
    name: "fork a session by id prefix (--fork <prefix>)",
    args: ["--fork", "{FIRST_PREFIX}", "-p", "forked by id"],
    stdout: "You said: forked by id\n",
  },
  { name: "a named session (--name)", args: ["--name", "Named run", "-p", "named"], stdout: "You said: named\n" },
  {
    name: "a new session with a chosen id (--session-id)",
    args: ["--session-id", "cli-session-1", "-p", "with an id"],
    stdout: "You said: with an id\n",
    stderr: /No project session found with id 'cli-session-1'; creating a new session/,
  },
  {
    name: "the existing session with that id (--session-id)",
    args: ["--session-id", "cli-session-1", "-p", "same id again"],
    stdout: "You said: same id again\n",
  },
  {
    name: "a fork with a chosen id (--fork --session-id)",
    args: ["--fork", "{FIRST_ID}", "--session-id", "cli-fork-1", "-p", "fork with id"],
    stdout: "You said: fork with id\n",
  },
  {
    name: "a fork onto an id already taken",
    args: ["--fork", "{FIRST_ID}", "--session-id", "cli-fork-1", "-p", "taken"],
    code: 1,
    stderr: /Session already exists with id 'cli-fork-1'/,
  },
  { name: "an ephemeral session (--no-session)", args: ["--no-session", "-p", "ephemeral"], stdout: "You said: ephemeral\n" },
  {
    name: "an absolute session dir (--session-dir)",
    args: ["--session-dir", "{ROOT}/sessions-abs", "-p", "absolute dir"],
    stdout: "You said: absolute dir\n",
  },
  {
    name: "continue in the absolute session dir, printing the session file from a tool",
    args: ["--session-dir", "{ROOT}/sessions-abs", "-c", "-p", "run: printf '%s\\n' \"$PI_SESSION_FILE\""],
    stdout: /^Tool said: \/.*\/sessions-abs\/[^/]+\.jsonl\n$/,
  },
  {
    name: "a relative session dir (--session-dir ./custom)",
    args: ["--session-dir", "./custom", "-p", "relative dir"],
    stdout: "You said: relative dir\n",
  },
  {
    name: "continue in the relative session dir, printing the session file from a tool",
    args: ["--session-dir", "./custom", "-c", "-p", "run: printf '%s\\n' \"$PI_SESSION_FILE\""],
    stdout: /^Tool said: \/.*\/project\/custom\/[^/]+\.jsonl\n$/,
  },
  {
    name: "a fork into the relative session dir, printing the session file from a tool",
    args: ["--session-dir", "./custom", "--fork", "{FIRST_FILE}", "-p", "run: printf '%s\\n' \"$PI_SESSION_FILE\""],
    stdout: /^Tool said: \/.*\/project\/custom\/[^/]+\.jsonl\n$/,
  },
  {
    name: "a chosen id in the relative session dir (--session-dir ./custom --session-id)",
    args: ["--session-dir", "./custom", "--session-id", "rel-id-1", "-p", "relative id"],
    stdout: "You said: relative id\n",
    stderr: /No project session found with id 'rel-id-1'/,
  },
  {
    name: "the chosen id found again in the relative session dir",
    args: ["--session-dir", "./custom", "--session-id", "rel-id-1", "-p", "run: printf '%s\\n' \"$PI_SESSION_FILE\""],
    stdout: /^Tool said: \/.*\/project\/custom\/[^/]+_rel-id-1\.jsonl\n$/,
  },
  { name: "JSON mode, a new session (--mode json -p)", args: ["--mode", "json", "-p", "json mode"], stdout: /"type":"agent_settled"/ },
  { name: "JSON mode, continuing (--mode json -c -p)", args: ["--mode", "json", "-c", "-p", "json again"], stdout: /You said: json again/ },
  {
    name: "continue where there is no session yet",
    args: ["-c", "-p", "nothing to continue"],
    cwd: "other-project",
    stdout: "You said: nothing to continue\n",
  },
  {
    name: "a session of another project, not forked (stdin closed at the question)",
    args: ["--session", "{FIRST_ID}", "-p", "from elsewhere"],
    cwd: "other-project",
    stdout: "",
    stderr: /^Session found in different project: .*\/project\nFork this session into current directory\? \[y\/N\] /,
  },
  {
    name: "a session of another project, forked (y on stdin)",
    args: ["--session", "{FIRST_PREFIX}", "-p", "from elsewhere"],
    cwd: "other-project",
    input: "y\n",
    stdout: "",
    stderr: /^Session found in different project: .*\/project\nFork this session into current directory\? \[y\/N\] /,
  },
  {
    name: "a session that does not exist (--session <no match>)",
    args: ["--session", "nomatch-xyz", "-p", "x"],
    code: 1,
    stderr: /No session found matching 'nomatch-xyz'/,
  },
  {
    name: "a fork of a session that does not exist",
    args: ["--fork", "nomatch-xyz", "-p", "x"],
    code: 1,
    stderr: /No session found matching 'nomatch-xyz'/,
  },
  { name: "a session file that does not exist yet", args: ["--session", "{ROOT}/missing.jsonl", "-p", "x"], stdout: "You said: x\n" },
  { name: "an invalid session id", args: ["--session-id", "-bad-", "-p", "x"], code: 1, stderr: /Error: Session id must/ },
  {
    name: "export a session to HTML (--export)",
    args: ["--export", "{FIRST_FILE}", "{ROOT}/export.html"],
    stdout: /^Exported to: .*export\.html\n$/,
  },
];

function fill(args, values) {
  return args.map((a) => a.replace(/\{([A-Z_]+)\}/g, (m, key) => values[key] ?? m));
}

/**
 * Runs every print step in order. Resolves to one record per step: its name, the arguments as
 * written in PRINT_STEPS (the same in both variants), and the run's result.
 */
export async function runPrintScenarios(variant) {
  const values = { ROOT: variant.root };
  fs.mkdirSync(path.join(variant.root, "other-project"), { recursive: true });
  const records = [];
  for (const step of PRINT_STEPS) {
    const cwd = step.cwd ? path.join(variant.root, step.cwd) : variant.project;
    const result = await variant.run([...PROVIDER_ARGS, ...fill(step.args, values)], { cwd, input: step.input });
    records.push({ name: step.name, args: step.args, ...result });
    if (!values.FIRST_FILE) {
      const [first] = sessionsIn(defaultSessionDirFor(variant.agentDir, variant.project));
      if (first) Object.assign(values, { FIRST_FILE: first.file, FIRST_ID: first.id, FIRST_PREFIX: first.id.slice(0, 23) });
    }
  }
  return records;
}

// ---------------------------------------------------------------------------------------------
// RPC mode

/** A stdout line as a record; a line that is not JSON is kept as such (and fails the comparison). */
function parseRecord(line) {
  try {
    return JSON.parse(line);
  } catch {
    return { type: "<not json>", line };
  }
}

/**
 * A pi child in RPC mode. Records are split on LF only (a JSON string may hold U+2028, which
 * readline would split on); every record read is kept in `records`, in order.
 */
export class RpcSession {
  constructor(variant, args, { cwd }) {
    this.traceFrom = variant.traceLength();
    this.variant = variant;
    this.child = variant.spawn(["--mode", "rpc", ...args], { cwd });
    this.records = [];
    this.waiters = [];
    this.stderr = "";
    this.nextId = 1;
    let pending = "";
    this.child.stdout.setEncoding("utf8").on("data", (chunk) => {
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl).replace(/\r$/, "");
        pending = pending.slice(nl + 1);
        if (line) this.#push(parseRecord(line));
      }
    });
    this.child.stderr.setEncoding("utf8").on("data", (d) => (this.stderr += d));
    // A child that died early: the waiters are rejected on close; writes to it must not throw.
    this.child.on("error", (error) => (this.stderr += `\nspawn error: ${error.message}`));
    this.child.stdin.on("error", () => {});
    this.exited = new Promise((resolve) => this.child.on("close", (code, signal) => resolve({ code, signal })));
    this.exitedWith = null;
    this.exited.then(({ code, signal }) => {
      this.exitedWith = code ?? signal;
      for (const w of this.waiters.splice(0)) w.reject(new Error(`pi rpc exited (${code ?? signal}) while waiting.\n${this.stderr}`));
    });
  }

  #push(record) {
    this.records.push(record);
    const index = this.records.length - 1;
    for (const w of [...this.waiters]) {
      if (index >= w.from && w.match(record)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(record);
      }
    }
  }

  /** The first record from index `from` on that matches, now or when it arrives. */
  waitFor(match, from = 0, what = "a record") {
    const found = this.records.slice(from).find(match);
    if (found) return Promise.resolve(found);
    if (this.exitedWith !== null) return Promise.reject(new Error(`pi rpc exited (${this.exitedWith}) before ${what}.\n${this.stderr}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`pi rpc: timed out waiting for ${what}.\n${this.stderr}`)), RUN_TIMEOUT_MS);
      const done = (f) => (v) => {
        clearTimeout(timer);
        f(v);
      };
      this.waiters.push({ from, match, resolve: done(resolve), reject: done(reject) });
    });
  }

  /** Sends a command; resolves to its response record. */
  async send(command) {
    const id = `req-${this.nextId++}`;
    const from = this.records.length;
    this.child.stdin.write(`${JSON.stringify({ id, ...command })}\n`);
    return this.waitFor((r) => r.type === "response" && r.id === id, from, `the response to ${command.type}`);
  }

  /** Sends a prompt and waits until the agent has settled; resolves to the prompt's response. */
  async prompt(message) {
    const from = this.records.length;
    const response = await this.send({ type: "prompt", message });
    if (response.success && response.data?.disposition === "started") {
      await this.waitFor((r) => r.type === "agent_settled", from, `agent_settled after "${message}"`);
    }
    return response;
  }

  /** Closes stdin (an orderly shutdown) and waits for the exit. */
  async close() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), RUN_TIMEOUT_MS);
    const exit = await this.exited;
    clearTimeout(timer);
    return { ...exit, stderr: this.stderr, trace: this.variant.traceSince(this.traceFrom) };
  }
}

/** The persistent conversation: every session command of the RPC surface, on session files. */
async function persistentConversation({ send, prompt, variant }) {
  const first = await send({ type: "get_state" });
  await prompt("hello rpc");
  await send({ type: "set_session_name", name: "RPC session" });
  await prompt("run: printf 'rpc-tool\\n'");
  await send({ type: "bash", command: "printf 'user-bash\\n'" });
  await prompt("after the user bash");
  await send({ type: "compact", customInstructions: "Keep it short." });
  await prompt("after compaction");
  await send({ type: "get_messages" });
  await send({ type: "get_tree" });
  await send({ type: "get_entries" });
  await send({ type: "get_session_stats" });
  await send({ type: "get_last_assistant_text" });
  const forkable = await send({ type: "get_fork_messages" });
  const target = forkable.data?.messages?.[1]?.entryId ?? forkable.data?.messages?.[0]?.entryId;
  await send({ type: "fork", entryId: target });
  await prompt("on the fork");
  await send({ type: "get_state" });
  await send({ type: "clone" });
  await prompt("on the clone");
  await send({ type: "new_session" });
  await prompt("in a new session");
  await send({ type: "set_session_name", name: "Second RPC session" });
  await send({ type: "switch_session", sessionPath: first.data?.sessionFile });
  await send({ type: "get_state" });
  await send({ type: "get_messages" });
  await prompt("back in the first session");
  await send({ type: "export_html", outputPath: path.join(variant.root, "rpc-export.html") });
  await send({ type: "get_entries", since: "nomatch0" });
}

/** The same kind of work on an in-memory session (--no-session): nothing may reach the disk. */
async function inMemoryConversation({ send, prompt }) {
  await send({ type: "get_state" });
  await prompt("hello memory");
  await send({ type: "set_session_name", name: "Memory session" });
  await prompt("run: printf 'memory-tool\\n'");
  await send({ type: "compact" });
  await prompt("after compaction in memory");
  const forkable = await send({ type: "get_fork_messages" });
  await send({ type: "fork", entryId: forkable.data?.messages?.[0]?.entryId });
  await prompt("on the in-memory fork");
  await send({ type: "clone" });
  await send({ type: "get_tree" });
  await send({ type: "get_entries" });
  await send({ type: "new_session" });
  await prompt("in a new in-memory session");
  await send({ type: "get_state" });
  await send({ type: "get_messages" });
}

/** Sessions in a relative --session-dir: the paths RPC reports for new, forked and switched sessions. */
async function relativeDirConversation({ send, prompt }) {
  const first = await send({ type: "get_state" });
  await prompt("hello relative");
  await send({ type: "new_session" });
  await send({ type: "get_state" });
  await prompt("second relative session");
  await send({ type: "switch_session", sessionPath: first.data?.sessionFile });
  const forkable = await send({ type: "get_fork_messages" });
  await send({ type: "fork", entryId: forkable.data?.messages?.[0]?.entryId });
  await send({ type: "get_state" });
  await prompt("run: printf '%s\\n' \"$PI_SESSION_FILE\"");
  await send({ type: "get_session_stats" });
}

/**
 * The RPC conversations, each one pi process: `args` after `--mode rpc`, `cwd` under the
 * variant's tree, `drive` the commands sent.
 */
export const RPC_CONVERSATIONS = [
  { name: "persistent", args: [], cwd: "rpc-project", drive: persistentConversation },
  { name: "in memory (--no-session)", args: ["--no-session"], cwd: "rpc-memory", drive: inMemoryConversation },
  { name: "relative session dir", args: ["--session-dir", "./sessions"], cwd: "rpc-relative", drive: relativeDirConversation },
];

/**
 * Runs the RPC conversations in order. Resolves to one result per conversation: {name, steps,
 * records, exit}; `steps` pairs each command (as sent, with per-variant values) with its
 * response, `records` is everything pi wrote on stdout, `exit` its exit code, stderr and trace.
 */
export async function runRpcScenarios(variant) {
  const results = [];
  for (const conversation of RPC_CONVERSATIONS) {
    const cwd = path.join(variant.root, conversation.cwd);
    fs.mkdirSync(cwd, { recursive: true });
    const rpc = new RpcSession(variant, [...PROVIDER_ARGS, ...conversation.args], { cwd });
    const steps = [];
    const send = async (command) => {
      const response = await rpc.send(command);
      steps.push({ command, response });
      return response;
    };
    const prompt = async (message) => {
      const response = await rpc.prompt(message);
      steps.push({ command: { type: "prompt", message }, response });
      return response;
    };
    try {
      await conversation.drive({ send, prompt, variant });
    } catch (error) {
      await rpc.close();
      throw new Error(`RPC conversation "${conversation.name}" after ${steps.length} steps: ${error.message}`);
    }
    results.push({ name: conversation.name, steps, records: rpc.records, exit: await rpc.close() });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Comparison

/** Turn and tool run times are clock-derived. */
export function maskDurations(text) {
  return text
    .replace(/"durationMs":\d+/g, '"durationMs":"<DURATION>"')
    .replace(/"wall_time_seconds":[\d.]+/g, '"wall_time_seconds":"<DURATION>"');
}

/** The HTML export with its embedded session (base64 JSON) decoded, for normalizing. */
export function decodeExport(html) {
  const re = /(<script id="session-data" type="application\/json">)([A-Za-z0-9+/=]*)(<\/script>)/;
  const m = re.exec(html);
  if (!m) return { html, session: null };
  return { html: html.replace(re, "$1<SESSION-DATA>$3"), session: Buffer.from(m[2], "base64").toString("utf8") };
}

/** Every file under dir (relative paths, sorted: session names sort by creation time). */
export function filesUnder(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * A variant's runs and files, normalized by one Normalizer fed in a fixed order (print records,
 * RPC steps and records, the file names sorted, then the files' contents), so ids and uuids are
 * numbered alike in both variants and cross references (a fork's parent, a switch target) are
 * still compared.
 */
export function normalizeVariant(variant, { print, rpc }) {
  const norm = new Normalizer({ roots: [variant.root] });
  const text = (t) => maskDurations(norm.text(t));
  const value = (v) => JSON.parse(maskDurations(JSON.stringify(norm.value(v ?? null))));
  const out = {};
  out.print = print.map((r) => ({
    name: r.name,
    args: r.args,
    code: r.code,
    signal: r.signal,
    stdout: text(r.stdout),
    stderr: text(r.stderr),
  }));
  out.rpc = rpc.map((c) => ({
    name: c.name,
    steps: c.steps.map((s) => value(s)),
    records: c.records.map((r) => value(r)),
    exit: { code: c.exit.code, signal: c.exit.signal, stderr: text(c.exit.stderr) },
  }));
  out.files = {};
  // Names first: session uuids are numbered in file-creation order, whatever a file mentions.
  const rels = filesUnder(variant.root);
  const names = rels.map((rel) => norm.string(rel));
  for (const [i, rel] of rels.entries()) {
    const raw = fs.readFileSync(path.join(variant.root, rel), "utf8");
    const name = names[i];
    if (rel.endsWith(".html")) {
      const { html, session } = decodeExport(raw);
      out.files[name] = { html: text(html), session: session === null ? null : text(session) };
    } else {
      out.files[name] = text(raw);
    }
  }
  return out;
}

/** The JSON lines of a log file, [] when there is none. */
export function readLog(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** The first differing lines of two texts, each cut to a window around its first difference. */
export function lineDiff(a, b, { max = 6, labels = ["stock", "native"], width = 600 } = {}) {
  const la = String(a).split("\n");
  const lb = String(b).split("\n");
  const out = [];
  for (let i = 0; i < Math.max(la.length, lb.length) && out.length < max; i++) {
    const x = la[i];
    const y = lb[i];
    if (x === y) continue;
    let at = 0;
    while (x !== undefined && y !== undefined && at < x.length && x[at] === y[at]) at++;
    const from = Math.max(0, at - width / 3);
    const cut = (line) => (line === undefined ? "(none)" : `${from > 0 ? "…" : ""}${line.slice(from, from + width)}`);
    out.push(`line ${i + 1}${from > 0 ? `, from column ${from + 1}` : ""}:\n  ${labels[0]}: ${cut(x)}\n  ${labels[1]}: ${cut(y)}`);
  }
  return out.join("\n");
}
