// docs/behaviour.md, "Listing and finding sessions": discovery and listing: header scan, findMostRecentSession, findById,
// SessionInfo summaries, list, listAll and abort semantics.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget } from "./helpers/target.mjs";
import {
  T0,
  iso,
  tempDir,
  useAgentDir,
  defaultSessionDirFor,
  header,
  entry,
  msgEntry,
  user,
  assistant,
  toolResult,
  writeJsonl,
  writeSession,
  setMtime,
  setMtimeNs,
  progressRecorder,
  abortedSignal,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;

const fname = (n, id = `id${n}`) => `2026-01-0${n}T00-00-00-000Z_${id}.jsonl`;

/** Write `count` minimal valid sessions into dir; returns their paths (index i has header ms T0+i). */
function writeMany(dir, count, cwd = "/proj") {
  const paths = [];
  for (let i = 0; i < count; i++) {
    const name = `f${String(i).padStart(3, "0")}.jsonl`;
    paths.push(writeSession(dir, name, header({ id: `s${i}`, cwd, timestamp: iso(T0 + i * 1000) })));
  }
  return paths;
}

/** Summaries of a single flat dir without any cwd filtering. */
async function summarize(dir) {
  return SessionManager.listAll(dir);
}

async function summarizeOne(t, records, { raw } = {}) {
  const dir = tempDir(t);
  const file = path.join(dir, "one.jsonl");
  if (raw !== undefined) fs.writeFileSync(file, raw);
  else writeJsonl(file, records);
  const list = await summarize(dir);
  return { list, file, dir };
}

// ---------------------------------------------------------------------------
// Bounded header scan
// ---------------------------------------------------------------------------
describe("bounded header scan", () => {
  test("blank and unparseable lines before the header are skipped", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "a.jsonl");
    fs.writeFileSync(file, `\n   \n{not json\n${JSON.stringify(header({ id: "abc", cwd: dir }))}\n`);
    assert.equal(SessionManager.findById(dir, "abc", dir), file);
  });

  test("falsy JSON values (null, 0, false, empty string) before the header are skipped", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "a.jsonl");
    fs.writeFileSync(file, `null\n0\nfalse\n""\n${JSON.stringify(header({ id: "abc", cwd: dir }))}\n`);
    assert.equal(SessionManager.findById(dir, "abc", dir), file);
  });

  test("a first parsed line that is not a session header makes the file not a session", (t) => {
    const dir = tempDir(t);
    writeJsonl(path.join(dir, "a.jsonl"), [{ type: "message", id: "x" }, header({ id: "abc", cwd: dir })]);
    assert.equal(SessionManager.findById(dir, "abc", dir), undefined);
  });

  test("a session header whose id is not a string makes the file not a session for discovery", (t) => {
    const dir = tempDir(t);
    writeJsonl(path.join(dir, "a.jsonl"), [header({ id: 42, cwd: dir })]);
    assert.equal(M.findMostRecentSession(dir), null);
  });

  test("a final header line without a trailing newline is accepted", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "a.jsonl");
    fs.writeFileSync(file, JSON.stringify(header({ id: "abc", cwd: dir })));
    assert.equal(SessionManager.findById(dir, "abc", dir), file);
  });

  test("a header line longer than 1 MiB makes the file not a session", (t) => {
    const dir = tempDir(t);
    writeJsonl(path.join(dir, "big.jsonl"), [header({ id: "big", cwd: dir, pad: "x".repeat(1100 * 1024) })]);
    assert.equal(SessionManager.findById(dir, "big", dir), undefined);
  });

  test("more than 1 MiB of blank lines before the header makes the file not a session", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "a.jsonl");
    fs.writeFileSync(file, "\n".repeat(1024 * 1024 + 10) + JSON.stringify(header({ id: "late", cwd: dir })) + "\n");
    assert.equal(SessionManager.findById(dir, "late", dir), undefined);
  });

  test("a large header line below 1 MiB is accepted", (t) => {
    const dir = tempDir(t);
    const file = writeJsonl(path.join(dir, "a.jsonl"), [header({ id: "big", cwd: dir, pad: "x".repeat(600 * 1024) })]);
    assert.equal(SessionManager.findById(dir, "big", dir), file);
  });

  test("an oversized header file is skipped by findMostRecentSession in favour of an older valid one", (t) => {
    const dir = tempDir(t);
    const older = writeSession(dir, "older.jsonl", header({ id: "o" }));
    const big = writeJsonl(path.join(dir, "big.jsonl"), [header({ id: "b", pad: "y".repeat(1100 * 1024) })]);
    setMtime(older, T0);
    setMtime(big, T0 + 60_000);
    assert.equal(M.findMostRecentSession(dir), older);
  });
});

