// syncSessions and moveSessions: the library forms of `pi-sessions sync` and `pi-sessions move`.
// Two temp agent dirs stand for two machines and a bare git repository (or a plain folder) for
// the remote. Sessions are written by the reference SessionManager and read back by it.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync, spawn } from "node:child_process";
import { loadOurs, loadReference } from "./helpers/target.mjs";
import { assistant, defaultSessionDirFor, readText, tempDir, user } from "./helpers/fixtures.mjs";

const { syncSessions, moveSessions } = loadOurs();
const Reference = (await loadReference()).SessionManager;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function bareRepo(root) {
  const dir = path.join(root, "remote.git");
  execFileSync("git", ["init", "-q", "--bare", dir]);
  return dir;
}

/** A machine: its agent dir and one project directory (the same path on both unless `project`). */
function machine(root, name, project = path.join(root, "src", "app")) {
  const agentDir = path.join(root, name, "agent");
  fs.mkdirSync(agentDir, { recursive: true });
  fs.mkdirSync(project, { recursive: true });
  return {
    agentDir,
    project,
    sessionDir: defaultSessionDirFor(agentDir, project),
    sync(remote, options = {}) {
      return syncSessions(remote, { agentDir, ...options });
    },
  };
}

/** A reference session of `m`'s project with one exchange, on disk. */
function session(m, text) {
  const sm = Reference.create(m.project, m.sessionDir);
  sm.appendMessage(user(text));
  sm.appendMessage(assistant(`re: ${text}`));
  return sm.getSessionFile();
}

/**
 * A `trash` command of the test's own first on PATH (so nothing reaches the user's real trash),
 * moving files into the returned folder; none on Windows, where files are deleted.
 */
function fakeTrash(t, root) {
  const bin = path.join(root, "bin");
  const can = path.join(root, "can");
  fs.mkdirSync(bin);
  fs.mkdirSync(can);
  if (process.platform !== "win32") {
    fs.writeFileSync(path.join(bin, "trash"), `#!/bin/sh\nmv "$@" '${can}'/\n`, { mode: 0o755 });
  }
  const saved = process.env.PATH;
  process.env.PATH = `${bin}${path.delimiter}${saved}`;
  t.after(() => {
    process.env.PATH = saved;
  });
  return process.platform !== "win32" ? can : null;
}

const ids = (file, dir) =>
  Reference.open(file, dir)
    .getEntries()
    .map((e) => e.id);

test("sessions created on each machine are on both after a sync of each", (t) => {
  const root = tempDir(t);
  const remote = bareRepo(root);
  const a = machine(root, "a");
  const b = machine(root, "b");
  const fa = session(a, "made on a");
  const fb = session(b, "made on b");
  assert.equal(a.sync(remote).pushed, 1);
  const rb = b.sync(remote);
  assert.deepEqual([rb.pushed, rb.pulled, rb.problems], [1, 1, []]);
  a.sync(remote);
  for (const f of [fa, fb]) {
    const name = path.basename(f);
    assert.equal(readText(path.join(a.sessionDir, name)), readText(path.join(b.sessionDir, name)));
  }
  const again = a.sync(remote);
  assert.deepEqual([again.synced.length, again.unchanged], [0, 2]);
});

test("a session continued on both machines ends as one file on both, both continuations as branches the reference reads", async (t) => {
  const root = tempDir(t);
  const remote = bareRepo(root);
  const a = machine(root, "a");
  const b = machine(root, "b");
  const fa = session(a, "start");
  a.sync(remote);
  b.sync(remote);
  const fb = path.join(b.sessionDir, path.basename(fa));
  const common = ids(fa, a.sessionDir);

  const ca = Reference.open(fa, a.sessionDir);
  ca.appendMessage(user("a goes on"));
  ca.appendMessage(assistant("a's answer"));
  await sleep(15);
  const cb = Reference.open(fb, b.sessionDir);
  cb.appendMessage(user("b goes on"));
  cb.appendMessage(assistant("b's answer"));
  const onA = ids(fa, a.sessionDir);
  const onB = ids(fb, b.sessionDir);

  a.sync(remote);
  const rb = b.sync(remote);
  assert.equal(rb.merged, 1);
  a.sync(remote);
  assert.equal(readText(fa), readText(fb), "one file on both machines");

  const merged = Reference.open(fb, b.sessionDir);
  const all = new Set(merged.getEntries().map((e) => e.id));
  for (const id of [...onA, ...onB]) assert.ok(all.has(id), `entry ${id} is in the merged file`);
  assert.equal(all.size, new Set([...onA, ...onB]).size);
  const fork = common[common.length - 1];
  const children = merged.getEntries().filter((e) => e.parentId === fork);
  assert.equal(children.length, 2, "the two continuations hang under the last common entry");
  assert.equal(merged.getLeafId(), onB[onB.length - 1], "the later continuation is resumed");
});

