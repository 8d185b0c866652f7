// Deterministic, seeded generator of the big-data benchmark set (`npm run bench:scale`).
// Writes bench/data/scale/ (gitignored) unless an up-to-date copy is there: each part is
// recorded in bench/data/scale/manifest.json with the generator version, its parameters and its
// files' sizes, and is regenerated only when that record does not match what is on disk.
//
//   agent/sessions/--tmp-pi-scale-project--/*.jsonl
//        3,000 sessions, ≥ 2 GiB in total: most small (5 KB – 2 MB), 60 of 3–12 MB, 12 of
//        50–200 MB dominated by tool output and base64 image blocks; rich sessions carry
//        compactions, abandoned branches with branch summaries, labels, model/thinking changes,
//        custom entries; some are named, some are forks (parentSession), 3 end in a torn line.
//        File mtimes = last activity, so listAll's mtime order is realistic.
//        `agent/` is the agent dir (PI_CODING_AGENT_DIR) for listAll.
//   single/128mb/*.jsonl   one 128 MiB rich session (open, forkFrom, createBranchedSession)
//   single/1gb/*.jsonl     one 1 GiB rich session (open + buildSessionContext); skipped with a
//                          message when the disk has < 4 GB free
//   single/10k/*.jsonl     one session of exactly 10,000 entries (per-turn operations, getTree)
//   single/text3k/*.jsonl  one text-only session of 3,000 turns (~9,000 messages, ~12 MB) WRITTEN
//                          BY THE REFERENCE SessionManager (its own ids, key order and appends), in
//                          a child process whose clock and random sources are seeded, so the file
//                          is the same on every run (the `resume` section of bench:scale)
//
// Lines are what the reference writes: JSON.stringify of entries whose keys are in the
// reference's order (SessionManager.append*, pi-ai's assistant messages, the agent loop's tool
// results). Content comes from seeded pools (prose, tool-output lines, base64 noise) sliced at
// random offsets, so generation runs at disk speed.
//
// CLI: `node bench/scale-gen.mjs` generates (or verifies) everything and prints the manifest.
import fs from "node:fs";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { mulberry32 } from "./data-gen.mjs";
import { assistantMessage, Gen, seedProcess, toolArgs, usage, WORDS } from "./gen-pools.mjs";
import { TEXT_SESSIONS } from "./text-gen.mjs";

export const SCALE_GEN_VERSION = 1;
export const SCALE_CWD = "/tmp/pi-scale-project";
export const SCALE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "data", "scale");

