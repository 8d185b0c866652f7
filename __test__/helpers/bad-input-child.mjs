// Child of __test__/bad-input.test.mjs: throws random argument combinations at every static and
// instance method of our SessionManager, inside a sandbox (cwd, HOME and PI_CODING_AGENT_DIR are
// a temp dir set by the parent), then checks the main session's integrity. Prints one JSON report.
//
//   node bad-input-child.mjs <seed> <calls>
import fs from "node:fs";
import path from "node:path";

import { Rng } from "../parity/prng.mjs";
import { loadOurs, loadReference } from "./target.mjs";

const { SessionManager } = loadOurs();

const seed = Number(process.argv[2] ?? 1);
const CALLS = Number(process.argv[3] ?? 10_000);
const rng = new Rng(seed);
const sandbox = fs.realpathSync(process.cwd());

// ----- values ---------------------------------------------------------------------------------

const ALPHABET = "abcXYZ019 _-.é中😀\n\t\"\\";
function shortString() {
  let s = "";
  for (let n = rng.int(12); n > 0; n--) s += ALPHABET[rng.int(ALPHABET.length)];
  return s;
}

function throwingProxy(target = {}) {
  const boom = () => {
    throw rng.chance(0.5) ? new Error("trap") : "a thrown string";
  };
  return new Proxy(target, {
    get: boom,
    has: boom,
    ownKeys: boom,
    getOwnPropertyDescriptor: boom,
    getPrototypeOf: boom,
    set: boom,
    defineProperty: boom,
    apply: boom,
  });
}

