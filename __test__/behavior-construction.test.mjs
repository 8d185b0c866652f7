// docs/behaviour.md, "Making a manager": construction and static factories.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadTarget } from "./helpers/target.mjs";
import {
  INVALID_ID_MESSAGE,
  assistant,
  fileLines,
  header,
  jsonlFiles,
  msgEntry,
  readText,
  tempDir,
  throwsFsError,
  throwsMessage,
  useAgentDir,
  useHome,
  user,
  withCwd,
  writeJsonl,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager } = M;
const q = (v) => JSON.stringify(v);

function sessionFile(dir, name, records) {
  return writeJsonl(path.join(dir, name), records);
}

function setMtime(file, secondsAgo) {
  const t = new Date(Date.now() - secondsAgo * 1000);
  fs.utimesSync(file, t, t);
}

// ---------------------------------------------------------------- common constructor semantics

test("a relative cwd is resolved against process.cwd()", (t) => {
  const work = tempDir(t);
  withCwd(t, work);
  const sm = SessionManager.create("rel/proj", path.join(work, "s"));
  assert.equal(sm.getCwd(), path.join(work, "rel", "proj"));
});

test("a cwd starting with ~/ is expanded to the home directory", (t) => {
  const home = useHome(t);
  const sm = SessionManager.inMemory("~/proj");
  assert.equal(sm.getCwd(), path.join(home, "proj"));
});

test("a relative sessionDir stays relative in getSessionDir and in the session file path", (t) => {
  const work = tempDir(t);
  withCwd(t, work);
  const sm = SessionManager.create("/proj", "rel-sessions");
  assert.equal(sm.getSessionDir(), "rel-sessions");
  assert.equal(path.dirname(sm.getSessionFile()), "rel-sessions");
  assert.ok(fs.statSync(path.join(work, "rel-sessions")).isDirectory());
});

// Untidy spellings of a session dir, each with what path.join makes of the dir part of a file in
// it. The process runs in <work>/run, so "../" climbs back to <work>.
const DIR_SPELLINGS = [
  ["./custom", "custom"],
  ["custom/", "custom"],
  ["x//y", "x/y"],
  ["x/../y", "y"],
  ["./", "."],
  ["..", ".."],
  ["../run/c2", "../run/c2"],
];

function runIn(t) {
  const work = tempDir(t);
  const run = path.join(work, "run");
  fs.mkdirSync(run);
  withCwd(t, run);
  return run;
}

test("a relative sessionDir is kept as given by getSessionDir but normalized in new session file paths", (t) => {
  const run = runIn(t);
  for (const [given, joined] of DIR_SPELLINGS) {
    const sm = SessionManager.create("/proj", given);
    assert.equal(sm.getSessionDir(), given);
    const file = sm.getSessionFile();
    assert.equal(file, path.join(joined, path.basename(file)), given);
    sm.appendMessage(user());
    sm.appendMessage(assistant());
    assert.ok(fs.existsSync(path.join(run, file)), `${given}: written where the path says`);
    const again = sm.newSession();
    assert.equal(again, path.join(joined, path.basename(again)), `${given}: newSession`);
  }
});

test("createBranchedSession on a relative sessionDir names the new file with the normalized dir", (t) => {
  runIn(t);
  const sm = SessionManager.create("/proj", "./x//y/../z/");
  sm.appendMessage(user());
  const leaf = sm.appendMessage(assistant());
  const before = sm.getSessionFile();
  const branched = sm.createBranchedSession(leaf);
  assert.equal(before, path.join("x", "z", path.basename(before)));
  assert.equal(branched, path.join("x", "z", path.basename(branched)));
  assert.equal(sm.getSessionFile(), branched);
  assert.equal(sm.getHeader().parentSession, before);
});

test("open with a relative sessionDir keeps the dir as given and names new sessions with it normalized", (t) => {
  const run = runIn(t);
  const file = sessionFile(run, "s.jsonl", [header({ id: "s1", cwd: "/proj" }), msgEntry("aaaa0001", null, user())]);
  const sm = SessionManager.open("s.jsonl", "./custom/");
  assert.equal(sm.getSessionDir(), "./custom/");
  assert.equal(sm.getSessionFile(), file);
  const fresh = sm.newSession();
  assert.equal(fresh, path.join("custom", path.basename(fresh)));
});