// ---------------------------------------------------------------------------
// findMostRecentSession
// ---------------------------------------------------------------------------
describe("findMostRecentSession", () => {
  test("the file with the newest mtime is returned, regardless of name order", (t) => {
    const dir = tempDir(t);
    const a = writeSession(dir, "a.jsonl", header({ id: "a" }));
    const b = writeSession(dir, "b.jsonl", header({ id: "b" }));
    const c = writeSession(dir, "c.jsonl", header({ id: "c" }));
    setMtime(a, T0 + 3000);
    setMtime(b, T0 + 1000);
    setMtime(c, T0 + 2000);
    assert.equal(M.findMostRecentSession(dir), a);
  });

  test("a newer file that is not a valid session is skipped", (t) => {
    const dir = tempDir(t);
    const good = writeSession(dir, "good.jsonl", header({ id: "g" }));
    const bad = path.join(dir, "bad.jsonl");
    fs.writeFileSync(bad, "garbage\n");
    setMtime(good, T0);
    setMtime(bad, T0 + 5000);
    assert.equal(M.findMostRecentSession(dir), good);
  });

  test("only names ending in .jsonl (case-sensitive) are considered", (t) => {
    const dir = tempDir(t);
    const good = writeSession(dir, "good.jsonl", header({ id: "g" }));
    const upper = writeSession(dir, "upper.JSONL", header({ id: "u" }));
    const txt = writeSession(dir, "other.txt", header({ id: "t" }));
    setMtime(good, T0);
    setMtime(upper, T0 + 5000);
    setMtime(txt, T0 + 6000);
    assert.equal(M.findMostRecentSession(dir), good);
  });

  test("of equally recent sessions, the first that readdirSync lists is returned", (t) => {
    // Made in an order that is neither the names' nor their reverse; the same mtime for all
    // (copies restored with their times): the stable sort by mtime keeps readdirSync's order,
    // which Node sorts by name off Windows, and Bun and Windows leave as the system's.
    const dir = tempDir(t);
    for (const n of ["m", "b", "z", "a", "q", "c"]) setMtime(writeSession(dir, `${n}.jsonl`, header({ id: n })), T0);
    const first = fs.readdirSync(dir).find((n) => n.endsWith(".jsonl"));
    assert.equal(M.findMostRecentSession(dir), path.join(dir, first));
    assert.equal(SessionManager.continueRecent("/tmp/project", dir).getSessionFile(), path.join(dir, first));
  });

  test("times that make one mtimeMs are equally recent, though the file system tells them apart", (t) => {
    // 100 ns apart: one double of milliseconds today, so the stable sort keeps readdirSync's
    // order, whichever of the two the file system says is newer.
    const dir = tempDir(t);
    for (const n of ["a", "b"]) writeSession(dir, `${n}.jsonl`, header({ id: n }));
    const [first, second] = fs.readdirSync(dir).map((n) => path.join(dir, n));
    if (!setMtimeNs(first, 1_700_000_000, 0) || !setMtimeNs(second, 1_700_000_000, 100)) {
      t.skip("no touch that sets nanoseconds here, or a file system without them");
      return;
    }
    assert.equal(fs.statSync(first).mtimeMs, fs.statSync(second).mtimeMs);
    assert.equal(M.findMostRecentSession(dir), first);
    assert.equal(SessionManager.continueRecent("/tmp/project", dir).getSessionFile(), first);
    // A millisecond is newer.
    assert.ok(setMtimeNs(first, 1_700_000_000, 1_000_000));
    assert.ok(setMtimeNs(second, 1_700_000_000, 1_000_000 + 999_000));
    assert.equal(M.findMostRecentSession(dir), second);
  });

  test("with a cwd, a newer session whose header cwd differs is skipped", (t) => {
    const dir = tempDir(t);
    const mine = writeSession(dir, "mine.jsonl", header({ id: "m", cwd: "/work/mine" }));
    const other = writeSession(dir, "other.jsonl", header({ id: "o", cwd: "/work/other" }));
    setMtime(mine, T0);
    setMtime(other, T0 + 5000);
    assert.equal(M.findMostRecentSession(dir, "/work/mine"), mine);
  });

  test("with a cwd, header cwds are compared after resolution", (t) => {
    const dir = tempDir(t);
    const f = writeSession(dir, "a.jsonl", header({ id: "a", cwd: "/work/x/../mine/" }));
    assert.equal(M.findMostRecentSession(dir, "/work/mine"), f);
  });

  test("with a cwd, a header with an empty cwd never matches", (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "a", cwd: "" }));
    assert.equal(M.findMostRecentSession(dir, process.cwd()), null);
  });

  test("with a cwd, a header whose cwd is not a string never matches", (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "a", cwd: 7 }));
    assert.equal(M.findMostRecentSession(dir, "/work/mine"), null);
  });

  test("without a cwd the header cwd is ignored", (t) => {
    const dir = tempDir(t);
    const f = writeSession(dir, "a.jsonl", header({ id: "a", cwd: 7 }));
    assert.equal(M.findMostRecentSession(dir), f);
  });

  test("the returned path is the session dir joined with the file name, relative if the dir is relative", (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "a" }));
    const rel = path.relative(process.cwd(), dir);
    assert.equal(M.findMostRecentSession(rel), path.join(rel, "a.jsonl"));
  });

  test("a missing directory yields null", (t) => {
    const dir = tempDir(t);
    assert.equal(M.findMostRecentSession(path.join(dir, "nope")), null);
  });

  test("an empty directory yields null", (t) => {
    assert.equal(M.findMostRecentSession(tempDir(t)), null);
  });

  test("a directory without any valid session yields null", (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, "x.jsonl"), "{}\n");
    assert.equal(M.findMostRecentSession(dir), null);
  });

  test("a dangling .jsonl symlink makes the whole call return null", (t) => {
    const dir = tempDir(t);
    writeSession(dir, "good.jsonl", header({ id: "g" }));
    fs.symlinkSync(path.join(dir, "missing-target"), path.join(dir, "dangling.jsonl"));
    assert.equal(M.findMostRecentSession(dir), null);
  });
});

// ---------------------------------------------------------------------------
// findById
// ---------------------------------------------------------------------------
describe("SessionManager.findById", () => {
  test("the path of the file whose header id equals the id is returned", (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "aaa", cwd: "/p" }));
    const b = writeSession(dir, "b.jsonl", header({ id: "bbb", cwd: "/p" }));
    assert.equal(SessionManager.findById("/p", "bbb", dir), b);
  });

  test("of sessions with the same id, the first that readdirSync lists is found", (t) => {
    // (A session copied under another name keeps its id.) See findMostRecentSession's ties.
    const dir = tempDir(t);
    for (const n of ["m", "b", "z", "a", "q", "c"]) writeSession(dir, `${n}.jsonl`, header({ id: "same", cwd: "/p" }));
    const first = fs.readdirSync(dir).find((n) => n.endsWith(".jsonl"));
    assert.equal(SessionManager.findById("/p", "same", dir), path.join(dir, first));
  });

  test("ids are matched exactly, not by prefix or case", (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "abcdef", cwd: "/p" }));
    assert.equal(SessionManager.findById("/p", "abc", dir), undefined);
    assert.equal(SessionManager.findById("/p", "ABCDEF", dir), undefined);
  });

  test("files not ending in .jsonl are ignored", (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.json", header({ id: "x", cwd: "/p" }));
    assert.equal(SessionManager.findById("/p", "x", dir), undefined);
  });

  test("with a non-default sessionDir a session with another header cwd is not found", (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "x", cwd: "/elsewhere" }));
    assert.equal(SessionManager.findById("/p", "x", dir), undefined);
  });

  test("with a non-default sessionDir a session with the same resolved cwd is found", (t) => {
    const dir = tempDir(t);
    const f = writeSession(dir, "a.jsonl", header({ id: "x", cwd: "/p/q/.." }));
    assert.equal(SessionManager.findById("/p", "x", dir), f);
  });

  test("without a sessionDir the default dir is searched without cwd filtering and is created", (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    const def = defaultSessionDirFor(agent, cwd);
    assert.equal(SessionManager.findById(cwd, "nope"), undefined);
    assert.ok(fs.statSync(def).isDirectory());
    const f = writeSession(def, "a.jsonl", header({ id: "x", cwd: "/somewhere/else" }));
    assert.equal(SessionManager.findById(cwd, "x"), f);
  });

  test("a sessionDir naming the default dir with a trailing slash disables cwd filtering", (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    const def = defaultSessionDirFor(agent, cwd);
    writeSession(def, "a.jsonl", header({ id: "x", cwd: "/somewhere/else" }));
    assert.equal(SessionManager.findById(cwd, "x", def + "/"), path.join(def + "/", "a.jsonl"));
  });

  test("a missing sessionDir yields undefined", (t) => {
    const dir = tempDir(t);
    assert.equal(SessionManager.findById("/p", "x", path.join(dir, "missing")), undefined);
  });

  test("only the header is read, so a file with a broken body is still found", (t) => {
    const dir = tempDir(t);
    const f = writeJsonl(path.join(dir, "a.jsonl"), [
      header({ id: "x", cwd: "/p" }),
      "{broken",
      { type: "message", id: "m", parentId: null, timestamp: iso(T0), message: null },
    ]);
    assert.equal(SessionManager.findById("/p", "x", dir), f);
  });
});

