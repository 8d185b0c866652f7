// Kill test for `pi-sessions move`: the command runs in a child process and is killed with SIGKILL
// at a random moment while it moves a few dozen sessions. After every kill each session is whole
// where it is: an old file, when there, is exactly as it was; a new one, when there, is exactly
// the moved file (only the header's cwd changed); at least one of the two is there. A run after
// the kills finishes the move, and stock pi's SessionManager (the reference) started in the new
// directory lists every session and resumes each to the same context as before.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { loadReference, ROOT } from "./helpers/target.mjs";
import { assistant, defaultSessionDirFor, rng, tempDir, user } from "./helpers/fixtures.mjs";

const Reference = (await loadReference()).SessionManager;
const BIN = path.join(ROOT, "bin", "pi-sessions.js");
const SESSIONS = 30;
const KILLS = 8;

const env = (agentDir) => ({ ...process.env, PI_CODING_AGENT_DIR: agentDir });

/** Run `move --yes` and SIGKILL it after `ms`; resolves once it is gone. */
function killedMove(agentDir, from, to, ms) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "move", from, to, "--yes"], { env: env(agentDir), stdio: "ignore" });
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/** The session files (what stock pi lists) of a directory, by name. @param {string} dir */
function sessionsIn(dir) {
  const out = new Map();
  if (!fs.existsSync(dir)) return out;
  for (const name of fs.readdirSync(dir)) if (name.endsWith(".jsonl")) out.set(name, fs.readFileSync(path.join(dir, name), "utf8"));
  return out;
}

/** The file as the move writes it: the header's cwd set to `cwd`, every other line as it was. */
function moved(text, cwd) {
  const nl = text.indexOf("\n");
  const header = JSON.parse(text.slice(0, nl));
  return JSON.stringify({ ...header, cwd }) + text.slice(nl);
}

test("a move killed at a random moment leaves every session whole on one side, and the next run completes it for stock pi", async (t) => {
  const root = tempDir(t);
  const agentDir = path.join(root, "agent");
  const from = path.join(root, "src", "old-name");
  const to = path.join(root, "src", "new-name");
  fs.mkdirSync(from, { recursive: true });
  fs.mkdirSync(to, { recursive: true });
  const oldDir = defaultSessionDirFor(agentDir, from);
  const newDir = defaultSessionDirFor(agentDir, to);
  const next = rng(0x30ec);
  const contexts = new Map();
  for (let i = 0; i < SESSIONS; i++) {
    const sm = Reference.create(from, oldDir);
    for (let turn = 0; turn < 1 + next(4); turn++) {
      sm.appendMessage(user(`question ${i}.${turn} ${"x".repeat(next(3000))}`));
      sm.appendMessage(assistant(`answer ${i}.${turn}`));
    }
    contexts.set(path.basename(sm.getSessionFile()), sm.buildSessionContext());
  }
  const original = sessionsIn(oldDir);
  assert.equal(original.size, SESSIONS);

  let partial = 0;
  for (let k = 0; k < KILLS; k++) {
    await killedMove(agentDir, from, to, 40 + next(700));
    const olds = sessionsIn(oldDir);
    const news = sessionsIn(newDir);
    for (const [name, text] of original) {
      const o = olds.get(name);
      const n = news.get(name);
      assert.ok(o !== undefined || n !== undefined, `kill ${k}: ${name} is on neither side`);
      if (o !== undefined) assert.equal(o, text, `kill ${k}: the old ${name} changed`);
      if (n !== undefined) assert.equal(n, moved(text, to), `kill ${k}: the new ${name} is not the whole move`);
    }
    for (const name of news.keys()) assert.ok(original.has(name), `kill ${k}: a stray ${name} in the new dir`);
    if (olds.size > 0 && news.size > 0) partial++;
  }
  assert.ok(partial > 0, "at least one kill landed in the middle of the move");

  const done = spawnSync(process.execPath, [BIN, "move", from, to, "--yes", "--json"], { env: env(agentDir), encoding: "utf8" });
  assert.equal(done.status, 0, done.stderr);
  assert.equal(sessionsIn(oldDir).size, 0);
  const again = spawnSync(process.execPath, [BIN, "move", from, to, "--yes", "--json"], { env: env(agentDir), encoding: "utf8" });
  assert.equal(again.status, 0, again.stderr);
  assert.equal(JSON.parse(again.stdout).files.length, 0, "a second run has nothing to move");

  // Stock pi in the renamed project: /resume lists them all, and each resumes as before.
  const listed = await Reference.list(to, newDir);
  assert.equal(listed.length, SESSIONS);
  for (const info of listed) {
    assert.equal(info.cwd, to);
    const sm = Reference.open(info.path);
    assert.equal(sm.getCwd(), to);
    assert.deepEqual(sm.buildSessionContext(), contexts.get(path.basename(info.path)));
  }
});