test("continueRecent with a relative sessionDir opens the newest file by its resolved path", (t) => {
  const run = runIn(t);
  const first = SessionManager.create("/proj", "./custom");
  first.appendMessage(user());
  first.appendMessage(assistant());
  const sm = SessionManager.continueRecent("/proj", "./custom");
  assert.equal(sm.getSessionDir(), "./custom");
  assert.equal(sm.getSessionFile(), path.join(run, first.getSessionFile()));
  assert.equal(sm.getSessionId(), first.getSessionId());
});

test("forkFrom into a relative sessionDir returns a manager holding the resolved file path", (t) => {
  const run = runIn(t);
  const src = sourceSession(run);
  for (const [given, joined] of DIR_SPELLINGS) {
    const sm = SessionManager.forkFrom(src, "/target", given);
    assert.equal(sm.getSessionDir(), given);
    const file = sm.getSessionFile();
    assert.equal(file, path.join(run, joined, path.basename(file)), given);
    assert.ok(fs.existsSync(file), given);
  }
});

test("a sessionDir starting with ~/ is expanded to the home directory", (t) => {
  const home = useHome(t);
  const sm = SessionManager.create("/proj", "~/sessions-here");
  assert.equal(sm.getSessionDir(), path.join(home, "sessions-here"));
});

test("a sessionDir with a trailing slash is kept as given", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", `${dir}/`);
  assert.equal(sm.getSessionDir(), `${dir}/`);
});

test("a missing sessionDir is created recursively for a persisted manager", (t) => {
  const dir = path.join(tempDir(t), "a", "b", "c");
  SessionManager.create("/proj", dir);
  assert.ok(fs.statSync(dir).isDirectory());
});

test("the sessionDir is created before the custom session id is validated", (t) => {
  const dir = path.join(tempDir(t), "made", "first");
  throwsMessage(() => SessionManager.create("/proj", dir, { id: "-bad" }), INVALID_ID_MESSAGE);
  assert.ok(fs.statSync(dir).isDirectory());
  assert.deepEqual(fs.readdirSync(dir), []);
});

// ---------------------------------------------------------------- create

test("create without a sessionDir uses and creates the default dir for the cwd", (t) => {
  const agent = useAgentDir(t);
  const sm = SessionManager.create("/work/proj");
  const expected = path.join(agent, "sessions", "--work-proj--");
  assert.equal(sm.getSessionDir(), expected);
  assert.ok(fs.statSync(expected).isDirectory());
  assert.equal(path.dirname(sm.getSessionFile()), expected);
});

test("create with an empty-string sessionDir falls back to the default dir", (t) => {
  const agent = useAgentDir(t);
  const sm = SessionManager.create("/work/proj", "");
  assert.equal(sm.getSessionDir(), path.join(agent, "sessions", "--work-proj--"));
});

test("create starts a new persisted session without writing a file", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  assert.equal(sm.isPersisted(), true);
  assert.equal(sm.getEntries().length, 0);
  assert.equal(sm.getLeafId(), null);
  assert.equal(fs.existsSync(sm.getSessionFile()), false);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test("create honours a custom session id", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir, { id: "chosen-id" });
  assert.equal(sm.getSessionId(), "chosen-id");
  assert.equal(sm.getHeader().id, "chosen-id");
});

test("create rejects an invalid custom session id with the exact message before writing anything", (t) => {
  const dir = tempDir(t);
  throwsMessage(() => SessionManager.create("/proj", dir, { id: "bad id" }), INVALID_ID_MESSAGE);
  assert.deepEqual(fs.readdirSync(dir), []);
});

// ---------------------------------------------------------------- open

