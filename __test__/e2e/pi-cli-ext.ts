// A pi extension for the CLI end-to-end test (__test__/pi-cli.test.mjs): it registers a
// scripted, deterministic provider built on the faux provider of @earendil-works/pi-ai, so the
// real `pi` CLI runs whole conversations with no network and no API key.
//
//   pi -e __test__/e2e/pi-cli-ext.ts --provider pi-cli-faux --model faux-cli -p "hello"
//
// The model decides from the request alone, so every run of the same inputs gets the same answers:
//   - a summarization request (compaction, branch summary)  -> a fixed summary
//   - a tool result                                          -> "Tool said: <its text>"
//   - a user turn "run: <command>"                           -> a bash tool call running <command>
//   - anything else                                          -> "You said: <last user text>"
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export const PROVIDER = "pi-cli-faux";

type Block = { type: string; text?: string; name?: string };
type Message = { role: string; content?: string | Block[] };

function textOf(message: Message | undefined): string {
  if (!message) return "";
  if (typeof message.content === "string") return message.content;
  return (message.content ?? [])
    .map((block) => (block.type === "text" ? (block.text ?? "") : block.type === "toolCall" ? `[call ${block.name}]` : ""))
    .join("");
}

function respond(context: { systemPrompt?: string; messages?: Message[] }) {
  const messages = context.messages ?? [];
  const last = messages[messages.length - 1];
  const system = [context.systemPrompt ?? "", ...messages.filter((m) => m.role === "system").map(textOf)].join("\n");
  const lastText = textOf(last);
  if (system.includes("summarization assistant")) {
    return fauxAssistantMessage("## Goal\nScripted summary.\n\n## Progress\n- ran the scripted turns");
  }
  if (last?.role === "toolResult") {
    return fauxAssistantMessage(`Tool said: ${lastText.trim()}`);
  }
  const run = /^run: (.+)$/s.exec(lastText.trim());
  if (last?.role === "user" && run) {
    // Numbered by the tool results already in the context: the same id on every run.
    const n = messages.filter((m) => m.role === "toolResult").length + 1;
    return fauxAssistantMessage([fauxText("Running it."), fauxToolCall("bash", { command: run[1] }, { id: `call-${n}` })], {
      stopReason: "toolUse",
    });
  }
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  return fauxAssistantMessage(`You said: ${textOf(lastUser).trim()}`);
}

export default function (pi: ExtensionAPI) {
  const faux = fauxProvider({
    api: "pi-cli-faux-api",
    provider: PROVIDER,
    models: [{ id: "faux-cli", name: "Faux CLI", reasoning: false, contextWindow: 200000, maxTokens: 8000 }],
    // One delta per block: the faux provider otherwise splits text at random sizes, and the
    // streamed events (--mode json, rpc) would differ from run to run.
    tokenSize: { min: 1_000_000, max: 1_000_000 },
  });
  // One factory per request; a process never makes this many.
  faux.setResponses(Array.from({ length: 500 }, () => respond));
  pi.registerProvider(faux.provider);
}
