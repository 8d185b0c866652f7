// Every way a user can install pi-session-native today, done as a user does it, each into a temp
// prefix, on Node 22 (scripts/fetch-node.js) with the machine's npm, and then used from there:
// `pi-sessions --version`, `pi-sessions demo` and `pi-native --native-status`. docs/install.md
// gives exactly these commands.
//   - from the checkout: `npm install -g <checkout>` and `npm link`, which run the checkout's
//     prepare in npm's global mode (its build once looked the napi CLI up on the registry: a 404)
//   - from the tarballs a release packs (scripts/pack.js): `npm install -g`, offline, no cargo
//   - as a dependency of another project: `npm install <checkout>` (a link to the folder), and
//     `npm install git+file://<checkout>#HEAD`, which builds from scratch: on request only
//     (PI_TEST_GIT_DEPENDENCY=1)
//   - from a registry with npm, pnpm, yarn 1 and bun: a verdaccio on 127.0.0.1 serves the release
//     (scripts/fetch-install-tools.js fetches verdaccio, pnpm and yarn into .cache/ on first use)
// The agent `pi-native` starts is this checkout's dev dependency (PI_NATIVE_AGENT).
//
// Real installs take a while, so scripts/test-node-versions.js runs this file in the main pass
// only. PI_TEST_INSTALL=0 skips it (a machine without registry access), saying so.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { agentNode } from "./helpers/agent-runs.mjs";
import { ROOT } from "./helpers/target.mjs";

const require = createRequire(import.meta.url);
const { packPlatform, packRoot, publishedManifest } = require("../scripts/pack.js");
const { PLATFORMS, binaryFile } = require("../scripts/platforms.js");
const { fetchTool } = require("../scripts/fetch-install-tools.js");
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
const NAME = manifest.name;
const VERSION = manifest.version;
const AGENT = path.join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent");

/** Why this file cannot run here, or null. */
function skipReason() {
  const setting = process.env.PI_TEST_INSTALL;
  if (setting === "0" || setting === "false") return "PI_TEST_INSTALL=0";
  if (process.platform === "win32") return "the Windows layout of a global install (.cmd shims) is tested under Wine by scripts/test-windows.js";
  const built = PLATFORMS.find((p) => fs.existsSync(path.join(ROOT, binaryFile(p))));
  if (!built) return "no built binary in the repository root (run `npm run build`)";
  return null;
}
const skip = skipReason() ?? undefined;
if (skip) console.log(`# install-paths skipped: ${skip}`);
// A skipped suite is reported as one skipped test, so the skip shows in the totals.
const suite = skip ? test : describe;
const BUILT = skip ? null : PLATFORMS.find((p) => fs.existsSync(path.join(ROOT, binaryFile(p))));

/** PATH without any directory that holds cargo: a user who installs a release has no Rust. */
function withoutCargo(pathVar) {
  return pathVar
    .split(path.delimiter)
    .filter((dir) => dir && !fs.existsSync(path.join(dir, "cargo")))
    .join(path.delimiter);
}

/**
 * A user's shell: Node 22 first on PATH (npm and the bins' `#!/usr/bin/env node` run on it), its
 * own HOME and npm cache, no npm_* variables of an enclosing `npm test`, cargo only if asked.
 */
function userEnv(home, node, { cargo = false } = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_|yarn_|bun_)/i.test(key) || key.startsWith("PI_SESSION_NATIVE_") || key.startsWith("PI_NATIVE_")) continue;
    env[key] = value;
  }
  // A CI job testing a downloaded binary says so; prepare must not build another over it.
  if (process.env.PI_SESSION_NATIVE_SKIP_BUILD) env.PI_SESSION_NATIVE_SKIP_BUILD = process.env.PI_SESSION_NATIVE_SKIP_BUILD;
  const pathVar = cargo ? process.env.PATH ?? "" : withoutCargo(process.env.PATH ?? "");
  env.PATH = [path.dirname(node), pathVar].join(path.delimiter);
  if (cargo) {
    // rustup's cargo finds its toolchains under the real home unless told where they are.
    env.CARGO_HOME = process.env.CARGO_HOME ?? path.join(os.homedir(), ".cargo");
    env.RUSTUP_HOME = process.env.RUSTUP_HOME ?? path.join(os.homedir(), ".rustup");
  }
  env.HOME = home;
  env.npm_config_cache = path.join(home, ".npm");
  env.npm_config_update_notifier = "false";
  env.npm_config_fund = "false";
  env.npm_config_audit = "false";
  return env;
}