test("open resolves a relative path against process.cwd()", (t) => {
  const dir = tempDir(t);
  sessionFile(dir, "s.jsonl", [header({ id: "s1" }), msgEntry("aaaa0001", null, user())]);
  withCwd(t, dir);
  const sm = SessionManager.open("s.jsonl");
  assert.equal(sm.getSessionFile(), path.join(dir, "s.jsonl"));
  assert.equal(sm.getSessionId(), "s1");
});

test("open expands a path starting with ~/", (t) => {
  const home = useHome(t);
  sessionFile(home, "s.jsonl", [header({ id: "s1" })]);
  const sm = SessionManager.open("~/s.jsonl");
  assert.equal(sm.getSessionFile(), path.join(home, "s.jsonl"));
});

test("open loads the given file instead of starting a new session", (t) => {
  const dir = tempDir(t);
  const file = sessionFile(dir, "s.jsonl", [header({ id: "loaded-id" }), msgEntry("aaaa0001", null, user())]);
  const sm = SessionManager.open(file);
  assert.equal(sm.getSessionId(), "loaded-id");
  assert.deepEqual(sm.getEntries().map((e) => e.id), ["aaaa0001"]);
});

test("open takes the cwd from the file header when no override is given", (t) => {
  const dir = tempDir(t);
  const file = sessionFile(dir, "s.jsonl", [header({ id: "s1", cwd: "/from/header" })]);
  assert.equal(SessionManager.open(file).getCwd(), "/from/header");
});

test("open prefers the cwdOverride over the header cwd", (t) => {
  const dir = tempDir(t);
  const file = sessionFile(dir, "s.jsonl", [header({ id: "s1", cwd: "/from/header" })]);
  assert.equal(SessionManager.open(file, undefined, "/override").getCwd(), "/override");
});

test("open resolves a relative header cwd against process.cwd()", (t) => {
  const dir = tempDir(t);
  const file = sessionFile(dir, "s.jsonl", [header({ id: "s1", cwd: "relative/cwd" })]);
  withCwd(t, dir);
  assert.equal(SessionManager.open(file).getCwd(), path.join(dir, "relative", "cwd"));
});

test("open falls back to process.cwd() when the header cwd is not a string", (t) => {
  const dir = tempDir(t);
  const file = sessionFile(dir, "s.jsonl", [header({ id: "s1", cwd: 42 })]);
  withCwd(t, dir);
  assert.equal(SessionManager.open(file).getCwd(), dir);
});

test("open falls back to process.cwd() when the file does not exist", (t) => {
  const dir = tempDir(t);
  withCwd(t, dir);
  assert.equal(SessionManager.open(path.join(dir, "missing.jsonl")).getCwd(), dir);
});

test("open propagates the error when the path is a directory", (t) => {
  const dir = tempDir(t);
  const p = path.join(dir, "d.jsonl");
  fs.mkdirSync(p);
  throwsFsError(() => SessionManager.open(p), "EISDIR");
});

test("open loads a file whose header line exceeds the 1 MiB scan limit and uses its cwd", (t) => {
  const dir = tempDir(t);
  const big = header({ id: "big-1", cwd: "/big/header", pad: "x".repeat(1024 * 1024 + 10) });
  const file = sessionFile(dir, "s.jsonl", [big, msgEntry("aaaa0001", null, user())]);
  const sm = SessionManager.open(file);
  assert.equal(sm.getCwd(), "/big/header");
  assert.equal(sm.getSessionId(), "big-1");
  assert.equal(sm.getLeafId(), "aaaa0001");
});

test("open loads a file whose header is preceded by more than 1 MiB of blank lines", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "s.jsonl");
  fs.writeFileSync(file, `${"   \n".repeat(300 * 1024)}${q(header({ id: "late", cwd: "/late/cwd" }))}\n`);
  const sm = SessionManager.open(file);
  assert.equal(sm.getSessionId(), "late");
  assert.equal(sm.getCwd(), "/late/cwd");
});

test("open uses the given sessionDir for the manager", (t) => {
  const dir = tempDir(t);
  const file = sessionFile(dir, "s.jsonl", [header({ id: "s1" })]);
  const other = path.join(dir, "other");
  const sm = SessionManager.open(file, other);
  assert.equal(sm.getSessionDir(), other);
  assert.ok(fs.statSync(other).isDirectory());
});

