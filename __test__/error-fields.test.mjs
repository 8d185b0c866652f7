// A file-system failure reaches the caller the way Node's own `fs` reports it: the same `code`
// (the errno name), a negative `errno`, the `syscall` and, for a call on a path, the `path`, as
// own enumerable properties in Node's order. Each test provokes a real failure through the public
// API and makes the same call with `fs` to learn what Node says. Errors that are not file-system
// failures carry none of these fields. (As root a permission failure cannot be provoked, so none
// of these tests relies on one.) PI_TEST_TARGET=reference runs them on the reference.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { tempDir as tmp, thrownBy, user, assistant } from "./helpers/fixtures.mjs";
import { TARGET, loadTarget } from "./helpers/target.mjs";

const { SessionManager } = await loadTarget();

const FIELDS = ["code", "errno", "syscall", "path"];
const fields = (err) => Object.fromEntries(FIELDS.map((k) => [k, err[k]]));

/** `ours` is Node's `node` error: same fields, same own keys in the same order, same message. */
function assertLikeNode(ours, node) {
  assert.ok(ours instanceof Error, "an Error");
  assert.equal(typeof node.errno, "number", "the fs call failed with an errno");
  assert.deepEqual(fields(ours), fields(node));
  assert.deepEqual(Object.keys(ours), Object.keys(node));
  assert.equal(ours.message, node.message);
}

test("a session dir below a regular file fails like Node's mkdir: ENOTDIR with errno, syscall and path", (t) => {
  const dir = tmp(t);
  const file = path.join(dir, "plain-file");
  fs.writeFileSync(file, "not a directory");
  const sessionDir = path.join(file, "sessions");
  const ours = thrownBy(() => {
    const sm = SessionManager.create(dir, sessionDir);
    sm.appendMessage(user());
    sm.appendMessage(assistant());
  });
  const node = thrownBy(() => fs.mkdirSync(sessionDir, { recursive: true }));
  assert.equal(node.code, "ENOTDIR");
  assertLikeNode(ours, node);
});

test("a session dir whose name is too long fails like Node's mkdir: ENAMETOOLONG with errno, syscall and path", (t) => {
  const dir = tmp(t);
  const sessionDir = path.join(dir, "x".repeat(300));
  const ours = thrownBy(() => {
    const sm = SessionManager.create(dir, sessionDir);
    sm.appendMessage(user());
    sm.appendMessage(assistant());
  });
  // Node's answer from a plain mkdir (the parent exists, so it is the call a recursive one ends
  // in): a recursive mkdir never returns under Wine, whose CreateDirectory answers a too-long name
  // with "path not found", which Node's mkdirp takes as a missing parent, creates it, and retries.
  const node = thrownBy(() => fs.mkdirSync(sessionDir));
  // Windows' answer to the name depends on the file system (under Wine 8 "path not found", so
  // ENOENT, for Node and for us alike): there Node's own answer is the one to match.
  if (process.platform !== "win32") assert.equal(node.code, "ENAMETOOLONG");
  assertLikeNode(ours, node);
});

test("forkFrom into a target dir below a regular file fails like Node's mkdir, and writes nothing", (t) => {
  const dir = tmp(t);
  const source = SessionManager.create(dir, path.join(dir, "src"));
  source.appendMessage(user());
  source.appendMessage(assistant());
  const file = path.join(dir, "plain-file");
  fs.writeFileSync(file, "not a directory");
  const target = path.join(file, "forks");
  const ours = thrownBy(() => SessionManager.forkFrom(source.getSessionFile(), dir, target));
  const node = thrownBy(() => fs.mkdirSync(target, { recursive: true }));
  assert.equal(node.code, "ENOTDIR");
  assertLikeNode(ours, node);
  assert.equal(fs.readFileSync(file, "utf8"), "not a directory");
});

test("opening a directory fails like Node's read of it: EISDIR with errno and syscall, and no path (a call on a descriptor)", (t) => {
  const dir = tmp(t);
  const ours = thrownBy(() => SessionManager.open(dir, path.join(dir, "sessions")));
  const node = thrownBy(() => fs.readFileSync(dir));
  assert.equal(node.code, "EISDIR");
  assert.equal(node.path, undefined);
  assert.ok(ours instanceof Error);
  assert.deepEqual(fields(ours), fields(node));
  assert.deepEqual(Object.keys(ours), Object.keys(node));
  // Ours names the file after the syscall, where Node names none.
  assert.ok(ours.message.startsWith(node.message), ours.message);
});

test("a missing fork source is not a file-system failure: no errno, syscall or path", (t) => {
  const dir = tmp(t);
  const missing = path.join(dir, "missing.jsonl");
  const err = thrownBy(() => SessionManager.forkFrom(missing, dir, path.join(dir, "forks")));
  assert.ok(err instanceof Error);
  assert.equal(err.message, `Cannot fork: source session file is empty or invalid: ${missing}`);
  if (TARGET === "ours") assert.equal(err.code, "FORK_SOURCE_INVALID");
  for (const key of ["errno", "syscall", "path"]) assert.equal(Object.hasOwn(err, key), false, key);
  assert.equal(fs.existsSync(path.join(dir, "forks")), false);
});