function hasCargo() {
  const r = spawnSync("cargo", ["--version"], { stdio: "ignore" });
  return !r.error && r.status === 0;
}

function run(cmd, args, options) {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 600_000, ...options });
  if (r.error) throw r.error;
  return r;
}

function ok(r, what) {
  assert.equal(r.status, 0, `${what} failed (exit ${r.status}):\n${r.stderr}\n${r.stdout}`);
  return r;
}

/**
 * The three commands a user runs first, from `binDir`: the CLI answers, builds the demo, and
 * pi-native finds the native store served by the addon under `addonUnder`.
 */
function usesBins(t, { binDir, env, work, addonUnder }) {
  const bin = (name) => path.join(binDir, name);
  const version = ok(run(bin("pi-sessions"), ["--version"], { env, cwd: work }), "pi-sessions --version");
  assert.equal(version.stdout, `pi-sessions ${VERSION}\n`);
  const demoDir = path.join(work, `demo-${crypto.randomUUID().slice(0, 8)}`);
  const demo = ok(run(bin("pi-sessions"), ["demo", "--dir", demoDir], { env, cwd: work }), "pi-sessions demo");
  assert.match(demo.stdout, /^Sample pi sessions written to /);
  assert.match(demo.stdout, /Weather forecast cache/);
  assert.match(demo.stdout, /\n {2}pi-sessions list --all\n/, "the demo suggests the installed command");
  const agentEnv = { ...env, PI_NATIVE_AGENT: AGENT, PI_CODING_AGENT_DIR: path.join(work, "agent") };
  const status = ok(run(bin("pi-native"), ["--native-status"], { env: agentEnv, cwd: work }), "pi-native --native-status");
  assert.match(status.stdout, /^store: {2}native \(pi-session-native /m);
  assert.match(status.stdout, /^node: {3}v22\./m, "the bin ran on Node 22");
  const addon = /^addon: {2}(.*)$/m.exec(status.stdout)?.[1];
  assert.ok(addon && fs.realpathSync(addon).startsWith(fs.realpathSync(addonUnder)), `the addon comes from ${addonUnder}: ${addon}`);
  t.diagnostic(`addon: ${addon}`);
}

suite("installed as a user installs it, then used from the install", { skip }, () => {
  let tmp;
  let node22;
  const tarballs = {};

  before(() => {
    const found = agentNode("22");
    assert.ok(!found.skip, `Node 22 is needed for these installs: ${found.skip}`);
    node22 = found.node;
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-install-")));
    fs.mkdirSync(path.join(tmp, "tarballs"));
    const root = packRoot(path.join(tmp, "tarballs"), path.join(tmp, "stage-root"));
    const platform = packPlatform(BUILT, path.join(ROOT, binaryFile(BUILT)), path.join(tmp, "tarballs"), path.join(tmp, "stage-platform"));
    Object.assign(tarballs, { root: root.tarball, rootInfo: root.info, platform: platform.tarball, platformInfo: platform.info });
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** A fresh home, work dir and prefix for one install. */
  function place(label, options) {
    const dir = path.join(tmp, label);
    for (const sub of ["home", "work", "prefix"]) fs.mkdirSync(path.join(dir, sub), { recursive: true });
    return { home: path.join(dir, "home"), work: path.join(dir, "work"), prefix: path.join(dir, "prefix"), env: userEnv(path.join(dir, "home"), node22, options) };
  }

  test("npm install -g <checkout> builds with the pinned napi CLI and links both bins to the checkout", (t) => {
    // cargo stays on PATH: the checkout's prepare builds (nothing, when the addon is up to date).
    const p = place("checkout-global", { cargo: true });
    const r = ok(run("npm", ["install", "-g", "--prefix", p.prefix, "--foreground-scripts", ROOT], { env: p.env, cwd: p.work }), "npm install -g <checkout>");
    // In a job that tests a downloaded binary prepare says so and builds nothing; where this
    // machine has cargo, it must reach the build (which the old npx lookup never did).
    const prepared = /^pi-session-native: (building the native addon|cargo was not found|PI_SESSION_NATIVE_SKIP_BUILD is set)/m.exec(r.stdout);
    assert.ok(prepared, `prepare ran:\n${r.stdout}`);
    if (prepared[1] !== "building the native addon") {
      assert.ok(prepared[1] !== "cargo was not found" || !hasCargo(), "cargo is on PATH, and prepare did not find it");
      t.diagnostic(`prepare built nothing: ${prepared[1]}`);
    }
    assert.doesNotMatch(r.stdout + r.stderr, /404|npx/);
    assert.equal(fs.realpathSync(path.join(p.prefix, "lib", "node_modules", NAME)), fs.realpathSync(ROOT));
    usesBins(t, { binDir: path.join(p.prefix, "bin"), env: p.env, work: p.work, addonUnder: ROOT });
  });

  test("npm link in the checkout puts both bins on the global prefix's PATH", (t) => {
    const p = place("checkout-link", { cargo: true });
    ok(run("npm", ["link"], { env: { ...p.env, npm_config_prefix: p.prefix }, cwd: ROOT }), "npm link");
    usesBins(t, { binDir: path.join(p.prefix, "bin"), env: p.env, work: p.work, addonUnder: ROOT });
  });

  test("npm install -g of the two packed tarballs works offline, without cargo, and builds nothing", (t) => {
    const p = place("tarballs");
    const r = ok(run("npm", ["install", "-g", "--prefix", p.prefix, "--offline", tarballs.root, tarballs.platform], { env: p.env, cwd: p.work }), "npm install -g <tarballs>");
    assert.doesNotMatch(r.stdout + r.stderr, /building the native addon/);
    const modules = path.join(p.prefix, "lib", "node_modules");
    assert.deepEqual(fs.readdirSync(path.join(modules, NAME)).filter((f) => f.endsWith(".node")), [], "no binary in the root package");
    usesBins(t, { binDir: path.join(p.prefix, "bin"), env: p.env, work: p.work, addonUnder: path.join(modules, `${NAME}-${BUILT.suffix}`) });
  });

  test("npm install <checkout> in another project links the folder; the library and its bins work there, offline", () => {
    const p = place("folder-dependency");
    fs.writeFileSync(path.join(p.work, "package.json"), `${JSON.stringify({ name: "app", private: true }, null, 2)}\n`);
    ok(run("npm", ["install", "--offline", ROOT], { env: p.env, cwd: p.work }), "npm install <checkout>");
    const deps = JSON.parse(fs.readFileSync(path.join(p.work, "package.json"), "utf8")).dependencies;
    assert.match(deps[NAME], /^file:/);
    const script = `const { SessionManager } = require("${NAME}"); const sm = SessionManager.inMemory("/p");
      sm.appendMessage({ role: "user", content: "hi", timestamp: 1 }); console.log(sm.getEntries().length)`;
    assert.equal(ok(run(node22, ["-e", script], { env: p.env, cwd: p.work }), "require").stdout, "1\n");
    const version = ok(run(path.join(p.work, "node_modules", ".bin", "pi-sessions"), ["--version"], { env: p.env, cwd: p.work }), "pi-sessions");
    assert.equal(version.stdout, `pi-sessions ${VERSION}\n`);
  });

  // npm clones the repository, installs its dev dependencies, runs prepare (a cargo build from
  // scratch) and packs the clone: minutes, so only on request.
  const gitSkip =
    process.env.PI_TEST_GIT_DEPENDENCY === "1"
      ? false
      : "a git dependency builds the addon from scratch in a clone of HEAD (5 to 8 minutes on this 2-core machine); PI_TEST_GIT_DEPENDENCY=1 runs it";
  test("npm install git+file://<checkout>#HEAD builds the addon in a clone and installs it with its binary", { skip: gitSkip, timeout: 1_800_000 }, () => {
    const p = place("git-dependency", { cargo: true });
    fs.writeFileSync(path.join(p.work, "package.json"), `${JSON.stringify({ name: "app", private: true }, null, 2)}\n`);
    const spec = `git+file://${ROOT}#HEAD`;
    const r = ok(run("npm", ["install", "--foreground-scripts", spec], { env: p.env, cwd: p.work, timeout: 1_800_000 }), `npm install ${spec}`);
    assert.match(r.stdout, /^pi-session-native: building the native addon/m);
    const installed = path.join(p.work, "node_modules", NAME);
    assert.ok(fs.existsSync(path.join(installed, binaryFile(BUILT))), "the clone's build came along");
    const script = `const { SessionManager } = require("${NAME}"); console.log(typeof SessionManager.create)`;
    assert.equal(ok(run(node22, ["-e", script], { env: p.env, cwd: p.work }), "require").stdout, "function\n");
    const version = ok(run(path.join(p.work, "node_modules", ".bin", "pi-sessions"), ["--version"], { env: p.env, cwd: p.work }), "pi-sessions");
    assert.equal(version.stdout, `pi-sessions ${VERSION}\n`);
  });

  describe("from a private registry on 127.0.0.1 serving the release's packages", () => {
    let registry;
    let verdaccio;

    before(async () => {
      registry = await startRegistry(path.join(tmp, "registry"), node22);
      verdaccio = registry.child;
      await publishRelease(registry, tarballs, path.join(tmp, "publish"));
    });

    after(() => {
      if (verdaccio && verdaccio.exitCode === null) verdaccio.kill();
    });

    test("npm install -g pi-session-native takes the platform package and no other", (t) => {
      const p = place("registry-npm");
      ok(run("npm", ["install", "-g", "--prefix", p.prefix, "--registry", registry.url, NAME], { env: p.env, cwd: p.work }), "npm install -g");
      const nested = path.join(p.prefix, "lib", "node_modules", NAME, "node_modules");
      assert.deepEqual(fs.readdirSync(nested).filter((f) => f.startsWith(`${NAME}-`)), [`${NAME}-${BUILT.suffix}`]);
      usesBins(t, { binDir: path.join(p.prefix, "bin"), env: p.env, work: p.work, addonUnder: path.join(nested, `${NAME}-${BUILT.suffix}`) });
    });

    test("pnpm add -g pi-session-native", (t) => {
      const p = place("registry-pnpm");
      const pnpmHome = path.join(p.prefix, "pnpm-home");
      const env = { ...p.env, PNPM_HOME: pnpmHome, PATH: [path.join(pnpmHome, "bin"), p.env.PATH].join(path.delimiter) };
      const pnpm = fetchTool("pnpm");
      ok(run(node22, [pnpm, "add", "-g", "--registry", registry.url, "--store-dir", path.join(p.home, "pnpm-store"), NAME], { env, cwd: p.work }), "pnpm add -g");
      usesBins(t, { binDir: path.join(pnpmHome, "bin"), env, work: p.work, addonUnder: path.join(p.home, "pnpm-store") });
    });

    test("yarn global add pi-session-native (yarn 1)", (t) => {
      const p = place("registry-yarn");
      const yarn = fetchTool("yarn");
      const env = { ...p.env, YARN_REGISTRY: registry.url, npm_config_registry: registry.url };
      const global = path.join(p.prefix, "global");
      ok(
        run(node22, [yarn, "global", "add", NAME, "--prefix", p.prefix, "--global-folder", global, "--cache-folder", path.join(p.home, "yarn-cache"), "--non-interactive", "--no-progress"], { env, cwd: p.work }),
        "yarn global add",
      );
      // yarn 1 reads os and cpu but no libc: on Linux it adds the other libc's package too, unused.
      t.diagnostic(`platform packages: ${fs.readdirSync(path.join(global, "node_modules")).filter((f) => f.startsWith(`${NAME}-`)).join(", ")}`);
      usesBins(t, { binDir: path.join(p.prefix, "bin"), env, work: p.work, addonUnder: path.join(global, "node_modules", `${NAME}-${BUILT.suffix}`) });
    });

    test("bun add -g pi-session-native", (t) => {
      if (process.platform !== "linux" || process.arch !== "x64") {
        t.skip("scripts/fetch-bun.js fetches Bun for linux-x64 only");
        return;
      }
      const p = place("registry-bun");
      const { fetchBun } = require("../scripts/fetch-bun.js");
      const bunHome = path.join(p.prefix, "bun");
      const env = { ...p.env, BUN_INSTALL: bunHome, BUN_INSTALL_CACHE_DIR: path.join(p.home, "bun-cache") };
      ok(run(fetchBun(), ["add", "-g", "--registry", registry.url, NAME], { env, cwd: p.work }), "bun add -g");
      usesBins(t, { binDir: path.join(bunHome, "bin"), env, work: p.work, addonUnder: path.join(bunHome, "install", "global", "node_modules", `${NAME}-${BUILT.suffix}`) });
    });
  });
});

/** A free TCP port on 127.0.0.1 (closed again at once; verdaccio binds it next). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * verdaccio on 127.0.0.1 with its storage under `dir`, no uplink (nothing is proxied to a public
 * registry) and one user made now with a random password; `{ url, token, child }` once it answers.
 */
async function startRegistry(dir, node) {
  fs.mkdirSync(dir, { recursive: true });
  const config = [
    `storage: ${JSON.stringify(path.join(dir, "storage"))}`,
    "auth:",
    "  htpasswd:",
    `    file: ${JSON.stringify(path.join(dir, "htpasswd"))}`,
    "uplinks: {}",
    "packages:",
    "  '**':",
    "    access: $all",
    "    publish: $authenticated",
    "web:",
    "  enable: false",
    "log: { type: stdout, format: pretty, level: warn }",
    "",
  ].join("\n");
  fs.writeFileSync(path.join(dir, "config.yaml"), config);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const log = fs.openSync(path.join(dir, "verdaccio.log"), "w");
  const child = spawn(node, [fetchTool("verdaccio"), "--config", path.join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`], {
    stdio: ["ignore", log, log],
  });
  fs.closeSync(log);
  try {
    return { url, token: await readyWithUser(url, child, dir), child };
  } catch (error) {
    child.kill();
    throw error;
  }
}

/** Waits until verdaccio answers, then makes one user with a random password; its token. */
async function readyWithUser(url, child, dir) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}-/ping`)).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`verdaccio did not start:\n${fs.readFileSync(path.join(dir, "verdaccio.log"), "utf8")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const password = crypto.randomBytes(18).toString("base64url");
  const user = `tester-${crypto.randomUUID().slice(0, 8)}`;
  const res = await fetch(`${url}-/user/org.couchdb.user:${user}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: user, password }),
  });
  const { token } = await res.json();
  assert.ok(res.ok && token, `verdaccio made no user (${res.status})`);
  return token;
}

