// Drop-in proof inside the real agent: the pi coding agent (createAgentSession of
// @earendil-works/pi-coding-agent 1.6.0) runs one scripted conversation against the faux
// provider, once with its own SessionManager and once with ours passed as `sessionManager`
// (__test__/e2e/agent-run.mjs). The two session files must be equal after normalizing ids,
// uuids and clock times, and each file must resume in the other implementation to the same
// context, inside the agent too.
//
// The agent needs Node >= 22.19. Under an older `node --test` the runs are spawned with a Node 22
// fetched from the npm registry into .cache/ (agentNodes, helpers/agent-runs.mjs); the suite is
// skipped, saying why, if none can be had.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { agentNodes } from "./helpers/agent-runs.mjs";
import { loadOurs, loadReference, ROOT } from "./helpers/target.mjs";
import { Normalizer } from "./parity/normalize.mjs";

const AGENT_RUN = path.join(ROOT, "__test__", "e2e", "agent-run.mjs");
const NOTES = "hello from the notes\n";

const { node, skip } = agentNodes(["22"])[0];
if (skip) console.log(`# agent-e2e skipped: ${skip}`);
// A skipped suite is reported as one skipped test, so the skip shows in the totals.
const suite = skip ? test : describe;

let tmp;
let projectDir;
let agentDir;
let childEnv;

/** Runs agent-run.mjs with the agent's Node; resolves to its JSON report. */
function runAgent(mode, impl, target) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [AGENT_RUN, mode, impl, projectDir, target, agentDir], {
      cwd: projectDir,
      env: childEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split("\n").pop();
      let report;
      try {
        report = JSON.parse(line);
      } catch {
        reject(new Error(`agent-run ${mode} ${impl} exited ${code ?? signal} without a report.\n${stderr}\n${stdout}`));
        return;
      }
      if (!report.ok) {
        const steps = report.log.map((s) => `  ${JSON.stringify(s)}`).join("\n");
        reject(new Error(`agent-run ${mode} ${impl} failed: ${report.error}\nsteps done:\n${steps}\n${stderr}`));
        return;
      }
      resolve(report);
    });
  });
}

/** Tool run times are clock-derived too. */
function maskDurations(text) {
  return text.replace(/"durationMs":\d+/g, '"durationMs":"<DURATION>"');
}

/** A normalizer that has numbered the ids of this file in file order, and its normalized text. */
function normalizedFile(file) {
  const norm = new Normalizer({ roots: [path.dirname(file), projectDir, tmp] });
  const text = maskDurations(norm.text(fs.readFileSync(file, "utf8")));
  return { norm, text };
}

/** Normalized value with tool durations masked (values from a child arrive as JSON). */
function normalizedValue(norm, value) {
  return JSON.parse(maskDurations(JSON.stringify(norm.value(value))));
}

/** The first differing lines of two texts, for a readable failure. */
function lineDiff(a, b, max = 6) {
  const la = a.split("\n");
  const lb = b.split("\n");
  const out = [];
  for (let i = 0; i < Math.max(la.length, lb.length) && out.length < max; i++) {
    if (la[i] !== lb[i]) out.push(`line ${i + 1}:\n  stock: ${la[i]}\n  ours:  ${lb[i]}`);
  }
  return out.join("\n");
}

