// Shared pieces of the scale benchmark (bench/scale.mjs, bench/scale-child.mjs). scale.mjs imports
// this module once per implementation (distinct query string), so each side has its own JIT call
// sites, as bench/ops.mjs does for `npm run bench`.
import fs from "node:fs";
import path from "node:path";

const now = () => performance.now();

/**
 * Removes listing caches: ours (`<agentDir>/.pi-session-native`), `<agentDir>/*cache*` (e.g. the
 * `session-list-cache.jsonl` of older versions) and cache files next to the sessions.
 */
export function clearListingCaches(agentDir) {
  const removed = [];
  const rm = (p) => {
    fs.rmSync(p, { recursive: true, force: true });
    removed.push(p);
  };
  const scan = (dir, depth) => {
    let names = [];
    try {
      names = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of names) {
      const p = path.join(dir, d.name);
      // Session files (<timestamp>_<uuid>.jsonl) never match; at the top level anything does
      // (e.g. an old <agentDir>/session-list-cache.jsonl).
      if (/cache/i.test(d.name) && (depth === 2 || !d.name.endsWith(".jsonl"))) rm(p);
      else if (d.isDirectory() && depth > 0) scan(p, depth - 1);
    }
  };
  if (fs.existsSync(path.join(agentDir, ".pi-session-native"))) rm(path.join(agentDir, ".pi-session-native"));
  scan(agentDir, 2); // agentDir, agentDir/sessions, agentDir/sessions/--cwd--
  return removed;
}


/** A fresh message per call, cycling user → assistant (tool call) → tool result (~3 KB). */
export const nextTurnMessage = (() => {
  const out = Array.from({ length: 80 }, (_, i) => `test session::store::tests::case_${i} ... ${i % 17 === 0 ? "FAILED" : "ok"} (${(i * 0.37).toFixed(2)}s)`).join("\n");
  let n = 0;
  return () => {
    const k = n++ % 3;
    const ts = Date.now();
    if (k === 0) return { role: "user", content: [{ type: "text", text: "Please run the test suite again and fix whatever fails in src/session/store.rs." }], timestamp: ts };
    if (k === 1)
      return {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "The user wants the tests rerun. ".repeat(12), thinkingSignature: "c2ln".repeat(16) },
          { type: "text", text: "Running the test suite now. ".repeat(4) },
          { type: "toolCall", id: "toolu_01BenchCallAbcdefghijklm", name: "bash", arguments: { command: "cargo test -p pi-session-core", timeout: 120 } },
        ],
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-opus-4-1",
        usage: { input: 81234, output: 412, cacheRead: 80011, cacheWrite: 1200, totalTokens: 162857, cost: { input: 0.243702, output: 0.00618, cacheRead: 0.024003, cacheWrite: 0.0045, total: 0.278385 } },
        stopReason: "toolUse",
        timestamp: ts,
      };
    return { role: "toolResult", toolCallId: "toolu_01BenchCallAbcdefghijklm", toolName: "bash", content: [{ type: "text", text: out }], isError: false, timestamp: ts };
  };
})();

/** The per-turn calls, by name (shared with scale-ops.mjs). */
export function makeCall(sm, name) {
  switch (name) {
    case "appendMessage":
      return () => sm.appendMessage(nextTurnMessage());
    case "buildSessionContext":
      return () => sm.buildSessionContext();
    case "buildSessionProjection":
      return () => sm.buildSessionProjection();
    case "getBranch":
      return () => sm.getBranch();
    case "getEntries":
      return () => sm.getEntries();
    case "getLeafEntry":
      return () => sm.getLeafEntry();
    case "getTree":
      return () => sm.getTree();
    default:
      throw new Error(`unknown per-turn call ${name}`);
  }
}


// Each operation gets its own batch loop, compiled separately (new Function => its own feedback
// vector), so the loop's call site stays monomorphic. The source must differ per batch: V8 caches
// `new Function` by source text, and from the second batch of identical text on, batches share
// one function and its feedback (across both implementations' module instances too), so the call
// site turned polymorphic and the implementation warmed up second paid for it (getLeafEntry: the
// reference ~1 ns inlined, ours ~4-6 ns through a generic call, even with a body of one field read).
// Every result is kept (the loop returns the last one, the caller stores it): a result nobody
// uses lets the JIT delete side-effect-free work, and it did, the reference's getLeafEntry (a
// `Map.get`) measured ~1-3 ns because the lookup was never run (~6 ns when it is).
let batchCount = 0;
export function compileBatch(call) {
  const tag = `${import.meta.url} #${batchCount++}`;
  return new Function("call", `return function batch(k) { let r; for (let i = 0; i < k; i++) r = call(); return r; }; // ${tag}`)(call);
}

/** Where batch results go, so that they are used. */
export let sink;

/** Runs k calls with a compiled batch loop; returns elapsed ms. */
export function runBatch(batch, k) {
  const start = now();
  sink = batch(k);
  return now() - start;
}