/**
 * Publishes one packed package as `npm publish <tarball>` does, in one request: the registry's
 * publish document (the manifest, its dist, the tarball as an attachment). `info` is `npm pack
 * --json`'s report of it; `pkg` the package.json packed into it.
 */
async function publish(registry, tarball, info, pkg) {
  const data = fs.readFileSync(tarball);
  const file = path.basename(tarball);
  const doc = {
    _id: pkg.name,
    name: pkg.name,
    "dist-tags": { latest: pkg.version },
    versions: {
      [pkg.version]: {
        ...pkg,
        _id: `${pkg.name}@${pkg.version}`,
        dist: { shasum: info.shasum, integrity: info.integrity, tarball: `${registry.url}${pkg.name}/-/${file}` },
      },
    },
    _attachments: { [file]: { content_type: "application/octet-stream", data: data.toString("base64"), length: data.length } },
  };
  const res = await fetch(`${registry.url}${encodeURIComponent(pkg.name)}`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${registry.token}` },
    body: JSON.stringify(doc),
  });
  assert.ok(res.ok, `publishing ${file} failed: ${res.status} ${await res.text()}`);
}

/**
 * Publishes what a release publishes: the root package and the platform package built here, and,
 * for the seven platforms this machine does not build here, their packages as npm/<platform>/
 * declares them, without the binary (packed with one `npm pack`). None of those is ever installed
 * on this machine (their os/cpu/libc exclude it), but a package manager resolves every optional
 * dependency first, and yarn 1 fails when one is missing from the registry, as it would before a
 * release's last publish.
 */
async function publishRelease(registry, tarballs, dir) {
  const stages = [];
  for (const row of PLATFORMS.filter((p) => p !== BUILT)) {
    const stage = path.join(dir, row.suffix);
    fs.mkdirSync(stage, { recursive: true });
    for (const name of ["package.json", "README.md"]) fs.copyFileSync(path.join(ROOT, "npm", row.suffix, name), path.join(stage, name));
    fs.copyFileSync(path.join(ROOT, "LICENSE"), path.join(stage, "LICENSE"));
    stages.push({ row, stage });
  }
  const packed = ok(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir, ...stages.map((s) => s.stage)], { cwd: dir }), "npm pack");
  const platformManifest = (row) => JSON.parse(fs.readFileSync(path.join(ROOT, "npm", row.suffix, "package.json"), "utf8"));
  const infos = JSON.parse(packed.stdout);
  await Promise.all([
    publish(registry, tarballs.platform, tarballs.platformInfo, platformManifest(BUILT)),
    ...stages.map(({ row }, i) => publish(registry, path.join(dir, infos[i].filename), infos[i], platformManifest(row))),
  ]);
  await publish(registry, tarballs.root, tarballs.rootInfo, publishedManifest(manifest));
}