test("a shared folder carries sessions both ways", (t) => {
  const root = tempDir(t);
  const shared = path.join(root, "Sync");
  fs.mkdirSync(shared);
  const a = machine(root, "a");
  const b = machine(root, "b");
  const fa = session(a, "via a folder");
  assert.equal(a.sync(shared, { folder: true }).transport, "folder");
  assert.equal(b.sync(shared, { folder: true }).pulled, 1);
  assert.equal(readText(path.join(b.sessionDir, path.basename(fa))), readText(fa));
});

test("a remote that is no git repository or no folder throws its code and changes nothing", (t) => {
  const root = tempDir(t);
  const a = machine(root, "a");
  const f = session(a, "stays");
  const before = readText(f);
  const plain = path.join(root, "plain");
  fs.mkdirSync(plain);
  assert.throws(() => a.sync(plain), { code: "SYNC_REMOTE_NOT_GIT" });
  assert.throws(() => a.sync(path.join(root, "absent"), { folder: true }), { code: "SYNC_REMOTE_NOT_FOLDER" });
  assert.throws(() => syncSessions(42), { code: "INVALID_ARGUMENT" });
  assert.equal(readText(f), before);
  assert.equal(fs.existsSync(path.join(a.agentDir, "sync")), false);
});

test("an unmapped path of the other machine is reported and placed nowhere, a mapped one lands in the local project", async (t) => {
  const root = tempDir(t);
  const remote = bareRepo(root);
  const a = machine(root, "a", path.join(root, "a-home", "src", "app"));
  const b = machine(root, "b", path.join(root, "b-home", "src", "app"));
  const fa = session(a, "from a's home");
  a.sync(remote);
  // a's project path exists on this disk, so stand in for a path b does not have by removing it.
  fs.rmSync(path.join(root, "a-home", "src", "app"), { recursive: true });
  const unmapped = b.sync(remote);
  assert.deepEqual(
    unmapped.problems.map((p) => p.code),
    ["SYNC_UNMAPPED_PATH"],
  );
  assert.equal(fs.existsSync(path.join(b.agentDir, "sessions")), false, "nothing placed on b");

  const map = path.join(root, "paths");
  fs.writeFileSync(map, `${path.join(root, "a-home")} = ${path.join(root, "b-home")}\n`);
  const mapped = b.sync(remote, { paths: map });
  assert.deepEqual([mapped.pulled, mapped.problems], [1, []]);
  const onB = path.join(b.sessionDir, path.basename(fa));
  const sm = Reference.open(onB, b.sessionDir);
  assert.equal(sm.getCwd(), b.project);
  assert.equal((await Reference.list(b.project, b.sessionDir)).length, 1);
});

test("a writer appending in a loop during syncs loses no acknowledged append, here or on the other machine", async (t) => {
  const root = tempDir(t);
  const remote = bareRepo(root);
  const a = machine(root, "a");
  const b = machine(root, "b");
  const fa = session(a, "busy");
  a.sync(remote);
  b.sync(remote);
  const fb = path.join(b.sessionDir, path.basename(fa));
  const acks = path.join(root, "acks");
  const stop = path.join(root, "stop");
  // Stock pi's way of appending: reopen the path, write one line, close. Each id is acknowledged
  // (written to `acks`) only once its append returned. A pause of 1 ms after every fourth append
  // keeps the writer at most a few thousand lines a second: unpaced, a fast machine appended
  // 140,000 a second, and each sync, slower for the bigger file, let the next grow more (864 MB
  // in 45 s, the test running for minutes); paced, appends still land in every step of a sync.
  const writer = spawn(process.execPath, [
    "-e",
    `const fs = require("fs");
     const pause = new Int32Array(new SharedArrayBuffer(4));
     let parent = ${JSON.stringify(ids(fa, a.sessionDir).at(-1))};
     for (let i = 0; !fs.existsSync(process.argv[3]); i++) {
       const id = "w" + String(i).padStart(7, "0");
       const e = { type: "custom", customType: "tick", data: { i }, id, parentId: parent, timestamp: new Date().toISOString() };
       fs.appendFileSync(process.argv[1], JSON.stringify(e) + "\\n");
       fs.appendFileSync(process.argv[2], id + "\\n");
       parent = id;
       if (i % 4 === 3) Atomics.wait(pause, 0, 0, 1);
     }`,
    fa,
    acks,
    stop,
  ]);
  const exited = new Promise((r) => writer.on("exit", r));
  // A test that fails before the stop file is written must not leave the writer running.
  t.after(() => writer.kill());
  let rewrites = 0;
  for (let round = 0; round < 4; round++) {
    // b changes the session too, so a's sync must rewrite a's file (a merge), not only append.
    const cb = Reference.open(fb, b.sessionDir);
    cb.appendMessage(user(`b round ${round}`));
    cb.appendMessage(assistant(`b answer ${round}`));
    b.sync(remote);
    await sleep(20);
    rewrites += a.sync(remote).merged;
  }
  assert.ok(rewrites > 0, "a's file was rewritten by merges while the writer ran");
  fs.writeFileSync(stop, "");
  await exited;
  a.sync(remote);
  b.sync(remote);
  const acked = readText(acks).split("\n").filter(Boolean);
  assert.ok(acked.length > 0, "the writer appended");
  for (const [file, dir] of [
    [fa, a.sessionDir],
    [fb, b.sessionDir],
  ]) {
    const have = new Set(ids(file, dir));
    const lost = acked.filter((id) => !have.has(id));
    assert.deepEqual(lost, [], `no acknowledged append is missing from ${file}`);
  }
});

