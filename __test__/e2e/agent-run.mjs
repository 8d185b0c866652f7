// Runs the real pi coding agent (createAgentSession of @earendil-works/pi-coding-agent) through
// a scripted conversation against the faux provider of @earendil-works/pi-ai: no network, no
// API key, the same answers on every run. Needs Node >= 22 (the agent's own requirement);
// __test__/agent-e2e.test.mjs spawns it with such a Node.
//
//   node agent-run.mjs conversation <impl> <project-dir> <session-dir> <agent-dir>
//       Creates a session with <impl>'s SessionManager ("stock" = the agent's own, "ours" =
//       pi-session-native) and drives the agent: prompts, a read tool call and its result, a
//       session name, a thinking-level change, a model change, a manual compaction, tree
//       navigation back to an earlier entry with a branch summary and a label, a label on an
//       entry without a summary, then a resume of the session from its file and one more prompt.
//   node agent-run.mjs resume <impl> <project-dir> <session-file> <agent-dir>
//       Opens an existing session file with <impl>'s SessionManager in a fresh agent, checks
//       the agent restored model and thinking level from it, and prompts once more.
//
// Prints one JSON object on stdout: the session file, what the agent reported along the way,
// and the context (buildSessionContext) and agent messages after the resume.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import {
  createAgentSession,
  createExtensionRuntime,
  ModelRuntime,
  SessionManager as StockSessionManager,
  SettingsManager,
} from "@earendil-works/pi-coding-agent";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const { SessionManager: OurSessionManager } = require(path.resolve(here, "..", "..", "index.js"));

const [mode, impl, projectDir, target, agentDir] = process.argv.slice(2);
const SessionManager = { stock: StockSessionManager, ours: OurSessionManager }[impl];
if (!SessionManager || !["conversation", "resume"].includes(mode) || !agentDir) {
  console.error("usage: agent-run.mjs conversation|resume stock|ours <project-dir> <session-dir|file> <agent-dir>");
  process.exit(2);
}

// Fixed names, so that two runs write the same bytes apart from entry ids and clock times.
const FAUX_API = "faux-e2e";
const FAUX_PROVIDER = "faux";
const SYSTEM_PROMPT = "You are the scripted test agent. Tools: read.";

/** Text of a user/assistant/toolResult message in a provider request context. */
function textOf(message) {
  if (!message) return "";
  if (typeof message.content === "string") return message.content;
  return (message.content ?? [])
    .map((block) => (block.type === "text" ? block.text : block.type === "toolCall" ? `[call ${block.name}]` : ""))
    .join("");
}

/**
 * The scripted model. One function answers every request, deciding from the request alone, so
 * that both runs get the same answer at the same point whatever order the agent asks in:
 *   - a summarization request (compaction or branch summary) -> a fixed summary naming its kind
 *   - a user turn asking to read a file, not yet answered by a tool result -> a read tool call
 *   - a tool result -> a reply quoting it
 *   - anything else -> a reply echoing the last user text
 */
let toolCalls = 0;
function scriptedResponse(context) {
  const messages = context.messages ?? [];
  const last = messages[messages.length - 1];
  const system = [context.systemPrompt ?? "", ...messages.filter((m) => m.role === "system").map(textOf)].join("\n");
  const lastText = textOf(last);
  if (system.includes("context summarization assistant")) {
    const kind = lastText.includes("conversation branch") ? "branch" : lastText.includes("earlier context") ? "turn prefix" : "compaction";
    return fauxAssistantMessage(`## Goal\nScripted ${kind} summary.\n\n## Progress\n- read notes.txt`);
  }
  if (last?.role === "toolResult") {
    return fauxAssistantMessage(`The file says: ${textOf(last).trim()}`);
  }
  const match = /read (\S+)/i.exec(lastText);
  if (last?.role === "user" && match) {
    toolCalls += 1;
    return fauxAssistantMessage(
      [fauxText("Reading it."), fauxToolCall("read", { path: match[1] }, { id: `call-${toolCalls}` })],
      { stopReason: "toolUse" },
    );
  }
  return fauxAssistantMessage(`You said: ${lastText}`);
}