const MiB = 1 << 20;
const GiB = 1 << 30;
const CWD_DIR_NAME = `--${SCALE_CWD.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;

// ------------------------------------------------------------------------------ writer
class LineWriter {
  constructor(file) {
    this.file = file;
    this.ws = fs.createWriteStream(file, { highWaterMark: 16 * MiB });
    this.pending = [];
    this.pendingBytes = 0;
    this.bytes = 0;
  }
  async write(text) {
    this.pending.push(text);
    this.pendingBytes += text.length;
    this.bytes += Buffer.byteLength(text);
    if (this.pendingBytes >= 8 * MiB) await this.flush();
  }
  async flush() {
    if (!this.pending.length) return;
    const chunk = Buffer.from(this.pending.join(""));
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.ws.write(chunk)) await once(this.ws, "drain");
  }
  async close() {
    await this.flush();
    this.ws.end();
    await once(this.ws, "finish");
  }
}

// ------------------------------------------------------------------------------ sessions

class StopGeneration extends Error {}

/**
 * Writes one session. opts:
 *   targetBytes     stop after the turn that reaches this size (or maxEntries)
 *   maxEntries      stop after exactly this many entries (header excluded)
 *   outMin/outMax   tool output size range; bigOut: chance of a 20–50 KB output (truncation limit)
 *   imageRate       chance per turn of an image (user paste or `read` of an image)
 *   imgMin/imgMax   base64 length range of an image
 *   rich            compactions, branches, labels, model changes, custom entries
 *   name, parentSession, torn
 * Returns { file, bytes, entries, lastMs, id }.
 */
export async function writeSession(dir, seed, startMs, opts) {
  const g = new Gen(seed);
  let ms = startMs;
  const iso = () => new Date(ms).toISOString();
  const sessionId = g.uuid7(ms);
  const header = { type: "session", version: 3, id: sessionId, timestamp: iso(), cwd: opts.cwd ?? SCALE_CWD };
  if (opts.parentSession) header.parentSession = opts.parentSession;
  const file = path.join(dir, `${header.timestamp.replace(/[:.]/g, "-")}_${sessionId}.jsonl`);
  const w = new LineWriter(file);
  await w.write(`${JSON.stringify(header)}\n`);

  const ids = new Set();
  let leaf = null;
  let entries = 0;
  let lastActivity = ms;
  const path_ = []; // ids on the current branch, for labels / branch points
  let userIds = [];
  let model = g.pick(["claude-sonnet-4-5", "claude-opus-4-1", "gpt-5"]);
  let provider = model.startsWith("gpt") ? "openai" : "anthropic";
  let api = provider === "openai" ? "openai-responses" : "anthropic-messages";
  let contextChars = 0; // rough token estimate ×4, images count 4,800 chars (as pi estimates)
  const newId = () => {
    for (;;) {
      const id = g.hex(8);
      if (!ids.has(id)) {
        ids.add(id);
        return id;
      }
    }
  };
  const emit = async (entry) => {
    if (opts.maxEntries && entries >= opts.maxEntries) throw new StopGeneration();
    entries++;
    leaf = entry.id;
    path_.push(entry.id);
    await w.write(`${JSON.stringify(entry)}\n`);
  };
  const base = (type) => {
    ms += g.int(150, 6000);
    return { type, id: newId(), parentId: leaf, timestamp: iso() };
  };
  const message = async (msg) => {
    const e = base("message");
    e.message = msg;
    if (msg.role === "user" || msg.role === "assistant") lastActivity = msg.timestamp;
    await emit(e);
    return e.id;
  };
  const image = () => ({ type: "image", data: g.base64(g.int(opts.imgMin ?? 60_000, opts.imgMax ?? 1_400_000)), mimeType: g.pick(["image/png", "image/png", "image/jpeg"]) });

  const turn = async () => {
    // user
    const userText = g.text(g.int(20, 600));
    const withImage = g.chance((opts.imageRate ?? 0) * 0.3);
    const userContent = withImage ? [{ type: "text", text: userText }, image()] : g.chance(0.5) ? userText : [{ type: "text", text: userText }];
    const uid = await message({ role: "user", content: userContent, timestamp: ms });
    userIds.push(uid);
    contextChars += userText.length + (withImage ? 4800 : 0);
    // assistant with tool calls, each followed by its result
    const calls = g.chance(0.2) ? g.int(2, 3) : 1;
    const toolCalls = [];
    for (let c = 0; c < calls; c++) {
      const name = g.pick(["bash", "read", "read", "edit", "write", "grep"]);
      const id = provider === "openai" ? `call_${g.hex(24)}|fc_${g.hex(40)}` : `toolu_01${g.hex(22)}`;
      const args =
        name === "bash"
          ? { command: `cd ${SCALE_CWD} && cargo test -p ${g.pick(WORDS)} -- ${g.pick(WORDS)} 2>&1 | tail -n 80`, timeout: 600 }
          : name === "edit"
            ? { path: `src/${g.pick(WORDS)}/${g.pick(WORDS)}.rs`, edits: [{ oldText: g.text(g.int(40, 300)), newText: g.text(g.int(40, 400)) }] }
            : name === "write"
              ? { path: `src/${g.pick(WORDS)}.rs`, content: g.toolOutput(g.int(300, 6000)) }
              : name === "grep"
                ? { pattern: `fn ${g.pick(WORDS)}`, path: "src", glob: "*.rs" }
                : { path: `src/${g.pick(WORDS)}/${g.pick(WORDS)}.${g.pick(["rs", "ts", "png"])}` };
      toolCalls.push({ type: "toolCall", id, name, arguments: args });
    }
    ms += g.int(1000, 20000);
    const thinking = g.text(g.int(100, 1500));
    const assistantText = g.text(g.int(30, 800));
    const aStart = ms;
    await message({
      role: "assistant",
      content: [
        { type: "thinking", thinking, thinkingSignature: g.hex(g.int(64, 344)) },
        { type: "text", text: assistantText },
        ...toolCalls,
      ],
      api,
      provider,
      model,
      usage: usage(g),
      stopReason: "toolUse",
      timestamp: aStart,
      responseId: `msg_01${g.hex(22)}`,
      durationMs: g.int(800, 60000),
    });
    contextChars += thinking.length + assistantText.length + 200;
    for (const call of toolCalls) {
      ms += g.int(5, 30000);
      let content;
      let details;
      if (call.name === "read" && g.chance(opts.imageRate ?? 0)) {
        content = [{ type: "text", text: "Read image file [image/png]" }, image()];
        contextChars += 4800;
      } else {
        const n = g.chance(opts.bigOut ?? 0.05) ? g.int(20_000, 51_200) : g.int(opts.outMin ?? 200, opts.outMax ?? 4000);
        content = [{ type: "text", text: g.toolOutput(n) }];
        contextChars += n;
        if (call.name === "edit") details = { diff: g.toolOutput(g.int(200, 2000)), firstChangedLine: g.int(1, 900) };
        if (call.name === "bash" && n > 50_000) details = { truncation: { truncated: true, truncatedBy: "bytes", totalLines: g.int(2000, 9000) } };
      }
      await message({
        role: "toolResult",
        toolCallId: call.id,
        toolName: call.name,
        content,
        details,
        isError: g.chance(0.04),
        durationMs: g.int(3, 30000),
        timestamp: ms,
      });
    }
    // Sometimes a closing assistant message without tool calls.
    if (g.chance(0.25)) {
      const t = g.text(g.int(50, 1200));
      await message({ role: "assistant", content: [{ type: "text", text: t }], api, provider, model, usage: usage(g), stopReason: "stop", timestamp: ms, responseId: `msg_01${g.hex(22)}`, durationMs: g.int(800, 30000) });
      contextChars += t.length;
    }
  };

  try {
    if (opts.rich || g.chance(0.3)) {
      await emit({ ...base("model_change"), provider, modelId: model });
      await emit({ ...base("thinking_level_change"), thinkingLevel: g.pick(["low", "medium", "high"]) });
    }
    if (opts.name) await emit({ ...base("session_info"), name: opts.name });
    let turns = 0;
    let lastBranchTurn = 0;
    while (opts.maxEntries ? entries < opts.maxEntries : w.bytes < opts.targetBytes) {
      await turn();
      turns++;
      if (!opts.rich) continue;
      // Abandoned branch: the user goes back /tree to a user message a few turns back; the
      // branch summary hangs off that message's parent, fromId = the abandoned leaf.
      if (turns - lastBranchTurn >= 40 && g.chance(0.03) && userIds.length > 6) {
        lastBranchTurn = turns;
        const target = userIds[userIds.length - g.int(2, 5)];
        const idx = path_.lastIndexOf(target);
        const branchFrom = path_[idx - 1];
        const fromId = leaf;
        leaf = branchFrom;
        path_.length = idx;
        userIds.length = userIds.lastIndexOf(target);
        await emit({
          ...base("branch_summary"),
          fromId,
          summary: `The user explored a different approach and abandoned it.\n\n${g.text(g.int(300, 1500))}`,
          details: { readFiles: [`src/${g.pick(WORDS)}.rs`], modifiedFiles: [`src/${g.pick(WORDS)}.rs`] },
          fromHook: false,
        });
      }
      if (g.chance(0.01)) {
        await emit({ ...base("label"), targetId: path_[path_.length - 1 - g.int(0, Math.min(20, path_.length - 1))], label: g.pick(["checkpoint", "good state", "before refactor", "bug repro"]) });
      }
      if (g.chance(0.003)) await emit({ ...base("label"), targetId: path_[g.int(0, path_.length - 1)] });
      if (g.chance(0.004)) {
        model = g.pick(["claude-sonnet-4-5", "claude-opus-4-1"]);
        provider = "anthropic";
        api = "anthropic-messages";
        await emit({ ...base("model_change"), provider, modelId: model });
      }
      if (g.chance(0.004)) await emit({ ...base("thinking_level_change"), thinkingLevel: g.pick(["low", "medium", "high", "xhigh"]) });
      if (g.chance(0.01)) {
        const e = base("custom");
        await emit({ type: "custom", customType: "todo-state", data: { items: [{ text: g.text(60), done: g.chance(0.5) }] }, id: e.id, parentId: e.parentId, timestamp: e.timestamp });
      }
      // Compaction when the context estimate passes ~170k tokens: keep the last few turns.
      if (contextChars > 680_000 && userIds.length > 4) {
        const kept = userIds[userIds.length - g.int(2, 4)];
        const e = base("compaction");
        e.summary = `## Goal\n${g.text(g.int(200, 600))}\n\n## Progress\n### Done\n${g.text(g.int(600, 3000))}\n\n## Next Steps\n${g.text(g.int(100, 500))}`;
        e.firstKeptEntryId = kept;
        e.tokensBefore = Math.round(contextChars / 4);
        e.details = { readFiles: [`src/${g.pick(WORDS)}.rs`, `src/${g.pick(WORDS)}.rs`], modifiedFiles: [`src/${g.pick(WORDS)}.rs`] };
        e.usage = usage(g);
        e.fromHook = false;
        if (g.chance(0.2)) e.systemMessage = { role: "system", content: `You are pi, a coding agent. ${g.text(800)}`, timestamp: Date.parse(e.timestamp) };
        await emit(e);
        contextChars = 40_000;
        userIds = userIds.slice(-4);
      }
    }
  } catch (error) {
    if (!(error instanceof StopGeneration)) throw error;
  }
  if (opts.torn) {
    // A crash mid-write: half of a last line, no newline.
    const line = JSON.stringify({ ...base("message"), message: { role: "user", content: g.text(400), timestamp: ms } });
    await w.write(line.slice(0, line.length >> 1));
  }
  await w.close();
  const mtime = new Date(Math.max(lastActivity, ms));
  fs.utimesSync(file, mtime, mtime);
  return { file, bytes: w.bytes, entries, lastMs: ms, id: sessionId };
}