suite("the coding agent with pi-session-native as its SessionManager", { skip }, () => {
  const runs = {};

  before(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-e2e-")));
    projectDir = path.join(tmp, "project");
    agentDir = path.join(tmp, "agent");
    for (const dir of [projectDir, agentDir, path.join(tmp, "home"), path.join(tmp, "stock"), path.join(tmp, "ours")]) {
      fs.mkdirSync(dir, { recursive: true });
    }
    fs.writeFileSync(path.join(projectDir, "notes.txt"), NOTES);
    childEnv = {
      ...process.env,
      HOME: path.join(tmp, "home"),
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      PI_TELEMETRY: "0",
    };
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test("runs the scripted conversation with the stock SessionManager", async () => {
    runs.stock = await runAgent("conversation", "stock", path.join(tmp, "stock"));
    assert.equal(runs.stock.log[0].sessionManagerClass, "reference");
  });

  test("runs the same conversation with ours passed as sessionManager", async () => {
    runs.ours = await runAgent("conversation", "ours", path.join(tmp, "ours"));
    assert.equal(runs.ours.log[0].sessionManagerClass, "pi-session-native");
  });

  test("both runs went through every step alike: replies, tool result, compaction, navigation, resume", () => {
    assert.ok(runs.stock && runs.ours, "both conversations ran");
    const steps = (run) => run.log.map((s) => normalizedValue(new Normalizer({ roots: [tmp] }), { ...s, sessionManagerClass: undefined }));
    assert.deepEqual(steps(runs.ours), steps(runs.stock));
    const kinds = runs.stock.log.map((s) => s.step);
    for (const kind of ["tool", "thinking", "model", "compact", "navigate", "before-resume"]) {
      assert.ok(kinds.includes(kind), `step ${kind} ran`);
    }
    assert.equal(runs.stock.log.filter((s) => s.step === "create").length, 2, "created, then resumed from the file");
  });

  test("the two session files are equal after normalizing ids, uuids and clock times", () => {
    const stock = normalizedFile(runs.stock.sessionFile).text;
    const ours = normalizedFile(runs.ours.sessionFile).text;
    for (const type of ["compaction", "branch_summary", "label", "session_info", "model_change", "thinking_level_change"]) {
      assert.ok(stock.includes(`{"type":"${type}"`), `the stock file has a ${type} entry`);
    }
    assert.ok(stock.includes('"role":"toolResult"'), "the stock file has a tool result");
    assert.ok(ours === stock, `session files differ after normalization:\n${lineDiff(stock, ours)}`);
  });

  test("the agent saw the same context after resuming each file", () => {
    const context = (run) => {
      const { norm } = normalizedFile(run.sessionFile);
      return normalizedValue(norm, {
        resumedContext: run.resumedContext,
        agentMessagesAtResume: run.agentMessagesAtResume,
        context: run.context,
        agentMessages: run.agentMessages,
        tree: run.tree,
        leafId: run.leafId,
        model: run.model,
        thinkingLevel: run.thinkingLevel,
        sessionName: run.sessionName,
      });
    };
    assert.deepEqual(context(runs.ours), context(runs.stock));
  });

  test("each file opens in the other implementation to the same context", async () => {
    const reference = await loadReference();
    const ours = loadOurs();
    for (const run of [runs.stock, runs.ours]) {
      const contexts = {};
      for (const [name, mod] of [
        ["reference", reference],
        ["ours", ours],
      ]) {
        const { norm } = normalizedFile(run.sessionFile);
        const sm = mod.SessionManager.open(run.sessionFile);
        contexts[name] = normalizedValue(norm, {
          context: sm.buildSessionContext(),
          projection: sm.buildSessionProjection(),
          branch: sm.getBranch(),
          tree: sm.getTree(),
          name: sm.getSessionName(),
        });
      }
      assert.deepEqual(contexts.ours, contexts.reference, `${run.impl}'s file`);
    }
  });

  test("the agent resumes the stock file with ours and our file with the stock one, alike", async () => {
    const crossDir = path.join(tmp, "cross");
    fs.mkdirSync(crossDir, { recursive: true });
    const stockFileByOurs = path.join(crossDir, "stock-file-resumed-by-ours.jsonl");
    const ourFileByStock = path.join(crossDir, "our-file-resumed-by-stock.jsonl");
    fs.copyFileSync(runs.stock.sessionFile, stockFileByOurs);
    fs.copyFileSync(runs.ours.sessionFile, ourFileByStock);
    const byOurs = await runAgent("resume", "ours", stockFileByOurs);
    const byStock = await runAgent("resume", "stock", ourFileByStock);

    const a = normalizedFile(stockFileByOurs);
    const b = normalizedFile(ourFileByStock);
    assert.ok(a.text === b.text, `resumed files differ after normalization:\n${lineDiff(b.text, a.text)}`);
    const view = (norm, r) =>
      normalizedValue(norm, {
        resumedContext: r.resumedContext,
        agentMessagesAtResume: r.agentMessagesAtResume,
        context: r.context,
        model: r.model,
        thinkingLevel: r.thinkingLevel,
        sessionName: r.sessionName,
      });
    assert.deepEqual(view(a.norm, byOurs), view(b.norm, byStock));
    // And the context the stock agent had when it wrote that file.
    const own = normalizedFile(runs.stock.sessionFile);
    assert.deepEqual(normalizedValue(a.norm, byOurs.resumedContext), normalizedValue(own.norm, runs.stock.context));
  });
});
