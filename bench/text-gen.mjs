// Text-heavy sessions as pi leaves them after weeks of work: prose prompts, assistant turns with
// thinking, text and tool calls, tool output, a compaction whenever the context fills (as
// auto-compaction leaves them), side branches left behind by /tree (with branch summaries),
// labels, a name, and a few images. Written by the reference `SessionManager` itself, so every
// line has exactly the bytes pi writes.
//
// `node bench/text-gen.mjs <dir> <json options>` runs the writer in its own process: the process's
// clock (`Date`), `crypto.randomUUID` (entry ids) and `crypto.getRandomValues` (the header's
// uuidv7) are seeded first, so a run with the same options writes the same bytes. It prints
// { file, bytes, entries, messages, compactions, branches, images, lastText } as JSON.
//
// Options (see TEXT_SESSIONS below for the sets the benchmarks use):
//   seed            PRNG seed
//   targetBytes     stop after the turn that brings the file to this size
//   compactBytes    compact when this many bytes were written since the last compaction
//   toolRounds      [lo, hi] tool calls per turn (each an assistant message and a tool result)
//   outChars        [lo, hi] characters of a tool result
//   thinkingChars   [lo, hi] characters of an assistant message's thinking
//   textChars       [lo, hi] characters of an assistant message's text
//   userChars       [lo, hi] characters of a prompt
//   branchRate      chance per turn of going back a few turns with /tree (a branch summary)
//   imageRate       chance per turn of an image (pasted into the prompt, or read by a tool)
//   imageChars      [lo, hi] base64 characters of an image
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The sessions of `npm run bench:pi`'s resume lines and of `bench:scale`'s text parts. */
export const TEXT_SESSIONS = {
  // ~11.6 MB: 3,000 turns, side branches, one compaction, a few images.
  text12: {
    seed: 0x7e12,
    turns: 3000,
    compactBytes: 9_000_000,
    toolRounds: [1, 1],
    outChars: [150, 1250],
    thinkingChars: [60, 700],
    textChars: [20, 400],
    userChars: [40, 900],
    branchRate: 0.01,
    imageRate: 0.002,
    imageChars: [20_000, 60_000],
  },
  // ~128 MB: ~19,000 messages, a compaction every ~600 kB.
  text128: {
    seed: 0x7e128,
    targetBytes: 128 * 1024 * 1024,
    compactBytes: 600_000,
    toolRounds: [1, 3],
    outChars: [3_000, 27_000],
    thinkingChars: [300, 5_000],
    textChars: [100, 1_800],
    userChars: [40, 1_500],
    branchRate: 0.004,
    imageRate: 0.003,
    imageChars: [30_000, 200_000],
  },
};

export const TEXT_CWD = "/tmp/pi-text-project";

/**
 * Writes the session `name` of TEXT_SESSIONS into `dir` in a child process (see the header);
 * returns what the writer printed.
 */