// ---------------------------------------------------------------------------
// SessionInfo
// ---------------------------------------------------------------------------
describe("SessionInfo summaries", () => {
  test("a summary has exactly the documented fields", async (t) => {
    const { list } = await summarizeOne(t, [header(), msgEntry("a", null, user("hi", T0 + 10))]);
    assert.equal(list.length, 1);
    assert.deepEqual(Object.keys(list[0]).sort(), [
      "allMessagesText",
      "created",
      "cwd",
      "firstMessage",
      "id",
      "messageCount",
      "modified",
      "name",
      "parentSessionPath",
      "path",
  ]);
  });

  test("name and parentSessionPath keys are present holding undefined when absent", async (t) => {
    const { list } = await summarizeOne(t, [header()]);
    assert.ok(Object.hasOwn(list[0], "name"));
    assert.ok(Object.hasOwn(list[0], "parentSessionPath"));
    assert.equal(list[0].name, undefined);
    assert.equal(list[0].parentSessionPath, undefined);
  });

  test("path is the dir joined with the file name and id is the header id", async (t) => {
    const { list, file } = await summarizeOne(t, [header({ id: "the-id" })]);
    assert.equal(list[0].path, file);
    assert.equal(list[0].id, "the-id");
  });

  test("a header whose id is not a string is still summarized", async (t) => {
    const { list } = await summarizeOne(t, [header({ id: 12 })]);
    assert.equal(list.length, 1);
    assert.equal(list[0].id, 12);
  });

  test("a file whose first record is not a session header is skipped", async (t) => {
    const { list } = await summarizeOne(t, [msgEntry("a", null, user("x")), header()]);
    assert.deepEqual(list, []);
  });

  test("lines ending in CRLF are tolerated", async (t) => {
    const raw = [header({ id: "crlf" }), entry("session_info", "i", null, { name: "N" }), msgEntry("a", "i", user("hi"))]
      .map((r) => JSON.stringify(r))
      .join("\r\n") + "\r\n";
    const { list } = await summarizeOne(t, null, { raw });
    assert.equal(list[0].id, "crlf");
    assert.equal(list[0].name, "N");
    assert.equal(list[0].firstMessage, "hi");
  });

  test("name is the latest session_info name, trimmed", async (t) => {
    const { list } = await summarizeOne(t, [
      header(),
      entry("session_info", "i1", null, { name: "first" }),
      entry("session_info", "i2", "i1", { name: "  second  " }),
    ]);
    assert.equal(list[0].name, "second");
  });

  test("an empty latest session_info name clears an earlier name", async (t) => {
    const { list } = await summarizeOne(t, [
      header(),
      entry("session_info", "i1", null, { name: "first" }),
      entry("session_info", "i2", "i1", { name: "   " }),
    ]);
    assert.ok(Object.hasOwn(list[0], "name"));
    assert.equal(list[0].name, undefined);
  });

  test("the latest session_info in file order wins even on another branch", async (t) => {
    const { list } = await summarizeOne(t, [
      header(),
      msgEntry("a", null, user("x")),
      entry("session_info", "i1", "a", { name: "branch one" }),
      entry("session_info", "i2", "a", { name: "branch two" }),
      msgEntry("b", "i1", user("y")),
    ]);
    assert.equal(list[0].name, "branch two");
  });

  test("messageCount counts every message record of every role on every branch", async (t) => {
    const { list } = await summarizeOne(t, [
      header(),
      msgEntry("a", null, user("u")),
      msgEntry("b", "a", assistant("a")),
      msgEntry("c", "b", toolResult("t")),
      msgEntry("d", "a", { role: "custom", customType: "x", content: "c", display: true, timestamp: 1 }),
      msgEntry("e", "a", { role: "bashExecution", command: "ls", timestamp: 1 }),
      entry("custom_message", "f", "a", { customType: "x", content: "c", display: true }),
    ]);
    assert.equal(list[0].messageCount, 5);
  });

  test("string content of user and assistant messages contributes its text", async (t) => {
    const { list } = await summarizeOne(t, [
      header(),
      msgEntry("a", null, user("hello")),
      msgEntry("b", "a", { role: "assistant", content: "world", timestamp: 2 }),
    ]);
    assert.equal(list[0].allMessagesText, "hello world");
  });

  test("array content contributes its text blocks joined by a single space, ignoring other blocks", async (t) => {
    const { list } = await summarizeOne(t, [
      header(),
      msgEntry("a", null, user([{ type: "text", text: "one" }, { type: "image", data: "x" }, { type: "text", text: "two" }])),
    ]);
    assert.equal(list[0].allMessagesText, "one two");
    assert.equal(list[0].firstMessage, "one two");
  });

  test("messages of other roles contribute no text", async (t) => {
    const { list } = await summarizeOne(t, [
      header(),
      msgEntry("a", null, toolResult("tool text")),
      msgEntry("b", "a", { role: "custom", customType: "x", content: "custom text", display: true, timestamp: 1 }),
      msgEntry("c", "b", { role: "system", content: "sys text", timestamp: 1 }),
      msgEntry("d", "c", user("u")),
    ]);
    assert.equal(list[0].allMessagesText, "u");
  });

  test("messages whose text is empty contribute nothing", async (t) => {
    const { list } = await summarizeOne(t, [
      header(),
      msgEntry("a", null, user("")),
      msgEntry("b", "a", user([{ type: "image", data: "x" }])),
      msgEntry("c", "b", assistant("x")),
      msgEntry("d", "c", user("second")),
    ]);
    assert.equal(list[0].allMessagesText, "x second");
    assert.equal(list[0].firstMessage, "second");
  });

  test("firstMessage is the first user contribution even when an assistant spoke first", async (t) => {
    const { list } = await summarizeOne(t, [
      header(),
      msgEntry("a", null, assistant("assistant first")),
      msgEntry("b", "a", user("user one")),
      msgEntry("c", "b", user("user two")),
    ]);
    assert.equal(list[0].firstMessage, "user one");
    assert.equal(list[0].allMessagesText, "assistant first user one user two");
  });

  test("firstMessage is (no messages) without any user text", async (t) => {
    const { list } = await summarizeOne(t, [header(), msgEntry("a", null, assistant("only me"))]);
    assert.equal(list[0].firstMessage, "(no messages)");
    assert.equal(list[0].allMessagesText, "only me");
  });

  test("a header-only file has zero messages, (no messages) and empty text", async (t) => {
    const { list } = await summarizeOne(t, [header()]);
    assert.equal(list[0].messageCount, 0);
    assert.equal(list[0].firstMessage, "(no messages)");
    assert.equal(list[0].allMessagesText, "");
  });

  test("modified is the largest numeric user/assistant message timestamp", async (t) => {
    const { list } = await summarizeOne(t, [
      header({ timestamp: iso(T0) }),
      msgEntry("a", null, user("x", T0 + 5000), iso(T0 + 999_999)),
      msgEntry("b", "a", assistant("y", { timestamp: T0 + 9000 }), iso(T0 + 1)),
      msgEntry("c", "b", user("z", T0 + 7000)),
    ]);
    assert.equal(list[0].modified.getTime(), T0 + 9000);
  });

  test("a message without a numeric timestamp falls back to the entry's ISO timestamp", async (t) => {
    const { list } = await summarizeOne(t, [
      header({ timestamp: iso(T0) }),
      msgEntry("a", null, user("x", "2020-01-01T00:00:00.000Z"), iso(T0 + 4000)),
    ]);
    assert.equal(list[0].modified.getTime(), T0 + 4000);
  });

  test("timestamps of toolResult and other roles do not count towards modified", async (t) => {
    const { list } = await summarizeOne(t, [
      header({ timestamp: iso(T0) }),
      msgEntry("a", null, user("x", T0 + 1000)),
      msgEntry("b", "a", toolResult("t", { timestamp: T0 + 99_000 })),
    ]);
    assert.equal(list[0].modified.getTime(), T0 + 1000);
  });

  test("user messages without a content key do not count towards modified", async (t) => {
    const { list } = await summarizeOne(t, [
      header({ timestamp: iso(T0) }),
      msgEntry("a", null, { role: "user", timestamp: T0 + 50_000 }),
    ]);
    assert.equal(list[0].modified.getTime(), T0);
    assert.equal(list[0].messageCount, 1);
  });

  test("without any activity time above zero modified is the header timestamp", async (t) => {
    const { list } = await summarizeOne(t, [header({ timestamp: iso(T0 + 123) }), msgEntry("a", null, user("x", 0))]);
    assert.equal(list[0].modified.getTime(), T0 + 123);
  });

  test("an unparseable message entry timestamp contributes no activity", async (t) => {
    const { list } = await summarizeOne(t, [
      header({ timestamp: iso(T0 + 5) }),
      msgEntry("a", null, { role: "user", content: "x" }, "not-a-date"),
    ]);
    assert.equal(list[0].modified.getTime(), T0 + 5);
  });

  test("with an unparseable header timestamp and no activity, modified is the file mtime", async (t) => {
    const dir = tempDir(t);
    const f = writeJsonl(path.join(dir, "a.jsonl"), [header({ timestamp: "garbage" })]);
    setMtime(f, T0 + 77_000);
    const [info] = await summarize(dir);
    assert.equal(info.modified.getTime(), T0 + 77_000);
  });

  test("the mtime fallback of modified rounds mtimeMs, the double Node makes of seconds and nanoseconds", async (t) => {
    // 1660387520 s + 285499926 ns: Node's mtimeMs is 1660387520285.5 (seconds * 1000 +
    // nanoseconds / 1e6), which rounds up; the seconds as one double times 1000 would be
    // 1660387520285.4998, which rounds down.
    const dir = tempDir(t);
    const f = writeJsonl(path.join(dir, "a.jsonl"), [header({ timestamp: "garbage" })]);
    if (!setMtimeNs(f, 1_660_387_520, 285_499_926)) {
      t.skip("no touch that sets nanoseconds here, or a file system without them");
      return;
    }
    assert.equal(fs.statSync(f).mtimeMs, 1_660_387_520_285.5);
    const [info] = await summarize(dir);
    assert.equal(info.modified.getTime(), 1_660_387_520_286);
  });

  test("a non-string header timestamp falls back to the mtime for modified", async (t) => {
    const dir = tempDir(t);
    const f = writeJsonl(path.join(dir, "a.jsonl"), [header({ timestamp: T0 })]);
    setMtime(f, T0 + 88_000);
    const [info] = await summarize(dir);
    assert.equal(info.modified.getTime(), T0 + 88_000);
  });

  test("created is a Date built from the header timestamp", async (t) => {
    const { list } = await summarizeOne(t, [header({ timestamp: iso(T0 + 42) }), msgEntry("a", null, user("x", T0 + 9999))]);
    assert.ok(list[0].created instanceof Date);
    assert.equal(list[0].created.getTime(), T0 + 42);
  });

  test("created is an Invalid Date when the header timestamp is unparseable", async (t) => {
    const { list } = await summarizeOne(t, [header({ timestamp: "garbage" })]);
    assert.ok(list[0].created instanceof Date);
    assert.ok(Number.isNaN(list[0].created.getTime()));
  });

  test("cwd is the header cwd when it is a string", async (t) => {
    const { list } = await summarizeOne(t, [header({ cwd: "relative/dir" })]);
    assert.equal(list[0].cwd, "relative/dir");
  });

  test("cwd is the empty string when the header cwd is not a string", async (t) => {
    const { list } = await summarizeOne(t, [header({ cwd: 5 })]);
    assert.equal(list[0].cwd, "");
  });

  test("cwd is the empty string when the header has no cwd", async (t) => {
    const h = header();
    delete h.cwd;
    const { list } = await summarizeOne(t, [h]);
    assert.equal(list[0].cwd, "");
  });

  test("parentSessionPath is the header parentSession as is", async (t) => {
    const { list } = await summarizeOne(t, [header({ parentSession: "/x/parent.jsonl" })]);
    assert.equal(list[0].parentSessionPath, "/x/parent.jsonl");
  });

  test("a message record whose message is null makes the file skipped", async (t) => {
    const { list } = await summarizeOne(t, [header(), { type: "message", id: "a", parentId: null, timestamp: iso(T0), message: null }]);
    assert.deepEqual(list, []);
  });

  test("a message record without a message makes the file skipped", async (t) => {
    const { list } = await summarizeOne(t, [header(), { type: "message", id: "a", parentId: null, timestamp: iso(T0) }]);
    assert.deepEqual(list, []);
  });

  test("a user message with null content makes the file skipped", async (t) => {
    const { list } = await summarizeOne(t, [header(), msgEntry("a", null, { role: "user", content: null, timestamp: 1 })]);
    assert.deepEqual(list, []);
  });

  test("an assistant message with null content makes the file skipped", async (t) => {
    const { list } = await summarizeOne(t, [header(), msgEntry("a", null, { role: "assistant", content: null, timestamp: 1 })]);
    assert.deepEqual(list, []);
  });

  test("a toolResult message with null content does not make the file skipped", async (t) => {
    const { list } = await summarizeOne(t, [header(), msgEntry("a", null, { role: "toolResult", content: null, timestamp: 1 })]);
    assert.equal(list.length, 1);
    assert.equal(list[0].messageCount, 1);
  });

  test("a skipped file does not prevent other files from being listed", async (t) => {
    const dir = tempDir(t);
    writeJsonl(path.join(dir, "bad.jsonl"), [header({ id: "bad" }), msgEntry("a", null, { role: "user", content: null })]);
    writeJsonl(path.join(dir, "good.jsonl"), [header({ id: "good" })]);
    const list = await summarize(dir);
    assert.deepEqual(list.map((s) => s.id), ["good"]);
  });
});

