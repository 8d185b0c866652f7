// What a writer killed in the middle of replacing a session file leaves behind, put right by the
// next look at the directory (the core's fsio::leftovers). On file systems without POSIX renames
// (FAT, many network shares, Wine) a replaced file steps aside under a hidden name first, so a
// kill between the two renames leaves the session as `.<name>.<pid>.<random>.old`: the next
// listing, `continueRecent` or sync gives it its name back. A hidden temp file nobody has touched
// for ten minutes goes; a fresh one (a writer may be working) stays, and so does an aside while a
// fresh temp file for its name is there.
// An addition beyond the reference (README, "Additions beyond the reference"), which never lists
// hidden names: these run on this package only.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { loadOurs, ROOT } from "./helpers/target.mjs";
import { assistant, chain, defaultSessionDirFor, header, msgEntry, setMtime, tempDir, user, writeSession } from "./helpers/fixtures.mjs";

const { SessionManager } = loadOurs();
const HOUR = 3600_000;
const NAME = "2026-01-02T03-04-05-600Z_0194f2a0-0000-7000-8000-000000000001.jsonl";

/** A session dir holding one session, then moved aside as a killed replace leaves it; returns
 * the dir, the session's path and its bytes. */
function leftAside(t, { cwd = "/proj", dir = path.join(tempDir(t), "sessions") } = {}) {
  const file = writeSession(dir, NAME, header({ id: "0194f2a0-0000-7000-8000-000000000001", cwd }), chain([msgEntry("a1", undefined, user("keep me")), msgEntry("a2", undefined, assistant("kept"))]));
  const bytes = fs.readFileSync(file);
  fs.renameSync(file, path.join(dir, `.${NAME}.4242.0a1b2c3d.old`));
  return { dir, file, bytes };
}

/** The new content the killed writer had ready, in its temp file, last written `ago` ms ago. */
function tempOf(dir, ago) {
  const tmp = path.join(dir, `.${NAME}.4242.9f8e7d6c.tmp`);
  fs.writeFileSync(tmp, "half of a new file");
  setMtime(tmp, Date.now() - ago);
  return tmp;
}

test("a session left aside by a killed replace is listed again, byte for byte, and the writer's stale temp file goes", async (t) => {
  const { dir, file, bytes } = leftAside(t);
  const tmp = tempOf(dir, HOUR);
  const listed = await SessionManager.list("/proj", dir);
  assert.deepEqual(
    listed.map((s) => s.path),
    [file],
  );
  assert.deepEqual(fs.readFileSync(file), bytes);
  assert.equal(fs.existsSync(tmp), false);
  assert.deepEqual(fs.readdirSync(dir), [NAME]);
  const sm = SessionManager.open(file);
  assert.deepEqual(
    sm.getBranch().map((e) => e.id),
    ["a1", "a2"],
  );
});

test("while a fresh temp file for its name is there (a writer may be renaming it in), the aside stays where it is", async (t) => {
  const { dir, file } = leftAside(t);
  const tmp = tempOf(dir, 1000);
  assert.deepEqual(await SessionManager.list("/proj", dir), []);
  assert.equal(fs.existsSync(file), false);
  assert.equal(fs.existsSync(tmp), true);
  // Ten minutes on, nobody is: the next look restores it.
  setMtime(tmp, Date.now() - HOUR);
  assert.equal((await SessionManager.list("/proj", dir)).length, 1);
  assert.equal(fs.existsSync(file), true);
});

test("continueRecent resumes a session that was left aside instead of starting a new one", (t) => {
  const agent = tempDir(t);
  const dir = defaultSessionDirFor(agent, "/proj");
  const { file, bytes } = leftAside(t, { dir });
  const sm = SessionManager.continueRecent("/proj", dir);
  assert.equal(sm.getSessionFile(), file);
  assert.deepEqual(fs.readFileSync(file), bytes);
});

test("a file that has its name again keeps it: a stale aside of it goes, a fresh one stays", async (t) => {
  const dir = path.join(tempDir(t), "sessions");
  const file = writeSession(dir, NAME, header({ cwd: "/proj" }), [msgEntry("n1", null, user("current"))]);
  const current = fs.readFileSync(file);
  const aside = path.join(dir, `.${NAME}.77.12345678.old`);
  fs.writeFileSync(aside, "the replaced version\n");
  await SessionManager.list("/proj", dir);
  assert.equal(fs.existsSync(aside), true, "fresh: its replace may still be under way");
  setMtime(aside, Date.now() - HOUR);
  await SessionManager.list("/proj", dir);
  assert.equal(fs.existsSync(aside), false);
  assert.deepEqual(fs.readFileSync(file), current);
});

test("pi-sessions sync puts a session left aside back before it compares the machines", (t) => {
  const root = tempDir(t);
  const remote = path.join(root, "remote.git");
  execFileSync("git", ["init", "-q", "--bare", remote]);
  const agent = path.join(root, "agent");
  const dir = defaultSessionDirFor(agent, "/proj");
  const { file, bytes } = leftAside(t, { dir });
  execFileSync(process.execPath, [path.join(ROOT, "bin", "pi-sessions.js"), "sync", remote], {
    env: { ...process.env, PI_CODING_AGENT_DIR: agent },
    stdio: "pipe",
  });
  assert.deepEqual(fs.readFileSync(file), bytes);
  const pushed = execFileSync("git", ["--git-dir", remote, "ls-tree", "-r", "--name-only", "main"], { encoding: "utf8" });
  assert.match(pushed, new RegExp(NAME.replace(/[.]/g, "\\.")));
});
