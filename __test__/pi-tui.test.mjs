// The interactive pi TUI on pi-session-native: `pi-native` (bin/pi-native.js) runs the real
// agent in a detached tmux pane (__test__/e2e/pi-tui-tmux.mjs), with a scripted no-network model
// (__test__/e2e/pi-tui-faux.mjs). The test types what a user types: a prompt, /resume (the picker
// lists this project's sessions, Tab shows every project's, picking one opens it), a prompt in
// the resumed session, /new, /fork, /tree with a branch summary, /quit. Then every session file
// (seeded by the reference SessionManager, written or appended to by ours inside the agent) must
// open to the same entries, tree and context in the reference's SessionManager and in ours, both
// listings must agree, and every SessionManager static the agent called must have gone to our
// store (PI_NATIVE_TRACE).
//
// The agent needs Node >= 22.19: it runs on Node 22, 24 and 26 (fetched into .cache/, see
// agentNodes in helpers/agent-runs.mjs) when this suite runs on an older Node, on this Node
// otherwise. Skipped, saying why, when tmux is not installed (.ci/run installs it) or no such Node
// can be had.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { TmuxPane, tmuxMissing } from "./e2e/pi-tui-tmux.mjs";
import { AGENT_MAJORS, agentNodes } from "./helpers/agent-runs.mjs";
import { defaultSessionDirFor } from "./helpers/fixtures.mjs";
import { referenceListing } from "./helpers/older-reference.mjs";
import { loadOurs, loadReference, ROOT } from "./helpers/target.mjs";

const AGENT = path.join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent");
const PI_NATIVE = path.join(ROOT, "bin", "pi-native.js");
const FAUX = path.join(ROOT, "__test__", "e2e", "pi-tui-faux.mjs");
const DAY = 86_400_000;

const suiteSkip = tmuxMissing() ?? (fs.existsSync(PI_NATIVE) ? null : `${path.relative(ROOT, PI_NATIVE)} is missing`);
const NODES = suiteSkip ? [{ major: AGENT_MAJORS.join("/"), skip: suiteSkip }] : agentNodes();

/** Values as JSON would carry them (Dates as strings, undefined keys dropped). */
const plain = (v) => JSON.parse(JSON.stringify(v));
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** Writes a session through the reference SessionManager; returns its file. */
function seed(Reference, cwd, sessionDir, { question, answer, at, name }) {
  const sm = Reference.SessionManager.create(cwd, sessionDir);
  if (name) sm.appendSessionInfo(name);
  sm.appendMessage({ role: "user", content: [{ type: "text", text: question }], timestamp: at });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: answer }], api: "faux-tui", provider: "faux", model: "faux-1", usage, stopReason: "stop", timestamp: at + 1000 });
  return sm.getSessionFile();
}