// ---------------------------------------------------------------------------
// list
// ---------------------------------------------------------------------------
describe("SessionManager.list", () => {
  test("without a sessionDir the default dir is created synchronously at call time", async (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    const def = defaultSessionDirFor(agent, cwd);
    const promise = SessionManager.list(cwd);
    assert.ok(fs.existsSync(def));
    assert.deepEqual(await promise, []);
  });

  test("without a sessionDir sessions of any header cwd in the default dir are listed", async (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    const def = defaultSessionDirFor(agent, cwd);
    writeSession(def, "a.jsonl", header({ id: "a", cwd: "/somewhere/else" }));
    const list = await SessionManager.list(cwd);
    assert.deepEqual(list.map((s) => s.id), ["a"]);
  });

  test("with a non-default sessionDir only sessions whose cwd resolves to the given cwd are listed", async (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "a", cwd: "/work/mine" }));
    writeSession(dir, "b.jsonl", header({ id: "b", cwd: "/work/other" }));
    writeSession(dir, "c.jsonl", header({ id: "c", cwd: "/work/x/../mine/" }));
    writeSession(dir, "d.jsonl", header({ id: "d", cwd: "" }));
    const list = await SessionManager.list("/work/mine", dir);
    assert.deepEqual(list.map((s) => s.id).sort(), ["a", "c"]);
  });

  test("a sessionDir naming the default dir with a trailing slash disables cwd filtering", async (t) => {
    const agent = useAgentDir(t);
    const cwd = tempDir(t);
    const def = defaultSessionDirFor(agent, cwd);
    writeSession(def, "a.jsonl", header({ id: "a", cwd: "/somewhere/else" }));
    const list = await SessionManager.list(cwd, def + "/");
    assert.deepEqual(list.map((s) => s.id), ["a"]);
  });

  test("a missing sessionDir yields an empty list and is not created", async (t) => {
    const dir = path.join(tempDir(t), "missing");
    assert.deepEqual(await SessionManager.list("/p", dir), []);
    assert.equal(fs.existsSync(dir), false);
  });

  test("a sessionDir that is a file yields an empty list", async (t) => {
    const file = path.join(tempDir(t), "file");
    fs.writeFileSync(file, "x");
    assert.deepEqual(await SessionManager.list("/p", file), []);
  });

  test("only .jsonl files are summarized", async (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "a", cwd: "/p" }));
    writeSession(dir, "b.json", header({ id: "b", cwd: "/p" }));
    writeSession(dir, "c.JSONL", header({ id: "c", cwd: "/p" }));
    const list = await SessionManager.list("/p", dir);
    assert.deepEqual(list.map((s) => s.id), ["a"]);
  });

  test("the result is sorted by modified, newest first", async (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "mid", cwd: "/p", timestamp: iso(T0 + 2000) }));
    writeSession(dir, "b.jsonl", header({ id: "old", cwd: "/p", timestamp: iso(T0) }));
    writeSession(dir, "c.jsonl", header({ id: "new", cwd: "/p", timestamp: iso(T0 + 1000) }), [
      msgEntry("m", null, user("x", T0 + 9000)),
    ]);
    const list = await SessionManager.list("/p", dir);
    assert.deepEqual(list.map((s) => s.id), ["new", "mid", "old"]);
  });

  test("sessions with equal modified times keep descending file-name order", async (t) => {
    const dir = tempDir(t);
    for (const n of [3, 1, 4, 2]) writeSession(dir, fname(n), header({ id: `s${n}`, cwd: "/p" }));
    const list = await SessionManager.list("/p", dir);
    assert.deepEqual(list.map((s) => s.id), ["s4", "s3", "s2", "s1"]);
  });

  test("progress is reported once per file with loaded counting up and the unfiltered total", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 4, "/p");
    writeSession(dir, "z1.jsonl", header({ id: "other", cwd: "/other" }));
    fs.writeFileSync(path.join(dir, "z2.jsonl"), "garbage\n");
    const rec = progressRecorder();
    await SessionManager.list("/p", dir, rec.fn);
    assert.deepEqual(rec.calls.map((c) => c[0]), [1, 2, 3, 4, 5, 6]);
    assert.ok(rec.calls.every((c) => c[1] === 6));
  });

  test("a partial list is passed only for the first file, every tenth file and the last file", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 21, "/p");
    const rec = progressRecorder();
    await SessionManager.list("/p", dir, rec.fn);
    const withPartial = rec.calls.filter((c) => c[2] !== undefined).map((c) => c[0]);
    assert.deepEqual(withPartial, [1, 10, 20, 21]);
    for (const [loaded, , partial] of rec.calls) {
      if (partial) assert.equal(partial.length, loaded);
    }
  });

  test("with six files only the first and the last progress calls carry a partial list", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 6, "/p");
    const rec = progressRecorder();
    const result = await SessionManager.list("/p", dir, rec.fn);
    assert.equal(rec.calls.length, 6);
    assert.ok(Array.isArray(rec.calls[0][2]));
    for (let i = 1; i < 5; i++) assert.equal(rec.calls[i][2], undefined);
    assert.deepEqual(rec.calls[5][2], result);
  });

  test("partial lists are sorted by modified, newest first", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 12, "/p");
    const rec = progressRecorder();
    await SessionManager.list("/p", dir, rec.fn);
    const tenth = rec.calls.find((c) => c[0] === 10)[2];
    const times = tenth.map((s) => s.modified.getTime());
    assert.deepEqual(times, [...times].sort((a, b) => b - a));
  });

  test("partial lists are cwd-filtered while the total counts every .jsonl file", async (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "a", cwd: "/p", timestamp: iso(T0) }));
    writeSession(dir, "b.jsonl", header({ id: "b", cwd: "/other", timestamp: iso(T0 + 1) }));
    writeSession(dir, "c.jsonl", header({ id: "c", cwd: "/p", timestamp: iso(T0 + 2) }));
    const rec = progressRecorder();
    const result = await SessionManager.list("/p", dir, rec.fn);
    assert.deepEqual(rec.calls.map((c) => c[1]), [3, 3, 3]);
    const last = rec.calls[2][2];
    assert.deepEqual(last.map((s) => s.id).sort(), ["a", "c"]);
    assert.deepEqual(last, result);
  });

  test("files that are skipped still count as loaded", async (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, "a.jsonl"), "garbage\n");
    fs.writeFileSync(path.join(dir, "b.jsonl"), "");
    const rec = progressRecorder();
    const result = await SessionManager.list("/p", dir, rec.fn);
    assert.deepEqual(result, []);
    assert.deepEqual(rec.calls, [
      [1, 2, []],
      [2, 2, []],
    ]);
  });

  test("an empty directory produces no progress calls", async (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, "notes.txt"), "x");
    const rec = progressRecorder();
    assert.deepEqual(await SessionManager.list("/p", dir, rec.fn), []);
    assert.deepEqual(rec.calls, []);
  });

  test("each partial list is a new array", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 3, "/p");
    const rec = progressRecorder();
    await SessionManager.list("/p", dir, rec.fn);
    assert.notEqual(rec.calls[0][2], rec.calls[2][2]);
  });
});

