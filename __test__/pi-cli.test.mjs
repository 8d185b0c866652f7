// The real pi CLI, stock and through `pi-native` (bin/pi-native.js), with no network: the same
// print-mode and RPC scenarios run by the agent's own bundled CLI and by pi-native, on Node 22,
// 24 and 26 (AGENT_MAJORS), each run in its own HOME, PI_CODING_AGENT_DIR and project dirs, against a
// scripted provider registered by a pi extension (__test__/e2e/pi-cli-ext.ts). The two must
// print the same, exit alike and write the same files, byte for byte after normalizing ids,
// uuids, clock times and temp paths; every SessionManager static of the pi-native runs must have
// gone to our store (PI_NATIVE_TRACE), and the stock runs must not have loaded it at all.
// Scenarios and comparison: __test__/e2e/pi-cli-harness.mjs.
//
// The agent needs Node >= 22.19. Under an older `node --test` (the suite's Node 20) the runs are
// spawned with Node 22, 24 and 26 fetched into .cache/ (agentNode, helpers/agent-runs.mjs); a version
// that cannot be had is skipped, saying why.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import {
  AGENT_PACKAGE,
  PI_NATIVE,
  PRINT_STEPS,
  ROOT,
  Variant,
  lineDiff,
  normalizeVariant,
  readLog,
  runPrintScenarios,
  runRpcScenarios,
} from "./e2e/pi-cli-harness.mjs";
import { AGENT_MAJORS, agentNode } from "./helpers/agent-runs.mjs";

const LIST_CACHE = "agent/.pi-session-native/list-cache";
const nodes = Object.fromEntries(AGENT_MAJORS.map((major) => [major, agentNode(major)]));
for (const [major, { skip }] of Object.entries(nodes)) if (skip) console.log(`# pi-cli on Node ${major} skipped: ${skip}`);

let base;
const runs = new Map();

/** Runs one variant's print and RPC scenarios, keeping whatever failed. */
async function runVariant(variant) {
  const out = { variant };
  try {
    out.print = await runPrintScenarios(variant);
    out.rpc = await runRpcScenarios(variant);
  } catch (error) {
    out.error = error;
  }
  return out;
}

/** Starts every variant of every Node version at once (first call), then hands out one version's. */
function variantsOf(major) {
  if (runs.size === 0) {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-cli-")));
    for (const m of AGENT_MAJORS) {
      if (nodes[m].skip) continue;
      const pair = ["stock", "native"].map((impl) => runVariant(new Variant({ base, node: nodes[m].node, major: m, impl })));
      runs.set(m, Promise.all(pair));
    }
  }
  return runs.get(major);
}

after(() => {
  if (!base) return;
  // PI_CLI_TEST_KEEP=1 keeps the trees and logs, to look at after a failure.
  if (process.env.PI_CLI_TEST_KEEP === "1") console.log(`# pi-cli: runs kept in ${base}`);
  else fs.rmSync(base, { recursive: true, force: true });
});

/** `actual` is `expected` (a string) or matches it (a RegExp). */
function matches(actual, expected) {
  return expected instanceof RegExp ? expected.test(actual) : actual === expected;
}

/** Fails with the error a variant's run stopped on, if any. */
function ran(run) {
  if (run.error) throw new Error(`the ${run.variant.impl} run (${run.variant.name}) stopped: ${run.error.stack ?? run.error}`);
  return run;
}

