#!/usr/bin/env node
// Sync benchmark: `npm run bench:sync` (= node bench/sync.mjs). Issue 25 asks that a sync of
// 3,000 sessions of which 30 changed cost time in proportion to the 30, not the 3,000.
//
// One machine (a temp agent dir) with SYNC_SESSIONS sessions of SYNC_ENTRIES entries each, and a
// bare git repository as the remote, both made fresh in the OS temp dir and removed after.
// Printed: the first sync (every session read and pushed), a resync after SYNC_CHANGED sessions
// each gained an entry, a resync with nothing changed, a resync after SYNC_CHANGED other sessions
// were deleted (their deletion carried to the remote), and the ratio first / changed-resync; and a
// second machine's first sync (every session pulled) and its resync after SYNC_CHANGED sessions
// changed again on the first (each of its files replaced). The
// resync reads only the changed files (the sync state records size and mtime of each file); what
// remains per unchanged session is one stat on each side, and git's own index check.
//
// Environment: SYNC_SESSIONS=3000, SYNC_CHANGED=30, SYNC_ENTRIES=20, SYNC_FOLDER=1 (a shared
// folder instead of git).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { syncSessions } = require("../index.js");

const N = Number(process.env.SYNC_SESSIONS ?? 3000);
const CHANGED = Number(process.env.SYNC_CHANGED ?? 30);
const ENTRIES = Number(process.env.SYNC_ENTRIES ?? 20);
const FOLDER = process.env.SYNC_FOLDER === "1";

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-bench-sync-")));
const agentDir = path.join(root, "agent");
const project = path.join(root, "src", "app");
const sessionDir = path.join(agentDir, "sessions", `--${project.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
fs.mkdirSync(sessionDir, { recursive: true });
fs.mkdirSync(project, { recursive: true });

const t0 = Date.UTC(2026, 11, 3, 10, 0, 0);
function entry(id, parentId, i, text) {
  const role = i % 2 ? "assistant" : "user";
  const message =
    role === "user"
      ? { role, content: text, timestamp: t0 + i }
      : { role, content: [{ type: "text", text }], provider: "x", model: "y", usage: { input: 1, output: 1 }, timestamp: t0 + i };
  return JSON.stringify({ type: "message", id, parentId, timestamp: new Date(t0 + i).toISOString(), message });
}

const files = [];
for (let s = 0; s < N; s++) {
  const id = `0190${String(s).padStart(4, "0")}-0000-7000-8000-000000000000`;
  const ts = new Date(t0 + s * 1000).toISOString();
  const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: ts, cwd: project })];
  let parent = null;
  for (let i = 0; i < ENTRIES; i++) {
    const eid = `${s.toString(16).padStart(4, "0")}${i.toString(16).padStart(4, "0")}`;
    lines.push(entry(eid, parent, i, `message ${i} of session ${s}: ${"lorem ipsum ".repeat(20)}`));
    parent = eid;
  }
  const file = path.join(sessionDir, `${ts.replace(/[:.]/g, "-")}_${id}.jsonl`);
  fs.writeFileSync(file, `${lines.join("\n")}\n`);
  files.push({ file, parent, s });
}

let remote;
if (FOLDER) {
  remote = path.join(root, "shared");
  fs.mkdirSync(remote);
} else {
  remote = path.join(root, "remote.git");
  execFileSync("git", ["init", "-q", "--bare", remote]);
}

// The other machine: an agent dir of its own, same project path.
const otherAgentDir = path.join(root, "other-agent");

function timed(label, dir = agentDir) {
  const start = process.hrtime.bigint();
  const r = syncSessions(remote, { agentDir: dir, folder: FOLDER });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(
    `${label.padEnd(40)} ${ms.toFixed(0).padStart(7)} ms   pushed ${r.pushed}, pulled ${r.pulled}, merged ${r.merged}, deleted ${r.deleted.length}, unchanged ${r.unchanged}`,
  );
  return ms;
}

try {
  console.log(`sync bench: ${N} sessions of ${ENTRIES} entries, ${CHANGED} changed, remote ${FOLDER ? "folder" : "bare git repo"}`);
  const first = timed(`first sync (${N} new)`);
  const step = Math.max(1, Math.floor(N / CHANGED));
  for (let k = 0; k < CHANGED; k++) {
    const f = files[(k * step) % N];
    fs.appendFileSync(f.file, `${entry(`c${String(k).padStart(7, "0")}`, f.parent, ENTRIES, "one more turn")}\n`);
  }
  const changed = timed(`resync (${CHANGED} changed)`);
  const idle = timed("resync (nothing changed)");
  // The other machine pulls what changed: each of its files is replaced whole (a temp file
  // renamed over it) and watched for what a writer that had it open appends meanwhile.
  const pulledFirst = timed(`other machine: first sync (${N} pulled)`, otherAgentDir);
  const otherIdle = timed("other machine: resync (nothing new)", otherAgentDir);
  for (let k = 0; k < CHANGED; k++) {
    const f = files[(k * step) % N];
    fs.appendFileSync(f.file, `${entry(`d${String(k).padStart(7, "0")}`, `c${String(k).padStart(7, "0")}`, ENTRIES + 1, "and one more")}\n`);
  }
  timed(`resync (${CHANGED} changed again)`);
  const pulled = timed(`other machine: resync (${CHANGED} pulled)`, otherAgentDir);
  console.log(`ratio first / ${CHANGED}-changed resync: ${(first / changed).toFixed(1)}x (sessions: ${(N / CHANGED).toFixed(0)}x)`);
  console.log(`${CHANGED}-changed resync / idle resync: ${(changed / idle).toFixed(2)}x`);
  // The fixed part (git's processes, one stat per file) is the idle resync; what is left is the
  // cost of the changed sessions, to be compared with a session's share of the first sync.
  console.log(
    `per changed session: ${((changed - idle) / CHANGED).toFixed(2)} ms; per session of the first sync: ${(first / N).toFixed(2)} ms; per unchanged session (idle / ${N}): ${(idle / N).toFixed(3)} ms`,
  );
  console.log(
    `per pulled session: ${((pulled - otherIdle) / CHANGED).toFixed(2)} ms (first sync of the other machine: ${(pulledFirst / N).toFixed(2)} ms per session)`,
  );
  for (let k = 0; k < CHANGED; k++) fs.unlinkSync(files[(k * step + 1) % N].file);
  const deleted = timed(`resync (${CHANGED} deleted)`);
  console.log(`per deleted session: ${((deleted - idle) / CHANGED).toFixed(2)} ms`);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
