// `node --import pi-session-native/register app.mjs`: the pi agent's SessionManager, in a program
// that never names this package, runs on pi-session-native's store.
//
// A synchronous in-thread module hook (module.registerHooks, Node >= 22.15) watches the agent's
// modules load. When the one that defines the SessionManager class has been evaluated — the
// unbundled `dist/core/session-manager.js`, or the chunk of the bundle (`dist/bundle/…`) that holds
// it — its statics are rebound to ours (launcher/pi-agent.js), after the same version and shape checks
// as pi-native. Every entry of the agent is covered: `import … from "@earendil-works/pi-coding-agent"`,
// the bundled SDK entry, the bundled CLI; so are createAgentSession's default store,
// createAgentSessionRuntime and runtime.newSession(), which all go through those statics.
// No other module's source is read or changed.
// A namespace import: Node before 22.15 has no registerHooks, and a named import of it would not link.
import * as nodeModule from "node:module";
import { fileURLToPath } from "node:url";

const { createRequire, registerHooks } = nodeModule;
const require = createRequire(import.meta.url);
const agent = require("./launcher/pi-agent.js");
const where = require("./launcher/find-agent.js");

const INSTALL = Symbol.for("pi-session-native.register.install");
const AGENT_DIST = "/@earendil-works/pi-coding-agent/dist/";

/** Called from the end of the agent module that defines the class (see `load` below). */
globalThis[INSTALL] = (AgentClass, moduleUrl) => {
  try {
    const dir = where.packageDirAbove(fileURLToPath(moduleUrl));
    if (dir) agent.install(AgentClass, where.agentInfo(dir), "pi-session-native/register");
  } catch (error) {
    // Only a refusal the user asked for (strict mode) may stop the agent's module from loading.
    if (error?.code === "NATIVE_STORE_REFUSED") throw error;
    process.stderr.write(`pi-session-native/register: ${error?.message ?? error}; the pi agent keeps its own session store\n`);
  }
};

/**
 * What is appended to that module: it imports its own namespace (a module may import itself; the
 * binding is live once its body has run) and hands the exported class over, whatever the class's
 * local name in the module is.
 */
function installCall(url, exportName) {
  return (
    `\nimport * as __piSessionNativeSelf from ${JSON.stringify(url)};\n` +
    `globalThis[Symbol.for("pi-session-native.register.install")]?.(__piSessionNativeSelf[${JSON.stringify(exportName)}], import.meta.url);\n`
  );
}

/** Per bundle directory, the chunk that defines the class (named by the bundle's SDK entry). */
const classChunks = new Map();

/** The name under which this agent module exports the class it defines, or null. */
function classExport(url) {
  if (url.endsWith("/dist/core/session-manager.js")) return "SessionManager";
  const at = url.lastIndexOf("/dist/bundle/chunks/");
  if (at < 0) return null;
  const bundle = url.slice(0, at + "/dist/bundle".length);
  if (!classChunks.has(bundle)) {
    const dir = where.packageDirAbove(fileURLToPath(bundle));
    let chunk = null;
    try {
      chunk = dir ? agent.bundleClassModule(dir) : null;
    } catch {
      // a bundle without its SDK entry: nothing to install into
    }
    classChunks.set(bundle, chunk);
  }
  const chunk = classChunks.get(bundle);
  return chunk !== null && fileURLToPath(url) === chunk.file ? chunk.exportName : null;
}

if (typeof registerHooks !== "function") {
  process.stderr.write(
    `pi-session-native/register: Node ${process.version} has no module.registerHooks (22.15 or later); the pi agent keeps its own session store\n`,
  );
} else {
  registerHooks({
    load(url, context, nextLoad) {
      const result = nextLoad(url, context);
      if (!url.includes(AGENT_DIST) || result.format !== "module") return result;
      const exportName = classExport(url);
      if (exportName === null) return result;
      const source = typeof result.source === "string" ? result.source : Buffer.from(result.source).toString("utf8");
      return { ...result, source: source + installCall(url, exportName) };
    },
  });
}
