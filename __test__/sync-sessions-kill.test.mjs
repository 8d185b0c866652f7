// Kill tests for `pi-sessions sync`: the command runs in a child process and is killed with
// SIGKILL at a random moment while it merges a few dozen sessions (the first test) or carries
// deletions both ways (the second). After every kill each session file of the machine is either
// as it was before that sync or the full merge, never half of one: it has its header first and
// exactly one of the two line sets. A sync after the kills finishes the job, on this machine and,
// after its own sync, on the other.
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

/** Two machines' agent dirs (`a`, `b`) with one project's session dirs (`dirA` made, `dirB` not
 * yet) and a bare git repository as their remote, in a temp dir of the test. */
function twoMachines(t) {
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
  return { root, remote, project, a, b, dirA, dirB };
}

/** Run the sync child (`env` added to its environment) and SIGKILL it after `ms`; resolves once
 * it is gone. */
function killedSync(agentDir, remote, ms, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "sync", remote], {
      env: { ...process.env, ...env, PI_CODING_AGENT_DIR: agentDir },
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
  const { root, remote, project, a, b, dirA, dirB } = twoMachines(t);
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

// Deletions: each round b deletes two sessions and one that a goes on with, and continues one that
// a deletes; a deletes two more; b syncs, then a's sync is killed at a random moment. After every
// kill a's files are whole: a session deleted only on b is there as it was or in the trash, one a
// deleted stays gone, one a continued (deleted on b) is there, one b continued (deleted on a) is
// absent or back whole with b's lines, every other session is there. Syncs after the kills leave
// both machines with exactly the sessions no one deleted and the ones continued elsewhere.
test("a sync carrying deletions killed at a random moment deletes only what was deleted, and the next sync completes it", async (t) => {
  const { root, remote, project, a, b, dirA, dirB } = twoMachines(t);
  // A `trash` command of the test's own, so that nothing reaches the user's real trash.
  const can = path.join(root, "can");
  const bin = path.join(root, "bin");
  fs.mkdirSync(can);
  fs.mkdirSync(bin);
  const unix = process.platform !== "win32";
  if (unix) {
    fs.writeFileSync(path.join(bin, "trash"), `#!/bin/sh\nmv "$@" '${can}'/\n`, { mode: 0o755 });
  }
  const savedPath = process.env.PATH;
  process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
  t.after(() => {
    process.env.PATH = savedPath;
  });

  const ROUNDS = 5;
  const names = [];
  const original = new Map();
  for (let i = 0; i < 6 * ROUNDS + 4; i++) {
    const id = `0190bbbb-0000-7000-8000-${String(i).padStart(12, "0")}`;
    const name = `2026-12-03T10-00-00-000Z_${id}.jsonl`;
    const header = JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd: project });
    const text = `${header}\n${entryLine(`r${i}`, null, "root ".repeat(100))}\n`;
    fs.writeFileSync(path.join(dirA, name), text);
    names.push(name);
    original.set(name, text);
  }
  syncSessions(remote, { agentDir: a });
  syncSessions(remote, { agentDir: b });

  // What each session is: "keep" (untouched), "goneB"/"goneA" (deleted on b/a only), "backOnA"
  // (deleted on a, continued on b), "backOnB" (deleted on b, continued on a).
  const role = new Map(names.map((n) => [n, "keep"]));
  const bVersion = new Map();
  const next = rng(0xde1e7e);
  let killedMidway = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const [goneB1, goneB2, goneA1, goneA2, backOnA, backOnB] = names.slice(6 * round, 6 * round + 6);
    for (const n of [goneB1, goneB2, backOnB]) fs.unlinkSync(path.join(dirB, n));
    fs.appendFileSync(path.join(dirB, backOnA), `${entryLine(`b${round}`, `r${names.indexOf(backOnA)}`, "b")}\n`);
    bVersion.set(backOnA, fs.readFileSync(path.join(dirB, backOnA), "utf8"));
    syncSessions(remote, { agentDir: b });
    for (const n of [goneA1, goneA2, backOnA]) fs.unlinkSync(path.join(dirA, n));
    fs.appendFileSync(path.join(dirA, backOnB), `${entryLine(`a${round}`, `r${names.indexOf(backOnB)}`, "a")}\n`);
    Object.entries({ goneB1, goneB2, goneA1, goneA2, backOnA, backOnB }).forEach(([k, n]) => role.set(n, k.replace(/\d$/, "")));

    const before = new Map(names.map((n) => [n, fs.existsSync(path.join(dirA, n)) ? fs.readFileSync(path.join(dirA, n), "utf8") : null]));
    const r = await killedSync(a, remote, 20 + next(400), { PATH: process.env.PATH });
    if (r.signal === "SIGKILL") killedMidway++;
    for (const n of names) {
      const file = path.join(dirA, n);
      const now = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
      const at = `round ${round}: ${n} (${role.get(n)})`;
      if (now !== null) {
        assert.ok(now.startsWith('{"type":"session"') && now.endsWith("\n"), `${at} is whole`);
      }
      switch (role.get(n)) {
        case "goneA":
          assert.equal(now, null, `${at} stays deleted`);
          break;
        case "goneB":
          assert.ok(now === null || now === before.get(n), `${at} as it was, or gone`);
          if (now === null && unix) assert.equal(fs.readFileSync(path.join(can, n), "utf8"), original.get(n), `${at} is in the trash whole`);
          break;
        case "backOnA":
          assert.ok(now === null || now === bVersion.get(n), `${at} is absent or back with b's lines`);
          break;
        default:
          assert.equal(now, before.get(n), `${at} is untouched`);
      }
    }
    const strays = fs.readdirSync(dirA).filter((f) => f.endsWith(".jsonl") && !names.includes(f));
    assert.deepEqual(strays, [], "no half-written session file is visible");
  }
  assert.ok(killedMidway > 0, "at least one sync was killed before it finished");

  assert.deepEqual(syncSessions(remote, { agentDir: a }).problems, []);
  assert.deepEqual(syncSessions(remote, { agentDir: b }).problems, []);
  assert.deepEqual(syncSessions(remote, { agentDir: a }).problems, []);
  const alive = names.filter((n) => ["keep", "backOnA", "backOnB"].includes(role.get(n)));
  for (const dir of [dirA, dirB]) {
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort(), [...alive].sort(), `${dir} holds exactly the live sessions`);
  }
  for (const n of alive) {
    const onA = fs.readFileSync(path.join(dirA, n), "utf8");
    assert.equal(onA, fs.readFileSync(path.join(dirB, n), "utf8"), `${n} is one file on both`);
    if (role.get(n) === "keep") assert.equal(onA, original.get(n));
    if (role.get(n) === "backOnA") assert.equal(onA, bVersion.get(n), `${n} has b's lines`);
    if (role.get(n) === "backOnB") assert.match(onA, /"id":"a\d+"/, `${n} has a's lines`);
  }
});
