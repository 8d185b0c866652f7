// Every fixture under fixtures/ opened by this package gives what the reference gave
// (<name>.expect.json, generated from the reference by fixtures/gen-expectations.mjs), except for
// the aspects the expectation lists under `oursDiffers` (our documented decisions, docs/behaviour.md, "Differences from the reference, on purpose"),
// which are checked here against what the decision says instead.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { ROOT } from "./helpers/target.mjs";

const FIXTURES = path.join(ROOT, "fixtures");
const GEN = path.join(FIXTURES, "gen-expectations.mjs");

function list(dir, rel = "") {
  const out = [];
  for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    if (fs.statSync(path.join(dir, r)).isDirectory()) out.push(...list(dir, r));
    else if (name.endsWith(".jsonl")) out.push(r);
  }
  return out;
}

function ours(rel) {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "pi-fixture-cwd-"));
  const run = spawnSync(process.execPath, [GEN, "--one", rel], {
    cwd,
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, FIXTURE_IMPL: "ours" },
  });
  fs.rmSync(cwd, { recursive: true, force: true });
  assert.equal(run.status, 0, `fixture run failed or hung: ${run.stderr || run.error}`);
  return JSON.parse(run.stdout);
}

function drop(obj, keys) {
  for (const k of keys) {
    const parts = k.split(".");
    let o = obj;
    for (const p of parts.slice(0, -1)) o = o?.[p];
    if (o) delete o[parts.at(-1)];
  }
}

for (const rel of list(FIXTURES)) {
  const expectFile = path.join(FIXTURES, rel.replace(/\.jsonl$/, ".expect.json"));
  if (!fs.existsSync(expectFile)) continue;
  test(`fixture ${rel} opens as with the reference`, () => {
    const expected = JSON.parse(fs.readFileSync(expectFile, "utf8"));
    const actual = ours(rel);
    const notes = (expected.oursDiffers ?? []).join("\n");
    for (const o of [expected, actual]) drop(o, ["generatedBy", "oursDiffers"]);
    if (notes.includes("leaves a backup")) {
      // Decision: a migration rewrite keeps the original bytes as <file>.bak.
      assert.deepEqual(actual.file.otherFiles, [`${path.basename(rel)}.bak`]);
      drop(expected, ["file.otherFiles"]);
      drop(actual, ["file.otherFiles"]);
    }
    if (notes.includes("written back at their original position") || notes.includes("invalid UTF-8")) {
      // Decision: lines that do not parse (and their bytes) survive the rewrite.
      const original = fs.readFileSync(path.join(FIXTURES, rel), "utf8");
      const kept = original.split("\n").filter((l) => l.trim() && !isJson(l));
      for (const line of kept) assert.ok(actual.file.afterText.includes(line), `kept: ${line}`);
      drop(expected, ["file.afterText", "file.bytesAfter"]);
      drop(actual, ["file.afterText", "file.bytesAfter"]);
    }
    if (notes.includes("retainedTail")) {
      // Decision: retainedTail is a self-contained checkpoint (checked in behavior-decisions).
      drop(expected, ["context", "projection", "contextEntryIds"]);
      drop(actual, ["context", "projection", "contextEntryIds"]);
    }
    if (expected.oursReads) {
      // Decision: an entry glued after a torn record is read; ours reads what the reference reads
      // in the file without the torn bytes, as the expectation recorded it.
      const aspects = Object.keys(expected.oursReads);
      for (const k of aspects) assert.deepEqual(actual[k], expected.oursReads[k], `${rel}: ${k}`);
      drop(expected, ["oursReads", ...aspects]);
      drop(actual, aspects);
    }
    if (rel.startsWith("cycles/")) {
      // Decision: cycle entries become roots; the reference's tree leaves them out (or hangs).
      assert.ok(Array.isArray(actual.tree), "getTree terminates");
      drop(expected, ["tree"]);
      drop(actual, ["tree"]);
    }
    assert.deepEqual(actual, expected);
  });
}

function isJson(line) {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
