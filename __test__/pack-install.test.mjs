// Install as a user would: `npm pack` the package and its platform package (with the binary
// built here), install both tarballs into a fresh project outside this repository, with no
// registry access (--offline) and no cargo on PATH, then use the API there from an ES module, a
// CommonJS script and TypeScript consumers of both kinds.
//
// The root tarball is made as a release makes it (scripts/pack.js): the platform packages become
// its optionalDependencies and its lifecycle scripts are dropped. Offline, npm can fetch none of
// the other platforms' packages, so the one built here is installed beside it, as npm would pick it.
// Skipped, saying why, when npm cannot pack or there is no built binary to pack.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { agentNode } from "./helpers/agent-runs.mjs";
import { ROOT } from "./helpers/target.mjs";

const require = createRequire(import.meta.url);
const { packPlatform, packRoot, INSTALL_SCRIPTS } = require("../scripts/pack.js");
const { PLATFORMS, platform } = require("../scripts/platforms.js");
const isWindows = process.platform === "win32";
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
const NAME = manifest.name;
const BINARY_NAME = manifest.napi.binaryName;

/** Environment of a user's shell: no npm_* variables from an enclosing `npm test`, no cargo. */
function userEnv(home) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) || key.startsWith("PI_SESSION_NATIVE_")) continue;
    env[key] = value;
  }
  const cargo = isWindows ? "cargo.exe" : "cargo";
  env.PATH = (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => dir && !fs.existsSync(path.join(dir, cargo)))
    .join(path.delimiter);
  // node and npm must stay reachable (they are never next to cargo in practice).
  const nodeDir = path.dirname(process.execPath);
  if (!fs.existsSync(path.join(nodeDir, cargo))) env.PATH = [nodeDir, env.PATH].join(path.delimiter);
  env.npm_config_cache = path.join(home, ".npm");
  env.npm_config_update_notifier = "false";
  env.HOME = home;
  env.USERPROFILE = home;
  return env;
}

function npm(args, options) {
  return spawnSync(isWindows ? "npm.cmd" : "npm", args, { encoding: "utf8", shell: isWindows, ...options });
}

function ok(result, what) {
  assert.ok(
    !result.error && result.status === 0,
    `${what} failed (${result.error ? result.error.message : `exit code ${result.status}`}):\n${result.stderr}\n${result.stdout}`,
  );
  return result;
}

/** The built binary to pack and its platform package directory, or the reason there is none. */
function platformBuild() {
  const binaries = fs.readdirSync(ROOT).filter((f) => f.startsWith(`${BINARY_NAME}.`) && f.endsWith(".node"));
  if (binaries.length === 0) return { skip: "no built binary in the repository root (run `npm run build`)" };
  const suffixOf = (binary) => binary.slice(BINARY_NAME.length + 1, -".node".length);
  const binary = binaries.find((f) => fs.existsSync(path.join(ROOT, "npm", suffixOf(f), "package.json")));
  if (!binary) return { skip: `no npm/<platform>/ package for ${binaries.join(", ")}` };
  return { binary, suffix: suffixOf(binary), dir: path.join(ROOT, "npm", suffixOf(binary)) };
}

function packSkipReason() {
  const version = npm(["--version"], { cwd: os.tmpdir() });
  if (version.error || version.status !== 0) return `npm cannot run here (${version.error?.message ?? version.stderr})`;
  return null;
}

const build = platformBuild();
const skip = build.skip ?? packSkipReason() ?? undefined;
if (skip) console.log(`# pack-install skipped: ${skip}`);
// A skipped suite is reported as one skipped test, so the skip shows in the totals.
const suite = skip ? test : describe;