const faux = fauxProvider({
  api: FAUX_API,
  provider: FAUX_PROVIDER,
  models: [
    { id: "faux-small", name: "Faux Small", reasoning: true, contextWindow: 200000, maxTokens: 8000 },
    { id: "faux-large", name: "Faux Large", reasoning: true, contextWindow: 200000, maxTokens: 8000 },
  ],
});
faux.setResponses(Array.from({ length: 64 }, () => scriptedResponse));

async function newAgent(sessionManager, model) {
  const modelRuntime = await ModelRuntime.create({
    authPath: path.join(agentDir, "auth.json"),
    modelsPath: path.join(agentDir, "models.json"),
    refreshOnCreate: false,
  });
  modelRuntime.registerNativeProvider(faux.provider);
  await modelRuntime.setRuntimeApiKey(FAUX_PROVIDER, "faux-key");
  const settingsManager = SettingsManager.inMemory({
    compaction: { enabled: false, keepRecentTokens: 10 },
    retry: { enabled: false },
    cacheWarming: "off",
  });
  const resourceLoader = {
    getExtensions: () => ({ extensions: [], errors: [], runtime: createExtensionRuntime() }),
    getSkills: () => ({ skills: [], diagnostics: [] }),
    getPrompts: () => ({ prompts: [], diagnostics: [] }),
    getThemes: () => ({ themes: [], diagnostics: [] }),
    getAgentsFiles: () => ({ agentsFiles: [] }),
    getSystemPrompt: () => SYSTEM_PROMPT,
    getSystemPromptSource: () => undefined,
    getAppendSystemPrompt: () => [],
    getAppendSystemPromptSources: () => [],
    extendResources: () => {},
    reload: async () => {},
  };
  const options = {
    cwd: projectDir,
    agentDir,
    modelRuntime,
    resourceLoader,
    settingsManager,
    tools: ["read"],
    sessionManager,
  };
  if (model) {
    options.model = faux.getModel(model);
    options.thinkingLevel = "off";
  }
  const result = await createAgentSession(options);
  return { ...result, modelRuntime };
}

const log = [];
function note(step, value) {
  log.push({ step, ...value });
}

/** Fails the run with a message naming the step, so the test shows where the agent stopped. */
function check(condition, message) {
  if (!condition) throw new Error(`scenario check failed: ${message}`);
}

async function prompt(session, text) {
  await session.prompt(text);
  const messages = session.messages;
  const reply = messages[messages.length - 1];
  note("prompt", { text, reply: textOf(reply), role: reply?.role, stopReason: reply?.stopReason });
  check(reply?.role === "assistant" && reply.stopReason === "stop", `prompt "${text}" got ${JSON.stringify(reply)}`);
}

function snapshot(session) {
  const sm = session.sessionManager;
  return {
    sessionFile: sm.getSessionFile(),
    sessionName: sm.getSessionName(),
    leafId: sm.getLeafId(),
    model: session.model ? `${session.model.provider}/${session.model.id}` : null,
    thinkingLevel: session.thinkingLevel,
    context: sm.buildSessionContext(),
    agentMessages: session.messages,
    tree: sm.getTree(),
    entries: sm.getEntries(),
  };
}

