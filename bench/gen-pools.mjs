// The seeded generators the benchmark data is made of (bench/scale-gen.mjs, bench/text-gen.mjs):
// pools of prose, tool output and base64 noise built once per process from fixed seeds, a PRNG
// that slices them (`Gen`), an assistant message's usage and the rest of what an
// assistant message and a tool call are made of, and the seeding of a writer's process.
import { BASE_WORDS, mulberry32 } from "./data-gen.mjs";

const MiB = 1 << 20;

/** data-gen's words and a few outside ASCII, so text carries multi-byte UTF-8. */
export const WORDS = [...BASE_WORDS, ..."naïve café größe — → ✓ 日本語".split(" ")];

/** Pools are built once per process from a fixed seed; everything else slices them. */
let POOLS = null;
function pools() {
  if (POOLS) return POOLS;
  const rand = mulberry32(0x9001);
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = (a) => a[Math.floor(rand() * a.length)];
  const words = (n) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  // Prose: ~2 MB of sentences.
  const prose = [];
  let size = 0;
  while (size < 2 * MiB) {
    const s = words(int(6, 18));
    const sentence = `${s.charAt(0).toUpperCase()}${s.slice(1)}${pick([".", ".", ".", "?", ":"])} `;
    prose.push(sentence);
    size += sentence.length;
  }
  // Tool output: ~4 MB of lines (compiler diagnostics, code, ls -l, test runs, logs, JSON).
  const toolLines = [];
  size = 0;
  while (size < 4 * MiB) {
    const kind = int(0, 6);
    const line =
      kind === 0
        ? `src/${pick(WORDS)}/${pick(WORDS)}_${pick(WORDS)}.rs:${int(1, 999)}:${int(1, 80)}: warning: unused variable \`${pick(WORDS)}\``
        : kind === 1
          ? `    ${pick(["let", "const", "fn", "pub fn", "if", "return"])} ${pick(WORDS)}_${pick(WORDS)} = ${pick(WORDS)}("${pick(WORDS)}", ${int(0, 9999)});`
          : kind === 2
            ? `-rw-r--r--  1 user user ${String(int(100, 99999)).padStart(6)} Jan ${int(1, 28)} 12:${int(10, 59)} ${pick(WORDS)}.${pick(["ts", "rs", "json", "md"])}`
            : kind === 3
              ? `test ${pick(WORDS)}::tests::${pick(WORDS)}_${int(0, 99)} ... ${rand() < 0.08 ? "FAILED" : "ok"}`
              : kind === 4
                ? `\t${JSON.stringify({ level: pick(["info", "warn", "debug"]), msg: words(int(3, 8)), path: `C:\\work\\${pick(WORDS)}` })}`
                : words(int(5, 14));
    toolLines.push(line);
    size += line.length + 1;
  }
  const proseText = prose.join("");
  const toolText = toolLines.join("\n");
  const toolStarts = [0];
  for (let i = toolText.indexOf("\n"); i !== -1; i = toolText.indexOf("\n", i + 1)) toolStarts.push(i + 1);
  // Base64: 12 MiB of noise bytes (a PNG's compressed data looks like noise).
  const raw = Buffer.allocUnsafe(9 * MiB);
  for (let i = 0; i < raw.length; i += 4) raw.writeUInt32LE((rand() * 4294967296) >>> 0, i);
  const b64 = raw.toString("base64");
  POOLS = { proseText, toolText, toolStarts, b64 };
  return POOLS;
}

