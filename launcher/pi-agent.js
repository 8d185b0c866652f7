"use strict";
// Puts pi-session-native under the pi agent's own SessionManager class.
//
// Every session the agent makes comes from the statics of its class (create, open, continueRecent,
// inMemory, forkFrom, findById, list, listAll): its constructor is private, and no code outside
// the class reads its fields or uses `instanceof` on it. Rebinding those statics to ours therefore
// puts everything the agent does on our store — the CLI's -c/-r/--session/--fork, the /resume
// picker, /new, /fork, /clone, RPC mode — while the agent's own code stays as it is.
//
// Used by bin/pi-native.js (the user's `pi`, started on our store) and by register.mjs (an SDK
// program run with `node --import pi-session-native/register`), once find-agent.js has found the
// agent. Nothing here patches half a
// class: the agent's class is checked first (version and shape), and on any doubt the agent keeps
// its own store, with one line on stderr saying why (or an error, in strict mode).
const fs = require("node:fs");
const path = require("node:path");
const { pathToFileURL } = require("node:url");
const { sessionError } = require("../lib/errors.js");
const { env } = require("./env.js");

/** Agent versions whose SessionManager our store has been checked against. */
const SUPPORTED_VERSIONS = { range: "1.6.x", test: (v) => /^1\.6\.\d+(?:[-+].*)?$/.test(v) };
/** Marks a class we installed into, so a second install (register + pi-native) is a no-op. */
const INSTALLED = Symbol.for("pi-session-native.installed");

// ---------------------------------------------------------------------------------------------
// Checking it

/** `a` >= `b` for dotted versions ("22.19.0"). */
function versionAtLeast(a, b) {
  const pa = a.split(/[.+-]/).map(Number);
  const pb = b.split(/[.+-]/).map(Number);
  for (let i = 0; i < 3; i++) {
    const x = pa[i] || 0;
    const y = pb[i] || 0;
    if (x !== y) return x > y;
  }
  return true;
}

/**
 * Names the agent's class declares private (TypeScript keeps them on the prototype, but only the
 * class itself calls them), read from its declaration file. Without the file nothing counts as
 * private, which errs on the side of refusing.
 */
function privateNames(agentDir) {
  const names = new Set();
  let text = "";
  try {
    text = fs.readFileSync(path.join(agentDir, "dist", "core", "session-manager.d.ts"), "utf8");
  } catch {
    return names;
  }
  for (const m of text.matchAll(/^\s*private\s+(?:static\s+)?(?:readonly\s+)?([A-Za-z_$][\w$]*)/gm)) names.add(m[1]);
  return names;
}

/**
 * What the agent's class has that ours lacks: public statics and prototype members (a newer agent
 * that added a method). An empty list means every call the agent can make has an answer.
 */
function shapeDrift(AgentClass, OurClass, privates) {
  const missing = [];
  for (const name of Object.getOwnPropertyNames(AgentClass)) {
    if (["length", "name", "prototype"].includes(name) || privates.has(name)) continue;
    if (!(name in OurClass)) missing.push(`static ${name}`);
  }
  for (const name of Object.getOwnPropertyNames(AgentClass.prototype)) {
    if (name === "constructor" || privates.has(name)) continue;
    if (!(name in OurClass.prototype)) missing.push(name);
  }
  return missing;
}

/**
 * Whether our store may go under this agent: a supported version, a Node it runs on, and a class
 * with nothing ours lacks. Returns `{ ok, reason }`; `reason` is one line for stderr.
 */
function check(AgentClass, info) {
  if (env.disabled()) return { ok: false, reason: "PI_NATIVE_DISABLE is set", quiet: true };
  if (!SUPPORTED_VERSIONS.test(info.version) && !env.anyVersion()) {
    return {
      ok: false,
      reason: `pi ${info.version || "(no version)"} is outside the versions pi-native supports (${SUPPORTED_VERSIONS.range}); set PI_NATIVE_ANY_VERSION=1 to try it anyway`,
    };
  }
  let OurClass;
  try {
    OurClass = ours().SessionManager;
  } catch (error) {
    // No binary for this platform, or one that does not load: the agent keeps its own store.
    return { ok: false, reason: `pi-session-native's addon did not load (${String(/** @type {{ message?: unknown }} */ (error).message).split("\n")[0]})` };
  }
  const missing = shapeDrift(AgentClass, OurClass, privateNames(info.dir));
  if (missing.length) {
    return {
      ok: false,
      reason: `pi ${info.version}'s SessionManager has ${missing.join(", ")}, which pi-session-native lacks`,
    };
  }
  return { ok: true, reason: "" };
}