const ESM_SCRIPT = `
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import * as api from "${NAME}";
import { SessionManager, CURRENT_SESSION_VERSION, parseSessionEntries } from "${NAME}";

const require = createRequire(import.meta.url);
const cjs = require("${NAME}");
assert.equal(SessionManager, cjs.SessionManager, "import and require give the same class");
assert.deepEqual(Object.keys(api).sort(), Object.keys(cjs).sort(), "same export names");
for (const key of Object.keys(cjs)) assert.equal(api[key], cjs[key], key);

const dir = process.argv[2];
const sm = SessionManager.create(process.cwd(), dir);
sm.appendMessage({ role: "user", content: "hello from ESM", timestamp: 1 });
const reply = sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], api: "x", provider: "p",
  model: "m", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 });
sm.appendLabelChange(reply, "esm");
const file = sm.getSessionFile();
const reopened = SessionManager.open(file);
assert.deepEqual(reopened.getEntries(), sm.getEntries());
assert.equal(reopened.getLabel(reply), "esm");
assert.deepEqual(reopened.buildSessionContext().messages.map((m) => m.role), ["user", "assistant"]);
const listed = await SessionManager.list(process.cwd(), dir);
assert.equal(listed.length, 1);
assert.equal(listed[0].firstMessage, "hello from ESM");
assert.equal(parseSessionEntries(require("node:fs").readFileSync(file, "utf8"))[0].version, CURRENT_SESSION_VERSION);
const loaded = Object.keys(require.cache).filter((k) => k.endsWith(".node"));
console.log(JSON.stringify({ file, entries: sm.getEntries().length, loaded }));
`;

