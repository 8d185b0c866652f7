// Deterministic benchmark data generator (seeded PRNG): writes bench/data/ unless an up-to-date
// copy already exists (bench/data/manifest.json records the generator version).
//
//   big/<file>.jsonl   one 3,000-turn v3 session (~16 MB): a turn = user message, assistant message
//                      (thinking + text + toolCall, usage), toolResult with a few KB of output;
//                      plus compactions (some with systemMessage), abandoned branches with
//                      branch summaries, labels (set and clear), model/thinking changes, session_info.
//   many/*.jsonl       400 sessions of varied sizes for list/listAll: most small, a few 1-2 MB;
//                      80% have cwd BENCH_CWD, the rest other cwds (list(cwd, dir) filters them).
import fs from "node:fs";
import path from "node:path";

export const GEN_VERSION = 4;
export const BENCH_CWD = "/tmp/pi-bench-project";
const OTHER_CWDS = ["/tmp/pi-bench-other-a", "/tmp/pi-bench-other-b"];

/** Seeded PRNG (mulberry32), shared by the bench data generators. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The words generated text is made of. */
export const BASE_WORDS = (
  "the a to of and in is for that it with on as this be are by we not from or an at can use " +
  "file function return value type error test build module import export const let async await " +
  "session entry message context tool result output input parse write read path directory line " +
  "json string number array object index map set leaf branch tree compaction summary label model " +
  "change update fix refactor implement check run command cargo npm node rust napi binding native " +
  "struct impl trait fn pub mod crate use self match some none ok err vec hash iterator buffer " +
  "performance benchmark latency memory allocation stream chunk decode encode utf8 bytes newline"
).split(" ");
const WORDS = BASE_WORDS;

