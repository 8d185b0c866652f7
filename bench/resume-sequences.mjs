// The pi agent's own SessionManager call sequences around a resume, as recorded from the real
// agent by bench/record-agent-calls.mjs (read its header for how): replayed by the `resume`
// section of `npm run bench:scale` (bench/scale.mjs, op `resume` of bench/scale-child.mjs).
//
// Recorded 2026-12-01T20:03:09.588Z from @earendil-works/pi-coding-agent 1.6.0 on Node v22.23.5:
//   node bench/record-agent-calls.mjs > sequences.json
// "sdk" sequences: createAgentSession of the SDK with the faux provider, in the recorder's process.
// "tui" sequences: the interactive TUI of the bundled CLI (`pi --session <file>`) driven in a
// detached tmux pane; its SessionManager statics traced by bench/resume-record-preload.mjs. The
// TUI's footer re-renders on every frame (getEntryCount, getSessionId, getLeafId, getCwd,
// getSessionName; getEntries when the entry count or leaf changed), so how many of those groups
// a phase has depends on how many frames the recording saw; they are kept as recorded.
//
// Each call is [call, count]: the method and the kinds of its arguments ("leaf" = the current leaf
// id, "message:<role>" = a message of that role, a number or boolean as passed), run `count`
// times in a row. The recorder's listing (stderr):
//   open (sdk): static open(string)
//   sdk-resume (sdk): buildSessionContext, getBranch ×2, getSessionId
//   turn (sdk): getBranch, appendMessage(message:user), buildSessionProjection, getSessionId,
//       appendMessage(message:assistant)
//   turn-tool (sdk): getBranch, appendMessage(message:user), buildSessionProjection, getSessionId,
//       appendMessage(message:assistant), appendMessage(message:toolResult), buildSessionProjection, getBranch,
//       buildSessionProjection, getSessionId, appendMessage(message:assistant)
//   compact (sdk): getBranch, getSessionId ×2, appendCompaction(string, leaf, 387, object, false, object),
//       getEntries, buildSessionProjection ×2, getSessionId
//   tui-resume (tui): static open(string, undefined), getSessionFile, getCwd ×3, getSessionFile, getCwd,
//       buildSessionContext ×2, getBranch ×2, getSessionId, getBranch, getCwd ×4, getSessionName,
//       buildContextEntries, getEntries, getEntryCount, getSessionId, getLeafId, getEntries,
//       buildSessionProjection, getBranch, getCwd, getSessionName, getEntryCount, getSessionId, getLeafId,
//       getCwd, getSessionName, getEntryCount, getSessionId, getLeafId, getCwd, getSessionName, getEntryCount,
//       getSessionId, getLeafId, getCwd, getSessionName
//   tui-tree (tui): getEntryCount, getSessionId, getLeafId, getCwd, getSessionName, getEntryCount, getSessionId,
//       getLeafId, getCwd, getSessionName, getEntryCount, getSessionId, getLeafId, getCwd, getSessionName,
//       getEntryCount, getSessionId, getLeafId, getCwd, getSessionName, getTree, getLeafId, getEntryCount,
//       getSessionId, getLeafId, getCwd, getSessionName, getEntryCount, getSessionId, getLeafId, getCwd,
//       getSessionName, getEntryCount, getSessionId, getLeafId, getCwd, getSessionName, getEntryCount,
//       getSessionId, getLeafId, getCwd, getSessionName
//   tui-turn (tui): getEntryCount, getSessionId, getLeafId, getCwd, getSessionName, getEntryCount, getSessionId,
//       getLeafId, getCwd, getSessionName, getEntryCount, getSessionId, getLeafId, getCwd, getSessionName,
//       getEntryCount, getSessionId, getLeafId, getCwd, getSessionName, getBranch, getSessionName,
//       appendMessage(message:user), buildSessionProjection, getSessionId, getSessionName,
//       appendMessage(message:assistant), getSessionName, getEntryCount, getSessionId, getLeafId, getEntries,
//       buildSessionProjection, getBranch, getCwd, getSessionName, getEntryCount, getSessionId, getLeafId,
//       getCwd, getSessionName
//   tui-compact (tui): getEntryCount, getSessionId, getLeafId, getCwd, getSessionName, getEntryCount,
//       getSessionId, getLeafId, getCwd, getSessionName, getEntryCount, getSessionId, getLeafId, getCwd,
//       getSessionName, getEntryCount, getSessionId, getLeafId, getCwd, getSessionName, getEntryCount,
//       getSessionId, getLeafId, getCwd, getSessionName, getEntryCount, getSessionId, getLeafId, getCwd,
//       getSessionName, getBranch, getSessionId ×2, appendCompaction(string, leaf, 1414, object, false, object),
//       getEntries, buildSessionProjection ×2, getSessionName, buildContextEntries, getEntryCount, getSessionId,
//       getLeafId, getEntries, buildSessionProjection, getBranch, getCwd, getSessionName, getEntryCount,
//       getSessionId, getLeafId, getCwd, getSessionName
export const RECORDED = { date: "2026-12-01T20:03:09.588Z", agent: "1.6.0", node: "v22.23.5" };

