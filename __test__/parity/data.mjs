// Awkward test data for the parity suite: messages of every role, payloads, names, labels.
// Everything is derived from the sequence's Rng, so both implementations receive equal values
// (each side gets its own deep clone, because the reference stores caller objects by reference).
//
// Deliberately NOT generated (reason in parentheses):
//   - appendMessage(null / non-object) (the reference throws a V8 TypeError text from _persist);
//   - appendSessionInfo(non-string) (same: V8 "name.replace is not a function" text);
//   - clock-like numbers (they would be normalized to <MS>);
//   - unparseable entry timestamps in preloaded entries (getTree's sort order is engine-defined).

// Message timestamps are deterministic and far from the real clock (2001-01-01 onwards).
export const MESSAGE_TS_BASE = 978307200000;

const WORDS = [
  "hello", "world", "lorem", "ipsum", "tool", "read", "write", "patch", "build", "test", "grep",
  "node", "rust", "jsonl", "tree", "leaf", "branch", "merge", "quick", "brown", "fox", "summary",
];

export const AWKWARD_STRINGS = [
  "",
  " ",
  "  padded  ",
  "héllo wörld ñ ß",
  "日本語のテキスト、中文，한국어",
  "emoji 😀 👨‍👩‍👧‍👦 🏳️‍🌈 🇩🇪",
  "ctrl \u0000\u0001\u0007\b\f\u001f end",
  "tab\there\nnew line\r\ncrlf\rcr",
  "seps \u2028 line \u2029 para",
  "lone high \ud800 x",
  "lone low \udc00",
  "trailing high \ud83d",
  "pair 𝄞 \ud834\udd1e",
  "quote \" back \\ slash / </script>",
  "\u007f\u0080\u009f c1",
  "\ufeffbom",
  "nbsp\u00a0thin\u2009zw\u200b",
  "{\"json\":true}",
  "null",
  "1e21",
  "-0",
  "__proto__",
  "constructor",
];

const AWKWARD_NUMBERS = [
  0, -0, 1, -1, 0.1 + 0.2, 1e21, 1e-7, 1e-6, 123456789, 2 ** 53, 2 ** 53 + 2, Number.MAX_VALUE,
  Number.MIN_VALUE, NaN, Infinity, -Infinity, 1.5e300, -1e-300, 42, 1e20, 0.000001, 5e-324, 12345678,
];

export class DataGen {
  constructor(rng) {
    this.rng = rng;
    this.msgClock = 0;
  }

  word() {
    return this.rng.pick(WORDS);
  }

