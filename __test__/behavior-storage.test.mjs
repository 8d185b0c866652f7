// docs/behaviour.md, "Where sessions live": storage layout (agent dir, default session dir, file names and ids).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { loadTarget } from "./helpers/target.mjs";
import {
  ENTRY_ID_RE,
  FILE_NAME_RE,
  ISO_RE,
  UUIDV7_RE,
  tempDir,
  useAgentDir,
  useHome,
  user,
  uuidv7Counter,
  uuidv7Millis,
  withCwd,
  withEnv,
} from "./helpers/fixtures.mjs";

const M = await loadTarget();
const { SessionManager, getDefaultSessionDir } = M;

// ---------------------------------------------------------------- agent dir and environment

test("the agent dir is taken from PI_CODING_AGENT_DIR when set", (t) => {
  const agent = useAgentDir(t);
  const sm = SessionManager.create("/proj");
  assert.equal(sm.getSessionDir(), path.join(agent, "sessions", "--proj--"));
  assert.ok(fs.statSync(sm.getSessionDir()).isDirectory());
});

test("PI_CODING_AGENT_DIR equal to ~ expands to the home directory", (t) => {
  const home = useHome(t);
  withEnv(t, { PI_CODING_AGENT_DIR: "~" });
  assert.equal(getDefaultSessionDir("/proj"), path.join(home, "sessions", "--proj--"));
});

test("PI_CODING_AGENT_DIR starting with ~/ is joined to the home directory", (t) => {
  const home = useHome(t);
  withEnv(t, { PI_CODING_AGENT_DIR: "~/my-agent" });
  assert.equal(getDefaultSessionDir("/proj"), path.join(home, "my-agent", "sessions", "--proj--"));
});

test("PI_CODING_AGENT_DIR given as a file:// URL is converted to a path", (t) => {
  const agent = tempDir(t, "pi-agent-");
  withEnv(t, { PI_CODING_AGENT_DIR: pathToFileURL(agent).href });
  assert.equal(getDefaultSessionDir("/proj"), path.join(agent, "sessions", "--proj--"));
});

test("without PI_CODING_AGENT_DIR the agent dir is <HOME>/.pi/agent", (t) => {
  const home = useHome(t);
  withEnv(t, { PI_CODING_AGENT_DIR: undefined });
  assert.equal(getDefaultSessionDir("/proj"), path.join(home, ".pi", "agent", "sessions", "--proj--"));
});

test("an empty PI_CODING_AGENT_DIR falls back to <HOME>/.pi/agent", (t) => {
  const home = useHome(t);
  withEnv(t, { PI_CODING_AGENT_DIR: "" });
  assert.equal(getDefaultSessionDir("/proj"), path.join(home, ".pi", "agent", "sessions", "--proj--"));
});

test("listAll reads the sessions root <agentDir>/sessions", async (t) => {
  const agent = useAgentDir(t);
  const sub = path.join(agent, "sessions", "--elsewhere--");
  const sm = SessionManager.create("/elsewhere", sub);
  sm.appendMessage(user("hi"));
  const all = await SessionManager.listAll();
  assert.deepEqual(all.map((s) => s.path), [sm.getSessionFile()]);
});

test("a relative PI_CODING_AGENT_DIR is not made absolute, so listAll paths stay relative", async (t) => {
  const work = tempDir(t);
  withCwd(t, work);
  withEnv(t, { PI_CODING_AGENT_DIR: "rel-agent" });
  const sm = SessionManager.create("/proj");
  sm.appendMessage(user("hi"));
  const all = await SessionManager.listAll();
  assert.equal(all.length, 1);
  assert.equal(all[0].path, path.join("rel-agent", "sessions", "--proj--", path.basename(sm.getSessionFile())));
});

test("PI_CODING_AGENT_SESSION_DIR is ignored by SessionManager", async (t) => {
  const agent = useAgentDir(t);
  const other = tempDir(t, "pi-other-");
  withEnv(t, { PI_CODING_AGENT_SESSION_DIR: other });
  const sm = SessionManager.create("/proj");
  assert.equal(sm.getSessionDir(), path.join(agent, "sessions", "--proj--"));
  sm.appendMessage(user("hi"));
  assert.deepEqual(fs.readdirSync(other), []);
});

