// Additions beyond the reference: features pi's users asked for upstream that the reference never
// shipped. None of them changes what the reference does; each test here runs on this package only
// (the reference has no such method), and compares files with the reference where they must match.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadOurs, loadReference } from "./helpers/target.mjs";
import { ENTRY_ID_RE, assistant, readText, tempDir, throwsCode, user } from "./helpers/fixtures.mjs";

const { SessionManager } = loadOurs();
const Reference = (await loadReference()).SessionManager;

/** The lines of a session file with ids and clock times replaced by stable names (in order of
 * first appearance), so that files of two runs of the same calls compare equal. */
function normalized(file) {
  const names = new Map();
  const name = (v) => {
    if (typeof v !== "string") return v;
    if (!names.has(v)) names.set(v, `id${names.size}`);
    return names.get(v);
  };
  return readText(file)
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const e = JSON.parse(line);
      for (const k of ["id", "parentId", "targetId", "firstKeptEntryId", "fromId"]) if (k in e) e[k] = name(e[k]);
      if ("timestamp" in e) e.timestamp = "T";
      return JSON.stringify(e);
    });
}

// ---------------------------------------------------------------- flush()

test("flush writes a new session's header before any message and returns true", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const file = sm.getSessionFile();
  assert.equal(fs.existsSync(file), false);
  assert.equal(sm.flush(), true);
  assert.deepEqual(readText(file), `${JSON.stringify(sm.getHeader())}\n`);
});

test("flush writes every pending setup entry after the header", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  sm.appendThinkingLevelChange("high");
  sm.appendCustomEntry("ext", { a: 1 });
  assert.equal(sm.flush(), true);
  const expected = [sm.getHeader(), ...sm.getEntries()].map((e) => `${JSON.stringify(e)}\n`).join("");
  assert.equal(readText(sm.getSessionFile()), expected);
});

test("flush returns false for an in-memory session and writes nothing", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.inMemory(dir);
  sm.appendMessage(user("x"));
  assert.equal(sm.flush(), false);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test("a second flush leaves the file byte-identical", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  sm.flush();
  const once = fs.readFileSync(sm.getSessionFile());
  assert.equal(sm.flush(), true);
  assert.deepEqual(fs.readFileSync(sm.getSessionFile()), once);
});

test("flush of a session already written returns true and changes nothing", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("x"));
  const before = readText(sm.getSessionFile());
  assert.equal(sm.flush(), true);
  assert.equal(readText(sm.getSessionFile()), before);
});

test("appends after an early flush go to the same file, one line each", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  sm.flush();
  const file = sm.getSessionFile();
  const before = readText(file);
  const id = sm.appendThinkingLevelChange("low");
  assert.equal(readText(file), `${before}${JSON.stringify(sm.getEntry(id))}\n`);
  assert.equal(sm.getSessionFile(), file);
});

test("a session flushed early ends as the file the reference writes for the same calls", (t) => {
  const run = (Class, flushAt) => {
    const sm = Class.create("/proj", tempDir(t));
    const steps = [
      () => sm.appendModelChange("prov", "mod"),
      () => sm.appendThinkingLevelChange("high"),
      () => sm.appendMessage(user("q")),
      () => sm.appendMessage(assistant("a")),
      () => sm.appendCustomEntry("ext", { n: 1 }),
    ];
    steps.forEach((step, i) => {
      if (i === flushAt) sm.flush();
      step();
    });
    return normalized(sm.getSessionFile());
  };
  const expected = run(Reference, -1);
  for (const at of [0, 1, 2, 3]) assert.deepEqual(run(SessionManager, at), expected, `flush before step ${at}`);
});

test("a session flushed early reopens with the same entries", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  const m = sm.appendModelChange("prov", "mod");
  sm.flush();
  const reopened = SessionManager.open(sm.getSessionFile());
  assert.equal(reopened.getSessionId(), sm.getSessionId());
  assert.deepEqual(reopened.getEntries().map((e) => e.id), [m]);
  assert.equal(reopened.getLeafId(), m);
});

test("flush of a session opened on a missing path creates that file", (t) => {
  const file = path.join(tempDir(t), "chosen.jsonl");
  const sm = SessionManager.open(file);
  assert.equal(sm.flush(), true);
  assert.equal(JSON.parse(readText(file)).id, sm.getSessionId());
});

