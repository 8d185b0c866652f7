// pi-native reads the session pi is about to open on another thread while pi loads its code
// (launcher/preread.js, the core's file/preread.rs). These tests pin which session that is, and
// that an open takes what was read ahead only for that file unchanged: otherwise it reads the
// file as it is.
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";

import { tempDir } from "./helpers/fixtures.mjs";
import { loadOurs, loadReference, ROOT, setTuning } from "./helpers/target.mjs";

const require = createRequire(import.meta.url);
const { sessionToReadAhead } = require(path.join(ROOT, "launcher", "preread.js"));
const native = require(path.join(ROOT, "native.js"));
const { SessionManager } = loadOurs();
const Reference = (await loadReference()).SessionManager;

/** A session of `turns` turns written by the reference in `dir`; its file. */
function session(dir, turns, cwd = "/proj") {
  const sm = Reference.create(cwd, dir);
  for (let i = 0; i < turns; i++) {
    sm.appendMessage({ role: "user", content: `question ${i} ${"q".repeat(300)}`, timestamp: i });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: `answer ${i} ${"a".repeat(400)}` }], provider: "p", model: "m", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: i });
  }
  return sm.getSessionFile();
}

/** Runs `fn` with the agent dir (and so the default session dirs) under `home`. */
function withAgentDir(t, agentDir) {
  const before = { dir: process.env.PI_CODING_AGENT_DIR, sessions: process.env.PI_CODING_AGENT_SESSION_DIR };
  process.env.PI_CODING_AGENT_DIR = agentDir;
  delete process.env.PI_CODING_AGENT_SESSION_DIR;
  t.after(() => {
    for (const [k, v] of [["PI_CODING_AGENT_DIR", before.dir], ["PI_CODING_AGENT_SESSION_DIR", before.sessions]]) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

test("the session read ahead is the one pi's arguments open: a --session path, or -c's most recent", (t) => {
  const home = tempDir(t, "pi-preread-");
  const agentDir = path.join(home, "agent");
  withAgentDir(t, agentDir);
  const cwd = path.join(home, "project");
  fs.mkdirSync(cwd);
  const file = session(path.join(home, "elsewhere"), 2);
  assert.equal(sessionToReadAhead(["--session", file, "-p", "hi"], cwd), file);
  assert.equal(sessionToReadAhead(["--session", path.relative(cwd, file)], cwd), file);
  // An id (no separator, no .jsonl) is resolved by a listing: nothing is read ahead for it.
  assert.equal(sessionToReadAhead(["--session", "0199abcd"], cwd), null);
  assert.equal(sessionToReadAhead(["--session", path.join(home, "missing.jsonl")], cwd), null);
  // -c: the newest session of the cwd's default session dir, as continueRecent picks it.
  assert.equal(sessionToReadAhead(["-c"], cwd), null, "no session dir yet");
  const dir = path.join(agentDir, "sessions", `--${cwd.replace(/^\//, "").replace(/[/\\:]/g, "-")}--`);
  const older = session(dir, 1, cwd);
  const newer = session(dir, 1, cwd);
  fs.utimesSync(older, new Date(2020, 0, 1), new Date(2020, 0, 1));
  assert.equal(sessionToReadAhead(["--continue"], cwd), SessionManager.continueRecent(cwd).getSessionFile());
  assert.equal(sessionToReadAhead(["-c"], cwd), newer);
  // What opens something else, or a session dir a settings file may move, reads nothing ahead.
  for (const other of [["-c", "--fork", file], ["-c", "--no-session"], ["-r"], ["--session", file, "--help"]]) {
    assert.equal(sessionToReadAhead(other, cwd), null, other.join(" "));
  }
  fs.mkdirSync(path.join(cwd, ".pi"));
  fs.writeFileSync(path.join(cwd, ".pi", "settings.json"), JSON.stringify({ sessionDir: "/somewhere" }));
  assert.equal(sessionToReadAhead(["-c"], cwd), null);
  assert.equal(sessionToReadAhead(["-c", "--session-dir", dir], cwd), newer, "an explicit dir wins over settings");
});

for (const where of ["read whole", "scanned"]) {
  test(`an open takes a file ${where} ahead only when it is the file as it is now`, (t) => {
    if (where === "scanned") {
      setTuning({ lazyFileBytes: 0 });
      t.after(() => setTuning());
    }
    const dir = tempDir(t, "pi-preread-open-");
    const file = session(dir, 30);
    const expected = () => Reference.open(file, dir).getEntries();
    native.prereadSession(file);
    assert.deepStrictEqual(SessionManager.open(file, dir).getEntries(), expected());
    // Changed between the read ahead and the open (another pi appended a turn): the open reads
    // the file again and sees the new turn.
    native.prereadSession(file);
    const other = Reference.open(file, dir);
    other.appendMessage({ role: "user", content: "appended after the read ahead", timestamp: 99 });
    const opened = SessionManager.open(file, dir);
    assert.equal(opened.getLeafEntry().message.content, "appended after the read ahead");
    assert.deepStrictEqual(opened.getEntries(), expected());
    // Read ahead for another file: not taken by this one; dropped unused.
    const second = session(dir, 3);
    native.prereadSession(second);
    assert.deepStrictEqual(SessionManager.open(file, dir).getEntries(), expected());
    native.forgetPreread();
    assert.equal(SessionManager.open(second, dir).getEntries().length, 6);
  });
}

test("a torn tail read ahead is still ended by the open, as without the read ahead", (t) => {
  const dir = tempDir(t, "pi-preread-torn-");
  const file = session(dir, 2);
  fs.appendFileSync(file, '{"type":"message","id":"torn","par');
  native.prereadSession(file);
  const sm = SessionManager.open(file, dir);
  assert.equal(sm.getEntries().length, 4);
  assert.ok(fs.readFileSync(file, "utf8").endsWith('"par\n'));
});
