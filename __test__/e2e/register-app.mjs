// An SDK program that never names pi-session-native: it uses the pi agent as its docs show, with
// the agent's default session store. __test__/pi-native.test.mjs runs it with and without
// `node --import pi-session-native/register` and reads which store each session got.
//
//   node [--import pi-session-native/register] register-app.mjs <project-dir> <agent-dir> [bundle]
//
// With "bundle", the agent is imported from its bundled SDK entry (dist/bundle/index.js) instead
// of the package's main entry. Prints one JSON object: the store of each session it made
// ("native" when the manager has pi-session-native's own methods, else "stock") and its file.
import path from "node:path";
import { pathToFileURL } from "node:url";

import { fauxAssistantMessage, fauxProvider } from "@earendil-works/pi-ai";

const [projectDir, agentDir, entry] = process.argv.slice(2);
let pi;
if (entry === "bundle") {
  // The bundled entry is not in the package's exports map: programs reach it by path.
  const agentRoot = path.join(projectDir, "node_modules", "@earendil-works", "pi-coding-agent");
  pi = await import(pathToFileURL(path.join(agentRoot, "dist", "bundle", "index.js")).href);
} else {
  pi = await import("@earendil-works/pi-coding-agent");
}
const { createAgentSession, createAgentSessionFromServices, createAgentSessionRuntime, createAgentSessionServices, ModelRuntime, SessionManager, SettingsManager } = pi;

const storeOf = (sm) => (typeof sm?.setFsync === "function" ? "native" : "stock");
const report = {};

const faux = fauxProvider({
  api: "register-faux",
  provider: "register-faux",
  models: [{ id: "faux", name: "Faux", reasoning: false, contextWindow: 100000, maxTokens: 1000 }],
});
faux.setResponses(Array.from({ length: 8 }, () => fauxAssistantMessage("hello back")));

// 1. createAgentSession with no sessionManager: the agent makes its default one.
const modelRuntime = await ModelRuntime.create({
  authPath: path.join(agentDir, "auth.json"),
  modelsPath: path.join(agentDir, "models.json"),
  refreshOnCreate: false,
});
modelRuntime.registerNativeProvider(faux.provider);
await modelRuntime.setRuntimeApiKey("register-faux", "key");
const { session } = await createAgentSession({
  cwd: projectDir,
  agentDir,
  modelRuntime,
  settingsManager: SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } }),
  model: faux.getModel("faux"),
  thinkingLevel: "off",
});
await session.prompt("hello");
report.defaultStore = storeOf(session.sessionManager);
report.defaultFile = session.sessionManager.getSessionFile();
report.defaultEntries = session.sessionManager.getEntries().map((e) => e.type);

// 2. createAgentSessionRuntime, and the session runtime.newSession() makes.
const createRuntime = async ({ cwd, sessionManager, sessionStartEvent }) => {
  const services = await createAgentSessionServices({ cwd, agentDir });
  return {
    ...(await createAgentSessionFromServices({ services, sessionManager, sessionStartEvent })),
    services,
    diagnostics: services.diagnostics,
  };
};
const runtime = await createAgentSessionRuntime(createRuntime, {
  cwd: projectDir,
  agentDir,
  sessionManager: SessionManager.create(projectDir),
});
report.runtimeStore = storeOf(runtime.session.sessionManager);
await runtime.newSession();
report.newSessionStore = storeOf(runtime.session.sessionManager);
report.inMemoryStore = storeOf(SessionManager.inMemory(projectDir));
await runtime.dispose();

process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