test("open without a sessionDir uses the absolute parent directory of the file", (t) => {
  const dir = tempDir(t);
  sessionFile(dir, "s.jsonl", [header({ id: "s1" })]);
  withCwd(t, dir);
  const sm = SessionManager.open("./s.jsonl");
  assert.equal(sm.getSessionDir(), dir);
});

test("open creates the missing parent directory even when the file does not exist", (t) => {
  const parent = path.join(tempDir(t), "not", "yet");
  const sm = SessionManager.open(path.join(parent, "new.jsonl"));
  assert.ok(fs.statSync(parent).isDirectory());
  assert.equal(fs.existsSync(path.join(parent, "new.jsonl")), false);
  assert.equal(sm.getSessionFile(), path.join(parent, "new.jsonl"));
});

test("open of a missing file creates it lazily at that exact path", (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, "exact-name.jsonl");
  const sm = SessionManager.open(file);
  sm.appendModelChange("p", "m");
  assert.equal(fs.existsSync(file), false);
  sm.appendMessage(user());
  assert.equal(fileLines(file).length, 3);
  assert.deepEqual(jsonlFiles(dir), ["exact-name.jsonl"]);
});

// ---------------------------------------------------------------- continueRecent

test("continueRecent without a sessionDir uses and creates the default dir", (t) => {
  const agent = useAgentDir(t);
  const sm = SessionManager.continueRecent("/proj");
  const expected = path.join(agent, "sessions", "--proj--");
  assert.equal(sm.getSessionDir(), expected);
  assert.ok(fs.statSync(expected).isDirectory());
});

