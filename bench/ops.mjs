// Benchmark workloads. run.mjs imports this module once PER IMPLEMENTATION (with a distinct query
// string), so each implementation gets its own copies of these functions and therefore its own
// JIT call sites / inline caches: one side's object shapes cannot make the other side's calls
// polymorphic.
import fs from "node:fs";
import path from "node:path";

const now = () => performance.now();

/** ctx: { data, BENCH_CWD, sampleIds } — returns the operation list for one implementation. */
export function makeOps({ data, BENCH_CWD, sampleIds }) {
  const userMsg = () => ({
    role: "user",
    content: [{ type: "text", text: "Please run the test suite again and fix whatever fails in src/session/store.rs." }],
    timestamp: Date.now(),
  });
  const assistantMsg = () => ({
    role: "assistant",
    content: [
      { type: "thinking", thinking: "The user wants the tests rerun. ".repeat(12), thinkingSignature: "c2ln".repeat(16) },
      { type: "text", text: "Running the test suite now; I will fix failures as they show up. ".repeat(4) },
      { type: "toolCall", id: "toolu_01BenchCallAbcdefghijklm", name: "bash", arguments: { command: "cargo test -p pi-session-core", timeout: 120 } },
    ],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-opus-4-1",
    usage: {
      input: 81234,
      output: 412,
      cacheRead: 80011,
      cacheWrite: 1200,
      totalTokens: 161657,
      cost: { input: 0.243702, output: 0.00618, cacheRead: 0.024003, cacheWrite: 0, total: 0.273885 },
    },
    stopReason: "toolUse",
    timestamp: Date.now(),
  });
  const TOOL_OUTPUT = Array.from(
    { length: 60 },
    (_, i) => `test session::store::tests::case_${i} ... ${i % 17 === 0 ? "FAILED" : "ok"} (${(i * 0.37).toFixed(2)}s)`,
  ).join("\n");
  const toolResultMsg = () => ({
    role: "toolResult",
    toolCallId: "toolu_01BenchCallAbcdefghijklm",
    toolName: "bash",
    content: [{ type: "text", text: TOOL_OUTPUT }],
    isError: false,
    timestamp: Date.now(),
  });

  /** Fresh manager on a fresh copy of the 3,000-turn file (for appends). */
  function openCopy(impl) {
    const file = path.join(impl.tmp, `append-${impl.copies++}.jsonl`);
    fs.copyFileSync(data.bigFile, file);
    return { file, sm: impl.SM.open(file) };
  }
  const dropCopy = (st) => fs.rmSync(st.file, { force: true });

  const OPS = [
    {
      key: "open",
      label: "open (3,000-turn file)",
      run: (impl) => impl.SM.open(impl.bigCopy),
    },
    { key: "buildSessionContext", label: "buildSessionContext", setup: (impl) => impl.readonly(), run: (_, sm) => sm.buildSessionContext() },
    {
      key: "getBranch+getEntries",
      label: "getBranch + getEntries",
      setup: (impl) => impl.readonly(),
      run: (_, sm) => {
        sm.getBranch();
        return sm.getEntries();
      },
    },
    { key: "getTree", label: "getTree", setup: (impl) => impl.readonly(), run: (_, sm) => sm.getTree() },
    { key: "getLeafEntry", label: "getLeafEntry", setup: (impl) => impl.readonly(), run: (_, sm) => sm.getLeafEntry() },
    {
      key: "getEntry",
      label: "getEntry",
      setup: (impl) => ({ sm: impl.readonly(), i: 0 }),
      run: (_, st) => st.sm.getEntry(sampleIds[st.i++ & 1023]),
    },
    {
      // pi's footer, on every frame (the reference walks the session back to its latest
      // session_info record, the whole session when there is none).
      key: "getSessionName",
      label: "getSessionName",
      setup: (impl) => impl.readonly(),
      run: (_, sm) => sm.getSessionName(),
    },
    {
      // What a UI asks per tree node or per render: one label and the session's facts.
      key: "getters",
      label: "getLabel + getHeader + getSessionFile + getEntryCount",
      setup: (impl) => ({ sm: impl.readonly(), i: 0 }),
      // (All four answers feed the result, so that none can be dropped as unused.)
      run: (_, st) => {
        const label = st.sm.getLabel(sampleIds[st.i++ & 1023]);
        const header = st.sm.getHeader();
        const file = st.sm.getSessionFile();
        return (label === undefined) + (header === null) + (file === undefined) + st.sm.getEntryCount();
      },
    },
    {
      // pi, at each turn boundary an extension listens to: a manager of the header and the
      // branch, a draft appended, its projection.
      key: "preview",
      label: "turn-boundary preview (inMemory of the branch)",
      setup: (impl) => impl.readonly(),
      run: (impl, sm) => {
        const preview = impl.SM.inMemory(BENCH_CWD, undefined, [sm.getHeader(), ...sm.getBranch()]);
        preview.appendCustomMessageEntry("bench", "a draft", true);
        return preview.buildSessionProjection();
      },
    },
    {
      key: "appendMessage",
      label: "appendMessage (persisted)",
      setup: (impl) => openCopy(impl),
      run: (_, st) => st.sm.appendMessage(userMsg()),
      teardown: dropCopy,
    },
    {
      key: "agentTurn",
      label: "agent turn (3 appends + context)",
      setup: (impl) => openCopy(impl),
      run: (_, st) => {
        st.sm.appendMessage(userMsg());
        st.sm.appendMessage(assistantMsg());
        st.sm.appendMessage(toolResultMsg());
        return st.sm.buildSessionContext();
      },
      teardown: dropCopy,
    },
    {
      // An SDK user's session that is never written (`--no-session`, tests, evals): made, two
      // turns appended, its context built.
      key: "inMemoryTurns",
      label: "inMemory: new, 2 turns (6 appends), context",
      run: (impl) => {
        const sm = impl.SM.inMemory(BENCH_CWD);
        for (let turn = 0; turn < 2; turn++) {
          sm.appendMessage(userMsg());
          sm.appendMessage(assistantMsg());
          sm.appendMessage(toolResultMsg());
        }
        return sm.buildSessionContext();
      },
    },
    {
      // Every manager made stays alive until the measurement ends: the cost of one more must not
      // grow with how many exist (ours tracks each for early release, see src/reclaim.rs).
      key: "inMemoryKept",
      label: "inMemory(), all kept alive",
      setup: () => [],
      run: (impl, kept) => kept.push(impl.SM.inMemory(BENCH_CWD)),
    },
    {
      key: "list",
      label: `list(cwd, dir) ${data.manyFiles} sessions (listing cache)`,
      async: true,
      run: (impl) => impl.SM.list(BENCH_CWD, data.manyDir),
    },
    {
      key: "listAll",
      label: `listAll(dir) ${data.manyFiles} sessions (listing cache)`,
      async: true,
      run: (impl) => impl.SM.listAll(data.manyDir),
    },
    {
      key: "forkFrom",
      label: "forkFrom (3,000-turn file)",
      setup: (impl) => {
        const dir = path.join(impl.tmp, "forks");
        fs.mkdirSync(dir, { recursive: true });
        return dir;
      },
      run: (impl, dir) => impl.SM.forkFrom(impl.bigCopy, `${BENCH_CWD}-fork`, dir),
      afterSample: (_, dir) => {
        for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f), { force: true });
      },
    },
  ];
  for (const op of OPS) op.batch = compileBatch(op.run, op.async);
  return OPS;
}

