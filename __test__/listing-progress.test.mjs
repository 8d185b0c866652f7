// Progress of SessionManager.list / listAll above 200 files: our product decision (lib/listing.js,
// PartialPacer). The reference hands the partial list to onProgress at fixed counts (the first
// file, every 10th / 100th, the last); ours keeps those counts up to 200 files, and above hands
// it over at the first and the last file and otherwise at most once per 100 ms (longer when the
// consumer takes long over it). Every file still gets its own call, and every partial list is
// complete so far and sorted. These tests state that contract, so they run against ours only.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";

import { header, iso, T0, tempDir, useAgentDir, writeSession, setMtime } from "./helpers/fixtures.mjs";
import { loadOurs } from "./helpers/target.mjs";

const { SessionManager } = loadOurs();

/** `count` sessions in dir, file i with header time T0 + i s; every `otherEvery`-th has cwd /other. */
function writeMany(dir, count, { cwd = "/proj", otherEvery = 0, start = 0 } = {}) {
  const files = [];
  for (let i = start; i < start + count; i++) {
    const c = otherEvery && i % otherEvery === 0 ? "/other" : cwd;
    const f = writeSession(dir, `f${String(i).padStart(4, "0")}.jsonl`, header({ id: `s${i}`, cwd: c, timestamp: iso(T0 + i * 1000) }));
    setMtime(f, T0 + i * 1000);
    files.push(f);
  }
  return files;
}