test("continueRecent starts a fresh lazy session when the dir holds no session", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.continueRecent("/proj", dir);
  assert.equal(sm.getEntries().length, 0);
  assert.equal(path.dirname(sm.getSessionFile()), dir);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test("continueRecent opens the most recently modified session file", (t) => {
  const dir = tempDir(t);
  const older = sessionFile(dir, "b.jsonl", [header({ id: "older", cwd: "/project" })]);
  const newer = sessionFile(dir, "a.jsonl", [header({ id: "newer", cwd: "/project" })]);
  setMtime(older, 100);
  setMtime(newer, 10);
  const sm = SessionManager.continueRecent("/project", dir);
  assert.equal(sm.getSessionFile(), newer);
  assert.equal(sm.getSessionId(), "newer");
});

test("continueRecent keeps the caller's cwd instead of the header cwd", (t) => {
  const agent = useAgentDir(t);
  const dir = path.join(agent, "sessions", "--mine--");
  fs.mkdirSync(dir, { recursive: true });
  sessionFile(dir, "s.jsonl", [header({ id: "s1", cwd: "/somewhere/else" })]);
  const sm = SessionManager.continueRecent("/mine");
  assert.equal(sm.getSessionId(), "s1");
  assert.equal(sm.getCwd(), "/mine");
});

test("continueRecent in the default dir does not filter by header cwd", (t) => {
  const agent = useAgentDir(t);
  const dir = path.join(agent, "sessions", "--mine--");
  fs.mkdirSync(dir, { recursive: true });
  const file = sessionFile(dir, "s.jsonl", [header({ id: "foreign", cwd: "/other/project" })]);
  assert.equal(SessionManager.continueRecent("/mine").getSessionFile(), file);
});

test("continueRecent with an explicit non-default dir skips sessions of other cwds", (t) => {
  const dir = tempDir(t);
  const mine = sessionFile(dir, "mine.jsonl", [header({ id: "mine", cwd: "/mine" })]);
  const other = sessionFile(dir, "other.jsonl", [header({ id: "other", cwd: "/other" })]);
  setMtime(mine, 100);
  setMtime(other, 10);
  const sm = SessionManager.continueRecent("/mine", dir);
  assert.equal(sm.getSessionFile(), mine);
});

test("continueRecent with an explicit non-default dir starts fresh when only other cwds exist", (t) => {
  const dir = tempDir(t);
  const other = sessionFile(dir, "other.jsonl", [header({ id: "other", cwd: "/other" })]);
  const sm = SessionManager.continueRecent("/mine", dir);
  assert.notEqual(sm.getSessionFile(), other);
  assert.notEqual(sm.getSessionId(), "other");
  assert.equal(sm.getEntries().length, 0);
});

test("continueRecent with the default dir passed explicitly does not filter by cwd", (t) => {
  const agent = useAgentDir(t);
  const dir = path.join(agent, "sessions", "--mine--");
  fs.mkdirSync(dir, { recursive: true });
  const file = sessionFile(dir, "s.jsonl", [header({ id: "foreign", cwd: "/other" })]);
  assert.equal(SessionManager.continueRecent("/mine", dir).getSessionFile(), file);
});

test("continueRecent treats the default dir with a trailing slash as the default dir", (t) => {
  const agent = useAgentDir(t);
  const dir = path.join(agent, "sessions", "--mine--");
  fs.mkdirSync(dir, { recursive: true });
  const file = sessionFile(dir, "s.jsonl", [header({ id: "foreign", cwd: "/other" })]);
  const sm = SessionManager.continueRecent("/mine", `${dir}/`);
  assert.equal(sm.getSessionId(), "foreign");
  assert.equal(path.basename(sm.getSessionFile()), path.basename(file));
});

// ---------------------------------------------------------------- inMemory

test("inMemory creates a non-persisting manager with an empty session dir and no file", () => {
  const sm = SessionManager.inMemory("/proj");
  assert.equal(sm.isPersisted(), false);
  assert.equal(sm.getSessionDir(), "");
  assert.equal(sm.getSessionFile(), undefined);
});

test("inMemory defaults the cwd to process.cwd()", (t) => {
  const dir = tempDir(t);
  withCwd(t, dir);
  assert.equal(SessionManager.inMemory().getCwd(), dir);
});

test("inMemory honours a custom session id when no entries are given", () => {
  assert.equal(SessionManager.inMemory("/proj", { id: "mem-1" }).getSessionId(), "mem-1");
});

test("inMemory with an empty entries array starts a new session with the options", () => {
  const sm = SessionManager.inMemory("/proj", { id: "mem-2" }, []);
  assert.equal(sm.getSessionId(), "mem-2");
  assert.equal(sm.getEntries().length, 0);
});

test("inMemory with non-empty entries loads them", () => {
  const entries = [header({ id: "pre" }), msgEntry("aaaa0001", null, user())];
  const sm = SessionManager.inMemory("/proj", undefined, entries);
  assert.equal(sm.getSessionId(), "pre");
  assert.equal(sm.getLeafId(), "aaaa0001");
});

// ---------------------------------------------------------------- forkFrom

function sourceSession(dir, extra = []) {
  return sessionFile(dir, "source.jsonl", [
    header({ id: "src-id", cwd: "/src/cwd" }),
    msgEntry("aaaa0001", null, user("q")),
    msgEntry("aaaa0002", "aaaa0001", assistant("a")),
    ...extra,
  ]);
}

test("forkFrom writes the new file immediately with a fresh v3 header pointing at the source", (t) => {
  const dir = tempDir(t);
  const src = sourceSession(dir);
  const out = path.join(dir, "out");
  const sm = SessionManager.forkFrom(src, "/target/cwd", out);
  const lines = fileLines(sm.getSessionFile());
  const h = sm.getHeader();
  assert.equal(
    lines[0],
    `{"type":"session","version":3,"id":${q(sm.getSessionId())},"timestamp":${q(h.timestamp)},"cwd":"/target/cwd","parentSession":${q(src)}}`,
  );
  assert.notEqual(sm.getSessionId(), "src-id");
  assert.equal(path.basename(sm.getSessionFile()), `${h.timestamp.replace(/[:.]/g, "-")}_${sm.getSessionId()}.jsonl`);
});

test("forkFrom copies every non-header source entry in order", (t) => {
  const dir = tempDir(t);
  const src = sourceSession(dir);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  const srcLines = fileLines(src);
  assert.deepEqual(fileLines(sm.getSessionFile()).slice(1), srcLines.slice(1));
});

test("forkFrom drops extra header lines of the source", (t) => {
  const dir = tempDir(t);
  const src = sourceSession(dir, [header({ id: "second-header" })]);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  const records = fileLines(sm.getSessionFile()).map((l) => JSON.parse(l));
  assert.deepEqual(records.map((r) => r.type), ["session", "message", "message"]);
});

test("forkFrom returns a manager on the new file with the target cwd and dir", (t) => {
  const dir = tempDir(t);
  const src = sourceSession(dir);
  const out = path.join(dir, "out");
  const sm = SessionManager.forkFrom(src, "/target/cwd", out);
  assert.equal(sm.getCwd(), "/target/cwd");
  assert.equal(sm.getSessionDir(), out);
  assert.equal(path.dirname(sm.getSessionFile()), out);
  assert.deepEqual(sm.getEntries().map((e) => e.id), ["aaaa0001", "aaaa0002"]);
  assert.equal(sm.getLeafId(), "aaaa0002");
});

test("forkFrom resolves relative source and target paths", (t) => {
  const dir = tempDir(t);
  sourceSession(dir);
  withCwd(t, dir);
  const sm = SessionManager.forkFrom("source.jsonl", "tgt", "out");
  assert.equal(sm.getHeader().parentSession, path.join(dir, "source.jsonl"));
  assert.equal(sm.getHeader().cwd, path.join(dir, "tgt"));
  assert.equal(sm.getCwd(), path.join(dir, "tgt"));
});

test("forkFrom writes the fork even when the source has no conversation", (t) => {
  const dir = tempDir(t);
  const src = sessionFile(dir, "source.jsonl", [
    header({ id: "src" }),
    { type: "model_change", id: "aaaa0001", parentId: null, timestamp: "2025-01-01T00:00:01.000Z", provider: "p", modelId: "m" },
  ]);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  assert.equal(fileLines(sm.getSessionFile()).length, 2);
});

test("forkFrom leaves a manager whose later appends go straight to disk", (t) => {
  const dir = tempDir(t);
  const src = sourceSession(dir);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  const id = sm.appendThinkingLevelChange("high");
  const lines = fileLines(sm.getSessionFile());
  assert.equal(lines.length, 4);
  assert.equal(JSON.parse(lines[3]).id, id);
});

test("forkFrom appends a missing trailing newline to the source file", (t) => {
  const dir = tempDir(t);
  const src = path.join(dir, "source.jsonl");
  const text = `${q(header({ id: "src" }))}\n${q(msgEntry("aaaa0001", null, user()))}`;
  fs.writeFileSync(src, text);
  SessionManager.forkFrom(src, "/target", path.join(dir, "out"));
  assert.equal(readText(src), `${text}\n`);
});

test("forkFrom of a missing source throws the exact empty-or-invalid message", (t) => {
  const dir = tempDir(t);
  const src = path.join(dir, "missing.jsonl");
  throwsMessage(() => SessionManager.forkFrom(src, "/target", path.join(dir, "out")), `Cannot fork: source session file is empty or invalid: ${src}`);
});

test("forkFrom of an empty source throws the exact empty-or-invalid message", (t) => {
  const dir = tempDir(t);
  const src = path.join(dir, "empty.jsonl");
  fs.writeFileSync(src, "");
  throwsMessage(() => SessionManager.forkFrom(src, "/target", path.join(dir, "out")), `Cannot fork: source session file is empty or invalid: ${src}`);
});

test("forkFrom of a source without a valid header throws and writes nothing", (t) => {
  const dir = tempDir(t);
  const src = sessionFile(dir, "bad.jsonl", [msgEntry("aaaa0001", null, user())]);
  const before = readText(src);
  const out = path.join(dir, "out");
  throwsMessage(() => SessionManager.forkFrom(src, "/target", out), `Cannot fork: source session file is empty or invalid: ${src}`);
  assert.equal(readText(src), before);
  assert.deepEqual(jsonlFiles(out), []);
});

test("forkFrom reports the resolved source path in its error", (t) => {
  const dir = tempDir(t);
  withCwd(t, dir);
  throwsMessage(
    () => SessionManager.forkFrom("nope.jsonl", "/target", "out"),
    `Cannot fork: source session file is empty or invalid: ${path.join(dir, "nope.jsonl")}`,
  );
});

test("forkFrom without a sessionDir uses and creates the default dir of the target cwd", (t) => {
  const agent = useAgentDir(t);
  const dir = tempDir(t);
  const src = sourceSession(dir);
  const sm = SessionManager.forkFrom(src, "/target/cwd");
  const expected = path.join(agent, "sessions", "--target-cwd--");
  assert.equal(sm.getSessionDir(), expected);
  assert.equal(path.dirname(sm.getSessionFile()), expected);
});

test("forkFrom creates a missing sessionDir", (t) => {
  const dir = tempDir(t);
  const src = sourceSession(dir);
  const out = path.join(dir, "deep", "er");
  SessionManager.forkFrom(src, "/target", out);
  assert.equal(jsonlFiles(out).length, 1);
});

test("forkFrom honours a custom session id", (t) => {
  const dir = tempDir(t);
  const src = sourceSession(dir);
  const sm = SessionManager.forkFrom(src, "/target", path.join(dir, "out"), { id: "fork-1" });
  assert.equal(sm.getSessionId(), "fork-1");
  assert.ok(sm.getSessionFile().endsWith("_fork-1.jsonl"));
  assert.equal(JSON.parse(fileLines(sm.getSessionFile())[0]).id, "fork-1");
});

test("forkFrom validates the custom id after creating the dir and writes no file", (t) => {
  const dir = tempDir(t);
  const src = sourceSession(dir);
  const out = path.join(dir, "out");
  throwsMessage(() => SessionManager.forkFrom(src, "/target", out, { id: "bad/id" }), INVALID_ID_MESSAGE);
  assert.ok(fs.statSync(out).isDirectory());
  assert.deepEqual(fs.readdirSync(out), []);
});

test("forkFrom refuses to overwrite an existing file with the same name", (t) => {
  const dir = tempDir(t);
  const src = sourceSession(dir);
  const out = path.join(dir, "out");
  fs.mkdirSync(out);
  // The fork's name comes from the clock at the call (to the millisecond). Occupy the names of a
  // window [start, start + WINDOW) that lies ahead of the clock, then wait for the clock to reach
  // `start` and fork at once: the name it picks is one of ours however slow the machine (a Wine
  // start, a loaded CI runner). The writes take as long as they take; if the clock passed `start`
  // meanwhile, a window further ahead is occupied (twice as far as the writes took), a bounded
  // number of times.
  const WINDOW = 500;
  const nameAt = (ms) => `${new Date(ms).toISOString().replace(/[:.]/g, "-")}_fork-x.jsonl`;
  const occupied = new Set();
  let start;
  for (let lead = 100, tries = 0; ; tries++) {
    assert.ok(tries < 10, "could not occupy a window of names ahead of the clock");
    const began = Date.now();
    start = began + lead;
    for (let ms = start; ms < start + WINDOW; ms++) {
      if (occupied.has(ms)) continue;
      fs.writeFileSync(path.join(out, nameAt(ms)), "keep");
      occupied.add(ms);
    }
    if (Date.now() < start) break;
    lead = Math.max(2 * lead, 2 * (Date.now() - began));
  }
  while (Date.now() < start);
  throwsFsError(() => SessionManager.forkFrom(src, "/target", out, { id: "fork-x" }), "EEXIST");
  // Nothing was overwritten, and no file was added beside ours (the fork's name was in the window).
  const names = fs.readdirSync(out);
  assert.equal(names.length, occupied.size);
  for (const name of names) assert.equal(readText(path.join(out, name)), "keep");
});