test("the agent dir environment variable is read at call time", (t) => {
  const a = tempDir(t, "pi-agent-a-");
  const b = tempDir(t, "pi-agent-b-");
  withEnv(t, { PI_CODING_AGENT_DIR: a });
  const first = getDefaultSessionDir("/proj");
  process.env.PI_CODING_AGENT_DIR = b;
  const second = getDefaultSessionDir("/proj");
  assert.equal(first, path.join(a, "sessions", "--proj--"));
  assert.equal(second, path.join(b, "sessions", "--proj--"));
});

// ---------------------------------------------------------------- default per-cwd dir

test("the default session dir encodes /home/u/proj:x y as --home-u-proj-x y--", (t) => {
  const agent = tempDir(t);
  assert.equal(getDefaultSessionDir("/home/u/proj:x y", agent), path.join(agent, "sessions", "--home-u-proj-x y--"));
});

test("the default session dir encodes the root / as ----", (t) => {
  const agent = tempDir(t);
  assert.equal(getDefaultSessionDir("/", agent), path.join(agent, "sessions", "----"));
});

test("the default session dir maps backslashes and colons to dashes and drops a trailing slash", (t) => {
  const agent = tempDir(t);
  assert.equal(getDefaultSessionDir("/a\\b:c/d.e/", agent), path.join(agent, "sessions", "--a-b-c-d.e--"));
});

test("the default session dir normalizes // and .. in the cwd", (t) => {
  const agent = tempDir(t);
  assert.equal(getDefaultSessionDir("/a//b/../c", agent), path.join(agent, "sessions", "--a-c--"));
});

test("the default session dir removes only one leading separator", (t) => {
  const agent = tempDir(t);
  assert.equal(getDefaultSessionDir("/\\a", agent), path.join(agent, "sessions", "---a--"));
});

test("the default session dir keeps dots, spaces and unicode characters unchanged", (t) => {
  const agent = tempDir(t);
  assert.equal(
    getDefaultSessionDir("/ünï/cödé 😀/a.b c", agent),
    path.join(agent, "sessions", "--ünï-cödé 😀-a.b c--"),
  );
});

test("a relative cwd is resolved against process.cwd() before encoding", (t) => {
  const agent = tempDir(t);
  const work = tempDir(t, "pi-work-");
  withCwd(t, work);
  const expected = `--${path.join(work, "sub", "dir").slice(1).replace(/[/\\:]/g, "-")}--`;
  assert.equal(getDefaultSessionDir("sub/dir", agent), path.join(agent, "sessions", expected));
});

test("a cwd starting with ~/ is expanded to the home directory before encoding", (t) => {
  const agent = tempDir(t);
  const home = useHome(t);
  const expected = `--${path.join(home, "proj").slice(1).replace(/[/\\:]/g, "-")}--`;
  assert.equal(getDefaultSessionDir("~/proj", agent), path.join(agent, "sessions", expected));
});

test("a cwd given as a file:// URL is converted before encoding", (t) => {
  const agent = tempDir(t);
  assert.equal(getDefaultSessionDir("file:///x/y%20z", agent), path.join(agent, "sessions", "--x-y z--"));
});

test("the agent dir is resolved to an absolute path for the default session dir", (t) => {
  const work = tempDir(t);
  withCwd(t, work);
  const dir = getDefaultSessionDir("/p", "rel-agent");
  assert.equal(dir, path.join(work, "rel-agent", "sessions", "--p--"));
  assert.ok(fs.statSync(dir).isDirectory());
});

// ---------------------------------------------------------------- file names and ids

test("a session file is named <timestamp with : and . replaced by ->_<sessionId>.jsonl", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  const name = path.basename(sm.getSessionFile());
  const match = FILE_NAME_RE.exec(name);
  assert.ok(match, name);
  assert.equal(match[2], sm.getSessionId());
  assert.equal(path.dirname(sm.getSessionFile()), dir);
});

test("the header timestamp and the file name use the same instant", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir);
  const ts = sm.getHeader().timestamp;
  assert.match(ts, ISO_RE);
  assert.equal(path.basename(sm.getSessionFile()), `${ts.replace(/[:.]/g, "-")}_${sm.getSessionId()}.jsonl`);
});

test("a custom session id appears verbatim in the file name", (t) => {
  const dir = tempDir(t);
  const sm = SessionManager.create("/proj", dir, { id: "My.Custom_id-1" });
  assert.equal(sm.getSessionId(), "My.Custom_id-1");
  assert.ok(path.basename(sm.getSessionFile()).endsWith("_My.Custom_id-1.jsonl"));
});