function ours() {
  return require("../index.js");
}

// ---------------------------------------------------------------------------------------------
// Installing

/** Appends one JSON line per event to PI_NATIVE_TRACE, if set (a bug report can tell the store). */
function tracer() {
  const file = env.trace();
  if (!file) return null;
  return (event) => {
    try {
      fs.appendFileSync(file, `${JSON.stringify({ ...event, pid: process.pid })}\n`);
    } catch {
      // tracing never breaks the agent
    }
  };
}

/**
 * Rebinds the agent class's statics to ours. With tracing on, each static call is logged, and so
 * is any call on an instance of the agent's own class, which would mean something escaped us.
 */
function installStatics(AgentClass, trace) {
  const OurClass = ours().SessionManager;
  for (const name of Object.getOwnPropertyNames(AgentClass)) {
    if (["length", "name", "prototype"].includes(name)) continue;
    const target = OurClass[name];
    if (typeof target !== "function" || typeof AgentClass[name] !== "function") continue;
    const bound = {
      [name](...args) {
        trace?.({ event: "static", name, store: "native" });
        return target.apply(OurClass, args);
      },
    }[name];
    Object.defineProperty(AgentClass, name, { value: bound, writable: true, configurable: true, enumerable: false });
  }
  if (trace) {
    const proto = AgentClass.prototype;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const original = Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (name === "constructor" || typeof original !== "function") continue;
      proto[name] = {
        [name](...args) {
          trace({ event: "stock-call", name });
          return original.apply(this, args);
        },
      }[name];
    }
  }
  Object.defineProperty(AgentClass, INSTALLED, { value: true });
}

/**
 * Installs our store under `AgentClass` (the agent's SessionManager, from the package at
 * `info.dir`) if the check allows it. On refusal: strict mode throws (`code` NATIVE_STORE_REFUSED),
 * otherwise one line goes to stderr and the agent keeps its own store.
 * @returns {{ store: "native" | "stock", reason: string }}
 */
function install(AgentClass, info, who = "pi-native") {
  if (AgentClass[INSTALLED]) return { store: "native", reason: "" };
  const trace = tracer();
  const verdict = check(AgentClass, info);
  if (!verdict.ok) {
    trace?.({ event: "start", store: "stock", agent: info.dir, version: info.version, reason: verdict.reason });
    if (env.strict() && !verdict.quiet) {
      throw sessionError("NATIVE_STORE_REFUSED", `${who}: ${verdict.reason} (PI_NATIVE_STRICT is set)`);
    }
    if (!verdict.quiet) process.stderr.write(`${who}: ${verdict.reason}; running pi on its own session store\n`);
    return { store: "stock", reason: verdict.reason };
  }
  installStatics(AgentClass, trace);
  trace?.({ event: "start", store: "native", agent: info.dir, version: info.version });
  return { store: "native", reason: "" };
}

/**
 * The bundle module that defines the agent's SessionManager. The bundle's SDK entry
 * (`dist/bundle/index.js`) names the chunk it takes the class from; importing that chunk alone
 * costs nothing extra, since the CLI loads it too. Falls back to the entry itself.
 */
function bundleClassModule(agentDir) {
  const entry = path.join(agentDir, "dist", "bundle", "index.js");
  let text;
  try {
    text = fs.readFileSync(entry, "utf8");
  } catch {
    throw sessionError("AGENT_LAYOUT", `${entry} is missing: this pi has no bundled CLI pi-native can start`);
  }
  for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*"(\.\/chunks\/[^"]+)"/g)) {
    for (const spec of m[1].split(",")) {
      const [exported, local = exported] = spec.trim().split(/\s+as\s+/);
      if (local === "SessionManager") return { file: path.join(path.dirname(entry), m[2]), exportName: exported };
    }
  }
  return { file: entry, exportName: "SessionManager" };
}

async function loadBundledClass(agentDir) {
  const { file, exportName } = bundleClassModule(agentDir);
  const mod = await import(pathToFileURL(file).href);
  const AgentClass = mod[exportName];
  if (typeof AgentClass !== "function") {
    throw sessionError("AGENT_LAYOUT", `${file} does not export the agent's SessionManager`);
  }
  return AgentClass;
}

module.exports = {
  SUPPORTED_VERSIONS,
  bundleClassModule,
  check,
  install,
  loadBundledClass,
  privateNames,
  shapeDrift,
  versionAtLeast,
};
