// Kill test for `pi-sessions redact --in-place`: the command runs in a child process and is
// killed with SIGKILL at a random moment while it rewrites a big session. After every kill the
// session is whole: exactly the original or exactly the redacted result, never a mix, and stock
// pi's SessionManager (the reference) opens it. A run after the kills finishes the redaction.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { loadReference, ROOT } from "./helpers/target.mjs";
import { assistant, defaultSessionDirFor, rng, tempDir, toolResult, user } from "./helpers/fixtures.mjs";

const Reference = (await loadReference()).SessionManager;
const BIN = path.join(ROOT, "bin", "pi-sessions.js");
const KILLS = 12;
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

const env = (agentDir) => ({ ...process.env, PI_CODING_AGENT_DIR: agentDir });

/** Run `redact --in-place` and SIGKILL it after `ms`; resolves once it is gone. */
function killedRedact(agentDir, file, ms) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "redact", file, "--in-place", "--no-backup"], {
      env: env(agentDir),
      stdio: "ignore",
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

test("redact --in-place killed at a random moment leaves the original or the result, whole", async (t) => {
  const root = tempDir(t);
  const agentDir = path.join(root, "agent");
  const next = rng(0x7ed4);
  const chars = (n) => Array.from({ length: n }, () => ALNUM[next(ALNUM.length)]).join("");
  const sm = Reference.create(root, defaultSessionDirFor(agentDir, root));
  // ~12 MB, so that the rewrite (read, scan, write, fsync, rename) takes long enough to be hit.
  for (let i = 0; i < 200; i++) {
    sm.appendMessage(user(`step ${i}: use ${"gh" + "p_" + chars(36)}`));
    sm.appendMessage(toolResult(`${chars(60_000)} token ${"np" + "m_" + chars(36)}`));
    sm.appendMessage(assistant(`ok ${i}`));
  }
  const file = sm.getSessionFile();
  const original = fs.readFileSync(file);
  // The result, made once on a copy.
  const copy = path.join(root, "copy.jsonl");
  const made = spawnSync(process.execPath, [BIN, "redact", file, "--out", copy], { env: env(agentDir) });
  assert.equal(made.status, 0, String(made.stderr));
  const result = fs.readFileSync(copy);
  assert.ok(!result.equals(original));

  // How long a whole run takes here, so that the kills fall before, inside and after its rename.
  fs.writeFileSync(copy + ".2", original);
  const t0 = performance.now();
  const full = spawnSync(process.execPath, [BIN, "redact", copy + ".2", "--in-place", "--no-backup"], { env: env(agentDir) });
  assert.equal(full.status, 0, String(full.stderr));
  const span = Math.ceil(performance.now() - t0);

  const whole = { original: 0, result: 0 };
  for (let k = 0; k < KILLS; k++) {
    fs.writeFileSync(file, original);
    await killedRedact(agentDir, file, Math.floor(span * 0.3) + next(span));
    const now = fs.readFileSync(file);
    if (now.equals(original)) whole.original++;
    else if (now.equals(result)) whole.result++;
    else assert.fail(`kill ${k}: the session is neither the original nor the result (${now.length} bytes)`);
    assert.equal(Reference.open(file).getEntries().length, 600, `kill ${k}: stock pi reads every entry`);
  }
  t.diagnostic(`after ${KILLS} kills: ${whole.original} original, ${whole.result} redacted`);
  const done = spawnSync(process.execPath, [BIN, "redact", file, "--in-place", "--no-backup"], { env: env(agentDir) });
  assert.equal(done.status, 0, String(done.stderr));
  assert.ok(fs.readFileSync(file).equals(result));
  // Hidden temp files a kill left are never read; nothing else is beside the session.
  const others = fs.readdirSync(path.dirname(file)).filter((n) => !n.startsWith(".") && n !== path.basename(file));
  assert.deepEqual(others, []);
});