const CJS_SCRIPT = `
"use strict";
const assert = require("node:assert/strict");
const { SessionManager, findMostRecentSession } = require("${NAME}");

(async () => {
  const esm = await import("${NAME}");
  assert.equal(esm.SessionManager, SessionManager, "require and import give the same class");
  const dir = process.argv[2];
  const sm = SessionManager.create(process.cwd(), dir);
  sm.appendMessage({ role: "user", content: "hello from CJS", timestamp: 1 });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], api: "x", provider: "p",
    model: "m", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 });
  sm.appendSessionInfo("cjs session");
  const reopened = SessionManager.open(sm.getSessionFile());
  assert.equal(reopened.getSessionName(), "cjs session");
  assert.deepEqual(reopened.getEntries(), sm.getEntries());
  const listed = await SessionManager.list(process.cwd(), dir);
  assert.equal(listed.length, 2, "the ESM session and this one");
  assert.deepEqual(listed.map((s) => s.name ?? null).sort(), ["cjs session", null].sort());
  assert.equal(findMostRecentSession(dir), sm.getSessionFile());
  const loaded = Object.keys(require.cache).filter((k) => k.endsWith(".node"));
  console.log(JSON.stringify({ file: sm.getSessionFile(), loaded }));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

const TS_ESM = `
import { SessionManager, type SessionEntry, type SessionInfo } from "${NAME}";
const sm: SessionManager = SessionManager.inMemory("/tmp");
const id: string = sm.appendMessage({ role: "user", content: "typed", timestamp: 1 });
const entry: SessionEntry | undefined = sm.getEntry(id);
const infos: Promise<SessionInfo[]> = SessionManager.list("/tmp");
// @ts-expect-error appendMessage needs a message
sm.appendMessage();
export { entry, infos };
`;

const TS_CJS = `
import pi = require("${NAME}");
const sm: pi.SessionManager = pi.SessionManager.inMemory();
const leaf: string | null = sm.getLeafId();
// @ts-expect-error there is no such method
sm.notAMethod();
export = leaf;
`;

suite("installed from packed tarballs, as a user would", { skip }, () => {
  let tmp;
  let env;
  let app;
  const tarballs = {};

  before(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-pack-")));
    fs.mkdirSync(path.join(tmp, "home"));
    fs.mkdirSync(path.join(tmp, "tarballs"));
    env = userEnv(path.join(tmp, "home"));
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test("the root package is packed without any binary or source, as a release packs it", () => {
    const { tarball, info } = packRoot(path.join(tmp, "tarballs"), path.join(tmp, "stage"));
    const files = info.files.map((f) => f.path).sort();
    for (const needed of ["package.json", "LICENSE", "index.js", "index.mjs", "index.d.ts", "native.js", "register.mjs", "bin/pi-native.js", "launcher/pi-agent.js", "launcher/diagnosis.js", "lib/native-platform.js"]) {
      assert.ok(files.includes(needed), `${needed} is packed`);
    }
    const unexpected = files.filter(
      (f) => f.endsWith(".node") || f.endsWith(".rs") || f === "Cargo.toml" || f.startsWith("__test__/") || f.startsWith("scripts/"),
    );
    assert.deepEqual(unexpected, [], "no binary, Rust source, build script or test in the root package");
    tarballs.root = tarball;
  });

  test("the checkout packed as it is, as npm packs a git dependency's prepared clone, takes its built binary along", () => {
    const r = ok(npm(["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, env }), "npm pack --dry-run");
    const files = JSON.parse(r.stdout)[0].files.map((f) => f.path);
    assert.ok(files.includes(build.binary), `${build.binary} is in a git dependency's package`);
  });

  test(`npm pack makes the platform package ${NAME}-${build.suffix} with the built binary`, () => {
    const npmDir = fs.readdirSync(build.dir).sort();
    const { tarball, info } = packPlatform(platform(build.suffix), path.join(ROOT, build.binary), path.join(tmp, "tarballs"), path.join(tmp, "stage-platform"));
    assert.equal(info.name, `${NAME}-${build.suffix}`);
    assert.deepEqual(info.files.map((f) => f.path).sort(), ["LICENSE", "README.md", build.binary, "package.json"].sort());
    assert.equal(info.version, manifest.version, "platform package version matches the root package");
    assert.deepEqual(fs.readdirSync(build.dir).sort(), npmDir, "nothing is left behind in npm/<platform>/");
    tarballs.platform = tarball;
  });

  test("both tarballs install offline into a fresh project, with no cargo on PATH", () => {
    assert.ok(tarballs.root && tarballs.platform, "both tarballs were packed");
    const cargo = spawnSync(isWindows ? "cargo.exe" : "cargo", ["--version"], { env });
    assert.ok(cargo.error || cargo.status !== 0, "cargo is not reachable from the user's PATH");
    app = path.join(tmp, "app");
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, "package.json"), `${JSON.stringify({ name: "app", private: true }, null, 2)}\n`);
    const r = ok(
      npm(["install", "--offline", "--no-audit", "--no-fund", tarballs.root, tarballs.platform], { cwd: app, env }),
      "npm install",
    );
    assert.doesNotMatch(r.stdout + r.stderr, /building the native addon/, "the install builds nothing");
    const installed = path.join(app, "node_modules", NAME);
    const published = JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8"));
    assert.deepEqual(
      INSTALL_SCRIPTS.filter((name) => published.scripts?.[name]),
      [],
      "the published package declares no script that npm runs on install",
    );
    assert.deepEqual(
      published.optionalDependencies,
      Object.fromEntries(PLATFORMS.map((p) => [`${NAME}-${p.suffix}`, manifest.version])),
      "every platform package is an optional dependency, at this version",
    );
    assert.ok(fs.existsSync(path.join(installed, "index.d.ts")));
    assert.deepEqual(
      fs.readdirSync(installed).filter((f) => f.endsWith(".node")),
      [],
      "the binary comes from the platform package",
    );
    assert.ok(fs.existsSync(path.join(app, "node_modules", `${NAME}-${build.suffix}`, build.binary)));
  });

  test("both installed packages carry the repository's MIT LICENSE", () => {
    assert.ok(app, "installed");
    const license = fs.readFileSync(path.join(ROOT, "LICENSE"), "utf8");
    assert.equal(manifest.license, "MIT");
    assert.match(license, /^MIT License\n\nCopyright \(c\) 2026 the pi-session-native authors\n/);
    for (const pkg of [NAME, `${NAME}-${build.suffix}`]) {
      const dir = path.join(app, "node_modules", pkg);
      assert.equal(fs.readFileSync(path.join(dir, "LICENSE"), "utf8"), license, pkg);
      assert.equal(JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).license, "MIT", pkg);
    }
  });

  test("an ES module there creates, appends, reopens and lists; import and require agree", () => {
    assert.ok(app, "installed");
    fs.writeFileSync(path.join(app, "esm-check.mjs"), ESM_SCRIPT);
    const r = ok(spawnSync(process.execPath, ["esm-check.mjs", path.join(app, "sessions")], { cwd: app, env, encoding: "utf8" }), "ESM script");
    const out = JSON.parse(r.stdout.trim().split("\n").pop());
    assert.equal(out.entries, 3);
    assert.ok(out.file.startsWith(path.join(app, "sessions")));
    assert.deepEqual(
      out.loaded,
      [path.join(app, "node_modules", `${NAME}-${build.suffix}`, build.binary)],
      "the binary was loaded from the installed platform package",
    );
  });

  test("a CommonJS script there does the same; require and import agree", () => {
    assert.ok(app, "installed");
    fs.writeFileSync(path.join(app, "cjs-check.cjs"), CJS_SCRIPT);
    const r = ok(spawnSync(process.execPath, ["cjs-check.cjs", path.join(app, "sessions")], { cwd: app, env, encoding: "utf8" }), "CJS script");
    const out = JSON.parse(r.stdout.trim().split("\n").pop());
    assert.deepEqual(out.loaded, [path.join(app, "node_modules", `${NAME}-${build.suffix}`, build.binary)]);
  });

  test("the installed pi-native bin starts the agent (--help, --native-status) and register resolves", (t) => {
    assert.ok(app, "installed");
    const { node: node22, skip } = agentNode("22");
    if (skip) {
      t.skip(skip);
      return;
    }
    const bin = path.join(app, "node_modules", ".bin", isWindows ? "pi-native.cmd" : "pi-native");
    assert.ok(fs.existsSync(bin), "npm linked the pi-native bin");
    // The bin's shebang runs `node` from PATH: put Node 22 first, as a pi user has it.
    const agentEnv = {
      ...env,
      PATH: `${path.dirname(node22)}${path.delimiter}${env.PATH}`,
      PI_NATIVE_AGENT: path.join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent"),
      PI_CODING_AGENT_DIR: path.join(tmp, "home", "agent"),
    };
    const help = ok(spawnSync(bin, ["--help"], { cwd: app, env: agentEnv, encoding: "utf8", shell: isWindows }), "pi-native --help");
    assert.match(help.stdout, /^pi - AI coding assistant/m);
    const status = ok(spawnSync(bin, ["--native-status"], { cwd: app, env: agentEnv, encoding: "utf8", shell: isWindows }), "pi-native --native-status");
    assert.match(status.stdout, /^store: {2}native /m);
    assert.ok(
      status.stdout.includes(path.join(app, "node_modules", `${NAME}-${build.suffix}`, build.binary)),
      `the installed platform binary serves it:\n${status.stdout}`,
    );
    const register = ok(
      spawnSync(node22, ["--import", `${NAME}/register`, "-e", "process.stdout.write('ok')"], { cwd: app, env: agentEnv, encoding: "utf8" }),
      "node --import pi-session-native/register",
    );
    assert.equal(register.stdout, "ok");
    assert.equal(register.stderr, "");
  });

  test("TypeScript finds the typings of the installed package from ESM and CommonJS", (t) => {
    assert.ok(app, "installed");
    let tsc;
    try {
      const pkg = require.resolve("typescript/package.json", { paths: [ROOT] });
      const bin = JSON.parse(fs.readFileSync(pkg, "utf8")).bin;
      tsc = path.resolve(path.dirname(pkg), typeof bin === "string" ? bin : bin.tsc);
    } catch {
      t.skip("typescript is not installed in the repository");
      return;
    }
    fs.writeFileSync(path.join(app, "consumer.mts"), TS_ESM);
    fs.writeFileSync(path.join(app, "consumer.cts"), TS_CJS);
    const tsconfig = {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "es2022",
        lib: ["es2022"],
        module: "nodenext",
        moduleResolution: "nodenext",
        // index.d.ts names AbortSignal, a global of Node's types, which any Node TypeScript
        // project has; take them from this repository's dev dependencies.
        typeRoots: [path.join(ROOT, "node_modules", "@types")],
        types: ["node"],
        skipLibCheck: false,
      },
      files: ["consumer.mts", "consumer.cts"],
    };
    fs.writeFileSync(path.join(app, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
    ok(spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app, env, encoding: "utf8" }), "tsc");
  });
});
