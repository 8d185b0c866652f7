// What the tests that drive the real pi agent (agent-e2e, pi-cli, pi-native, pi-tui, and the
// installed bin of pack-install) share: which Node runs the agent, and when they skip.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { ROOT } from "./target.mjs";

const require = createRequire(import.meta.url);

// Those tests spawn the agent with Node 22, 24 and 26 themselves, whatever Node runs the suite, so
// scripts/test-node-versions.js leaves them out of its reruns of the suite under those Nodes (they
// would only repeat the same agent runs).

/** The oldest Node the agent runs on (`engines.node` of @earendil-works/pi-coding-agent 1.6.0). */
export const AGENT_MIN_NODE = "22.19.0";

/** The Node majors the agent is driven on: the maintenance LTS, the active LTS and the current release. */
export const AGENT_MAJORS = ["22", "24", "26"];

/** `version` ("v22.23.5" or "22.23.5") is at least `min` ("22.19.0"), comparing major.minor.patch. */
export function versionAtLeast(version, min) {
  const a = version.replace(/^v/, "").split(".").map(Number);
  const b = min.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}

/**
 * A Node binary of this major that can run the agent: this Node when it is of that major, else one
 * fetched into .cache/ by scripts/fetch-node.js. `{ major, node, version }` ("v22.23.5"), or
 * `{ major, skip }` saying why there is none.
 */
export function agentNode(major) {
  major = String(major);
  let node = process.execPath;
  if (process.versions.node.split(".")[0] !== major) {
    try {
      node = require(path.join(ROOT, "scripts", "fetch-node.js")).fetchNode(major);
    } catch (error) {
      return { major, skip: `no Node ${major} could be fetched (${error.message.split("\n")[0]})` };
    }
  }
  const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
  if (!versionAtLeast(version, AGENT_MIN_NODE)) {
    return { major, skip: `the agent needs Node >= ${AGENT_MIN_NODE}; Node ${major} is ${version}` };
  }
  return { major, node, version };
}

/**
 * The Nodes to drive the agent with when a test needs no particular version: this Node alone when it
 * can run the agent, else agentNode() of each of `majors`.
 */
export function agentNodes(majors = AGENT_MAJORS) {
  if (versionAtLeast(process.version, AGENT_MIN_NODE)) {
    return [{ major: process.versions.node.split(".")[0], node: process.execPath, version: process.version }];
  }
  return majors.map(agentNode);
}