test("flush after newSession writes the new session, leaving the old file as it was", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("x"));
  const old = sm.getSessionFile();
  const oldText = readText(old);
  sm.newSession();
  sm.flush();
  assert.notEqual(sm.getSessionFile(), old);
  assert.equal(readText(old), oldText);
  assert.equal(JSON.parse(readText(sm.getSessionFile())).id, sm.getSessionId());
});

test("flush refuses a path that another writer took, with EEXIST, and keeps the entries pending", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  fs.writeFileSync(sm.getSessionFile(), "occupied");
  throwsCode(() => sm.flush(), "EEXIST");
  assert.equal(readText(sm.getSessionFile()), "occupied");
  assert.equal(sm.getEntryCount(), 1);
});

// ---------------------------------------------------------------- dispose()

/** Descriptors of this process open on `file` (Linux: /proc/self/fd). */
function descriptorsOn(file) {
  let n = 0;
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed meanwhile (the fd of the readdir itself)
    }
  }
  return n;
}

test("every method of a disposed manager throws SESSION_DISPOSED", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const id = sm.appendMessage(user("x"));
  sm.dispose();
  const names = Object.getOwnPropertyNames(SessionManager.prototype).filter((n) => n !== "constructor" && n !== "dispose");
  assert.ok(names.length > 30);
  for (const name of names) {
    throwsCode(() => sm[name](id, id), "SESSION_DISPOSED");
  }
  assert.ok(sm instanceof SessionManager);
});

test("the error of a disposed manager names the method called", (t) => {
  const sm = SessionManager.inMemory(tempDir(t));
  sm.dispose();
  assert.throws(() => sm.getLeafId(), { code: "SESSION_DISPOSED", message: /getLeafId\(\).*dispose/ });
});

test("a second dispose does nothing", (t) => {
  const sm = SessionManager.inMemory(tempDir(t));
  sm.dispose();
  assert.equal(sm.dispose(), undefined);
  throwsCode(() => sm.getEntries(), "SESSION_DISPOSED");
});

test("dispose closes the descriptors the manager holds on its file", { skip: process.platform !== "linux" }, (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("x"));
  sm.appendMessage(assistant("y"));
  sm.appendMessage(user("z"));
  const file = sm.getSessionFile();
  assert.ok(descriptorsOn(file) >= 1, "the appender keeps its descriptor open between appends");
  sm.dispose();
  assert.equal(descriptorsOn(file), 0);
});

test("dispose releases the exclusive lease at once", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  sm.appendMessage(user("x"));
  sm.setExclusive(true);
  const file = sm.getSessionFile();
  assert.equal(fs.existsSync(`${file}.lock`), true);
  sm.dispose();
  assert.equal(fs.existsSync(`${file}.lock`), false);
  const other = SessionManager.open(file);
  other.setExclusive(true);
  other.appendMessage(assistant("mine now"));
  other.dispose();
});

test("other managers keep working after one is disposed, and a disposed manager's entries stay usable", (t) => {
  const dir = tempDir(t);
  const a = SessionManager.create("/proj", dir);
  a.appendMessage(user("a1"));
  a.appendMessage(assistant("a2"));
  const entries = [a.getHeader(), ...a.getBranch()];
  const file = a.getSessionFile();
  a.dispose();
  // Made from the disposed manager's objects: serialized again rather than taken from it.
  const copy = SessionManager.inMemory("/proj", undefined, entries);
  assert.deepEqual(copy.getEntries(), entries.slice(1));
  assert.equal(copy.buildSessionContext().messages.length, 2);
  const b = SessionManager.open(file);
  assert.equal(b.getEntryCount(), 2);
  b.appendMessage(user("b1"));
  assert.equal(SessionManager.open(file).getEntryCount(), 3);
});

test("a disposed manager writes nothing more to its file", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("x"));
  const file = sm.getSessionFile();
  const before = readText(file);
  sm.dispose();
  throwsCode(() => sm.appendMessage(user("late")), "SESSION_DISPOSED");
  throwsCode(() => sm._persist({ type: "custom", id: "abcd1234" }), "SESSION_DISPOSED");
  assert.equal(readText(file), before);
});