export async function writeTextSession(dir, name) {
  const { spawnSync } = await import("node:child_process");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), dir, JSON.stringify(TEXT_SESSIONS[name])], {
    encoding: "utf8",
    maxBuffer: 16 << 20,
  });
  if (r.status !== 0) throw new Error(`text-gen: the ${name} writer failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

async function write(dir, o) {
  const { assistantMessage, Gen, usage, WORDS, seedProcess, toolArgs } = await import("./gen-pools.mjs");
  const { mulberry32 } = await import("./data-gen.mjs");
  const clock = await seedProcess(mulberry32(o.seed), Date.UTC(2025, 9, 1, 9, 0, 0));
  const { SessionManager } = await import(path.join(HERE, "..", "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"));
  const g = new Gen(o.seed ^ 0x5eed);
  const span = ([lo, hi]) => g.int(lo, hi);
  const tick = (lo, hi) => (clock.now += g.int(lo, hi));
  const sm = SessionManager.create(TEXT_CWD, dir);
  const model = "claude-sonnet-4-5";
  sm.appendModelChange("anthropic", model);
  sm.appendThinkingLevelChange("medium");
  const stats = { messages: 0, compactions: 0, branches: 0, images: 0 };
  let sinceCompaction = 0;
  let bytes = 0;
  /** Ids of the user messages on the current path, oldest first. */
  let prompts = [];
  const add = (id, approxBytes) => {
    sinceCompaction += approxBytes;
    bytes += approxBytes;
    return id;
  };
  const image = () => {
    stats.images++;
    return { type: "image", data: g.base64(span(o.imageChars)), mimeType: "image/png" };
  };
  const assistant = (content, stopReason) => assistantMessage(g, model, clock.now, content, stopReason);
  const message = (m) => {
    stats.messages++;
    return add(sm.appendMessage(m), JSON.stringify(m).length + 120);
  };
  let lastText = "";
  const done = (t) => (o.turns !== undefined ? t >= o.turns : bytes >= o.targetBytes);
  for (let t = 0; !done(t); t++) {
    tick(5_000, 300_000);
    const last = o.turns !== undefined ? t === o.turns - 1 : bytes + 60_000 >= o.targetBytes;
    const userText = last ? `Last prompt of the session, turn ${t}: ${g.text(span(o.userChars))}` : g.text(span(o.userChars));
    const withImage = g.chance(o.imageRate / 2);
    const content = withImage ? [{ type: "text", text: userText }, image()] : g.chance(0.5) ? userText : [{ type: "text", text: userText }];
    prompts.push(message({ role: "user", content, timestamp: clock.now }));
    const rounds = span(o.toolRounds);
    for (let k = 0; k < rounds; k++) {
      tick(1_000, 20_000);
      const name = g.pick(["bash", "read", "read", "edit", "grep"]);
      const callId = `toolu_01${g.hex(22)}`;
      const args = toolArgs(g, name);
      const blocks = [{ type: "thinking", thinking: g.text(span(o.thinkingChars)), thinkingSignature: g.hex(g.int(64, 200)) }];
      if (g.chance(0.7)) blocks.push({ type: "text", text: g.text(span(o.textChars)) });
      blocks.push({ type: "toolCall", id: callId, name, arguments: args });
      message(assistant(blocks, "toolUse"));
      tick(5, 20_000);
      const readsImage = name === "read" && g.chance(o.imageRate);
      const out = readsImage ? [{ type: "text", text: "Read image file [image/png]" }, image()] : [{ type: "text", text: g.toolOutput(span(o.outChars)) }];
      const result = { role: "toolResult", toolCallId: callId, toolName: name, content: out, isError: g.chance(0.04), timestamp: clock.now };
      if (name === "bash" && g.chance(0.3)) result.details = { truncation: { truncated: true, outputLines: g.int(40, 400), totalLines: g.int(400, 4000) } };
      message(result);
    }
    tick(1_000, 20_000);
    lastText = last ? `The session ends here: ${g.text(span(o.textChars))}` : g.text(span(o.textChars));
    message(assistant([{ type: "text", text: lastText }], "stop"));
    if (t === 2 || g.chance(0.0005)) add(sm.appendSessionInfo(`${g.pick(["Fix", "Refactor", "Speed up"])} ${g.pick(WORDS)} ${g.pick(WORDS)}`), 200);
    if (g.chance(0.01) && prompts.length > 1) add(sm.appendLabelChange(prompts[prompts.length - 2], g.chance(0.8) ? g.pick(WORDS) : undefined), 200);
    if (last) break;
    if (g.chance(o.branchRate) && prompts.length > 4) {
      // /tree back to a prompt a few turns ago, with a summary of the abandoned work: the turns
      // after it stay in the file as a side branch.
      tick(5_000, 60_000);
      const back = g.int(2, Math.min(4, prompts.length - 1));
      const target = prompts[prompts.length - back - 1];
      const summary = `The user explored a different approach: ${g.text(g.int(300, 1500))}`;
      add(sm.branchWithSummary(target, summary, { readFiles: [`src/${g.pick(WORDS)}.rs`], modifiedFiles: [] }, false), summary.length + 300);
      prompts = prompts.slice(0, prompts.length - back);
      stats.branches++;
    }
    if (sinceCompaction > o.compactBytes && prompts.length > 4) {
      tick(5_000, 60_000);
      const kept = prompts[prompts.length - g.int(1, 3)];
      const summary = `## Goal\n${g.text(g.int(200, 600))}\n\n## Progress\n### Done\n${g.text(g.int(600, 3000))}\n\n## Next Steps\n${g.text(g.int(100, 500))}`;
      const details = { readFiles: [`src/${g.pick(WORDS)}.rs`, `src/${g.pick(WORDS)}.rs`], modifiedFiles: [`src/${g.pick(WORDS)}.rs`] };
      add(sm.appendCompaction(summary, kept, Math.round(sinceCompaction / 4), details, false, usage(g)), summary.length + 400);
      stats.compactions++;
      sinceCompaction = 0;
      prompts = prompts.slice(-3);
    }
  }
  const file = sm.getSessionFile();
  return { file, bytes: fs.statSync(file).size, entries: sm.getEntries().length, ...stats, lastText };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = await write(process.argv[2], JSON.parse(process.argv[3]));
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.exit(0);
}
