// Preloaded (`node --import bench/resume-record-preload.mjs <agent>/dist/bundle/cli.js ...`) into
// the stock pi CLI by bench/record-agent-calls.mjs: the bundled SessionManager class (the one the
// CLI uses, found as pi-native finds it) gets tracing statics, so every method the CLI and its
// interactive mode call on a session is appended, one JSON line each, to RECORD_AGENT_CALLS_LOG.
// The store stays the agent's own.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { traceStatics } from "./resume-trace.mjs";

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { loadBundledClass } = require(path.join(ROOT, "launcher", "pi-agent.js"));
const logFile = process.env.RECORD_AGENT_CALLS_LOG;
const agentDir = process.env.RECORD_AGENT_DIR ?? path.join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent");

if (logFile) {
  const AgentClass = await loadBundledClass(agentDir);
  traceStatics(AgentClass, (rec) => fs.appendFileSync(logFile, `${JSON.stringify({ ...rec, t: Math.round(performance.now()) })}\n`));
}