export const SEQUENCES = {
  "open": {
    source: "sdk",
    calls: [
      ["static open(string)", 1],
    ],
  },
  "sdk-resume": {
    source: "sdk",
    calls: [
      ["buildSessionContext", 1],
      ["getBranch", 2],
      ["getSessionId", 1],
    ],
  },
  "turn": {
    source: "sdk",
    calls: [
      ["getBranch", 1],
      ["appendMessage(message:user)", 1],
      ["buildSessionProjection", 1],
      ["getSessionId", 1],
      ["appendMessage(message:assistant)", 1],
    ],
  },
  "turn-tool": {
    source: "sdk",
    calls: [
      ["getBranch", 1],
      ["appendMessage(message:user)", 1],
      ["buildSessionProjection", 1],
      ["getSessionId", 1],
      ["appendMessage(message:assistant)", 1],
      ["appendMessage(message:toolResult)", 1],
      ["buildSessionProjection", 1],
      ["getBranch", 1],
      ["buildSessionProjection", 1],
      ["getSessionId", 1],
      ["appendMessage(message:assistant)", 1],
    ],
  },
  "compact": {
    source: "sdk",
    calls: [
      ["getBranch", 1],
      ["getSessionId", 2],
      ["appendCompaction(string, leaf, 387, object, false, object)", 1],
      ["getEntries", 1],
      ["buildSessionProjection", 2],
      ["getSessionId", 1],
    ],
  },
  "tui-resume": {
    source: "tui",
    calls: [
      ["static open(string, undefined)", 1],
      ["getSessionFile", 1],
      ["getCwd", 3],
      ["getSessionFile", 1],
      ["getCwd", 1],
      ["buildSessionContext", 2],
      ["getBranch", 2],
      ["getSessionId", 1],
      ["getBranch", 1],
      ["getCwd", 4],
      ["getSessionName", 1],
      ["buildContextEntries", 1],
      ["getEntries", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getEntries", 1],
      ["buildSessionProjection", 1],
      ["getBranch", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
    ],
  },
  "tui-tree": {
    source: "tui",
    calls: [
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getTree", 1],
      ["getLeafId", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
    ],
  },
  "tui-turn": {
    source: "tui",
    calls: [
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getBranch", 1],
      ["getSessionName", 1],
      ["appendMessage(message:user)", 1],
      ["buildSessionProjection", 1],
      ["getSessionId", 1],
      ["getSessionName", 1],
      ["appendMessage(message:assistant)", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getEntries", 1],
      ["buildSessionProjection", 1],
      ["getBranch", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
    ],
  },
  "tui-compact": {
    source: "tui",
    calls: [
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getBranch", 1],
      ["getSessionId", 2],
      ["appendCompaction(string, leaf, 1414, object, false, object)", 1],
      ["getEntries", 1],
      ["buildSessionProjection", 2],
      ["getSessionName", 1],
      ["buildContextEntries", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getEntries", 1],
      ["buildSessionProjection", 1],
      ["getBranch", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
      ["getEntryCount", 1],
      ["getSessionId", 1],
      ["getLeafId", 1],
      ["getCwd", 1],
      ["getSessionName", 1],
    ],
  },
};

/** A sequence (or several, concatenated) as a flat list of { method, args } steps. */
export function steps(...names) {
  const out = [];
  for (const name of names) {
    const seq = SEQUENCES[name];
    if (!seq) throw new Error(`unknown sequence ${name}`);
    for (const [call, count] of seq.calls) {
      const m = /^(static )?([A-Za-z]+)(?:\((.*)\))?$/.exec(call);
      if (!m) throw new Error(`bad call ${call}`);
      const step = { static: Boolean(m[1]), method: m[2], args: m[3] ? m[3].split(", ") : [] };
      for (let i = 0; i < count; i++) out.push(step);
    }
  }
  return out;
}

// ------------------------------------------------------------------------------ replay
const USER_TEXT = "Please look at the failing test in src/session/store.rs again and fix it.";
const usage = { input: 81234, output: 412, cacheRead: 80011, cacheWrite: 1200, totalTokens: 162857, cost: { input: 0.243702, output: 0.00618, cacheRead: 0.024003, cacheWrite: 0.0045, total: 0.278385 } };
/** A fresh message of `role` per call, shaped as the agent builds them. */
function message(role) {
  const timestamp = Date.now();
  switch (role) {
    case "user":
      return { role: "user", content: [{ type: "text", text: USER_TEXT }], timestamp };
    case "assistant":
      return {
        role: "assistant",
        content: [{ type: "text", text: "Fixed: the store now flushes before it renames the file. ".repeat(3) }],
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        usage,
        stopReason: "stop",
        timestamp,
        responseId: "msg_01ReplayReplayReplayRepl",
        durationMs: 4210,
      };
    case "toolResult":
      return { role: "toolResult", toolCallId: "toolu_01ReplayReplayReplayRe", toolName: "bash", content: [{ type: "text", text: "test result: ok. 12 passed; 0 failed\n".repeat(20) }], isError: false, timestamp };
    case "system":
      return { role: "system", content: "", timestamp };
    default:
      throw new Error(`no replay message for role ${role}`);
  }
}

/** What the agent does with a result, roughly: reads the fields it needs (footer, renderer, tree). */
function consume(method, r) {
  switch (method) {
    case "getEntries": {
      // The footer's usage totals (footer.js getSessionStats).
      let n = 0;
      for (const e of r) if (e.type === "message" && e.message.role === "assistant") n += e.message.usage?.output ?? 0;
      return n;
    }
    case "getBranch":
    case "buildContextEntries":
      return r.length;
    case "buildSessionContext":
    case "buildSessionProjection": {
      let n = 0;
      for (const m of r.messages) n += m.role.length;
      return n;
    }
    case "getTree": {
      // The tree selector flattens every node.
      let n = 0;
      const stack = [...r];
      while (stack.length) {
        const node = stack.pop();
        n++;
        for (const c of node.children) stack.push(c);
      }
      return n;
    }
    default:
      // Ids, paths, names, counts: present or not (a path differs between two copies of a file).
      return r == null ? 0 : 1;
  }
}

/**
 * Runs one recorded step. ctx: { SM, file, sm, firstKeptId, sink }. `static open` opens ctx.file
 * (as the agent does: no session dir); appendCompaction keeps from ctx.firstKeptId (what pi's
 * default keepRecentTokens would keep on this session) or, without one, from the leaf.
 */
export function replayStep(ctx, step) {
  if (step.static) {
    if (step.method !== "open") throw new Error(`no replay for static ${step.method}`);
    ctx.sm = ctx.SM.open(ctx.file);
    return;
  }
  const sm = ctx.sm;
  let r;
  if (step.method === "appendMessage") r = sm.appendMessage(message(step.args[0].slice("message:".length)));
  else if (step.method === "appendCompaction") {
    const firstKept = ctx.firstKeptId ?? sm.getLeafId();
    r = sm.appendCompaction("## Goal\nKeep the store fast.\n\n## Progress\n- fixed the flush order", firstKept, Number(step.args[2]) || 150000, { readFiles: ["src/session/store.rs"], modifiedFiles: ["src/session/store.rs"] }, false, usage);
  } else if (step.args.length) throw new Error(`no replay for ${step.method}(${step.args.join(", ")})`);
  else r = sm[step.method]();
  ctx.sink += consume(step.method, r);
}
