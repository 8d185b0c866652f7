// The reference's list()/listAll() as they answer on a Node whose readline ends lines at "\n" only.
//
// The reference reads session files for its listings with node:readline. From Node 24 on (26
// too), readline also ends a line at U+2028 and U+2029, so the reference cuts a message record
// holding either character into pieces that do not parse, and its summary of that session
// miscounts messageCount and loses the text from firstMessage and allMessagesText (and the
// message's time from `modified`). Node 20 and 22 read such records whole, and ours does on every
// Node (records end at "\n"; README "What is different, on purpose").
//
// So a test that compares our listing with the reference's takes the reference's answer from
// referenceListing(): in this process where readline keeps those characters inside lines, else
// from the same reference module running under Node 22 (fetched by scripts/fetch-node.js) in a
// child process, over the same files, with this process's cwd, HOME and PI_CODING_AGENT_DIR. The
// child is started once per test process and kept while requests are pending. Bun's readline
// ends lines there too (it follows Node 26), so under Bun the answers come from Node 22 as well.
import { fork } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";
import { Readable } from "node:stream";

import { decode, encode } from "./older-reference-codec.mjs";
import { REFERENCE_PATH, ROOT } from "./target.mjs";

const require = createRequire(import.meta.url);
const CHILD = path.join(ROOT, "__test__", "helpers", "older-reference-child.mjs");

/** The Node major whose readline keeps U+2028/U+2029 inside a line (checked when the child starts). */
export const OLDER_NODE_MAJOR = "22";

/** Whether node:readline of `this` Node ends lines at U+2028/U+2029 (true from Node 24 on). */
export async function readlineEndsLinesAtSeparators() {
  const rl = readline.createInterface({ input: Readable.from(["a\u2028b\u2029c\n"]), crlfDelay: Infinity });
  const lines = [];
  for await (const line of rl) lines.push(line);
  return lines.length !== 1;
}

/** Whether this Node's readline ends lines at U+2028/U+2029. */
export const READLINE_SPLITS_AT_SEPARATORS = await readlineEndsLinesAtSeparators();

let child = null;
let ready = null;
let nextId = 1;
const pending = new Map();

/** Keeps the child from holding this process open while nothing is asked of it. */
function hold(on) {
  if (!child) return;
  // Bun's channel has no ref()/unref(); there the child's own ref() decides.
  const channel = typeof child.channel?.ref === "function" ? child.channel : null;
  if (on) {
    child.ref();
    channel?.ref();
  } else {
    child.unref();
    channel?.unref();
  }
}

function startChild() {
  const node = require(path.join(ROOT, "scripts", "fetch-node.js")).fetchNode(OLDER_NODE_MAJOR);
  child = fork(CHILD, [REFERENCE_PATH], { execPath: node, execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  ready = new Promise((resolve, reject) => {
    pending.set(0, { resolve, reject });
  });
  child.on("message", (msg) => {
    const waiting = pending.get(msg.id);
    if (!waiting) return;
    pending.delete(msg.id);
    if (pending.size === 0) hold(false);
    if ("threw" in msg) {
      const error = new Error(msg.threw.message);
      error.name = msg.threw.name;
      waiting.reject(error);
    } else {
      waiting.resolve(decode(msg.ok));
    }
  });
  child.on("exit", (code, signal) => {
    const error = new Error(`the reference's listing child (Node ${OLDER_NODE_MAJOR}) exited (${code ?? signal})`);
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
    child = null;
  });
  return ready.then((hello) => {
    if (hello.splits) throw new Error(`Node ${hello.version}'s readline ends lines at U+2028/U+2029 too: no older answer to compare with`);
    return hello;
  });
}

/**
 * `SessionManager[method](...args)` ("list" or "listAll") of the reference under Node 22: resolves
 * to its answer (SessionInfo objects with real Dates, keys in the reference's order) or rejects
 * with an Error of the reference's name and message.
 */
export async function olderReferenceListing(method, args) {
  if (!child) ready = startChild();
  await ready;
  const id = nextId++;
  const env = { HOME: process.env.HOME, PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR };
  const answer = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  hold(true);
  child.send({ id, method, args: encode(args), cwd: process.cwd(), env: encode(env) });
  return answer;
}

/**
 * The reference's `SessionManager[method](...args)` as it answers where readline ends lines at
 * "\n" only: `reference` itself on such a Node, else the reference under Node 22.
 */
export function referenceListing(reference, method, args) {
  if (READLINE_SPLITS_AT_SEPARATORS) return olderReferenceListing(method, args);
  return reference.SessionManager[method](...args);
}