test("a session deleted on one machine is deleted on the other at its sync, and one deleted there but continued here is kept", (t) => {
  const root = tempDir(t);
  const can = fakeTrash(t, root);
  const remote = bareRepo(root);
  const a = machine(root, "a");
  const b = machine(root, "b");
  const gone = session(a, "deleted on a");
  const kept = session(a, "deleted on a, continued on b");
  const other = session(a, "untouched");
  a.sync(remote);
  b.sync(remote);
  const onB = (f) => path.join(b.sessionDir, path.basename(f));
  const otherBefore = readText(onB(other));
  // a deletes two sessions the way pi's /resume does (unlink); b goes on with one of them.
  fs.unlinkSync(gone);
  fs.unlinkSync(kept);
  const cb = Reference.open(onB(kept), b.sessionDir);
  cb.appendMessage(user("b goes on"));
  const ra = a.sync(remote);
  assert.deepEqual(
    ra.deleted.map((d) => [d.from, d.how]),
    [
      ["remote", "removed"],
      ["remote", "removed"],
    ],
  );
  const dry = b.sync(remote, { dryRun: true });
  assert.deepEqual(dry.deleted.map((d) => d.local), [onB(gone)]);
  assert.ok(fs.existsSync(onB(gone)), "the dry run deleted nothing");
  const rb = b.sync(remote);
  assert.deepEqual(rb.deleted.map((d) => [d.local, d.from, d.how]), [[onB(gone), "here", can ? "trash" : "removed"]]);
  if (can) assert.ok(fs.existsSync(path.join(can, path.basename(gone))), "b's copy went to the trash");
  assert.deepEqual(rb.synced.map((x) => [x.local, x.action, x.restored]), [[onB(kept), "push", "remote"]]);
  assert.equal(rb.restored, 1);
  const back = a.sync(remote);
  assert.deepEqual([back.pulled, back.deleted], [1, []]);
  assert.equal(fs.existsSync(gone) || fs.existsSync(onB(gone)), false, "gone from both machines");
  assert.equal(readText(kept), readText(onB(kept)), "kept on both, with b's lines");
  assert.ok(ids(kept, a.sessionDir).length > ids(other, a.sessionDir).length);
  assert.equal(readText(onB(other)), otherBefore, "nothing else touched");
});

test("a branch other than main is the library's option too, and a bad one throws INVALID_ARGUMENT", (t) => {
  const root = tempDir(t);
  const remote = bareRepo(root);
  const a = machine(root, "a");
  session(a, "on a branch");
  const r = a.sync(remote, { branch: "pi-sessions" });
  assert.deepEqual([r.branch, r.pushed], ["pi-sessions", 1]);
  const heads = execFileSync("git", ["--git-dir", remote, "for-each-ref", "--format=%(refname)"], { encoding: "utf8" });
  assert.equal(heads.trim(), "refs/heads/pi-sessions");
  assert.throws(() => a.sync(remote, { branch: "bad..name" }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => a.sync(remote, { purge: "not-an-array" }), { code: "INVALID_ARGUMENT" });
  assert.equal(a.sync(path.join(root, "a"), { folder: true }).branch, null);
});

test("moveSessions plans without apply and moves with it, the reference listing the moved session", async (t) => {
  const root = tempDir(t);
  const m = machine(root, "a");
  const f = session(m, "before the rename");
  const renamed = path.join(root, "src", "renamed");
  fs.mkdirSync(renamed);
  const plan = moveSessions(m.project, renamed, { agentDir: m.agentDir });
  assert.deepEqual([plan.applied, plan.moved, plan.files[0].status], [false, 1, "planned"]);
  assert.ok(fs.existsSync(f));
  const done = moveSessions(m.project, renamed, { agentDir: m.agentDir, apply: true });
  assert.deepEqual([done.applied, done.moved, done.files[0].status], [true, 1, "moved"]);
  assert.equal(fs.existsSync(f), false);
  const listed = await Reference.list(renamed, defaultSessionDirFor(m.agentDir, renamed));
  assert.equal(listed.length, 1);
  assert.equal(listed[0].cwd, renamed);
  assert.throws(() => moveSessions(renamed, renamed, { agentDir: m.agentDir }), { code: "INVALID_ARGUMENT" });
});