// ---------------------------------------------------------------- getEntriesSince(count)

test("getEntriesSince returns the entries appended after the first count, as getEntries objects", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const a = sm.appendMessage(user("a"));
  const b = sm.appendMessage(assistant("b"));
  const c = sm.appendModelChange("p", "m");
  assert.deepEqual(sm.getEntriesSince(1).map((e) => e.id), [b, c]);
  const all = sm.getEntries();
  const since = sm.getEntriesSince(0);
  assert.equal(since.length, 3);
  since.forEach((e, i) => assert.equal(e, all[i]));
  assert.equal(sm.getEntriesSince(3).length, 0);
  assert.equal(sm.getEntriesSince(2)[0], sm.getEntry(c));
  assert.equal(sm.getEntriesSince(0)[0].id, a);
});

test("getEntriesSince of an opened file hands out the objects later calls return too", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  for (let i = 0; i < 5; i++) sm.appendMessage(user(`m${i}`));
  const opened = SessionManager.open(sm.getSessionFile());
  const tail = opened.getEntriesSince(3);
  assert.equal(tail.length, 2);
  const all = opened.getEntries();
  assert.equal(tail[0], all[3]);
  assert.equal(tail[1], all[4]);
  assert.equal(tail[1], opened.getLeafEntry());
});

test("getEntriesSince with the count of an earlier call returns exactly what was appended since", (t) => {
  const sm = SessionManager.inMemory("/proj");
  sm.appendMessage(user("a"));
  const seen = sm.getEntryCount();
  const b = sm.appendMessage(assistant("b"));
  sm.branch(b);
  const c = sm.appendCustomEntry("x", 1);
  assert.deepEqual(sm.getEntriesSince(seen).map((e) => e.id), [b, c]);
  const mark = sm.getEntries().length;
  assert.deepEqual(sm.getEntriesSince(mark), []);
  const d = sm.appendLabelChange(b, "here");
  assert.deepEqual(sm.getEntriesSince(mark).map((e) => e.id), [d]);
});

test("getEntriesSince past the end throws a RangeError with code ENTRY_COUNT_OUT_OF_RANGE", (t) => {
  for (const cached of [false, true]) {
    const sm = SessionManager.create("/proj", tempDir(t));
    sm.appendMessage(user("a"));
    if (cached) sm.getEntries();
    throwsCode(() => sm.getEntriesSince(2), "ENTRY_COUNT_OUT_OF_RANGE", RangeError);
    assert.equal(sm.getEntriesSince(1).length, 0);
  }
});

test("getEntriesSince refuses a negative, fractional or non-number count with a RangeError", (t) => {
  const sm = SessionManager.inMemory("/proj");
  sm.appendMessage(user("a"));
  for (const bad of [-1, 0.5, NaN, Infinity, "1", null, undefined, {}, 2 ** 40]) {
    throwsCode(() => sm.getEntriesSince(bad), "INVALID_ARGUMENT", RangeError);
  }
  assert.equal(sm.getEntriesSince(0).length, 1);
});

// ---------------------------------------------------------------- reserved entry ids

/** What a failed call must leave as it was. */
function state(sm) {
  const file = sm.getSessionFile();
  return {
    ids: sm.getEntries().map((e) => e.id),
    leaf: sm.getLeafId(),
    count: sm.getEntryCount(),
    text: file !== undefined && fs.existsSync(file) ? readText(file) : null,
  };
}

test("reserveEntryId returns a fresh 8-hex id that appendMessage then uses", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const first = sm.appendMessage(user("a"));
  const id = sm.reserveEntryId();
  assert.match(id, ENTRY_ID_RE);
  assert.notEqual(id, first);
  assert.equal(sm.getEntry(id), undefined);
  assert.equal(sm.appendMessage(assistant("b"), { id }), id);
  assert.equal(sm.getLeafId(), id);
  assert.equal(sm.getEntry(id).parentId, first);
  assert.equal(JSON.parse(readText(sm.getSessionFile()).trim().split("\n").at(-1)).id, id);
});