export class Gen {
  constructor(seed) {
    this.rand = mulberry32(seed);
    this.p = pools();
  }
  int(lo, hi) {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }
  chance(p) {
    return this.rand() < p;
  }
  pick(arr) {
    return arr[Math.floor(this.rand() * arr.length)];
  }
  hex(n) {
    let s = "";
    while (s.length < n) s += ((this.rand() * 4294967296) >>> 0).toString(16).padStart(8, "0");
    return s.slice(0, n);
  }
  uuid7(ms) {
    const t = Math.floor(ms).toString(16).padStart(12, "0");
    return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${this.hex(3)}-${"89ab"[this.int(0, 3)]}${this.hex(3)}-${this.hex(12)}`;
  }
  text(chars) {
    const t = this.p.proseText;
    let start = this.int(0, t.length - chars - 200);
    const sp = t.indexOf(" ", start);
    start = sp === -1 ? start : sp + 1;
    return t.slice(start, start + chars).trimEnd();
  }
  toolOutput(chars) {
    const { toolText, toolStarts } = this.p;
    const start = toolStarts[this.int(0, toolStarts.length - 1)];
    if (start + chars <= toolText.length) return toolText.slice(start, start + chars);
    return (toolText.slice(start) + "\n" + toolText).slice(0, chars);
  }
  base64(chars) {
    const b = this.p.b64;
    const start = this.int(0, b.length - chars - 4) & ~3;
    return b.slice(start, start + chars - 2) + "==";
  }
}


export function usage(g) {
  const input = g.int(2000, 90000);
  const output = g.int(50, 4000);
  const cacheRead = g.int(0, 150000);
  const cacheWrite = g.int(0, 3000);
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: {
      input: +(input * 3e-6).toFixed(6),
      output: +(output * 15e-6).toFixed(6),
      cacheRead: +(cacheRead * 3e-7).toFixed(6),
      cacheWrite: +(cacheWrite * 3.75e-6).toFixed(6),
      total: +(input * 3e-6 + output * 15e-6 + cacheRead * 3e-7 + cacheWrite * 3.75e-6).toFixed(6),
    },
  };
}

/** The arguments of a tool call of `name` ("bash", "read", "edit" or "grep"), as pi's tools take them. */
export function toolArgs(g, name) {
  if (name === "bash") return { command: `cargo test -p ${g.pick(WORDS)} 2>&1 | tail -n 40`, timeout: 600 };
  if (name === "edit") return { path: `src/${g.pick(WORDS)}.rs`, edits: [{ oldText: g.text(g.int(30, 200)), newText: g.text(g.int(30, 260)) }] };
  if (name === "grep") return { pattern: `fn ${g.pick(WORDS)}`, path: "src" };
  return { path: `src/${g.pick(WORDS)}/${g.pick(WORDS)}.rs` };
}

/**
 * Seeds this process's clock and the randomness pi's SessionManager draws ids from, so a writer
 * run twice writes the same bytes: `crypto.randomUUID` (entry ids) and `crypto.getRandomValues`
 * (the header's uuidv7) draw from `rand`, and `Date` reads the returned clock, which starts at
 * `startMs` and moves only when the writer moves `clock.now`. For a child process of its own: the
 * globals stay replaced.
 */
export async function seedProcess(rand, startMs) {
  const { createRequire, syncBuiltinESMExports } = await import("node:module");
  const require = createRequire(import.meta.url);
  const hex = (n) => {
    let s = "";
    while (s.length < n) s += ((rand() * 4294967296) >>> 0).toString(16).padStart(8, "0");
    return s.slice(0, n);
  };
  const nodeCrypto = require("node:crypto");
  nodeCrypto.randomUUID = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[Math.floor(rand() * 4)]}${hex(3)}-${hex(12)}`;
  syncBuiltinESMExports();
  Object.defineProperty(globalThis.crypto, "getRandomValues", {
    configurable: true,
    value: (a) => {
      for (let i = 0; i < a.length; i++) a[i] = Math.floor(rand() * 256);
      return a;
    },
  });
  const RealDate = Date;
  const clock = { now: startMs };
  globalThis.Date = class extends RealDate {
    constructor(...a) {
      if (a.length) super(...a);
      else super(clock.now);
    }
    static now() {
      return clock.now;
    }
  };
  return clock;
}

/** An assistant message of `model` at `now`, as pi's providers leave one (usage drawn from `g`). */
export function assistantMessage(g, model, now, content, stopReason) {
  return {
    role: "assistant",
    content,
    api: "anthropic-messages",
    provider: "anthropic",
    model,
    usage: usage(g),
    stopReason,
    timestamp: now,
    responseId: `msg_01${g.hex(22)}`,
    durationMs: g.int(800, 40000),
  };
}