for (const major of AGENT_MAJORS) {
  const { skip, version } = nodes[major];
  const suite = skip ? test : describe;
  suite(`the pi CLI on Node ${major}${version ? ` (${version})` : ""}: stock and pi-native alike, offline`, { skip }, () => {
    let stock;
    let native;
    let norm;

    before(async () => {
      assert.ok(fs.existsSync(PI_NATIVE), `${PI_NATIVE} exists`);
      [stock, native] = await variantsOf(major);
      norm = {};
      for (const [name, run] of [
        ["stock", stock],
        ["native", native],
      ]) {
        if (!run.error) norm[name] = normalizeVariant(run.variant, run);
      }
    });

    test("stock pi answers every print-mode scenario as scripted", () => {
      ran(stock);
      assert.equal(stock.print.length, PRINT_STEPS.length);
      PRINT_STEPS.forEach((step, i) => {
        const r = stock.print[i];
        const where = `${step.name}: exit ${r.code}\nstdout: ${r.stdout.slice(0, 400)}\nstderr: ${r.stderr.slice(0, 400)}`;
        assert.equal(r.code, step.code ?? 0, where);
        if (step.stdout !== undefined) assert.ok(matches(r.stdout, step.stdout), `stdout of ${where}`);
        if (step.stderr !== undefined) assert.ok(matches(r.stderr, step.stderr), `stderr of ${where}`);
        else assert.equal(r.stderr, "", `stderr of ${where}`);
      });
    });

    test("pi-native exits, prints and warns as stock pi in every print-mode scenario", () => {
      ran(stock);
      ran(native);
      const failures = [];
      norm.stock.print.forEach((s, i) => {
        const n = norm.native.print[i];
        for (const key of ["code", "signal", "stdout", "stderr"]) {
          if (s[key] !== n?.[key]) failures.push(`${s.name} [${s.args.join(" ")}]: ${key} differs\n${lineDiff(s[key], n?.[key])}`);
        }
      });
      assert.equal(norm.native.print.length, norm.stock.print.length);
      assert.ok(failures.length === 0, failures.join("\n\n"));
    });

    test("pi-native writes the same set of files as stock pi", () => {
      ran(stock);
      ran(native);
      const names = (n) => Object.keys(n.files).sort();
      const sessions = names(norm.stock).filter((f) => f.endsWith(".jsonl"));
      // Sessions of the default dir, the fork/id/named ones, the two session dirs, the RPC ones.
      assert.ok(sessions.length >= 12, `stock wrote ${sessions.length} session files:\n${sessions.join("\n")}`);
      // Intended: our listing cache (README "Listing cache"), written by list/listAll.
      const extra = names(norm.native).filter((f) => !(f in norm.stock.files));
      assert.deepEqual(extra, [LIST_CACHE], "pi-native's only extra file is its listing cache");
      assert.match(norm.native.files[LIST_CACHE].split("\n")[0], /^\{"format":"pi-session-list-cache\//);
      assert.deepEqual(names(norm.native).filter((f) => f !== LIST_CACHE), names(norm.stock));
    });

    test("every file pi-native wrote equals stock's after normalizing ids, clock times and paths", () => {
      ran(stock);
      ran(native);
      const failures = [];
      for (const [name, want] of Object.entries(norm.stock.files)) {
        const got = norm.native.files[name];
        if (got === undefined) continue; // the file-set test names it
        if (typeof want === "string") {
          if (got !== want) failures.push(`${name}:\n${lineDiff(want, got)}`);
        } else {
          if (got.session !== want.session) failures.push(`${name} (embedded session):\n${lineDiff(want.session, got.session)}`);
          if (got.html !== want.html) failures.push(`${name} (html):\n${lineDiff(want.html, got.html)}`);
        }
      }
      const kinds = Object.values(norm.stock.files).join("\n");
      for (const kind of ["compaction", "session_info", "model_change", "thinking_level_change"]) {
        assert.ok(kinds.includes(`{"type":"${kind}"`), `stock wrote a ${kind} entry`);
      }
      assert.ok(kinds.includes('"parentSession":'), "stock wrote a forked session");
      assert.ok(kinds.includes('"role":"toolResult","toolCallId":"call-1","toolName":"bash"'), "stock wrote a bash tool result");
      assert.ok(failures.length === 0, failures.join("\n\n"));
    });

    test("stock pi runs the RPC conversations to their end", () => {
      ran(stock);
      const [persistent, inMemory, relative] = stock.rpc;
      const { steps, exit } = persistent;
      assert.equal(exit.code, 0, exit.stderr);
      const failed = steps.filter((s) => !s.response.success).map((s) => `${s.command.type}: ${s.response.error}`);
      // The only command meant to fail: get_entries since an id that is not there.
      assert.deepEqual(failed.map((f) => f.split(":")[0]), ["get_entries"], failed.join("\n"));
      const by = (type) => steps.filter((s) => s.command.type === type).map((s) => s.response);
      assert.match(by("compact")[0].data.summary, /Scripted summary/);
      for (const type of ["fork", "clone", "new_session", "switch_session"]) assert.equal(by(type)[0].data.cancelled, false, type);
      const files = new Set(by("get_state").map((r) => r.data.sessionFile));
      assert.equal(files.size, 2, "get_state reported the first session, then the fork (the switch returned to the first)");
      assert.equal(by("get_state").at(-1).data.sessionName, "RPC session");
      const sessionDir = path.join(stock.variant.agentDir, "sessions");
      const rpcSessions = fs.readdirSync(sessionDir).filter((d) => d.endsWith("-rpc-project--"));
      assert.equal(rpcSessions.length, 1);
      assert.equal(fs.readdirSync(path.join(sessionDir, rpcSessions[0])).length, 4, "first, fork, clone and new session");

      assert.equal(inMemory.exit.code, 0, inMemory.exit.stderr);
      assert.deepEqual(inMemory.steps.filter((s) => !s.response.success), [], "every in-memory command succeeded");
      const memoryStates = inMemory.steps.filter((s) => s.command.type === "get_state").map((s) => s.response.data);
      assert.ok(memoryStates.every((d) => d.sessionFile === undefined), "no session file in memory");
      assert.ok(!fs.readdirSync(sessionDir).some((d) => d.endsWith("-rpc-memory--")), "no session dir for the in-memory cwd");

      assert.equal(relative.exit.code, 0, relative.exit.stderr);
      assert.deepEqual(relative.steps.filter((s) => !s.response.success), [], "every relative-dir command succeeded");
      const relativeDir = path.join(stock.variant.root, "rpc-relative", "sessions");
      // The agent joins the dir as given ("./sessions" + name gives "sessions/<name>") for the
      // first and a new session; a fork is written where the dir resolves.
      const relativeStates = relative.steps.filter((s) => s.command.type === "get_state").map((s) => s.response.data.sessionFile);
      assert.deepEqual(
        relativeStates.map((f) => path.dirname(f)),
        ["sessions", "sessions", relativeDir],
        relativeStates.join("\n"),
      );
      assert.equal(fs.readdirSync(relativeDir).length, 3, "first, new and forked session");
    });

    test("pi-native answers every RPC command and streams every event as stock pi", () => {
      ran(stock);
      ran(native);
      const failures = [];
      norm.stock.rpc.forEach((want, c) => {
        const got = norm.native.rpc[c];
        want.steps.forEach((s, i) => {
          const a = JSON.stringify(s, null, 1);
          const b = JSON.stringify(got.steps[i], null, 1);
          if (a !== b) failures.push(`${want.name}, step ${i + 1} (${s.command.type}):\n${lineDiff(a, b)}`);
        });
        if (got.steps.length !== want.steps.length) failures.push(`${want.name}: ${got.steps.length} steps, stock ${want.steps.length}`);
        const a = want.records.map((r) => JSON.stringify(r)).join("\n");
        const b = got.records.map((r) => JSON.stringify(r)).join("\n");
        if (a !== b) failures.push(`${want.name}: stdout records differ:\n${lineDiff(a, b)}`);
        if (JSON.stringify(got.exit) !== JSON.stringify(want.exit)) {
          failures.push(`${want.name}: exit ${JSON.stringify(got.exit)}, stock ${JSON.stringify(want.exit)}`);
        }
      });
      assert.ok(failures.length === 0, failures.join("\n\n"));
    });

    test("every SessionManager static of the pi-native runs went to our store", () => {
      ran(native);
      const runsWithTrace = [
        ...native.print.map((r) => ({ name: r.name, trace: r.trace, code: r.code })),
        ...native.rpc.map((c) => ({ name: `the RPC conversation ${c.name}`, trace: c.exit.trace, code: c.exit.code })),
      ];
      const problems = [];
      let statics = 0;
      const names = new Set();
      for (const run of runsWithTrace) {
        const starts = run.trace.filter((l) => l.event === "start");
        const runStatics = run.trace.filter((l) => l.event === "static");
        statics += runStatics.length;
        for (const s of runStatics) names.add(s.name);
        if (starts.length !== 1) problems.push(`${run.name}: ${starts.length} start events`);
        for (const s of starts) {
          if (s.store !== "native") problems.push(`${run.name}: started on store ${s.store}`);
          if (s.version !== "1.6.0") problems.push(`${run.name}: agent version ${s.version}`);
        }
        for (const s of runStatics) if (s.store !== "native") problems.push(`${run.name}: static ${s.name} on store ${s.store}`);
        for (const s of run.trace.filter((l) => l.event === "stock-call")) problems.push(`${run.name}: stock SessionManager method ${s.name} called`);
        // Every run that opened a session asked a static for it; only --export does not need one.
        if (run.code === 0 && runStatics.length === 0 && !run.name.includes("--export")) problems.push(`${run.name}: no static call traced`);
      }
      assert.ok(statics >= 1, "at least one static call traced");
      for (const name of ["create", "open", "continueRecent", "inMemory", "forkFrom", "findById", "list", "listAll"]) {
        assert.ok(names.has(name), `a ${name} call traced (traced: ${[...names].join(", ")})`);
      }
      assert.ok(problems.length === 0, problems.join("\n"));
      const loaded = readLog(native.variant.loadedLog);
      assert.ok(loaded.length > 0 && loaded.every((l) => l.ours.some((f) => f.endsWith(".node"))), "every pi-native process loaded the addon");
    });

    test("the stock runs never loaded pi-session-native", () => {
      ran(stock);
      assert.equal(fs.existsSync(stock.variant.traceFile), false, "nothing wrote the PI_NATIVE_TRACE file of the stock runs");
      const loaded = readLog(stock.variant.loadedLog);
      assert.ok(loaded.length >= PRINT_STEPS.length, `every stock process reported its loaded files (${loaded.length})`);
      const ours = loaded.filter((l) => l.ours.length > 0);
      assert.deepEqual(ours, [], "no stock process loaded a file of this package");
    });

    test("no run of either pi tried to reach the network", () => {
      for (const run of [stock, native]) {
        assert.deepEqual(readLog(run.variant.netLog), [], `${run.variant.impl} network attempts`);
      }
    });

    test("pi-native --native-status says this Node runs pi on the native store", () => {
      const variant = (native ?? stock).variant;
      const env = { ...variant.env(), PI_NATIVE_AGENT: AGENT_PACKAGE };
      delete env.PI_NATIVE_TRACE;
      const r = spawnSync(nodes[major].node, [PI_NATIVE, "--native-status"], {
        cwd: variant.project,
        env,
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^store:\s+native\b/m);
      assert.ok(r.stdout.includes(version), `names the Node version ${version}:\n${r.stdout}`);
    });
  });
}