test("reserved ids are distinct from each other and from every entry", () => {
  const sm = SessionManager.inMemory("/proj");
  for (let i = 0; i < 50; i++) sm.appendMessage(user(`m${i}`));
  const taken = new Set(sm.getEntries().map((e) => e.id));
  const reserved = new Set();
  for (let i = 0; i < 2000; i++) {
    const id = sm.reserveEntryId();
    assert.equal(taken.has(id) || reserved.has(id), false);
    reserved.add(id);
  }
});

test("an entry appended with a reserved id in memory is the caller's object", () => {
  const sm = SessionManager.inMemory("/proj");
  const id = sm.reserveEntryId();
  const message = user("x");
  sm.appendMessage(message, { id });
  assert.equal(sm.getEntry(id).message, message);
  assert.equal(sm.getLeafEntry(), sm.getEntry(id));
});

test("a reservation is used once: appending the same id again is refused as a duplicate", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const id = sm.reserveEntryId();
  sm.appendMessage(user("a"), { id });
  const before = state(sm);
  throwsCode(() => sm.appendMessage(user("b"), { id }), "DUPLICATE_ENTRY_ID");
  assert.deepEqual(state(sm), before);
});

test("appendMessage with the id of an existing entry is refused and changes nothing", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const a = sm.appendMessage(user("a"));
  sm.appendMessage(assistant("b"));
  const before = state(sm);
  throwsCode(() => sm.appendMessage(user("c"), { id: a }), "DUPLICATE_ENTRY_ID");
  assert.deepEqual(state(sm), before);
});

test("appendMessage with an id that was never reserved is refused and changes nothing", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage(user("a"));
  const before = state(sm);
  throwsCode(() => sm.appendMessage(user("b"), { id: "abcdef12" }), "ENTRY_ID_NOT_RESERVED");
  assert.deepEqual(state(sm), before);
});

test("appendMessage refuses an id that is not a non-empty string, and options of the wrong type", () => {
  const sm = SessionManager.inMemory("/proj");
  sm.appendMessage(user("a"));
  const before = state(sm);
  for (const id of [5, "", null, {}, ["abcd1234"]]) throwsCode(() => sm.appendMessage(user("b"), { id }), "INVALID_ENTRY_ID", TypeError);
  for (const options of [5, "id", null, true]) throwsCode(() => sm.appendMessage(user("b"), options), "INVALID_ARGUMENT", TypeError);
  throwsCode(() => sm.appendMessage(user("b"), { flush: "yes" }), "INVALID_ARGUMENT", TypeError);
  assert.deepEqual(state(sm), before);
});

test("releaseEntryId gives a reservation up, so the id can no longer be appended", () => {
  const sm = SessionManager.inMemory("/proj");
  const id = sm.reserveEntryId();
  assert.equal(sm.releaseEntryId(id), true);
  assert.equal(sm.releaseEntryId(id), false);
  assert.equal(sm.releaseEntryId("never123"), false);
  throwsCode(() => sm.appendMessage(user("x"), { id }), "ENTRY_ID_NOT_RESERVED");
  throwsCode(() => sm.releaseEntryId(5), "INVALID_ENTRY_ID", TypeError);
});

test("a failed write keeps the reservation, and the same id appends once the write can succeed", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const file = sm.getSessionFile();
  const id = sm.reserveEntryId();
  fs.writeFileSync(file, "occupied");
  const before = state(sm);
  throwsCode(() => sm.appendMessage(user("a"), { id }), "EEXIST");
  assert.deepEqual(state(sm), before);
  fs.unlinkSync(file);
  assert.equal(sm.appendMessage(user("a"), { id }), id);
  assert.equal(JSON.parse(readText(file).trim().split("\n")[1]).id, id);
});

test("newSession and setSessionFile drop the reservations of the session left", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  const a = sm.reserveEntryId();
  sm.newSession();
  throwsCode(() => sm.appendMessage(user("x"), { id: a }), "ENTRY_ID_NOT_RESERVED");
  sm.appendMessage(user("x"));
  const b = sm.reserveEntryId();
  sm.setSessionFile(path.join(dir, "other.jsonl"));
  throwsCode(() => sm.appendMessage(user("y"), { id: b }), "ENTRY_ID_NOT_RESERVED");
  assert.equal(sm.releaseEntryId(b), false);
});

