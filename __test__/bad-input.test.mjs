// Bad input from JavaScript: 10,000 random argument combinations (wrong types, missing arguments,
// null, cyclic objects, BigInt, functions, symbols and symbol keys, huge strings, deep nesting,
// throwing getters, throwing and revoked Proxies, aborted signals) at every static and instance
// method of SessionManager. The run happens in a child process sandboxed in a temp dir (cwd, HOME,
// PI_CODING_AGENT_DIR), see helpers/bad-input-child.mjs. Then:
//   - the process survived (no crash, no abort, no Rust panic reaching JS);
//   - every error thrown (or promise rejected) is an Error with a string `code` in the stable
//     UPPER_CASE form (ours, errno names, Node's ERR_*); the one exception is the caller's own
//     AbortSignal reason, passed on as the reference does;
//   - the session still passes an integrity check: every line of its file parses, and reopening
//     the file (ours and the reference) gives the same entries as in memory.
//   BAD_INPUT_SEED (default 11), BAD_INPUT_CALLS (default 10000).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { loadOurs } from "./helpers/target.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(HERE, "helpers", "bad-input-child.mjs");
const SEED = Number(process.env.BAD_INPUT_SEED ?? 11);
const CALLS = Number(process.env.BAD_INPUT_CALLS ?? 10_000);

test(`${CALLS} random argument combinations leave the process alive, errors coded and the session intact`, { timeout: 120_000 }, (t) => {
  const sandbox = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-bad-input-")));
  t.after(() => fs.rmSync(sandbox, { recursive: true, force: true }));
  const r = spawnSync(process.execPath, ["--stack-size=984", CHILD, String(SEED), String(CALLS)], {
    cwd: sandbox,
    env: { ...process.env, HOME: sandbox, PI_CODING_AGENT_DIR: path.join(sandbox, "agent"), PI_SESSION_EXCLUSIVE: "", PI_SESSION_FSYNC: "" },
    encoding: "utf8",
    maxBuffer: 64 << 20,
    timeout: 110_000,
  });
  assert.equal(r.signal, null, `the child died of ${r.signal}\n${r.stderr.slice(-2000)}`);
  assert.equal(r.status, 0, `the child exited with ${r.status}\n${r.stderr.slice(-2000)}`);
  const report = JSON.parse(r.stdout.trim().split("\n").at(-1));
  t.diagnostic(`${report.calls} calls in ${report.elapsed} ms, ${report.threw} threw; codes: ${JSON.stringify(report.codes)}`);
  t.diagnostic(
    `integrity: memory = file at ${report.integrity.checkpoints} checkpoints, ${report.integrity.files} file checks, final write: ${report.integrity.finalWrite}`,
  );
  assert.equal(report.calls, CALLS);
  assert.deepEqual(report.badErrors, [], "errors without a string code");
  for (const code of Object.keys(report.codes)) {
    assert.match(code, /^(AbortError|[A-Z][A-Z0-9_]*)$/, `unexpected error code ${code}`);
    assert.notEqual(code, "INTERNAL_ERROR", "a Rust panic was caught at the boundary");
  }
  assert.ok(!/panicked|RUST_BACKTRACE/.test(r.stderr), `a Rust panic was reported:\n${r.stderr.slice(-2000)}`);
  assert.deepEqual(report.integrity.problems, [], "integrity");
  assert.ok(report.integrity.checkpoints >= 5, "the session was rarely on a file it could write");
});

test("arguments of the wrong type get INVALID_ARGUMENT and leave the manager unchanged", (t) => {
  const { SessionManager } = loadOurs();
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-bad-arg-")));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sm = SessionManager.create(dir, dir);
  const first = sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
  const snapshot = () => JSON.stringify([sm.getEntries(), sm.getLeafId(), sm.getSessionFile(), fs.readFileSync(sm.getSessionFile(), "utf8")]);
  const before = snapshot();
  const cyclic = {};
  cyclic.self = cyclic;
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const cases = [
    () => sm.appendMessage(cyclic),
    () => sm.appendMessage({ big: 1n }),
    () => sm.appendCustomEntry("x", revoked.proxy),
    () => sm.appendSessionInfo(null),
    () => sm.appendSessionInfo(Symbol("s")),
    () => sm.setSessionFile(5),
    () => sm.setSessionFile(undefined),
    () => sm.branch(Symbol("s")),
    () => sm.appendLabelChange(Symbol("s"), "l"),
    () => sm.newSession(new Proxy({}, { get() { throw "trap"; } })),
    () => sm.setExclusive("yes"),
    () => sm.setFsync(1),
    () => SessionManager.open(42),
    () => SessionManager.create(Symbol("cwd")),
    () => SessionManager.forkFrom(null, dir),
  ];
  for (const [i, call] of cases.entries()) {
    assert.throws(call, (err) => err instanceof Error && err.code === "INVALID_ARGUMENT", `case ${i}: ${call}`);
    assert.equal(snapshot(), before, `case ${i} changed the manager: ${call}`);
  }
  // Valid calls still work afterwards, and values the reference accepts are accepted.
  assert.equal(typeof sm.appendMessage(5), "string");
  assert.equal(sm.getEntry(first).message.content, "hi");
});
