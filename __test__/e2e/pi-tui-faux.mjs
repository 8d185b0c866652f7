// A pi extension that registers a scripted, no-network model provider (the faux provider of
// @earendil-works/pi-ai), for driving the interactive pi TUI in tests and benchmarks.
//
//   pi -ne -e __test__/e2e/pi-tui-faux.mjs --model faux/faux-1
//
// Every request is answered with "faux reply to: <the last user text>", so a screen shows which
// prompt an answer belongs to. Summarization requests (compaction, branch summaries) get a fixed
// summary.
import { fauxAssistantMessage, fauxProvider } from "@earendil-works/pi-ai";

function textOf(message) {
  if (!message) return "";
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).map((block) => (block.type === "text" ? block.text : "")).join("");
}

function reply(context) {
  const messages = context.messages ?? [];
  const system = [context.systemPrompt ?? "", ...messages.filter((m) => m.role === "system").map(textOf)].join("\n");
  if (system.includes("summarization")) return fauxAssistantMessage("## Goal\nScripted summary.");
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  return fauxAssistantMessage(`faux reply to: ${textOf(lastUser).trim()}`);
}

export default function fauxExtension(pi) {
  const faux = fauxProvider({
    api: "faux-tui",
    provider: "faux",
    models: [{ id: "faux-1", name: "Faux One", contextWindow: 200000, maxTokens: 8000 }],
  });
  faux.setResponses(Array.from({ length: 1000 }, () => reply));
  pi.registerProvider(faux.provider);
}