test("a generated session id is a lower-case UUIDv7 with variant bits 10", () => {
  for (let i = 0; i < 20; i++) {
    assert.match(SessionManager.inMemory("/p").getSessionId(), UUIDV7_RE);
  }
});

test("a generated session id carries the current time in milliseconds", () => {
  const before = Date.now();
  const id = SessionManager.inMemory("/p").getSessionId();
  const after = Date.now();
  const ms = uuidv7Millis(id);
  assert.ok(ms >= before - 1 && ms <= after + 1, `${ms} not in [${before}, ${after}]`);
});

/** Runs `fn` with `Date` replaced by one whose clock stands at `ms`, as test frameworks fake
 * timers (sinon, Jest's modern timers): `Date.now()` and `new Date()` give that time. */
function withFakeClock(ms, fn) {
  const RealDate = globalThis.Date;
  class FakeDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(ms);
      else super(...args);
    }
    static now() {
      return ms;
    }
  }
  globalThis.Date = FakeDate;
  try {
    return fn();
  } finally {
    globalThis.Date = RealDate;
  }
}

test("a new session's header time and id come from JS's clock, the one that stamps its entries", (t) => {
  const dir = tempDir(t);
  // Later than now, each case later than the one before: ids never go back in time.
  let ms = Date.UTC(2031, 4, 6, 7, 8, 9, 123);
  const check = (what, sm) => {
    const iso = new Date(ms).toISOString();
    assert.equal(sm.getHeader().timestamp, iso, what);
    assert.equal(uuidv7Millis(sm.getSessionId()), ms, what);
    const id = sm.appendMessage(user("x"));
    assert.equal(sm.getEntry(id).timestamp, iso, `${what}: its entry`);
    ms += 1000;
  };
  withFakeClock(ms, () => check("inMemory", SessionManager.inMemory("/p")));
  const created = withFakeClock(ms, () => SessionManager.create("/p", dir));
  withFakeClock(ms, () => check("create", created));
  created.appendMessage({ role: "assistant", content: [{ type: "text", text: "y" }], timestamp: 1 });
  withFakeClock(ms, () => check("newSession", (created.newSession(), created)));
  withFakeClock(ms, () => check("open of a missing file", SessionManager.open(path.join(dir, "missing.jsonl"), dir)));
  const source = created.getSessionFile();
  withFakeClock(ms, () => check("forkFrom", SessionManager.forkFrom(source, "/q", dir)));
  const branching = SessionManager.open(source, dir);
  withFakeClock(ms, () => {
    branching.createBranchedSession(branching.getLeafId());
    check("createBranchedSession", branching);
  });
});

test("generated session ids are strictly increasing within one process", () => {
  const ids = [];
  for (let i = 0; i < 200; i++) ids.push(SessionManager.inMemory("/p").getSessionId());
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `${ids[i]} <= ${ids[i - 1]}`);
});

test("the UUIDv7 counter advances by exactly one per generated session id", () => {
  const a = SessionManager.inMemory("/p").getSessionId();
  const b = SessionManager.inMemory("/p").getSessionId();
  const c = SessionManager.inMemory("/p").getSessionId();
  assert.equal(uuidv7Counter(b) - uuidv7Counter(a), 1n);
  assert.equal(uuidv7Counter(c) - uuidv7Counter(b), 1n);
});

test("entry ids are 8 lower-case hex characters and unique within a session", () => {
  const sm = SessionManager.inMemory("/p");
  const ids = new Set();
  for (let i = 0; i < 500; i++) {
    const id = sm.appendCustomEntry("t", i);
    assert.match(id, ENTRY_ID_RE);
    ids.add(id);
  }
  assert.equal(ids.size, 500);
});

test("entry timestamps are the ISO UTC time with milliseconds at append time", () => {
  const sm = SessionManager.inMemory("/p");
  const before = Date.now();
  const id = sm.appendMessage(user("x"));
  const after = Date.now();
  const ts = sm.getEntry(id).timestamp;
  assert.match(ts, ISO_RE);
  const ms = Date.parse(ts);
  assert.ok(ms >= before && ms <= after);
});

test("message-internal timestamps are kept as supplied and never added", () => {
  const sm = SessionManager.inMemory("/p");
  const withTs = sm.appendMessage({ role: "user", content: "a", timestamp: 123 });
  const withoutTs = sm.appendMessage({ role: "user", content: "b" });
  assert.equal(sm.getEntry(withTs).message.timestamp, 123);
  assert.equal("timestamp" in sm.getEntry(withoutTs).message, false);
});