class Gen {
  constructor(seed) {
    this.rand = mulberry32(seed);
    this.usedIds = new Set();
  }
  int(lo, hi) {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }
  pick(arr) {
    return arr[Math.floor(this.rand() * arr.length)];
  }
  hex(n) {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[Math.floor(this.rand() * 16)];
    return s;
  }
  id() {
    for (;;) {
      const id = this.hex(8);
      if (!this.usedIds.has(id)) {
        this.usedIds.add(id);
        return id;
      }
    }
  }
  uuid7(ms) {
    const t = ms.toString(16).padStart(12, "0");
    return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${this.hex(3)}-${"89ab"[this.int(0, 3)]}${this.hex(3)}-${this.hex(12)}`;
  }
  words(n) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.pick(WORDS));
    const s = out.join(" ");
    return s.charAt(0).toUpperCase() + s.slice(1);
  }
  text(chars) {
    let s = "";
    while (s.length < chars) s += `${this.words(this.int(6, 16))}. `;
    return s.slice(0, chars).trimEnd();
  }
  toolOutput(bytes) {
    const lines = [];
    let size = 0;
    while (size < bytes) {
      const kind = this.int(0, 3);
      const line =
        kind === 0
          ? `src/${this.pick(WORDS)}/${this.pick(WORDS)}_${this.pick(WORDS)}.rs:${this.int(1, 999)}:${this.int(1, 80)}: ${this.words(this.int(3, 9))}`
          : kind === 1
            ? `    ${this.pick(["let", "const", "fn", "pub fn", "if", "return"])} ${this.pick(WORDS)}_${this.pick(WORDS)} = ${this.pick(WORDS)}(${this.pick(WORDS)}, ${this.int(0, 9999)});`
            : kind === 2
              ? `-rw-r--r-- 1 user user ${this.int(100, 99999).toString().padStart(6)} Jan ${this.int(1, 28)} 12:${this.int(10, 59)} ${this.pick(WORDS)}.${this.pick(["ts", "rs", "json", "md"])}`
              : this.words(this.int(5, 14));
      lines.push(line);
      size += line.length + 1;
    }
    return lines.join("\n");
  }
}

function usage(g) {
  const input = g.int(2000, 90000);
  const output = g.int(50, 2000);
  const cacheRead = g.int(0, input);
  return {
    input,
    output,
    cacheRead,
    cacheWrite: g.int(0, 3000),
    totalTokens: input + output + cacheRead,
    cost: {
      input: +(input * 3e-6).toFixed(6),
      output: +(output * 15e-6).toFixed(6),
      cacheRead: +(cacheRead * 3e-7).toFixed(6),
      cacheWrite: 0,
      total: +(input * 3e-6 + output * 15e-6).toFixed(6),
    },
  };
}

/**
 * Writes one session file. opts: { turns, outMin, outMax, cwd, startMs, name?, parentSession?, rich }
 * rich = add compactions / branches / labels / model changes (the 3,000-turn session).
 */
function sessionLines(g, opts) {
  const lines = [];
  let ms = opts.startMs;
  const iso = () => new Date(ms).toISOString();
  const sessionId = g.uuid7(ms);
  const header = { type: "session", version: 3, id: sessionId, timestamp: iso(), cwd: opts.cwd };
  if (opts.parentSession) header.parentSession = opts.parentSession;
  lines.push(header);
  let leaf = null;
  const mainIds = [];
  const push = (entry) => {
    lines.push(entry);
    return entry;
  };
  const add = (fields, parentId = leaf) => {
    ms += g.int(200, 4000);
    const e = { type: fields.type, id: g.id(), parentId, timestamp: iso(), ...fields };
    return push(e);
  };
  const addMain = (fields) => {
    const e = add(fields);
    leaf = e.id;
    mainIds.push(e.id);
    return e;
  };
  const msgEntry = (message) => ({ type: "message", message });
  const systemMessage = () => ({
    role: "system",
    content: `You are pi, a coding agent. ${g.text(600)}`,
    sections: { "<tools>": g.text(300), "<project>": g.text(200) },
    timestamp: ms,
  });
  let model = "claude-sonnet-4-5";
  const turn = (outBytes) => {
    const user = addMain(msgEntry({ role: "user", content: g.rand() < 0.5 ? g.text(g.int(40, 400)) : [{ type: "text", text: g.text(g.int(40, 400)) }], timestamp: ms }));
    const callId = `toolu_01${g.hex(22)}`;
    const toolName = g.pick(["bash", "read", "edit", "write", "grep"]);
    addMain(
      msgEntry({
        role: "assistant",
        content: [
          { type: "thinking", thinking: g.text(g.int(200, 900)), thinkingSignature: g.hex(64) },
          { type: "text", text: g.text(g.int(80, 600)) },
          {
            type: "toolCall",
            id: callId,
            name: toolName,
            arguments:
              toolName === "bash"
                ? { command: `cargo test -p ${g.pick(WORDS)} -- ${g.pick(WORDS)}`, timeout: 120 }
                : { path: `src/${g.pick(WORDS)}/${g.pick(WORDS)}.rs`, offset: g.int(1, 400), limit: 200 },
          },
        ],
        api: "anthropic-messages",
        provider: "anthropic",
        model,
        usage: usage(g),
        stopReason: "toolUse",
        timestamp: ms,
        responseId: `msg_01${g.hex(22)}`,
      }),
    );
    addMain(
      msgEntry({
        role: "toolResult",
        toolCallId: callId,
        toolName,
        content: [{ type: "text", text: g.toolOutput(outBytes) }],
        isError: g.rand() < 0.05,
        timestamp: ms,
      }),
    );
    return user.id;
  };

  if (opts.rich) {
    addMain({ type: "model_change", provider: "anthropic", modelId: model });
    addMain({ type: "thinking_level_change", thinkingLevel: "medium" });
    addMain(msgEntry(systemMessage()));
  }
  if (opts.name) addMain({ type: "session_info", name: opts.name });

  const userIds = [];
  for (let t = 0; t < opts.turns; t++) {
    userIds.push(turn(g.int(opts.outMin, opts.outMax)));
    if (!opts.rich) continue;
    // Abandoned branch every 400 turns: 2 turns hanging off the entry 3 turns back, then a
    // branch_summary on the main line pointing at the abandoned leaf.
    if (t > 0 && t % 400 === 0) {
      const saved = leaf;
      leaf = mainIds[mainIds.length - 9];
      for (let b = 0; b < 2; b++) {
        const u = add(msgEntry({ role: "user", content: g.text(120), timestamp: ms }));
        leaf = u.id;
        const a = add(msgEntry({ role: "assistant", content: [{ type: "text", text: g.text(300) }], api: "anthropic-messages", provider: "anthropic", model, usage: usage(g), stopReason: "stop", timestamp: ms }));
        leaf = a.id;
      }
      const abandoned = leaf;
      leaf = saved;
      addMain({ type: "branch_summary", fromId: abandoned, summary: g.text(600), details: { readFiles: [`src/${g.pick(WORDS)}.rs`], modifiedFiles: [] } });
    }
    // Labels: set one every 150 turns, clear every 4th of those.
    if (t % 150 === 75) addMain({ type: "label", targetId: g.pick(mainIds.slice(-30)), label: g.pick(["checkpoint", "good state", "before refactor", "bug repro"]) });
    if (t % 600 === 375) addMain({ type: "label", targetId: lines.findLast((e) => e.type === "label").targetId });
    // Compactions every 750 turns, keeping the last ~20 turns; every other one has a systemMessage.
    if (t > 0 && t % 750 === 0) {
      const fields = {
        type: "compaction",
        summary: `## Goal\n${g.text(400)}\n\n## Progress\n${g.text(1200)}\n\n## Next steps\n${g.text(300)}`,
        firstKeptEntryId: userIds[userIds.length - 20],
        tokensBefore: g.int(150000, 190000),
        details: { readFiles: [`src/${g.pick(WORDS)}.rs`, `src/${g.pick(WORDS)}.rs`], modifiedFiles: [`src/${g.pick(WORDS)}.rs`] },
        usage: usage(g),
      };
      if ((t / 750) % 2 === 1) fields.systemMessage = systemMessage();
      addMain(fields);
    }
    if (t === 1000) {
      model = "claude-opus-4-1";
      addMain({ type: "model_change", provider: "anthropic", modelId: model });
      addMain({ type: "thinking_level_change", thinkingLevel: "high" });
    }
    if (t === 1500) addMain({ type: "session_info", name: "Long refactoring session" });
    if (t % 500 === 250) addMain({ type: "usage", kind: "cache_warm", provider: "anthropic", model, usage: usage(g), note: "keepalive" });
  }
  return { lines, sessionId, header, endMs: ms };
}