// ---------------------------------------------------------------------------
// listAll
// ---------------------------------------------------------------------------
describe("SessionManager.listAll", () => {
  test("with a session dir only that flat dir is listed, without cwd filtering", async (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "a", cwd: "/one" }));
    writeSession(dir, "b.jsonl", header({ id: "b", cwd: "/two" }));
    writeSession(path.join(dir, "sub"), "c.jsonl", header({ id: "c", cwd: "/one" }));
    const list = await SessionManager.listAll(dir);
    assert.deepEqual(list.map((s) => s.id).sort(), ["a", "b"]);
  });

  test("with a session dir, progress follows the list rules", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 11);
    const rec = progressRecorder();
    const result = await SessionManager.listAll(dir, rec.fn);
    assert.deepEqual(rec.calls.map((c) => c[0]), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.deepEqual(rec.calls.filter((c) => c[2]).map((c) => c[0]), [1, 10, 11]);
    assert.deepEqual(rec.calls[10][2], result);
  });

  test("a missing session dir yields an empty list", async (t) => {
    assert.deepEqual(await SessionManager.listAll(path.join(tempDir(t), "missing")), []);
  });

  test("an empty-string session dir falls back to the default mode", async (t) => {
    const agent = useAgentDir(t);
    writeSession(path.join(agent, "sessions", "--p--"), "a.jsonl", header({ id: "a" }));
    const list = await SessionManager.listAll("");
    assert.deepEqual(list.map((s) => s.id), ["a"]);
  });

  test("equally recent sessions of one name keep the order readdirSync gives their projects", async (t) => {
    // Newest first, then by name descending; a tie in both keeps readdirSync's order of the
    // project directories (sorted by name under Node off Windows, the system's elsewhere).
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    for (const d of ["--pm--", "--pa--", "--pz--", "--pb--"]) {
      for (const n of ["b", "a"]) setMtime(writeSession(path.join(root, d), `${n}.jsonl`, header({ id: `${d}${n}` })), T0);
    }
    const dirs = fs.readdirSync(root);
    const list = await SessionManager.listAll();
    assert.deepEqual(list.map((s) => s.id), ["b", "a"].flatMap((n) => dirs.map((d) => `${d}${n}`)));
  });

  test("a function first argument is the progress callback in default mode", async (t) => {
    const agent = useAgentDir(t);
    writeSession(path.join(agent, "sessions", "--p--"), "a.jsonl", header({ id: "a" }));
    const rec = progressRecorder();
    const list = await SessionManager.listAll(rec.fn);
    assert.equal(list.length, 1);
    assert.deepEqual(rec.calls, [[1, 1, list]]);
  });

  test("a function second argument is the progress callback when the first is undefined", async (t) => {
    const agent = useAgentDir(t);
    writeSession(path.join(agent, "sessions", "--p--"), "a.jsonl", header({ id: "a" }));
    const rec = progressRecorder();
    await SessionManager.listAll(undefined, rec.fn);
    assert.equal(rec.calls.length, 1);
  });

  test("a signal passed as the only argument is ignored", async (t) => {
    const agent = useAgentDir(t);
    writeSession(path.join(agent, "sessions", "--p--"), "a.jsonl", header({ id: "a" }));
    const list = await SessionManager.listAll(abortedSignal());
    assert.deepEqual(list.map((s) => s.id), ["a"]);
  });

  test("a signal as second argument after a session dir is ignored", async (t) => {
    const dir = tempDir(t);
    writeSession(dir, "a.jsonl", header({ id: "a" }));
    const list = await SessionManager.listAll(dir, abortedSignal());
    assert.deepEqual(list.map((s) => s.id), ["a"]);
  });

  test("a signal after a progress callback is honoured", async (t) => {
    useAgentDir(t);
    await assert.rejects(SessionManager.listAll(() => {}, abortedSignal()), { name: "AbortError" });
  });

  test("a signal as second argument after an undefined first argument is honoured", async (t) => {
    useAgentDir(t);
    await assert.rejects(SessionManager.listAll(undefined, abortedSignal()), { name: "AbortError" });
  });

  test("a signal as third argument after a session dir and callback is honoured", async (t) => {
    const dir = tempDir(t);
    await assert.rejects(SessionManager.listAll(dir, () => {}, abortedSignal()), { name: "AbortError" });
  });

  test("a signal as third argument after a session dir and undefined callback is honoured", async (t) => {
    const dir = tempDir(t);
    await assert.rejects(SessionManager.listAll(dir, undefined, abortedSignal()), { name: "AbortError" });
  });

  test("in default mode a missing sessions root yields an empty list", async (t) => {
    useAgentDir(t);
    assert.deepEqual(await SessionManager.listAll(), []);
  });

  test("in default mode a sessions root that is a file yields an empty list", async (t) => {
    const agent = useAgentDir(t);
    fs.writeFileSync(path.join(agent, "sessions"), "x");
    assert.deepEqual(await SessionManager.listAll(), []);
  });

  test("in default mode every subdirectory of the sessions root is read, without cwd filtering", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    const a = writeSession(path.join(root, "--one--"), "a.jsonl", header({ id: "a", cwd: "/one" }));
    const b = writeSession(path.join(root, "--two--"), "b.jsonl", header({ id: "b", cwd: "/two" }));
    const list = await SessionManager.listAll();
    assert.deepEqual(list.map((s) => s.path).sort(), [a, b].sort());
  });

  test("in default mode files directly inside the sessions root are ignored", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    writeSession(root, "top.jsonl", header({ id: "top" }));
    writeSession(path.join(root, "--d--"), "a.jsonl", header({ id: "a" }));
    const list = await SessionManager.listAll();
    assert.deepEqual(list.map((s) => s.id), ["a"]);
  });

  test("in default mode a symlinked subdirectory is read through the link", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    fs.mkdirSync(root, { recursive: true });
    const outside = tempDir(t);
    writeSession(outside, "a.jsonl", header({ id: "linked" }));
    fs.symlinkSync(outside, path.join(root, "--link--"));
    const list = await SessionManager.listAll();
    assert.deepEqual(list.map((s) => [s.id, s.path]), [["linked", path.join(root, "--link--", "a.jsonl")]]);
  });

  test("in default mode a dangling symlink in the root contributes nothing", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    writeSession(path.join(root, "--d--"), "a.jsonl", header({ id: "a" }));
    fs.symlinkSync(path.join(agent, "nowhere"), path.join(root, "--dangling--"));
    const list = await SessionManager.listAll();
    assert.deepEqual(list.map((s) => s.id), ["a"]);
  });

  test("in default mode non-.jsonl files in subdirectories are ignored", async (t) => {
    const agent = useAgentDir(t);
    const sub = path.join(agent, "sessions", "--d--");
    writeSession(sub, "a.jsonl", header({ id: "a" }));
    writeSession(sub, "b.txt", header({ id: "b" }));
    const list = await SessionManager.listAll();
    assert.deepEqual(list.map((s) => s.id), ["a"]);
  });

  test("a relative PI_CODING_AGENT_DIR yields relative session paths", async (t) => {
    const agent = tempDir(t);
    const rel = path.relative(process.cwd(), agent);
    useAgentDir(t, rel);
    writeSession(path.join(agent, "sessions", "--d--"), "a.jsonl", header({ id: "a" }));
    const list = await SessionManager.listAll();
    assert.equal(list[0].path, path.join(rel, "sessions", "--d--", "a.jsonl"));
    assert.equal(path.isAbsolute(list[0].path), false);
  });

  test("in default mode the result is sorted by modified, newest first", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    writeSession(path.join(root, "--a--"), "x.jsonl", header({ id: "old", timestamp: iso(T0) }));
    writeSession(path.join(root, "--b--"), "y.jsonl", header({ id: "new", timestamp: iso(T0 + 5000) }));
    writeSession(path.join(root, "--c--"), "z.jsonl", header({ id: "mid", timestamp: iso(T0 + 1000) }));
    const list = await SessionManager.listAll();
    assert.deepEqual(list.map((s) => s.id), ["new", "mid", "old"]);
  });

  test("in default mode equal modified times keep mtime order, newest first", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    const a = writeSession(path.join(root, "--a--"), "a.jsonl", header({ id: "a" }));
    const b = writeSession(path.join(root, "--b--"), "b.jsonl", header({ id: "b" }));
    const c = writeSession(path.join(root, "--c--"), "c.jsonl", header({ id: "c" }));
    setMtime(a, T0 + 3000);
    setMtime(b, T0 + 1000);
    setMtime(c, T0 + 2000);
    const list = await SessionManager.listAll();
    assert.deepEqual(list.map((s) => s.id), ["a", "c", "b"]);
  });

  test("in default mode equal modified and mtime keep descending base-name order", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    const files = [
      writeSession(path.join(root, "--z--"), "a.jsonl", header({ id: "a" })),
      writeSession(path.join(root, "--a--"), "c.jsonl", header({ id: "c" })),
      writeSession(path.join(root, "--m--"), "b.jsonl", header({ id: "b" })),
    ];
    for (const f of files) setMtime(f, T0);
    const list = await SessionManager.listAll();
    assert.deepEqual(list.map((s) => s.id), ["c", "b", "a"]);
  });

  test("in default mode the file mtime is the modified fallback", async (t) => {
    const agent = useAgentDir(t);
    const f = writeSession(path.join(agent, "sessions", "--d--"), "a.jsonl", header({ timestamp: "bad" }));
    setMtime(f, T0 + 55_000);
    const [info] = await SessionManager.listAll();
    assert.equal(info.modified.getTime(), T0 + 55_000);
  });

  test("in default mode progress counts every candidate and the last call carries the full sorted list", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    for (let i = 0; i < 5; i++) {
      const f = writeSession(path.join(root, `--d${i % 2}--`), `f${i}.jsonl`, header({ id: `s${i}`, cwd: `/c${i}`, timestamp: iso(T0 + i) }));
      setMtime(f, T0 + i * 1000);
    }
    fs.writeFileSync(path.join(root, "--d0--", "bad.jsonl"), "nope\n");
    const rec = progressRecorder();
    const result = await SessionManager.listAll(rec.fn);
    assert.deepEqual(rec.calls.map((c) => c[0]), [1, 2, 3, 4, 5, 6]);
    assert.ok(rec.calls.every((c) => c[1] === 6));
    assert.deepEqual(rec.calls[5][2], result);
    assert.equal(result.length, 5);
  });

  test("in default mode a .jsonl whose stat fails still counts in progress but is not listed", async (t) => {
    const agent = useAgentDir(t);
    const sub = path.join(agent, "sessions", "--d--");
    writeSession(sub, "a.jsonl", header({ id: "a" }));
    fs.symlinkSync(path.join(agent, "missing.jsonl"), path.join(sub, "dangling.jsonl"));
    const rec = progressRecorder();
    const list = await SessionManager.listAll(rec.fn);
    assert.deepEqual(list.map((s) => s.id), ["a"]);
    assert.deepEqual(rec.calls.map((c) => [c[0], c[1]]), [
      [1, 2],
      [2, 2],
    ]);
  });

  test("in default mode partial lists appear only at the first candidate, every 100th completion and the last", async (t) => {
    const agent = useAgentDir(t);
    const sub = path.join(agent, "sessions", "--many--");
    for (let i = 0; i < 101; i++) {
      const f = writeSession(sub, `f${String(i).padStart(3, "0")}.jsonl`, header({ id: `s${i}`, timestamp: iso(T0 + i) }));
      setMtime(f, T0 + i * 1000);
    }
    const rec = progressRecorder();
    const result = await SessionManager.listAll(rec.fn);
    assert.deepEqual(rec.calls.map((c) => c[0]), Array.from({ length: 101 }, (_, i) => i + 1));
    const withPartial = rec.calls.filter((c) => c[2] !== undefined).map((c) => c[0]);
    assert.ok(withPartial.includes(100));
    assert.equal(withPartial.at(-1), 101);
    assert.ok(withPartial.filter((n) => n !== 100 && n !== 101).length <= 1);
    assert.deepEqual(rec.calls[100][2], result);
    assert.equal(rec.calls.find((c) => c[0] === 100)[2].length, 100);
  });

  test("in default mode the first partial list appears once the most recent candidate has finished", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    for (let i = 0; i < 6; i++) {
      const f = writeSession(path.join(root, `--d${i}--`), `f${i}.jsonl`, header({ id: `s${i}` }));
      setMtime(f, T0 + i * 1000);
    }
    const rec = progressRecorder();
    await SessionManager.listAll(rec.fn);
    const partials = rec.calls.filter((c) => c[2] !== undefined);
    assert.ok(partials.length >= 1 && partials.length <= 2);
    assert.ok(partials[0][2].some((s) => s.id === "s5"));
    assert.equal(rec.calls.at(-1)[2].length, 6);
  });
});