function deepArray(depth) {
  let v = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

let session = null; // the main manager, for ids and paths
function existingId() {
  const entries = session?.getEntries() ?? [];
  return entries.length ? entries[rng.int(entries.length)]?.id : "deadbeef";
}

/** A fresh value of a random kind (fresh: stored objects must not be shared between calls). */
function value(depth = 0) {
  switch (rng.int(44)) {
    case 0:
      return undefined;
    case 1:
      return null;
    case 2:
      return rng.chance(0.5);
    case 3:
      return rng.pick([0, -0, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 53 + 2, 1e308, 5e-324]);
    case 4:
      return rng.pick([0n, 10n, -(2n ** 70n)]);
    case 5:
      return "";
    case 6:
    case 7:
      return shortString();
    case 8:
      return rng.pick(["\ud800", "\udfff\ud800", "\u0000", "a\u2028b", "~", "~/x", "user", "assistant", "session", "message"]);
    case 9:
      // Huge: a few MB (rare, it may end up in the file).
      return rng.chance(0.1) ? "h".repeat((1 + rng.int(4)) << 20) : "m".repeat(70_000 + rng.int(10_000));
    case 10:
      return Symbol(shortString());
    case 11:
      return rng.chance(0.5)
        ? () => 1
        : function thrower() {
            throw new Error("callback threw");
          };
    case 12:
      return [];
    case 13:
      return depth < 3 ? [value(depth + 1), value(depth + 1)] : [1];
    case 14:
      return {};
    case 15:
      return { role: rng.pick(["user", "assistant", "toolResult", "custom", "system"]), content: depth < 3 ? value(depth + 1) : "x", timestamp: 1 };
    case 16:
      return { content: rng.chance(0.5) ? "replacement" : [{ type: "text", text: "r" }] };
    case 17:
      return { [Symbol("k")]: 1, visible: 2 };
    case 18: {
      const o = { a: 1 };
      o.self = o;
      return o;
    }
    case 19:
      return {
        get bad() {
          throw new Error("getter threw");
        },
      };
    case 20:
      return { toJSON() {
        throw new Error("toJSON threw");
      } };
    case 21:
      return { n: 5n };
    case 22:
      return Object.freeze({ frozen: true });
    case 23:
      return Object.create(null);
    case 24:
      return new Date(rng.chance(0.5) ? 0 : NaN);
    case 25:
      return new Map([[1, 2]]);
    case 26:
      return /re/g;
    case 27:
    case 28:
      return throwingProxy(rng.chance(0.5) ? {} : []);
    case 29: {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }
    case 30:
      return deepArray(rng.chance(0.5) ? 100 : 20_000);
    case 31:
    case 32:
    case 33:
      return existingId();
    case 34:
      return session?.getSessionFile() ?? path.join(sandbox, "none.jsonl");
    case 35:
      return path.join(sandbox, rng.pick(["a", "b", "dir", "main"]), rng.chance(0.5) ? "" : `${shortString().replace(/[\\/\n\t"]/g, "")}.jsonl`);
    case 36:
      return rng.pick(["a", "b", "dir", "x.jsonl", "./rel", "nested/deeper"]);
    case 37:
      return new AbortController().signal;
    case 38:
      return AbortSignal.abort();
    case 39:
      return Buffer.from("buf");
    case 40:
      return new Uint8Array([1, 2, 3]);
    case 41:
      return { id: rng.chance(0.5) ? shortString() : 5, parentSession: value(depth + 1) };
    case 42:
      return [{ type: "session", version: rng.pick([1, 2, 3, undefined]), id: "pre", timestamp: "2025-01-01T00:00:00.000Z", cwd: sandbox }, value(depth + 1), { type: "message", message: { role: "user", content: "p" } }];
    default:
      return { type: rng.pick(["message", "custom", "label", "compaction"]), id: existingId(), parentId: null };
  }
}

// ----- calls ----------------------------------------------------------------------------------

// dispose() takes no input and ends the session under test (dispose.test.mjs covers it).
const INSTANCE = Object.getOwnPropertyNames(SessionManager.prototype).filter((n) => n !== "constructor" && n !== "dispose");
const STATIC = ["create", "open", "continueRecent", "inMemory", "forkFrom", "findById", "list", "listAll"];

const codes = new Map();
const badErrors = [];
let calls = 0;
let threw = 0;

function check(err, what) {
  threw++;
  const code = err?.code;
  // The caller's own abort reason is passed on as the reference does (DOMException AbortError).
  const isAbort = err?.name === "AbortError";
  if (!isAbort && (!(err instanceof Error) || typeof code !== "string" || !/^[A-Z][A-Z0-9_]*$/.test(code))) {
    if (badErrors.length < 20) badErrors.push({ what, error: String(err?.stack ?? err).slice(0, 300), code: String(code).slice(0, 40) });
  }
  const key = isAbort ? "AbortError" : String(code);
  codes.set(key, (codes.get(key) ?? 0) + 1);
}

const user = (text) => ({ role: "user", content: text, timestamp: Date.now() });
const assistantMsg = (text) => ({ role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m", stopReason: "stop", timestamp: Date.now() });

session = SessionManager.create(sandbox, path.join(sandbox, "main"));
session.appendMessage(user("start"));
session.appendMessage(assistantMsg("ok"));
const scratch = SessionManager.create(sandbox, path.join(sandbox, "scratch"));

const clip = (text) => String(text).slice(0, 300);
const integrity = { problems: [], files: 0, checkpoints: 0 };
const ref = await loadReference();

/** Every line parses, and ours and the reference read the same entries. */
function checkFile(file) {
  const text = fs.readFileSync(file, "utf8");
  const lines = text.split("\n");
  if (lines.pop() !== "") integrity.problems.push(`${clip(file)}: does not end with a newline`);
  lines.forEach((line, i) => {
    try {
      JSON.parse(line);
    } catch {
      integrity.problems.push(`${clip(file)}: line ${i + 1} does not parse: ${clip(line)}`);
    }
  });
  const disk = SessionManager.open(file).getEntries().map((e) => JSON.stringify(e));
  const theirs = ref.SessionManager.open(file).getEntries().map((e) => JSON.stringify(e));
  if (JSON.stringify(theirs) !== JSON.stringify(disk)) integrity.problems.push(`${clip(file)}: the reference reads other entries`);
  integrity.files++;
  return disk;
}

/** The session in memory is what its file holds (when the session has a file on disk). */
function compareMemory(where) {
  const file = session.getSessionFile();
  if (!session.isPersisted() || !file) return false;
  if (!fs.existsSync(file)) {
    // A new session is written once it has a conversation: give it one.
    try {
      session.appendMessage(user("checkpoint"));
      session.appendMessage(assistantMsg("checkpoint"));
    } catch (err) {
      if (typeof err?.code !== "string") integrity.problems.push(`${where}: a write threw without a code: ${clip(err?.stack ?? err)}`);
      return false;
    }
  }
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) return false;
  const disk = checkFile(file);
  const mem = session.getEntries().map((e) => JSON.stringify(e));
  if (mem.length !== disk.length) integrity.problems.push(`${where}: ${mem.length} entries in memory, ${disk.length} in the file`);
  mem.forEach((m, i) => {
    if (m !== disk[i] && integrity.problems.length < 10) integrity.problems.push(`${where}: entry ${i} differs: memory ${clip(m)} / file ${clip(disk[i])}`);
  });
  const [h1, h2] = [JSON.stringify(session.getHeader()), JSON.stringify(SessionManager.open(file).getHeader())];
  if (h1 !== h2) integrity.problems.push(`${where}: header differs: memory ${clip(h1)} / file ${clip(h2)}`);
  return true;
}

const started = Date.now();
const pending = [];
for (let i = 0; i < CALLS; i++) {
  const isStatic = rng.chance(0.15);
  const name = isStatic ? rng.pick(STATIC) : rng.pick(INSTANCE);
  const args = [];
  for (let n = rng.int(5); n > 0; n--) args.push(value());
  // _persist writes any value it is given (by design, as in the reference): not into the session
  // whose integrity is checked.
  const target = isStatic ? SessionManager : name === "_persist" ? scratch : session;
  const what = `${isStatic ? "SessionManager." : "sm."}${name}(${args.map((a) => typeof a).join(", ")})`;
  calls++;
  try {
    const result = target[name](...args);
    if (result instanceof Promise) pending.push(result.then(() => {}, (err) => check(err, what)));
  } catch (err) {
    check(err, what);
  }
  if (name === "setFsync") session.setFsync(false); // keep the run fast: fsync mode is tested elsewhere
  if (pending.length >= 16) await Promise.all(pending.splice(0));
  // Checkpoints along the way (the final state may be a session at an unwritable path).
  if (i % 250 === 249) {
    try {
      if (compareMemory(`after call ${i + 1}`)) integrity.checkpoints++;
    } catch (err) {
      integrity.problems.push(`checkpoint after call ${i + 1} threw: ${clip(err?.stack ?? err)}`);
    }
  }
}
await Promise.all(pending);
const elapsed = Date.now() - started;

// ----- integrity ------------------------------------------------------------------------------

try {
  session.setExclusive(false);
  // The session ends wherever the calls left it: possibly at a path no file can have (a huge
  // name). A final write then fails with a code and changes nothing in memory.
  const before = session.getEntries().length;
  let finalWrite = "ok";
  try {
    session.appendMessage(user("final"));
    session.appendMessage(assistantMsg("final"));
  } catch (err) {
    finalWrite = err?.code;
    if (typeof err?.code !== "string") integrity.problems.push(`the final write threw without a code: ${clip(err?.stack ?? err)}`);
    if (session.getEntries().length > before + 1) integrity.problems.push("a failed final write left entries behind");
  }
  integrity.finalWrite = finalWrite;
  const file = session.getSessionFile();
  if (finalWrite === "ok" && compareMemory("at the end")) integrity.checkpoints++;
  // Every session file the run left in the sandbox (except _persist's scratch session).
  const walk = (dir) => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, d.name);
      if (d.isDirectory() && d.name !== "scratch") walk(full);
      else if (d.isFile() && d.name.endsWith(".jsonl") && full !== file) {
        try {
          checkFile(full);
        } catch (err) {
          // Files that are not sessions (none are expected) would be refused by both.
          if (err?.code !== "INVALID_SESSION_FILE") integrity.problems.push(`${clip(full)}: open threw ${clip(err?.stack ?? err)}`);
        }
      }
    }
  };
  walk(sandbox);
} catch (err) {
  integrity.problems.push(`integrity check threw: ${clip(err?.stack ?? err)}`);
}

process.stdout.write(
  `${JSON.stringify({ seed, calls, threw, elapsed, codes: Object.fromEntries([...codes].sort((a, b) => b[1] - a[1])), badErrors, integrity })}\n`,
);