/** Busy for `ms`: a consumer that renders synchronously. */
function busy(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** A progress callback recording (loaded, total, partial, start time), optionally slow. */
function recorder({ perCallMs = 0, perPartialMs = 0 } = {}) {
  const calls = [];
  const fn = (loaded, total, partial) => {
    calls.push({ loaded, total, partial, at: performance.now() });
    if (perCallMs) busy(perCallMs);
    if (partial && perPartialMs) busy(perPartialMs);
  };
  return { fn, calls, partials: () => calls.filter((c) => c.partial !== undefined) };
}

const times = (list) => list.map((s) => s.modified.getTime());
const sortedDesc = (list) => times(list).every((t, i, a) => i === 0 || a[i - 1] >= t);

describe("progress of large listings", () => {
  test("a listing of more than 200 files still reports every file once, with the unfiltered total", async (t) => {
    useAgentDir(t);
    const dir = tempDir(t);
    writeMany(dir, 450, { otherEvery: 7 });
    const rec = recorder();
    const result = await SessionManager.list("/proj", dir, rec.fn);
    assert.deepEqual(
      rec.calls.map((c) => c.loaded),
      Array.from({ length: 450 }, (_, i) => i + 1),
    );
    assert.ok(rec.calls.every((c) => c.total === 450));
    assert.equal(result.length, 450 - Math.ceil(450 / 7));
  });

  test("the first and the last progress call carry the partial list, and the last one equals the result", async (t) => {
    useAgentDir(t);
    const dir = tempDir(t);
    writeMany(dir, 300);
    const rec = recorder();
    const result = await SessionManager.list("/proj", dir, rec.fn);
    assert.equal(rec.calls[0].partial.length, 1);
    assert.deepEqual(rec.calls.at(-1).partial, result);
    assert.notEqual(rec.calls.at(-1).partial, result, "the last partial list is a copy");
  });

  test("every partial list is complete so far and sorted newest first", async (t) => {
    useAgentDir(t);
    const dir = tempDir(t);
    writeMany(dir, 400);
    // Slow enough per file that the listing spans several hand-overs.
    const rec = recorder({ perCallMs: 1 });
    await SessionManager.list("/proj", dir, rec.fn);
    const partials = rec.partials();
    assert.ok(partials.length >= 3, `${partials.length} partial lists`);
    for (const c of partials) {
      assert.equal(c.partial.length, c.loaded, `the partial list at ${c.loaded} holds every session loaded so far`);
      assert.ok(sortedDesc(c.partial), `the partial list at ${c.loaded} is sorted`);
    }
  });

  test("cwd-filtered partial lists only grow, each holding the previous one's sessions", async (t) => {
    useAgentDir(t);
    const dir = tempDir(t);
    writeMany(dir, 400, { otherEvery: 3 });
    const rec = recorder({ perCallMs: 1 });
    const result = await SessionManager.list("/proj", dir, rec.fn);
    const partials = rec.partials();
    assert.ok(partials.length >= 3, `${partials.length} partial lists`);
    let previous = new Set();
    for (const c of partials) {
      const ids = new Set(c.partial.map((s) => s.id));
      for (const id of previous) assert.ok(ids.has(id), `${id} is still in the partial list at ${c.loaded}`);
      assert.ok(c.partial.every((s) => s.cwd === "/proj"));
      assert.ok(sortedDesc(c.partial));
      previous = ids;
    }
    assert.deepEqual(partials.at(-1).partial, result);
  });

  test("partial lists are handed over at least 100 ms apart, apart from the last one", async (t) => {
    useAgentDir(t);
    const dir = tempDir(t);
    writeMany(dir, 450);
    const rec = recorder({ perCallMs: 1 });
    await SessionManager.list("/proj", dir, rec.fn);
    const partials = rec.partials().slice(0, -1);
    assert.ok(partials.length >= 2, `${partials.length} partial lists before the last`);
    for (let i = 1; i < partials.length; i++) {
      const gap = partials[i].at - partials[i - 1].at;
      assert.ok(gap >= 100, `partial lists at ${partials[i - 1].loaded} and ${partials[i].loaded} came ${gap.toFixed(1)} ms apart`);
    }
  });

  test("a consumer that takes long over a partial list gets the next one no sooner than four times that later", async (t) => {
    useAgentDir(t);
    const dir = tempDir(t);
    writeMany(dir, 600);
    const rec = recorder({ perCallMs: 1, perPartialMs: 60 });
    await SessionManager.list("/proj", dir, rec.fn);
    const partials = rec.partials().slice(0, -1);
    assert.ok(partials.length >= 2, `${partials.length} partial lists before the last`);
    for (let i = 1; i < partials.length; i++) {
      // The consumer spent >= 60 ms, then >= 4 × 60 ms had to pass.
      const gap = partials[i].at - partials[i - 1].at;
      assert.ok(gap >= 300, `partial lists at ${partials[i - 1].loaded} and ${partials[i].loaded} came ${gap.toFixed(1)} ms apart`);
    }
  });

  test("a listing of 200 files keeps the reference's counts: the first, every tenth and the last file", async (t) => {
    useAgentDir(t);
    const dir = tempDir(t);
    writeMany(dir, 200);
    const rec = recorder();
    await SessionManager.list("/proj", dir, rec.fn);
    assert.deepEqual(
      rec.partials().map((c) => c.loaded),
      [1, ...Array.from({ length: 20 }, (_, i) => (i + 1) * 10)],
    );
  });

  test("listAll over 200 files keeps the reference's counts, over 201 it paces", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    writeMany(path.join(root, "--a--"), 100);
    writeMany(path.join(root, "--b--"), 100, { start: 100 });
    const exact = recorder();
    await SessionManager.listAll(exact.fn);
    assert.deepEqual(
      exact.partials().map((c) => c.loaded),
      [1, 100, 200],
    );
    writeMany(path.join(root, "--c--"), 1, { start: 200 });
    const paced = recorder();
    const result = await SessionManager.listAll(paced.fn);
    const partials = paced.partials();
    assert.equal(paced.calls.length, 201);
    assert.equal(partials[0].loaded, 1);
    assert.deepEqual(partials[0].partial.map((s) => s.id), ["s200"], "the most recent candidate comes first");
    assert.deepEqual(partials.at(-1).partial, result);
    for (const c of partials) assert.equal(c.partial.length, c.loaded);
  });

  test("listAll over many projects paces its partial lists at least 100 ms apart, apart from the last one", async (t) => {
    const agent = useAgentDir(t);
    const root = path.join(agent, "sessions");
    for (let d = 0; d < 6; d++) writeMany(path.join(root, `--p${d}--`), 80, { start: d * 80 });
    const rec = recorder({ perCallMs: 1 });
    const result = await SessionManager.listAll(rec.fn);
    assert.equal(rec.calls.length, 480);
    const partials = rec.partials();
    assert.ok(partials.length >= 3, `${partials.length} partial lists`);
    for (let i = 1; i < partials.length - 1; i++) {
      assert.ok(partials[i].at - partials[i - 1].at >= 100);
    }
    for (const c of partials) {
      assert.equal(c.partial.length, c.loaded);
      assert.ok(sortedDesc(c.partial));
    }
    assert.deepEqual(partials.at(-1).partial, result);
  });
});
