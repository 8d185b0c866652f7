// Kill test for `pi-sessions sync`: the command runs in a child process and is killed with
// SIGKILL at a random moment while it merges a few dozen sessions. After every kill each session
// file of the machine is either as it was before that sync or the full merge, never half of one:
// it has its header first and exactly one of the two line sets. A sync after the kills finishes
// the job, on this machine and, after its own sync, on the other.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync, spawn } from "node:child_process";
import { loadOurs } from "./helpers/target.mjs";
import { defaultSessionDirFor, rng, tempDir } from "./helpers/fixtures.mjs";
import { ROOT } from "./helpers/target.mjs";

const { syncSessions } = loadOurs();
const BIN = path.join(ROOT, "bin", "pi-sessions.js");
const SESSIONS = 40;

const lineSet = (file) => new Set(fs.readFileSync(file, "utf8").split("\n").slice(1).filter(Boolean));
const sameSet = (a, b) => a.size === b.size && [...a].every((l) => b.has(l));

function entryLine(id, parentId, text) {
  return JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: new Date().toISOString(),
    message: { role: "user", content: text, timestamp: Date.now() },
  });
}

/** Run the sync child and SIGKILL it after `ms`; resolves once it is gone. */
function killedSync(agentDir, remote, ms) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "sync", remote], {
      env: { ...process.env, PI_CODING_AGENT_DIR: agentDir },
      stdio: "ignore",
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

test("a sync killed at a random moment leaves every session before or after, and the next sync completes it", async (t) => {
  const root = tempDir(t);
  const remote = path.join(root, "remote.git");
  execFileSync("git", ["init", "-q", "--bare", remote]);
  const project = path.join(root, "src", "app");
  fs.mkdirSync(project, { recursive: true });
  const a = path.join(root, "a", "agent");
  const b = path.join(root, "b", "agent");
  const dirA = defaultSessionDirFor(a, project);
  const dirB = defaultSessionDirFor(b, project);
  fs.mkdirSync(dirA, { recursive: true });
  const names = [];
  for (let i = 0; i < SESSIONS; i++) {
    const id = `0190aaaa-0000-7000-8000-${String(i).padStart(12, "0")}`;
    const name = `2026-12-03T10-00-00-000Z_${id}.jsonl`;
    const header = JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd: project });
    fs.writeFileSync(path.join(dirA, name), `${header}\n${entryLine(`r${i}`, null, "root ".repeat(200))}\n`);
    names.push(name);
  }
  syncSessions(remote, { agentDir: a });
  syncSessions(remote, { agentDir: b });

  const next = rng(0x5eed);
  let killedMidway = 0;
  for (let round = 0; round < 6; round++) {
    // Both machines continue every session, b syncs, so a's sync has every file to merge.
    for (const [i, name] of names.entries()) {
      fs.appendFileSync(path.join(dirA, name), `${entryLine(`a${round}-${i}`, `r${i}`, "a ".repeat(100))}\n`);
      fs.appendFileSync(path.join(dirB, name), `${entryLine(`b${round}-${i}`, `r${i}`, "b ".repeat(100))}\n`);
    }
    syncSessions(remote, { agentDir: b });
    const before = new Map(names.map((n) => [n, lineSet(path.join(dirA, n))]));
    const theirs = new Map(names.map((n) => [n, lineSet(path.join(dirB, n))]));
    const r = await killedSync(a, remote, 20 + next(400));
    if (r.signal === "SIGKILL") killedMidway++;
    for (const name of names) {
      const file = path.join(dirA, name);
      assert.ok(fs.readFileSync(file, "utf8").startsWith('{"type":"session"'), `${name} keeps its header`);
      const now = lineSet(file);
      const union = new Set([...before.get(name), ...theirs.get(name)]);
      assert.ok(
        sameSet(now, before.get(name)) || sameSet(now, union),
        `round ${round}: ${name} is before or after the merge, not in between`,
      );
    }
    const strays = fs.readdirSync(dirA).filter((f) => f.endsWith(".jsonl") && !names.includes(f));
    assert.deepEqual(strays, [], "no half-written session file is visible");
  }
  assert.ok(killedMidway > 0, "at least one sync was killed before it finished");

  const done = syncSessions(remote, { agentDir: a });
  assert.deepEqual(done.problems, []);
  syncSessions(remote, { agentDir: b });
  for (const name of names) {
    const onA = fs.readFileSync(path.join(dirA, name), "utf8");
    assert.equal(onA, fs.readFileSync(path.join(dirB, name), "utf8"), `${name} is one file on both`);
    for (let round = 0; round < 6; round++) {
      const i = names.indexOf(name);
      assert.ok(onA.includes(`"a${round}-${i}"`) && onA.includes(`"b${round}-${i}"`), `${name} has round ${round} of both`);
    }
  }
});