test("appendMessage with flush writes a new session at once, even without a user or assistant message", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendModelChange("prov", "mod");
  const id = sm.appendMessage({ role: "custom", customType: "note", content: "n", display: false, timestamp: 1 }, { flush: true });
  const lines = readText(sm.getSessionFile()).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((e) => e.id), [sm.getSessionId(), ...sm.getEntries().map((e) => e.id)]);
  assert.equal(lines.at(-1).id, id);
  // ...and the session goes on in the same file as the reference would write it.
  const next = sm.appendThinkingLevelChange("low");
  assert.equal(JSON.parse(readText(sm.getSessionFile()).trim().split("\n").at(-1)).id, next);
});

test("appendMessage with a reserved id and flush is on disk when it returns", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const id = sm.reserveEntryId();
  sm.appendMessage(user("q"), { id, flush: true });
  const reopened = SessionManager.open(sm.getSessionFile());
  assert.equal(reopened.getLeafId(), id);
  assert.deepEqual(reopened.getEntry(id).message, user("q"));
});

test("appendMessage with flush: false behaves as a plain append", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  sm.appendMessage({ role: "custom", customType: "n", content: "c", display: false, timestamp: 1 }, { flush: false });
  assert.equal(fs.existsSync(sm.getSessionFile()), false);
});

test("createBranchedSession drops the reservations of the session it leaves", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const a = sm.appendMessage(user("a"));
  sm.appendMessage(assistant("b"));
  const id = sm.reserveEntryId();
  sm.createBranchedSession(a);
  throwsCode(() => sm.appendMessage(user("c"), { id }), "ENTRY_ID_NOT_RESERVED");
});

// ---------------------------------------------------------------- restore mode

/** What the file of `sm` must hold: its header and every entry, one JSON line each. */
function wholeSession(sm) {
  return [sm.getHeader(), ...sm.getEntries()].map((e) => `${JSON.stringify(e)}\n`).join("");
}

function restoring(t, dir = tempDir(t)) {
  const sessions = path.join(dir, "sessions");
  const sm = SessionManager.create("/proj", sessions);
  sm.setRestoreMissing(true);
  return { sm, dir, sessions };
}

test("without restore mode an append after the sessions dir was removed still fails with ENOENT", (t) => {
  const dir = path.join(tempDir(t), "sessions");
  const sm = SessionManager.create("/proj", dir);
  sm.appendMessage(user("a"));
  fs.rmSync(dir, { recursive: true });
  throwsCode(() => sm.appendMessage(assistant("b")), "ENOENT");
  assert.equal(fs.existsSync(dir), false);
});

test("in restore mode an append after the sessions dir was removed makes it again and writes the whole session back", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendModelChange("prov", "mod");
  sm.appendMessage(user("a"));
  sm.appendMessage(assistant("b"));
  const file = sm.getSessionFile();
  fs.rmSync(sessions, { recursive: true });
  const id = sm.appendMessage(user("c"));
  assert.equal(readText(file), wholeSession(sm));
  assert.equal(sm.getLeafId(), id);
  const reopened = SessionManager.open(file);
  assert.deepEqual(reopened.getEntries(), sm.getEntries());
});

test("in restore mode the session goes on in the restored file one line per append", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendMessage(user("a"));
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(assistant("b"));
  const before = readText(sm.getSessionFile());
  const id = sm.appendMessage(user("c"));
  assert.equal(readText(sm.getSessionFile()), `${before}${JSON.stringify(sm.getEntry(id))}\n`);
  assert.equal(readText(sm.getSessionFile()), wholeSession(sm));
});

test("in restore mode an append after the file alone was deleted writes the whole session back, not one line", (t) => {
  const { sm } = restoring(t);
  sm.appendMessage(user("a"));
  sm.appendMessage(assistant("b"));
  fs.unlinkSync(sm.getSessionFile());
  sm.appendCustomEntry("ext", { n: 1 });
  assert.equal(readText(sm.getSessionFile()), wholeSession(sm));
});

test("in restore mode a first write into a removed sessions dir makes it and writes every pending entry", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendModelChange("prov", "mod");
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(user("a"));
  assert.equal(readText(sm.getSessionFile()), wholeSession(sm));
});