// ---------------------------------------------------------------------------
// Abort semantics
// ---------------------------------------------------------------------------
describe("abort semantics", () => {
  test("list with a pre-aborted signal rejects with an AbortError DOMException", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 2, "/p");
    const signal = abortedSignal();
    await assert.rejects(SessionManager.list("/p", dir, undefined, signal), (err) => {
      // The signal's own reason, worded by the runtime ("This operation was aborted" in Node, "The
      // operation was aborted." in Bun).
      assert.equal(err, signal.reason);
      assert.ok(err instanceof DOMException);
      assert.equal(err.name, "AbortError");
      return true;
    });
  });

  test("list rejects with a pre-aborted signal even when the directory is missing", async (t) => {
    const dir = path.join(tempDir(t), "missing");
    await assert.rejects(SessionManager.list("/p", dir, undefined, abortedSignal()), { name: "AbortError" });
  });

  test("list rejects with a custom abort reason as is", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 2, "/p");
    const reason = new Error("stop now");
    await assert.rejects(SessionManager.list("/p", dir, undefined, abortedSignal(reason)), (err) => err === reason);
  });

  test("list rejects with a non-Error custom reason as is", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 1, "/p");
    const reason = { why: "because" };
    await assert.rejects(SessionManager.list("/p", dir, undefined, abortedSignal(reason)), (err) => err === reason);
  });

  test("listAll with a session dir and a pre-aborted signal rejects with AbortError", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 2);
    const signal = abortedSignal();
    await assert.rejects(SessionManager.listAll(dir, undefined, signal), (err) => {
      assert.equal(err, signal.reason, "the signal's own reason, worded by the runtime");
      assert.equal(err.name, "AbortError");
      return true;
    });
  });

  test("listAll in default mode rejects with a custom reason as is, even without a sessions root", async (t) => {
    useAgentDir(t);
    const reason = new Error("custom");
    await assert.rejects(SessionManager.listAll(() => {}, abortedSignal(reason)), (err) => err === reason);
  });

  test("aborting from a progress callback makes list reject after progress already fired", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 15, "/p");
    const ac = new AbortController();
    const reason = new Error("enough");
    let calls = 0;
    await assert.rejects(
      SessionManager.list("/p", dir, () => {
        calls++;
        ac.abort(reason);
      }, ac.signal),
      (err) => err === reason,
    );
    assert.ok(calls >= 1);
  });

  test("aborting from a progress callback makes listAll with a dir reject", async (t) => {
    const dir = tempDir(t);
    writeMany(dir, 15);
    const ac = new AbortController();
    await assert.rejects(
      SessionManager.listAll(dir, () => ac.abort(), ac.signal),
      { name: "AbortError" },
    );
  });

  test("aborting from a progress callback makes listAll in default mode reject", async (t) => {
    const agent = useAgentDir(t);
    writeMany(path.join(agent, "sessions", "--d--"), 15);
    const ac = new AbortController();
    const reason = new Error("halt");
    await assert.rejects(SessionManager.listAll(() => ac.abort(reason), ac.signal), (err) => err === reason);
  });
});

