// Secrets in sessions from JavaScript: `scanSecrets` (the library form of `pi-sessions
// secrets`) returns masked findings only, and a session written by stock pi's SessionManager (the
// reference) and redacted by `pi-sessions redact --in-place` opens in stock pi to the same
// entries, tree and leaf, with only the secret bytes changed. Fake secrets are assembled at run
// time: no credential-shaped literal is in the repository.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { loadReference, ROOT } from "./helpers/target.mjs";
import { assistant, defaultSessionDirFor, rng, tempDir, toolResult, user } from "./helpers/fixtures.mjs";
import { scanSecrets, syncSessions } from "../index.mjs";

const Reference = (await loadReference()).SessionManager;
const BIN = path.join(ROOT, "bin", "pi-sessions.js");
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Fake keys drawn from a seeded generator; prefixes split so that no literal is key-shaped. */
export function fakeKeys(seed) {
  const next = rng(seed);
  const chars = (n, alphabet = ALNUM) => Array.from({ length: n }, () => alphabet[next(alphabet.length)]).join("");
  return {
    anthropic: ["sk", "ant", "api03", chars(93, ALNUM + "-_") + "AA"].join("-"),
    github: "gh" + "p_" + chars(36),
    aws: "AK" + "IA" + chars(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    password: chars(18),
  };
}

/** A session by stock pi holding keys in a prompt, a thinking block, a tool call and its output. */
function stockSession(dir, cwd, keys) {
  const sm = Reference.create(cwd, dir);
  sm.appendMessage(user(`deploy with ${keys.anthropic} please`));
  sm.appendMessage(
    assistant("running", {
      content: [
        { type: "thinking", thinking: `the token ${keys.github} is needed`, thinkingSignature: "c2lnbmVk" },
        { type: "toolCall", id: "call-1", name: "bash", arguments: { command: `curl -H 'Authorization: ${keys.github}'` } },
      ],
    }),
  );
  sm.appendMessage(toolResult(`{"url":"postgres://app:${keys.password}@db.internal/app","aws":"${keys.aws}"}`));
  const branchFrom = sm.getLeafId();
  sm.appendMessage(assistant("done"));
  sm.branch(branchFrom);
  sm.appendMessage(user("and the other way?"));
  sm.appendSessionInfo("secrets demo");
  return sm.getSessionFile();
}

function cli(agentDir, ...args) {
  return spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, PI_CODING_AGENT_DIR: agentDir },
    encoding: "utf8",
  });
}

test("scanSecrets reports masked findings with their place and entry, never the secret", (t) => {
  const root = tempDir(t);
  const agentDir = path.join(root, "agent");
  const keys = fakeKeys(0x5ec1);
  const file = stockSession(defaultSessionDirFor(agentDir, root), root, keys);
  const r = scanSecrets(file, { agentDir });
  assert.equal(r.scanned, 1);
  assert.equal(r.sessions.length, 1);
  const found = r.sessions[0].findings;
  const kinds = found.map((f) => `${f.kind}@${f.place}`);
  assert.deepEqual(kinds, [
    "anthropic-api-key@user",
    "github-token@thinking",
    "github-token@tool-args",
    "url-password@tool-output",
    "aws-access-key-id@tool-output",
  ]);
  const text = JSON.stringify(r);
  for (const k of Object.values(keys)) assert.ok(!text.includes(k), "never the secret whole");
  const bytes = fs.readFileSync(file);
  assert.equal(bytes.subarray(found[0].start, found[0].end).toString(), keys.anthropic);
  assert.equal(r.findings, 5);
  assert.deepEqual(scanSecrets({ all: true }, { agentDir }).sessions.map((s) => s.id), [r.sessions[0].id]);
});