// Each operation gets its own batch loop, compiled separately (new Function => its own feedback
// vector), so the loop's call site stays monomorphic and nanosecond-scale operations are not
// dominated by megamorphic-call overhead. The source must differ per batch: V8 caches `new
// Function` by source text, and from the second batch of identical text on, batches share one
// function and its feedback, so every operation but the first would find the call site
// polymorphic.
// Every result is kept (the loop returns the last one, the caller stores it): a result nobody
// uses lets the JIT delete side-effect-free work, and it did, the reference's `Map.get` in
// getEntry and getLeafEntry measured ~1 ns because it was never run.
let batchCount = 0;
function compileBatch(run, isAsync) {
  const tag = `// ${import.meta.url} #${batchCount++}`;
  const body = isAsync
    ? `return async function batch(impl, state, k) { let r; for (let i = 0; i < k; i++) r = await run(impl, state); return r; }; ${tag}`
    : `return function batch(impl, state, k) { let r; for (let i = 0; i < k; i++) r = run(impl, state); return r; }; ${tag}`;
  return new Function("run", body)(run);
}

/** Where batch results go, so that they are used. */
export let sink;

/** Runs k calls of one operation; returns elapsed ms. */
export async function runBatch(op, impl, state, k) {
  if (op.async) {
    const start = now();
    sink = await op.batch(impl, state, k);
    return now() - start;
  }
  const start = now();
  sink = op.batch(impl, state, k);
  return now() - start;
}