  words(n = 1 + this.rng.int(6)) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.word());
    return out.join(" ");
  }

  /** A text value: usually plain words, often awkward, sometimes long. */
  text() {
    const r = this.rng.next();
    if (r < 0.45) return this.words();
    if (r < 0.85) return this.rng.pick(AWKWARD_STRINGS);
    if (r < 0.95) return `${this.words(2)} ${this.rng.pick(AWKWARD_STRINGS)} ${this.words(2)}`;
    return `long ${"xyz😀 ".repeat(200 + this.rng.int(2000))}`;
  }

  /** A non-empty text for places where emptiness would change semantics too often. */
  nonEmptyText() {
    const t = this.text();
    return t === "" ? "nonempty" : t;
  }

  number() {
    return this.rng.chance(0.6) ? this.rng.int(100000) : this.rng.pick(AWKWARD_NUMBERS);
  }

  /** Deterministic, strictly increasing message timestamp (keeps list() order free of ties). */
  msgTimestamp() {
    this.msgClock += 1;
    return MESSAGE_TS_BASE + this.msgClock * 1000;
  }

  /** Usually a deterministic ms timestamp; sometimes missing, undefined, NaN or a Date. */
  maybeTimestamp() {
    return this.rng.weighted([
      [90, () => this.msgTimestamp()],
      [3, () => undefined],
      [2, () => NaN],
      [2, () => new Date(MESSAGE_TS_BASE + 7)],
      [3, () => "omit"],
    ])();
  }

  /** An awkward JSON-ish value (depth-limited). */
  value(depth = 0) {
    const kinds = [
      [20, "string"],
      [15, "number"],
      [5, "bool"],
      [5, "null"],
      [4, "undefined"],
      [3, "date"],
    ];
    if (depth < 3) kinds.push([12, "object"], [8, "array"], [4, "special"]);
    switch (this.rng.weighted(kinds)) {
      case "string":
        return this.text();
      case "number":
        return this.number();
      case "bool":
        return this.rng.chance(0.5);
      case "null":
        return null;
      case "undefined":
        return undefined;
      case "date":
        return new Date(MESSAGE_TS_BASE + this.rng.int(1e9));
      case "array": {
        const n = this.rng.int(4);
        const arr = [];
        for (let i = 0; i < n; i++) arr.push(this.value(depth + 1));
        return arr;
      }
      case "object": {
        const obj = {};
        const n = this.rng.int(4);
        for (let i = 0; i < n; i++) obj[this.rng.pick(["a", "b", "name", "path", "x y", "ü", "", "10", "2"])] = this.value(depth + 1);
        return obj;
      }
      default:
        return this.special(depth);
    }
  }

  /** Objects and arrays whose serialization or equality is easy to get wrong. */
  special(depth = 0) {
    return this.rng.weighted([
      [3, () => ({ b: 1, 2: this.text(), 1: this.number() })],
      [2, () => ({ 10: "ten", 9: "nine", "01": "zero-one", "-1": "minus", "1.5": "frac", 4294967295: "max", 4294967294: "maxidx", z: 0 })],
      [2, () => ({ a: undefined, b: null, c: [1, undefined, 3] })],
      [2, () => [[1, [2, [3, []]]], [], [[]]]],
      [1, () => [1, , 3]], // eslint-disable-line no-sparse-arrays
      [2, () => ({ when: new Date(MESSAGE_TS_BASE + 1), nested: { deeper: [new Date(0)] } })],
      [1, () => {
        const o = {};
        Object.defineProperty(o, "__proto__", { value: { polluted: true }, enumerable: true, writable: true, configurable: true });
        o.after = 1;
        return o;
      }],
      [1, () => ({ "": "empty key", " ": "space key", "\u2028": "sep key", "😀": "emoji key" })],
      [2, () => ({ n: this.rng.pick(AWKWARD_NUMBERS), m: this.rng.pick(AWKWARD_NUMBERS), s: this.rng.pick(AWKWARD_STRINGS) })],
      [1, () => (depth < 3 ? { deep: this.value(depth + 1), list: [this.value(depth + 1), this.value(depth + 1)] } : "flat")],
    ])();
  }

  textBlocks(allowImages = true) {
    const n = 1 + this.rng.int(3);
    const out = [];
    for (let i = 0; i < n; i++) {
      if (allowImages && this.rng.chance(0.1)) out.push({ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" });
      else out.push({ type: "text", text: this.text() });
    }
    return out;
  }

  /** Adds the timestamp per maybeTimestamp() (possibly omitting the key). */
  _stamp(msg) {
    const ts = this.maybeTimestamp();
    if (ts !== "omit") msg.timestamp = ts;
    return msg;
  }

  userMessage() {
    const r = this.rng.next();
    let content;
    if (r < 0.5) content = this.text();
    else if (r < 0.93) content = this.textBlocks();
    else if (r < 0.96) content = null;
    else content = "omit";
    const msg = { role: "user" };
    if (content !== "omit") msg.content = content;
    if (this.rng.chance(0.15)) msg.extra = this.special();
    return this._stamp(msg);
  }

  usage() {
    return {
      input: this.rng.int(5000),
      output: this.rng.int(2000),
      cacheRead: this.rng.int(100),
      cacheWrite: 0,
      totalTokens: this.rng.int(7000),
      cost: { input: 0.1 + 0.2, output: 1e-7, cacheRead: 0, cacheWrite: -0, total: this.rng.pick(AWKWARD_NUMBERS) },
    };
  }

  assistantMessage() {
    const content = [];
    const n = this.rng.int(4);
    for (let i = 0; i < n; i++) {
      const kind = this.rng.pick(["text", "text", "thinking", "toolCall"]);
      if (kind === "text") content.push({ type: "text", text: this.text() });
      else if (kind === "thinking") content.push({ type: "thinking", thinking: this.text(), thinkingSignature: this.rng.chance(0.5) ? "sig" : undefined });
      else content.push({ type: "toolCall", id: `call_${this.rng.int(1000)}`, name: this.rng.pick(["read", "bash", "edit"]), arguments: this.value(1) });
    }
    const msg = {
      role: "assistant",
      content: this.rng.chance(0.03) ? null : content,
      api: "anthropic-messages",
      provider: this.rng.pick(["anthropic", "openai", "google", undefined, "prövider 😀"]),
      model: this.rng.pick(["claude-x", "gpt-y", "gemini-z", undefined]),
      usage: this.usage(),
      stopReason: this.rng.pick(["stop", "toolUse", "length", "error", "aborted"]),
    };
    if (this.rng.chance(0.1)) msg.errorMessage = this.text();
    return this._stamp(msg);
  }

  toolResultMessage() {
    return this._stamp({
      role: "toolResult",
      toolCallId: `call_${this.rng.int(1000)}`,
      toolName: this.rng.pick(["read", "bash", "edit"]),
      content: this.rng.chance(0.05) ? undefined : this.textBlocks(),
      details: this.rng.chance(0.5) ? this.value(1) : undefined,
      isError: this.rng.chance(0.2),
    });
  }

  tool() {
    return {
      name: this.rng.pick(["read", "bash", "edit", "write", "grep", "find", "ls"]),
      description: this.text(),
      parameters: { type: "object", properties: { path: { type: "string" } }, required: this.rng.chance(0.5) ? ["path"] : [] },
    };
  }

  systemMessage() {
    const r = this.rng.next();
    let content;
    if (r < 0.5) content = this.text();
    else if (r < 0.8) content = this.textBlocks(false);
    else if (r < 0.9) content = "";
    else if (r < 0.95) content = null;
    else content = "omit";
    const msg = { role: "system" };
    if (content !== "omit") msg.content = content;
    if (this.rng.chance(0.4)) {
      const sections = {};
      const n = 1 + this.rng.int(3);
      for (let i = 0; i < n; i++) sections[this.rng.pick(["rules", "env", "memory", "2", "1", "skills"])] = this.rng.chance(0.3) ? null : this.text();
      msg.sections = sections;
    }
    if (this.rng.chance(0.35)) {
      msg.toolsAdded = [];
      const n = 1 + this.rng.int(3);
      for (let i = 0; i < n; i++) msg.toolsAdded.push(this.tool());
    }
    if (this.rng.chance(0.25)) {
      msg.toolsRemoved = [{ name: this.rng.pick(["read", "bash", "edit", "nonexistent"]) }];
    }
    return this._stamp(msg);
  }

  customRoleMessage() {
    return this._stamp({
      role: "custom",
      customType: this.rng.pick(["ext-a", "ext-b", "🧩"]),
      content: this.rng.chance(0.5) ? this.text() : this.textBlocks(),
      display: this.rng.chance(0.5),
      details: this.rng.chance(0.5) ? this.value(1) : undefined,
    });
  }

  bashMessage() {
    const msg = {
      role: "bashExecution",
      command: this.rng.pick(["ls -la", "echo 'hi'\n", "cat 😀.txt", ""]),
      output: this.text(),
      exitCode: this.rng.pick([0, 1, 127, null, undefined]),
      cancelled: this.rng.chance(0.1),
      truncated: this.rng.chance(0.1),
    };
    if (this.rng.chance(0.3)) msg.fullOutputPath = "/tmp/out ü.txt";
    if (this.rng.chance(0.3)) msg.excludeFromContext = this.rng.chance(0.5);
    return this._stamp(msg);
  }

  /** A message for appendMessage; convoBias is the chance of a user/assistant role. */
  message(convoBias) {
    if (this.rng.chance(convoBias)) return this.rng.chance(0.5) ? this.userMessage() : this.assistantMessage();
    return this.rng.weighted([
      [30, () => this.systemMessage()],
      [25, () => this.toolResultMessage()],
      [20, () => this.customRoleMessage()],
      [20, () => this.bashMessage()],
      [5, () => this._stamp({ role: "hookMessage", customType: "legacy", content: this.text(), display: true })],
    ])();
  }

  thinkingLevel() {
    return this.rng.pick(["off", "minimal", "low", "medium", "high", "xhigh", "", "wéird 😀"]);
  }

  sessionName() {
    return this.rng.pick([
      "My session",
      "  spaced name  ",
      "line1\r\nline2",
      "a\rb\n\nc\r\r\nd",
      "\n\n",
      "",
      "   ",
      "emoji 🚀 name",
      "tab\tname",
      this.text(),
    ]);
  }

  label() {
    return this.rng.weighted([
      [40, () => this.rng.pick(["bookmark", "⭐ star", "checkpoint-1", "x\ny"])],
      [10, () => "   "],
      [15, () => ""],
      [15, () => undefined],
      [20, () => this.text()],
    ])();
  }

  details() {
    return this.rng.weighted([
      [40, () => undefined],
      [30, () => ({ readFiles: ["a.ts", "ü/b.rs"], modifiedFiles: this.rng.chance(0.5) ? [] : ["c.md"] })],
      [30, () => this.value(1)],
    ])();
  }

  fromHook() {
    return this.rng.pick([undefined, true, false]);
  }

  maybeUsage() {
    return this.rng.chance(0.4) ? this.usage() : undefined;
  }

  customData() {
    return this.rng.weighted([
      [20, () => undefined],
      [50, () => this.value(0)],
      [30, () => this.special()],
    ])();
  }

  customMessageContent() {
    return this.rng.chance(0.5) ? this.text() : this.textBlocks();
  }
}