function fileName(header) {
  return `${header.timestamp.replace(/[:.]/g, "-")}_${header.id}.jsonl`;
}

function writeSession(dir, built) {
  const file = path.join(dir, fileName(built.header));
  fs.writeFileSync(file, built.lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return file;
}

/** Ensures bench/data exists and is current; returns { bigFile, manyDir, stats }. */
export function ensureData(dataDir, log = () => {}) {
  const manifestPath = path.join(dataDir, "manifest.json");
  if (fs.existsSync(manifestPath)) {
    try {
      const m = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
      if (m.version === GEN_VERSION && fs.existsSync(m.bigFile) && fs.existsSync(m.manyDir)) {
        log(`reusing benchmark data in ${path.relative(process.cwd(), dataDir) || dataDir}`);
        return m;
      }
    } catch {}
  }
  log("generating benchmark data (one-time)...");
  const t0 = Date.now();
  // Only what this generator makes: bench/data also holds the scale set (bench/scale-gen.mjs) and
  // the agent dirs of bench:pi, gigabytes that take minutes to make again.
  const bigDir = path.join(dataDir, "big");
  const manyDir = path.join(dataDir, "many");
  for (const own of [bigDir, manyDir, manifestPath]) fs.rmSync(own, { recursive: true, force: true });
  fs.mkdirSync(bigDir, { recursive: true });
  fs.mkdirSync(manyDir, { recursive: true });

  const g = new Gen(0x5eed);
  const big = sessionLines(g, { turns: 3000, outMin: 1500, outMax: 5000, cwd: BENCH_CWD, startMs: Date.UTC(2025, 2, 1), rich: true });
  const bigFile = writeSession(bigDir, big);

  let ms = Date.UTC(2025, 0, 1);
  let manyBytes = 0;
  let largeCount = 0;
  const files = [];
  for (let i = 0; i < 400; i++) {
    const gi = new Gen(1000 + i);
    const large = i % 50 === 7; // 8 files of ~1-2 MB
    const medium = !large && i % 10 === 3; // ~40 files of 100-300 KB
    const opts = large
      ? { turns: gi.int(200, 320), outMin: 3000, outMax: 5000 }
      : medium
        ? { turns: gi.int(30, 80), outMin: 500, outMax: 2000 }
        : { turns: gi.int(1, 20), outMin: 100, outMax: 1000 };
    const built = sessionLines(gi, {
      ...opts,
      cwd: i % 5 === 4 ? OTHER_CWDS[i % 2] : BENCH_CWD,
      startMs: ms,
      name: i % 7 === 0 ? `Session ${i}: ${gi.words(3)}` : undefined,
      parentSession: i % 23 === 0 && files.length ? files[files.length - 1] : undefined,
      rich: false,
    });
    ms = built.endMs + 60_000;
    const file = writeSession(manyDir, built);
    files.push(file);
    manyBytes += fs.statSync(file).size;
    if (large) largeCount++;
  }
  const manifest = {
    version: GEN_VERSION,
    bigFile,
    manyDir,
    bigBytes: fs.statSync(bigFile).size,
    bigLines: big.lines.length,
    manyFiles: files.length,
    manyBytes,
    manyLargeFiles: largeCount,
    cwd: BENCH_CWD,
  };
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  log(`generated in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return manifest;
}