async function conversation() {
  const sessionManager = SessionManager.create(projectDir, target);
  const { session } = await createAgentSessionChecked(sessionManager, "faux-small");
  try {
    await prompt(session, "Hello, agent.");
    await prompt(session, "Please read notes.txt");
    const toolResult = session.messages.find((m) => m.role === "toolResult");
    check(toolResult && !toolResult.isError, `read tool result: ${JSON.stringify(toolResult)}`);
    note("tool", { toolCallId: toolResult.toolCallId, text: textOf(toolResult) });

    session.setSessionName("E2E drop-in session");
    session.setThinkingLevel("high");
    note("thinking", { level: session.thinkingLevel });
    check(session.thinkingLevel === "high", `thinking level is ${session.thinkingLevel}`);
    await prompt(session, "What did the notes say?");
    await session.setModel(faux.getModel("faux-large"));
    note("model", { model: session.model.id });
    await prompt(session, "Now with the large model.");

    const compaction = await session.compact("Keep the file name.");
    note("compact", { summary: compaction.summary, tokensBefore: compaction.tokensBefore });
    await prompt(session, "After the compaction.");

    // Back to the second user prompt, summarizing the abandoned branch, labelled.
    const sm = session.sessionManager;
    const target = sm
      .getBranch()
      .find((e) => e.type === "message" && e.message.role === "user" && textOf(e.message) === "What did the notes say?");
    check(target, "the user entry to navigate back to is on the branch");
    const nav = await session.navigateTree(target.id, { summarize: true, label: "retry-from-here" });
    note("navigate", { editorText: nav.editorText, cancelled: nav.cancelled, summary: nav.summaryEntry?.summary });
    check(!nav.cancelled && nav.summaryEntry, `navigateTree: ${JSON.stringify(nav)}`);
    check(sm.getLabel(nav.summaryEntry.id) === "retry-from-here", "label on the branch summary");
    await prompt(session, "A different question on the new branch.");

    // A label without a summary: navigate to an assistant entry, labelling it.
    const firstReply = sm.getEntries().find((e) => e.type === "message" && e.message.role === "assistant");
    const nav2 = await session.navigateTree(firstReply.id, { label: "first-reply" });
    // The label entry is appended on the target, so it becomes the leaf.
    check(!nav2.cancelled && sm.getLeafEntry()?.parentId === firstReply.id, "navigate to the first reply");
    check(sm.getLabel(firstReply.id) === "first-reply", "label on the first reply");
    await prompt(session, "Branching from the first reply.");
    note("before-resume", { leafId: sm.getLeafId(), entryCount: sm.getEntries().length });
  } finally {
    session.dispose();
  }
  return resume(sessionManager.getSessionFile());
}

async function createAgentSessionChecked(sessionManager, model) {
  const result = await newAgent(sessionManager, model);
  // No wrapping or copying on the agent's side: it works on the very object passed in.
  check(result.session.sessionManager === sessionManager, "the agent uses the SessionManager it was given");
  note("create", {
    sessionManagerClass: sessionManager instanceof OurSessionManager ? "pi-session-native" : "reference",
    model: result.session.model ? `${result.session.model.provider}/${result.session.model.id}` : null,
    thinkingLevel: result.session.thinkingLevel,
    modelFallbackMessage: result.modelFallbackMessage ?? null,
  });
  return result;
}

async function resume(file) {
  const sessionManager = SessionManager.open(file);
  const { session, modelFallbackMessage } = await createAgentSessionChecked(sessionManager, undefined);
  try {
    check(!modelFallbackMessage, `model restored on resume (${modelFallbackMessage})`);
    check(session.model?.id === "faux-large", `resumed model is ${session.model?.id}`);
    check(session.thinkingLevel === "high", `resumed thinking level is ${session.thinkingLevel}`);
    check(session.sessionName === "E2E drop-in session", `resumed session name is ${session.sessionName}`);
    const resumedContext = sessionManager.buildSessionContext();
    const agentMessagesAtResume = session.messages;
    await prompt(session, "Resumed: are you still there?");
    return { resumedContext, agentMessagesAtResume, ...snapshot(session) };
  } finally {
    session.dispose();
  }
}

try {
  const result = mode === "conversation" ? await conversation() : await resume(target);
  process.stdout.write(`${JSON.stringify({ ok: true, impl, mode, faux: faux.state, log, ...result })}\n`);
} catch (error) {
  process.stdout.write(
    `${JSON.stringify({ ok: false, impl, mode, log, error: String(error?.stack ?? error), code: error?.code })}\n`,
  );
  process.exitCode = 1;
}