// ------------------------------------------------------------------------------ parts
function freeBytes(dir) {
  try {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

const fmtMB = (b) => `${(b / 1e6).toFixed(b < 10e6 ? 1 : 0)} MB`;

/** The 3,000-session plan: per session its seed, kind and target size. */
function manyPlan() {
  const g = new Gen(0xa11);
  const N = 3000;
  const plan = [];
  const largeSizes = [50, 60, 75, 90, 100, 110, 120, 140, 160, 180, 200, 200].map((m) => m * MiB);
  const largeAt = new Set(largeSizes.map((_, i) => Math.floor(((i + 0.5) * N) / largeSizes.length) + g.int(-50, 50)));
  const mediumAt = new Set();
  while (mediumAt.size < 60) {
    const i = g.int(0, N - 1);
    if (!largeAt.has(i)) mediumAt.add(i);
  }
  let li = 0;
  for (let i = 0; i < N; i++) {
    let kind;
    let targetBytes;
    if (largeAt.has(i)) {
      kind = "large";
      targetBytes = largeSizes[li++];
    } else if (mediumAt.has(i)) {
      kind = "medium";
      targetBytes = g.int(3 * MiB, 12 * MiB);
    } else {
      kind = "small";
      const r = g.rand();
      targetBytes = r < 0.7 ? g.int(5_000, 60_000) : r < 0.95 ? g.int(60_000, 400_000) : g.int(400_000, 2 * MiB);
    }
    plan.push({
      i,
      kind,
      targetBytes,
      seed: 0x100000 + i,
      name: g.chance(0.15) ? `${g.pick(["Fix", "Refactor", "Investigate", "Add", "Speed up"])} ${g.pick(WORDS)} ${g.pick(WORDS)}` : undefined,
      fork: g.chance(0.03),
      torn: i === 17 || i === 1234 || i === 2999,
      gapMs: g.int(60_000, 36 * 3600_000),
    });
  }
  return plan;
}

const PARTS = {
  many: {
    params: { sessions: 3000, minTotal: 2 * GiB },
    async generate(root, log) {
      const dir = path.join(root, "agent", "sessions", CWD_DIR_NAME);
      fs.rmSync(path.join(root, "agent"), { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      const plan = manyPlan();
      let ms = Date.UTC(2025, 0, 2, 9, 0, 0);
      let total = 0;
      const files = [];
      let last = Date.now();
      const t0 = Date.now();
      for (const p of plan) {
        const large = p.kind === "large";
        const opts = {
          targetBytes: p.targetBytes,
          rich: p.kind !== "small" || p.targetBytes > 200_000,
          name: p.name,
          parentSession: p.fork && files.length ? files[files.length - 1].file : undefined,
          torn: p.torn,
          imageRate: large ? 0.35 : p.kind === "medium" ? 0.12 : 0.03,
          imgMin: large ? 200_000 : 40_000,
          imgMax: large ? 1_800_000 : 900_000,
          outMin: large ? 2_000 : 200,
          outMax: large ? 30_000 : 6_000,
          bigOut: large ? 0.25 : 0.04,
        };
        const r = await writeSession(dir, p.seed, ms, opts);
        ms = r.lastMs + p.gapMs;
        total += r.bytes;
        files.push({ file: r.file, bytes: r.bytes });
        if (Date.now() - last > 2000 || large) {
          last = Date.now();
          log(`  sessions: ${files.length}/3000, ${fmtMB(total)}${large ? ` (just wrote a ${fmtMB(r.bytes)} one)` : ""}, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        }
      }
      if (total < 2 * GiB) throw new Error(`scale-gen: 3,000 sessions came to ${fmtMB(total)} < 2 GiB; raise the plan's sizes`);
      const sizes = files.map((f) => f.bytes).sort((a, b) => b - a);
      return {
        agentDir: path.join(root, "agent"),
        sessionDir: dir,
        cwd: SCALE_CWD,
        count: files.length,
        totalBytes: total,
        largestBytes: sizes[0],
        over50MB: sizes.filter((s) => s >= 50 * MiB).length,
        files: files.map((f) => [path.basename(f.file), f.bytes]),
      };
    },
    verify(rec) {
      const names = new Map(rec.files);
      let n = 0;
      for (const f of fs.readdirSync(rec.sessionDir)) {
        if (!f.endsWith(".jsonl")) continue;
        if (fs.statSync(path.join(rec.sessionDir, f)).size !== names.get(f)) return false;
        n++;
      }
      return n === names.size;
    },
  },
  mb128: {
    params: { targetBytes: 128 * MiB },
    needs: 128 * MiB,
    async generate(root, log) {
      const dir = path.join(root, "single", "128mb");
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      log("  128 MiB session...");
      const r = await writeSession(dir, 0x128, Date.UTC(2025, 5, 1, 8), { targetBytes: 128 * MiB, rich: true, name: "Big refactor", imageRate: 0.3, imgMin: 150_000, imgMax: 1_500_000, outMin: 1_000, outMax: 20_000, bigOut: 0.2 });
      return { file: r.file, bytes: r.bytes, entries: r.entries };
    },
  },
  gb1: {
    params: { targetBytes: GiB },
    needs: 4e9,
    async generate(root, log) {
      const dir = path.join(root, "single", "1gb");
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      log("  1 GiB session (this takes a while)...");
      const r = await writeSession(dir, 0x1e9, Date.UTC(2025, 6, 1, 8), { targetBytes: GiB, rich: true, name: "Screenshot-heavy UI work", imageRate: 0.35, imgMin: 200_000, imgMax: 1_800_000, outMin: 2_000, outMax: 30_000, bigOut: 0.25 });
      return { file: r.file, bytes: r.bytes, entries: r.entries };
    },
  },
  e10k: {
    params: { entries: 10_000 },
    async generate(root, log) {
      const dir = path.join(root, "single", "10k");
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      log("  10,000-entry session...");
      const r = await writeSession(dir, 0x10000, Date.UTC(2025, 4, 1, 8), { maxEntries: 10_000, rich: true, imageRate: 0.02, outMin: 300, outMax: 6_000, bigOut: 0.03 });
      return { file: r.file, bytes: r.bytes, entries: r.entries };
    },
  },
  // Issue 32's sessions (bench/text-gen.mjs): text-heavy, compacted, side branches, some images.
  text12: {
    params: { ...TEXT_SESSIONS.text12, writer: "reference", version: 1 },
    needs: 0.1e9,
    async generate(root, log) {
      log("  11.6 MB text session of 3,000 turns (written by the reference SessionManager)...");
      const { writeTextSession } = await import("./text-gen.mjs");
      return writeTextSession(path.join(root, "single", "text12"), "text12");
    },
  },
  text128: {
    params: { ...TEXT_SESSIONS.text128, writer: "reference", version: 1 },
    needs: 0.5e9,
    async generate(root, log) {
      log("  128 MiB text session of ~18,000 messages (written by the reference SessionManager)...");
      const { writeTextSession } = await import("./text-gen.mjs");
      return writeTextSession(path.join(root, "single", "text128"), "text128");
    },
  },
  text3k: {
    params: { turns: 3000, writer: "reference", version: 1 },
    async generate(root, log) {
      const dir = path.join(root, "single", "text3k");
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      log("  3,000-turn text session (written by the reference SessionManager)...");
      const { spawnSync } = await import("node:child_process");
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--write-text3k", dir, "3000"], { encoding: "utf8", maxBuffer: 16 << 20 });
      if (r.status !== 0) throw new Error(`scale-gen: the text3k writer failed: ${r.stderr}`);
      return JSON.parse(r.stdout.trim().split("\n").pop());
    },
  },
};

// ------------------------------------------------------------------------------ text3k writer
/**
 * Runs in its own process (`scale-gen.mjs --write-text3k <dir> <turns>`): the reference
 * SessionManager writes a text-only session, turn by turn, as the agent would (user message,
 * assistant message with thinking, text, a tool call and usage, the tool result; sometimes a
 * closing assistant reply; a compaction whenever the context estimate passes ~170k tokens, as
 * auto-compaction would). The process's clock (`Date`), `crypto.randomUUID` (entry ids) and
 * `crypto.getRandomValues` (the header's uuidv7) are seeded first, so the bytes are the same on
 * every run. Prints { file, bytes, entries, messages } as JSON.
 */
async function writeText3k(dir, turns) {
  const clock = await seedProcess(mulberry32(0x7e47), Date.UTC(2025, 8, 1, 9, 0, 0));
  const { SessionManager } = await import(path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"));
  const g = new Gen(0x7e473);
  const tick = (lo, hi) => (clock.now += g.int(lo, hi));
  const sm = SessionManager.create(SCALE_CWD, dir);
  const model = "claude-sonnet-4-5";
  sm.appendModelChange("anthropic", model);
  sm.appendThinkingLevelChange("medium");
  let messages = 0;
  let contextChars = 0;
  let userIds = [];
  const assistant = (content, stopReason) => assistantMessage(g, model, clock.now, content, stopReason);
  for (let t = 0; t < turns; t++) {
    tick(5_000, 300_000);
    const userText = g.text(g.int(40, 900));
    userIds.push(sm.appendMessage({ role: "user", content: g.chance(0.5) ? userText : [{ type: "text", text: userText }], timestamp: clock.now }));
    tick(1_000, 20_000);
    const name = g.pick(["bash", "read", "read", "edit", "grep"]);
    const callId = `toolu_01${g.hex(22)}`;
    const args = toolArgs(g, name);
    const thinking = g.text(g.int(60, 700));
    const text = g.text(g.int(20, 400));
    sm.appendMessage(assistant([{ type: "thinking", thinking, thinkingSignature: g.hex(g.int(64, 200)) }, { type: "text", text }, { type: "toolCall", id: callId, name, arguments: args }], "toolUse"));
    tick(5, 20_000);
    const out = g.toolOutput(g.int(150, 2100));
    sm.appendMessage({ role: "toolResult", toolCallId: callId, toolName: name, content: [{ type: "text", text: out }], isError: g.chance(0.04), timestamp: clock.now });
    messages += 3;
    contextChars += userText.length + thinking.length + text.length + out.length + 300;
    if (g.chance(0.1)) {
      tick(1_000, 20_000);
      const reply = g.text(g.int(50, 900));
      sm.appendMessage(assistant([{ type: "text", text: reply }], "stop"));
      messages++;
      contextChars += reply.length;
    }
    if (g.chance(0.004)) {
      tick(100, 2_000);
      sm.appendSessionInfo(`${g.pick(["Fix", "Refactor", "Speed up"])} ${g.pick(WORDS)} ${g.pick(WORDS)}`);
    }
    if (contextChars > 680_000 && userIds.length > 4) {
      tick(5_000, 60_000);
      const kept = userIds[userIds.length - g.int(2, 4)];
      const summary = `## Goal\n${g.text(g.int(200, 600))}\n\n## Progress\n### Done\n${g.text(g.int(600, 3000))}\n\n## Next Steps\n${g.text(g.int(100, 500))}`;
      sm.appendCompaction(summary, kept, Math.round(contextChars / 4), { readFiles: [`src/${g.pick(WORDS)}.rs`], modifiedFiles: [`src/${g.pick(WORDS)}.rs`] }, false, usage(g));
      contextChars = 30_000;
      userIds = userIds.slice(-4);
    }
  }
  const file = sm.getSessionFile();
  return { file, bytes: fs.statSync(file).size, entries: sm.getEntries().length, messages };
}

function singleOk(rec) {
  try {
    return fs.statSync(rec.file).size === rec.bytes;
  } catch {
    return false;
  }
}

/**
 * Ensures bench/data/scale is current. Returns the manifest:
 * { version, many: {...}, mb128: {...}, gb1: {...} | { skipped }, e10k: {...} }.
 * options.only: a list of part names to ensure (default: all).
 */
export async function ensureScaleData(log = (...a) => console.error(...a), options = {}) {
  const root = SCALE_DIR;
  fs.mkdirSync(root, { recursive: true });
  const manifestPath = path.join(root, "manifest.json");
  let manifest = {};
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  } catch {}
  if (manifest.version !== SCALE_GEN_VERSION) manifest = { version: SCALE_GEN_VERSION };
  const save = () => fs.writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  const only = options.only ?? Object.keys(PARTS);
  for (const name of only) {
    const part = PARTS[name];
    const rec = manifest[name];
    const paramsMatch = rec && JSON.stringify(rec.params) === JSON.stringify(part.params);
    if (paramsMatch && !rec.skipped && (part.verify ?? singleOk)(rec)) {
      log(`scale data: reusing ${name} (${fmtMB(rec.totalBytes ?? rec.bytes)})`);
      continue;
    }
    const free = freeBytes(root);
    const needs = part.needs ?? 2.5e9;
    if (free < needs) {
      const reason = `only ${fmtMB(free)} free on the disk of ${root} (needs ≥ ${fmtMB(needs)})`;
      log(`scale data: SKIPPING ${name}: ${reason}`);
      manifest[name] = { params: part.params, skipped: reason };
      save();
      continue;
    }
    log(`scale data: generating ${name} (${fmtMB(free)} free)...`);
    const t0 = Date.now();
    delete manifest[name];
    save();
    const out = await part.generate(root, log);
    manifest[name] = { params: part.params, ...out, seconds: +((Date.now() - t0) / 1000).toFixed(1) };
    save();
    log(`scale data: ${name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s (${fmtMB(out.totalBytes ?? out.bytes)})`);
  }
  return manifest;
}

if (process.argv[2] === "--write-text3k") {
  const r = await writeText3k(process.argv[3], Number(process.argv[4]));
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.exit(0);
}
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const only = process.argv.slice(2);
  const m = await ensureScaleData(undefined, only.length ? { only } : {});
  const brief = Object.fromEntries(
    Object.entries(m).map(([k, v]) => [k, v && typeof v === "object" ? Object.fromEntries(Object.entries(v).filter(([kk]) => kk !== "files")) : v]),
  );
  console.log(JSON.stringify(brief, null, 2));
}