test("in restore mode a session opened at a path whose directory does not exist is written there", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "not", "made", "yet", "s.jsonl");
  const sm = SessionManager.open(file, path.join(dir, "other"));
  sm.setRestoreMissing(true);
  sm.appendMessage(user("a"));
  assert.equal(readText(file), wholeSession(sm));
});

test("in restore mode long lines read back from the old file are written back intact", (t) => {
  const { sm, sessions } = restoring(t);
  const big = "x".repeat(8192);
  sm.appendMessage(user(big));
  sm.appendMessage(assistant(big + "y"));
  sm.appendMessage(user(big + "z"));
  const expected = wholeSession(sm);
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(assistant("short"));
  const text = readText(sm.getSessionFile());
  assert.equal(text.slice(0, expected.length), expected);
  assert.equal(text, wholeSession(sm));
  // The lines held in the old file stay readable: a branched copy needs them.
  const copy = sm.createBranchedSession(sm.getLeafId());
  assert.deepEqual(SessionManager.open(copy).getEntries().map((e) => e.message), sm.getEntries().map((e) => e.message));
});

test("in restore mode flush writes back a file that was deleted", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendMessage(user("a"));
  fs.rmSync(sessions, { recursive: true });
  assert.equal(sm.flush(), true);
  assert.equal(readText(sm.getSessionFile()), wholeSession(sm));
});

test("in restore mode an exclusive manager takes its lease again when the directory is made again", (t) => {
  const { sm, sessions } = restoring(t);
  sm.appendMessage(user("a"));
  sm.setExclusive(true);
  const lock = `${sm.getSessionFile()}.lock`;
  assert.equal(fs.existsSync(lock), true);
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(assistant("b"));
  assert.equal(fs.existsSync(lock), true);
  assert.equal(JSON.parse(readText(lock)).pid, process.pid);
  sm.setExclusive(false);
  assert.equal(fs.existsSync(lock), false);
});

test("in restore mode a write back that fails leaves memory as it was", (t) => {
  const { sm, dir, sessions } = restoring(t);
  sm.appendMessage(user("a"));
  fs.rmSync(sessions, { recursive: true });
  // A file where the directory should be: it cannot be made again.
  fs.writeFileSync(sessions, "not a dir");
  const before = state(sm);
  assert.throws(() => sm.appendMessage(assistant("b")), (err) => typeof err.code === "string" && err.code.startsWith("E"));
  assert.deepEqual(state(sm), before);
  fs.rmSync(path.join(dir, "sessions"));
  sm.appendMessage(assistant("b"));
  assert.equal(readText(sm.getSessionFile()), wholeSession(sm));
});

test("PI_SESSION_RESTORE_MISSING=1 turns restore mode on for every new manager", (t) => {
  const prev = process.env.PI_SESSION_RESTORE_MISSING;
  process.env.PI_SESSION_RESTORE_MISSING = "1";
  t.after(() => (prev === undefined ? delete process.env.PI_SESSION_RESTORE_MISSING : (process.env.PI_SESSION_RESTORE_MISSING = prev)));
  const sessions = path.join(tempDir(t), "sessions");
  const sm = SessionManager.create("/proj", sessions);
  sm.appendMessage(user("a"));
  fs.rmSync(sessions, { recursive: true });
  sm.appendMessage(assistant("b"));
  assert.equal(readText(sm.getSessionFile()), wholeSession(sm));
});

test("setRestoreMissing takes a boolean only", () => {
  const sm = SessionManager.inMemory("/proj");
  throwsCode(() => sm.setRestoreMissing("yes"), "INVALID_ARGUMENT", TypeError);
  sm.setRestoreMissing(false);
});

test("flush writes a branched session that the reference would keep in memory until its first message", (t) => {
  const sm = SessionManager.create("/proj", tempDir(t));
  const model = sm.appendModelChange("prov", "mod");
  sm.appendMessage(user("q"));
  const file = sm.createBranchedSession(model);
  assert.equal(fs.existsSync(file), false);
  assert.equal(sm.flush(), true);
  assert.equal(readText(file), wholeSession(sm));
  assert.equal(SessionManager.open(file).getLeafId(), model);
});