test("scanSecrets leaves acknowledged findings out unless asked, and refuses a bad target", (t) => {
  const root = tempDir(t);
  const agentDir = path.join(root, "agent");
  const file = stockSession(defaultSessionDirFor(agentDir, root), root, fakeKeys(0x5ec2));
  const fp = scanSecrets(file, { agentDir }).sessions[0].findings[0].fingerprint;
  assert.equal(cli(agentDir, "secrets", "--ack", fp).status, 0);
  const r = scanSecrets([file], { agentDir });
  assert.equal(r.findings, 4);
  assert.equal(r.acknowledged, 1);
  assert.equal(scanSecrets([file], { agentDir, includeAcknowledged: true }).findings, 5);
  assert.throws(() => scanSecrets(42), { code: "INVALID_ARGUMENT" });
  assert.throws(() => scanSecrets({ all: "yes" }), { code: "INVALID_ARGUMENT" });
  const missing = scanSecrets(path.join(root, "nope.jsonl"), { agentDir });
  assert.match(missing.sessions[0].error, /ENOENT/);
});

test("a redacted session opens in stock pi to the same entries, tree and leaf, only the secret bytes changed", (t) => {
  const root = tempDir(t);
  const agentDir = path.join(root, "agent");
  const keys = fakeKeys(0x5ec3);
  const file = stockSession(defaultSessionDirFor(agentDir, root), root, keys);
  const before = fs.readFileSync(file);
  const findings = scanSecrets(file, { agentDir }).sessions[0].findings;
  const old = Reference.open(file);
  const r = cli(agentDir, "redact", file, "--in-place", "--json");
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).redacted.length, findings.length);
  const after = fs.readFileSync(file);
  // Byte for byte the same outside the secrets, each secret replaced by its marker.
  let at = 0;
  let o = 0;
  for (const f of findings) {
    const keep = f.start - at;
    assert.ok(after.subarray(o, o + keep).equals(before.subarray(at, f.start)));
    const marker = `[REDACTED:${f.kind}]`;
    assert.equal(after.subarray(o + keep, o + keep + marker.length).toString(), marker);
    o += keep + marker.length;
    at = f.end;
  }
  assert.ok(after.subarray(o).equals(before.subarray(at)));
  const now = Reference.open(file);
  const scrub = (v) => {
    let s = JSON.stringify(v);
    for (const k of Object.values(keys)) s = s.split(k).join("*");
    return s.replace(/\[REDACTED:[a-z-]+\]/g, "*");
  };
  assert.equal(scrub(now.getEntries()), scrub(old.getEntries()));
  assert.equal(now.getLeafId(), old.getLeafId());
  const shape = (nodes) => nodes.map((n) => ({ id: n.entry.id, children: shape(n.children) }));
  assert.deepEqual(shape(now.getTree()), shape(old.getTree()));
  const thinking = now.getEntries().find((e) => e.message?.role === "assistant").message.content[0];
  assert.equal(thinking.thinkingSignature, "c2lnbmVk", "signature fields untouched");
  assert.ok(!after.toString().includes(keys.github));
  assert.equal(fs.readFileSync(`${file}.bak`).toString(), before.toString());
});

test("syncSessions reports a session holding a credential, and refuse sends nothing", (t) => {
  const root = tempDir(t);
  const agentDir = path.join(root, "agent");
  stockSession(defaultSessionDirFor(agentDir, root), root, fakeKeys(0x5ec4));
  const remote = path.join(root, "remote.git");
  assert.equal(spawnSync("git", ["init", "-q", "--bare", remote]).status, 0);
  assert.throws(() => syncSessions(remote, { agentDir, secrets: "refuse" }), { code: "SYNC_SECRETS_FOUND" });
  assert.throws(() => syncSessions(remote, { agentDir, secrets: "maybe" }), { code: "INVALID_ARGUMENT" });
  const held = syncSessions(remote, { agentDir, secrets: "skip" });
  assert.equal(held.secretsPolicy, "skip");
  assert.equal(held.pushed, 0);
  assert.deepEqual(
    held.secrets.map((s) => [s.sent, s.first, s.kinds.includes("anthropic-api-key")]),
    [[false, true, true]],
  );
  const warned = syncSessions(remote, { agentDir });
  assert.equal(warned.secretsPolicy, "warn", "a local bare repository is the user's own");
  assert.equal(warned.pushed, 1);
});