/** The text of each message of a context, by role. */
const texts = (context) =>
  context.messages
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("")}`);

/** Line index of the first screen line containing `needle`, -1 if none. */
const lineOf = (screen, needle) => screen.split("\n").findIndex((l) => l.includes(needle));

for (const { major, node, skip } of NODES) {
  if (skip) console.log(`# pi-tui (Node ${major}) skipped: ${skip}`);
  const suite = skip ? test : describe;
  suite(`the interactive pi TUI on pi-native (Node ${major})`, { skip }, () => {
    let Reference;
    let Ours;
    let tmp;
    let projectDir;
    let otherDir;
    let agentDir;
    let projectSessions;
    let traceFile;
    let pane;
    const files = {};
    let step = "start";

    /** Waits for a screen, failing with what this test was doing. */
    const waitFor = (predicate, what, timeoutMs = 60_000) => pane.waitFor(predicate, { timeoutMs, what: `${what} (after: ${step})` });
    const send = (text) => {
      pane.type(text);
      waitFor((s) => s.includes(text), `"${text}" in the editor`, 10_000);
      pane.keys("Enter");
      step = `sent "${text}"`;
    };
    const prompt = (text) => {
      send(text);
      return waitFor((s) => s.includes(`faux reply to: ${text}`), `the reply to "${text}"`).screen;
    };
    const sessionFileShown = () => {
      send("/session");
      const { screen } = waitFor((s) => /File: \S+\.jsonl/.test(s), "the session info");
      return /File: (\S+\.jsonl)/.exec(screen)[1];
    };

    before(async () => {
      Reference = await loadReference();
      Ours = loadOurs();
      tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-tui-")));
      projectDir = path.join(tmp, "project");
      otherDir = path.join(tmp, "other");
      agentDir = path.join(tmp, "agent");
      for (const dir of [projectDir, otherDir, agentDir, path.join(tmp, "home")]) fs.mkdirSync(dir, { recursive: true });
      projectSessions = defaultSessionDirFor(agentDir, projectDir);
      traceFile = path.join(tmp, "trace.jsonl");
      const now = Date.now();
      files.alpha = seed(Reference, projectDir, projectSessions, { question: "alpha seed question", answer: "alpha seed answer", at: now - 3 * DAY });
      files.beta = seed(Reference, projectDir, projectSessions, { question: "beta seed question", answer: "beta seed answer", at: now - 2 * DAY, name: "Beta named session" });
      files.gamma = seed(Reference, projectDir, projectSessions, { question: "gamma seed question", answer: "gamma seed answer", at: now - DAY });
      files.delta = seed(Reference, otherDir, defaultSessionDirFor(agentDir, otherDir), { question: "delta other project question", answer: "delta answer", at: now - 1.5 * DAY });
      pane = new TmuxPane(`node${major}`);
      pane.start({
        argv: [node, PI_NATIVE, "-ne", "-e", FAUX, "--model", "faux/faux-1"],
        cwd: projectDir,
        env: {
          ...process.env,
          HOME: path.join(tmp, "home"),
          PI_CODING_AGENT_DIR: agentDir,
          PI_OFFLINE: "1",
          PI_NATIVE_AGENT: AGENT,
          PI_NATIVE_STRICT: "1",
          PI_NATIVE_TRACE: traceFile,
        },
        width: 200,
        height: 50,
      });
    });

    after(() => {
      pane?.kill();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    test("starts with the editor ready and answers a prompt", () => {
      waitFor((s) => s.includes("faux-1") && s.includes(projectDir), "pi's editor", 90_000);
      prompt("first tui prompt");
      files.first = sessionFileShown();
      assert.equal(path.dirname(files.first), projectSessions);
    });

    test("/resume lists this project's sessions, newest first, named ones by name", () => {
      send("/resume");
      const { screen } = waitFor(
        (s) => s.includes("Resume Session (Current Folder)") && s.includes("◉ Current Folder") && !/Loading/.test(s) && s.includes("alpha seed question"),
        "the picker with this project's sessions",
      );
      step = "/resume listed";
      const order = ["first tui prompt", "gamma seed question", "Beta named session", "alpha seed question"].map((t) => lineOf(screen, t));
      assert.ok(order.every((i) => i >= 0), `every session of the project is listed:\n${screen}`);
      assert.deepEqual([...order].sort((a, b) => a - b), order, `newest first:\n${screen}`);
      assert.equal(lineOf(screen, "delta other project question"), -1, "another project's session is not listed");
    });

    test("Tab shows the sessions of every project", () => {
      pane.keys("Tab");
      step = "Tab";
      const { screen } = waitFor((s) => s.includes("Resume Session (All)") && s.includes("◉ All") && !/Loading/.test(s) && s.includes("delta other project question"), "the picker with all sessions");
      for (const t of ["first tui prompt", "gamma seed question", "Beta named session", "alpha seed question"]) assert.ok(lineOf(screen, t) >= 0, `${t} is listed`);
      assert.match(screen.split("\n")[lineOf(screen, "delta other project question")], /other/, "the other project's row shows its cwd");
      pane.keys("Tab");
      step = "Tab back";
      waitFor((s) => s.includes("Resume Session (Current Folder)") && !/Loading/.test(s) && s.includes("alpha seed question"), "the picker back on this project");
    });

    test("picking a session opens it, and a prompt there is appended to its file", () => {
      pane.type("Beta");
      step = 'typed "Beta" in the picker';
      waitFor((s) => s.includes("Beta named session") && lineOf(s, "gamma seed question") === -1, "the picker filtered to Beta");
      pane.keys("Enter");
      step = "picked Beta";
      waitFor((s) => s.includes("beta seed question") && s.includes("beta seed answer") && !s.includes("Resume Session"), "the resumed session's messages");
      assert.equal(sessionFileShown(), files.beta);
      prompt("continue beta");
      const context = Ours.SessionManager.open(files.beta).buildSessionContext();
      assert.deepEqual(texts(context), ["user: beta seed question", "assistant: beta seed answer", "user: continue beta", "assistant: faux reply to: continue beta"]);
    });

    test("/new starts a new session file", () => {
      send("/new");
      waitFor((s) => !s.includes("continue beta"), "an empty chat");
      prompt("second tui prompt");
      files.second = sessionFileShown();
      assert.ok(![files.first, files.beta].includes(files.second), "a new file");
      assert.deepEqual(texts(Ours.SessionManager.open(files.second).buildSessionContext()), ["user: second tui prompt", "assistant: faux reply to: second tui prompt"]);
    });

    test("/fork copies the session up to a user message into a new session", () => {
      send("/fork");
      waitFor((s) => s.includes("Fork from Message"), "the fork selector");
      pane.keys("Enter");
      step = "forked";
      waitFor((s) => s.includes("Forked to new session"), "the fork");
      // The selected message is back in the editor: send it again in the fork.
      pane.keys("Enter");
      step = "sent the fork's first prompt";
      waitFor((s) => s.includes("faux reply to: second tui prompt"), "the reply in the fork");
      files.fork = sessionFileShown();
      assert.ok(![files.first, files.beta, files.second].includes(files.fork), "a new file");
      const sm = Ours.SessionManager.open(files.fork);
      assert.equal(sm.getHeader().parentSession, files.second);
      assert.deepEqual(texts(sm.buildSessionContext()), ["user: second tui prompt", "assistant: faux reply to: second tui prompt"]);
    });

    test("/tree goes back to the user message with a branch summary, and a new prompt branches there", () => {
      send("/tree");
      waitFor((s) => s.includes("Session Tree") && s.includes("user: second tui prompt"), "the tree");
      pane.keys("Up");
      waitFor((s) => /›\s*•?\s*user: second tui prompt/.test(s), "the user message selected");
      pane.keys("Enter");
      step = "selected the user message in /tree";
      waitFor((s) => s.includes("Summarize branch?"), "the summary question");
      pane.keys("Down");
      waitFor((s) => /→ Summarize\s*$/m.test(s), '"Summarize" selected');
      pane.keys("Enter");
      step = "asked for a branch summary";
      waitFor((s) => s.includes("Navigated to selected point") || s.includes("Branch summary"), "the navigation");
      pane.keys("C-u");
      prompt("branched tui prompt");
      const sm = Ours.SessionManager.open(files.fork);
      const summaries = sm.getEntries().filter((e) => e.type === "branch_summary");
      assert.equal(summaries.length, 1, "one branch summary entry");
      assert.equal(texts(sm.buildSessionContext()).at(-1), "assistant: faux reply to: branched tui prompt");
      const userEntries = sm.getEntries().filter((e) => e.type === "message" && e.message.role === "user");
      assert.equal(userEntries.length, 2, "the first prompt stays on the abandoned branch");
    });

    test("/quit ends pi with exit code 0", () => {
      send("/quit");
      waitFor((s) => /\[pane exited: \d+\]/.test(s), "pi to exit", 30_000);
      assert.match(pane.capture(), /\[pane exited: 0\]/);
    });

    test("every file opens to the same header, entries, tree and context in the reference and in ours", () => {
      const all = fs
        .readdirSync(path.join(agentDir, "sessions"), { recursive: true })
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => path.join(agentDir, "sessions", f))
        .sort();
      assert.deepEqual(all, Object.values(files).sort(), "the agent wrote exactly the sessions this test made");
      for (const file of all) {
        const view = (M) => {
          const sm = M.SessionManager.open(file);
          return plain({
            header: sm.getHeader(),
            entries: sm.getEntries(),
            tree: sm.getTree(),
            context: sm.buildSessionContext(),
            leaf: sm.getLeafId(),
            name: sm.getSessionName(),
          });
        };
        assert.deepEqual(view(Ours), view(Reference), path.basename(file));
      }
    });

    test("both listings agree on the sessions the TUI left", async () => {
      const previous = process.env.PI_CODING_AGENT_DIR;
      process.env.PI_CODING_AGENT_DIR = agentDir;
      try {
        // Through referenceListing: on Node >= 24 the reference's own readline cuts lines at U+2028/U+2029.
        const ref = plain(await referenceListing(Reference, "list", [projectDir, projectSessions]));
        assert.deepEqual(plain(await Ours.SessionManager.list(projectDir, projectSessions)), ref);
        assert.equal(ref.length, 6);
        assert.deepEqual(plain(await Ours.SessionManager.listAll()), plain(await referenceListing(Reference, "listAll", [])));
      } finally {
        if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
        else process.env.PI_CODING_AGENT_DIR = previous;
      }
    });

    test("every SessionManager static the agent called went to our store", () => {
      const events = fs
        .readFileSync(traceFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      assert.ok(events.some((e) => e.event === "start" && e.store === "native"), "pi-native started on our store");
      const statics = events.filter((e) => e.event === "static");
      assert.ok(statics.length > 0);
      assert.ok(statics.every((e) => e.store === "native"), JSON.stringify(statics.filter((e) => e.store !== "native")));
      assert.deepEqual(events.filter((e) => e.event === "stock-call"), []);
      const names = new Set(statics.map((e) => e.name));
      for (const name of ["create", "list", "listAll", "open"]) assert.ok(names.has(name), `${name} was called (${[...names].join(", ")})`);
    });
  });
}
