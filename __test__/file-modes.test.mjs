// File modes of session files (Unix): the reference's modes (the umask over 0666/0777) by
// default, and with PI_SESSION_PRIVATE=1 new session files 0600 and new session directories 0700:
// a manager's first write, the project directory `create` makes, `forkFrom`'s target and the
// file `createBranchedSession` writes. The listing cache the manager's listing writes is private
// either way.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { SessionManager } from "../index.mjs";
import { assistant, tempDir, useAgentDir, user, withEnv } from "./helpers/fixtures.mjs";

const mode = (p) => fs.statSync(p).mode & 0o777;
const skip = process.platform === "win32" ? "Windows has no such modes" : false;

/** A session made by `create` in a project whose session dir does not exist yet, and its copies. */
function sessions(t) {
  const agentDir = useAgentDir(t);
  const cwd = tempDir(t);
  const sm = SessionManager.create(cwd);
  sm.appendMessage(user("hello"));
  sm.appendMessage(assistant("hi"));
  const file = sm.getSessionFile();
  const branched = sm.createBranchedSession(sm.getLeafId());
  const forkDir = path.join(agentDir, "forks", "deep");
  const forked = SessionManager.forkFrom(file, cwd, forkDir).getSessionFile();
  return { agentDir, file, dir: path.dirname(file), branched, forked, forkDir };
}

test("session files and directories get the reference's modes by default", { skip }, async (t) => {
  withEnv(t, { PI_SESSION_PRIVATE: undefined });
  const s = sessions(t);
  const umask = process.umask();
  for (const f of [s.file, s.branched, s.forked]) assert.equal(mode(f), 0o666 & ~umask, f);
  for (const d of [s.dir, s.forkDir]) assert.equal(mode(d), 0o777 & ~umask, d);
  await SessionManager.listAll();
  assert.equal(mode(path.join(s.agentDir, ".pi-session-native")), 0o700);
  assert.equal(mode(path.join(s.agentDir, ".pi-session-native", "list-cache")), 0o600);
});

test("PI_SESSION_PRIVATE=1 makes new session files 0600 and new session directories 0700", { skip }, (t) => {
  withEnv(t, { PI_SESSION_PRIVATE: "1" });
  const s = sessions(t);
  for (const f of [s.file, s.branched, s.forked]) assert.equal(mode(f), 0o600, f);
  for (const d of [s.dir, s.forkDir]) assert.equal(mode(d), 0o700, d);
});
