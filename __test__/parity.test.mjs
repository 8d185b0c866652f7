// Parity suite: seeded random operation sequences run on the reference SessionManager
// (@earendil-works/pi-coding-agent 1.6.0) and on the implementation under test, comparing every
// return value, every getter after every step, and the normalized bytes of every file written.
//
//   node --test __test__/parity.test.mjs                         reference vs this package
//   PARITY_IMPL=reference node --test __test__/parity.test.mjs   reference vs reference (harness check)
//
// Environment:
//   PARITY_SEED   seed of the first sequence (sequence i uses PARITY_SEED + i); default 20261129
//   PARITY_RUNS   number of sequences; default 200
//   PARITY_STEPS  operations per sequence after the start operation; default 25
//   PARITY_IMPL   "reference" to run the reference on both sides; default: this package (index.js)
//
// A failing sequence reports its seed, the failing step, the op log and a replay command; its
// temp directories are kept for inspection. See parity/ops.mjs for what is generated and what is
// excluded on purpose (our documented deviations, docs/behaviour.md, "Differences from the reference, on purpose").

import { after, describe, test } from "node:test";

import { loadOurs, loadReference } from "./helpers/target.mjs";
import { removalsDone, runSequence } from "./parity/runner.mjs";

const envInt = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${raw}`);
  return n;
};

const SEED = envInt("PARITY_SEED", 20261129);
const RUNS = envInt("PARITY_RUNS", 200);
const STEPS = envInt("PARITY_STEPS", 25);
const IMPL = process.env.PARITY_IMPL === "reference" ? "reference" : "ours";

const reference = await loadReference();
let impl;
let loadError;
if (IMPL === "reference") {
  impl = reference;
} else {
  try {
    impl = loadOurs();
  } catch (e) {
    loadError = e;
  }
}

after(removalsDone);

describe(`parity: reference vs ${IMPL} (seed ${SEED}, ${RUNS} sequences x ${STEPS} steps)`, () => {
  if (loadError) {
    test("the implementation under test loads", () => {
      throw new Error(`could not load the implementation (index.js): ${loadError?.stack ?? loadError}`);
    });
    return;
  }
  for (let i = 0; i < RUNS; i++) {
    const seed = (SEED + i) >>> 0;
    test(`sequence seed=${seed}`, async () => {
      await runSequence({ seed, steps: STEPS, modA: reference, modB: impl, implName: IMPL });
    });
  }
});
