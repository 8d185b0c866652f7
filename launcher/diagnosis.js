"use strict";
// pi-native's own answers: `--native-status`, `--help` and `--version`.
//
// They must work where the agent itself cannot run, since that is when a user asks: on a Node
// older than the agent needs (Node 20 loads this package and its addon, but not the agent's
// bundle), without an agent, with an agent whose class could not be loaded. So the diagnosis is
// made in two steps: what can be known without loading the agent (where it is, its version, the
// Node it needs, whether our addon loads), then, only when that Node is here, the check of its
// class. Each answer names what is missing instead of throwing.
const agent = require("./pi-agent.js");
const where = require("./find-agent.js");
const own = require("../package.json");

/**
 * Which of pi-native's own flags `args` asks for, read before a `--` as the agent reads flags.
 * @param {string[]} args @returns {"status" | "version" | "help" | null}
 */
function ownFlag(args) {
  const end = args.indexOf("--");
  const head = end === -1 ? args : args.slice(0, end);
  if (head.includes("--native-status")) return "status";
  // The agent answers --version before --help when given both; so does pi-native.
  if (head.includes("--version") || head.includes("-v")) return "version";
  if (head.includes("--help") || head.includes("-h")) return "help";
  return null;
}

/**
 * What is known without loading the agent.
 * @typedef {object} Diagnosis
 * @property {{ dir: string, how: string } | null} found where the agent is, and how it was found
 * @property {string | null} missing why no agent was found
 * @property {{ dir: string, version: string, minNode: string } | null} info its version and the Node it needs
 * @property {boolean | null} nodeOk this Node is new enough for it (null: no agent)
 * @property {string | null} blocker why pi cannot start on this Node at all (null when it can)
 */

/** @param {string} [cwd] @returns {Diagnosis} */
function diagnose(cwd = process.cwd()) {
  /** @type {{ dir: string, how: string } | null} */
  let found = null;
  /** @type {string | null} */
  let missing = null;
  try {
    found = where.findAgent(cwd);
  } catch (error) {
    missing = String(/** @type {{ message?: unknown }} */ (error).message);
  }
  const info = found ? where.agentInfo(found.dir) : null;
  const nodeOk = info ? agent.versionAtLeast(process.versions.node, info.minNode) : null;
  let blocker = missing;
  if (info && !nodeOk) blocker = `pi ${info.version} needs Node >= ${info.minNode}; this is Node ${process.version}`;
  return { found, missing, info, nodeOk, blocker };
}

/** The addon this process loaded (or loads now), or why it does not load. */
function addonLine() {
  /** @type {string | null} */
  let reason = null;
  try {
    require("../index.js");
  } catch (error) {
    reason = String(/** @type {{ message?: unknown }} */ (error).message).split("\n")[0];
  }
  const file = Object.keys(require.cache).find((f) => f.endsWith(".node"));
  if (reason) return `addon:  did not load (${reason})`;
  return `addon:  ${file ?? "(loaded)"}`;
}

/** @param {Diagnosis} d */
function agentLine({ found, info }) {
  if (!found || !info) return "agent:  not found";
  return `agent:  ${info.dir} ${info.version || "(no version)"} (found by ${found.how})`;
}

/** @param {Diagnosis} d */
function nodeLine(d) {
  if (!d.info) return `node:   ${process.version}`;
  return `node:   ${process.version} (pi needs >= ${d.info.minNode})${d.nodeOk ? "" : ": too old for pi"}`;
}

/**
 * The `--native-status` report. `verdict` is the class check's ({ok, reason}) when the agent
 * loaded, `loadError` why it did not; both are absent when `d.blocker` kept it from being tried.
 * @param {Diagnosis} d
 * @param {{ verdict?: { ok: boolean, reason: string }, loadError?: string }} [checked]
 */
function statusText(d, { verdict, loadError } = {}) {
  const lines = [];
  const blocker = d.blocker ?? loadError;
  if (blocker || !verdict) {
    lines.push(`store:  none: pi cannot start here (${blocker})`);
  } else if (verdict.ok) {
    lines.push(`store:  native (${own.name} ${own.version} serves every SessionManager static of the agent)`);
  } else {
    lines.push(`store:  stock (${verdict.reason})`);
  }
  lines.push(agentLine(d));
  const info = d.info;
  if (info && !verdict) {
    const supported = agent.SUPPORTED_VERSIONS.test(info.version);
    const why = d.blocker ? "pi does not load on this Node" : "pi did not load";
    lines.push(
      `check:  version ${info.version || "(none)"} ${supported ? "is" : "is not"} one pi-native supports ` +
        `(${agent.SUPPORTED_VERSIONS.range}); its SessionManager was not checked (${why})`,
    );
  } else if (!info) {
    lines.push(`check:  not done: ${d.missing}`);
  }
  lines.push(nodeLine(d));
  lines.push(addonLine());
  return `${lines.join("\n")}\n`;
}

const OWN_HELP = `pi-native — your pi agent, on ${own.name}'s session store (${own.name} ${own.version})

Usage:
  pi-native [pi options] [messages...]   run pi with these arguments on this store; stdin, stdout,
                                         stderr and the exit code are pi's
  pi-native --native-status              which store pi would run on and why, or what is missing
                                         (exit 1 when pi cannot start here); starts nothing
  pi-native --help, -h                   this, then pi's own help
  pi-native --version, -v                pi's version (as pi prints it), then pi-native's

Environment:
  PI_NATIVE_AGENT=<dir>         the pi agent to run: its package directory or a file in it (else
                                \`pi\` on PATH, else node_modules above the current directory, else
                                one installed beside ${own.name})
  PI_NATIVE_STRICT=1            exit 1 instead of running pi on its own store when the check fails
  PI_NATIVE_ANY_VERSION=1       try an agent outside ${agent.SUPPORTED_VERSIONS.range} (the shape check still applies)
  PI_NATIVE_DISABLE=1           run pi on its own store, without a word
  PI_NATIVE_TRACE=<file>        append one JSON line per SessionManager static call, with the store
                                that served it
  PI_SESSION_RESTORE_MISSING=0  a session directory removed while pi runs is not made again (on by
                                default under pi-native)
`;

/**
 * `--help`: pi-native's own part, and what follows it (pi's help, or why it cannot be shown).
 * @param {Diagnosis} d
 */
function helpText({ found, info, blocker }) {
  const tail =
    blocker || !found || !info
      ? `\npi's own help is not shown: ${blocker}.\n`
      : `\nAgent: ${info.dir} ${info.version} (found by ${found.how}). pi's own help follows.\n\n`;
  return OWN_HELP + tail;
}

/**
 * `--version`: stdout (pi's version line as pi prints it, then ours), stderr, exit code.
 * @param {Diagnosis} d
 */
function versionAnswer({ info, missing, blocker }) {
  const ours = `pi-native ${own.version} (${own.name})\n`;
  if (!info) return { stdout: ours, stderr: `pi-native: ${missing}\n`, code: 1 };
  const stderr = blocker ? `pi-native: ${blocker}, so pi does not run here\n` : "";
  // The agent prints its package.json version, or 0.0.0 without one.
  return { stdout: `${info.version || "0.0.0"}\n${ours}`, stderr, code: 0 };
}

module.exports = { diagnose, helpText, ownFlag, statusText, versionAnswer };