describe("relative and untidy session dirs in discovery", () => {
  // Spellings of the dir <work>/custom as seen from <work>/run, and what path.join makes of them.
  const SPELLINGS = [
    ["../custom", "../custom"],
    [".././custom/", "../custom"],
    ["..//custom", "../custom"],
    ["../run/../custom", "../custom"],
  ];

  function layout(t) {
    const work = tempDir(t);
    const run = path.join(work, "run");
    fs.mkdirSync(run);
    const previous = process.cwd();
    process.chdir(run);
    t.after(() => process.chdir(previous));
    writeSession(path.join(work, "custom"), "a.jsonl", header({ id: "a", cwd: "/proj" }), [msgEntry("aaaa0001", null, user("hi"))]);
    return work;
  }

  test("findMostRecentSession joins the dir as path.join does", (t) => {
    layout(t);
    for (const [given, joined] of SPELLINGS) {
      assert.equal(M.findMostRecentSession(given), path.join(joined, "a.jsonl"), given);
      assert.equal(M.findMostRecentSession(given, "/proj"), path.join(joined, "a.jsonl"), given);
    }
  });

  test("findById joins the dir as path.join does", (t) => {
    layout(t);
    for (const [given, joined] of SPELLINGS) {
      assert.equal(SessionManager.findById("/proj", "a", given), path.join(joined, "a.jsonl"), given);
    }
  });

  test("list and listAll with a session dir give SessionInfo paths joined as path.join does", async (t) => {
    layout(t);
    for (const [given, joined] of SPELLINGS) {
      assert.deepEqual((await SessionManager.list("/proj", given)).map((s) => s.path), [path.join(joined, "a.jsonl")], given);
      assert.deepEqual((await SessionManager.listAll(given)).map((s) => s.path), [path.join(joined, "a.jsonl")], given);
    }
  });

  test("listAll under a relative agent dir gives paths below its normalized sessions root", async (t) => {
    const work = tempDir(t);
    const previous = process.cwd();
    process.chdir(work);
    t.after(() => process.chdir(previous));
    useAgentDir(t, "./agent//");
    writeSession(path.join(work, "agent", "sessions", "--proj--"), "a.jsonl", header({ id: "a", cwd: "/proj" }), [msgEntry("aaaa0001", null, user("hi"))]);
    assert.deepEqual((await SessionManager.listAll()).map((s) => s.path), [path.join("agent", "sessions", "--proj--", "a.jsonl")]);
  });
});
