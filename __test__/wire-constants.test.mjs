// The constants of the wire formats live in the binding alone (src/wire.rs, src/cut.rs,
// src/listing.rs, src/store.rs) and the JS shell reads them from it (lib/wire.js). These tests
// fail when one is spelled again on the JS side, when the binding defines one twice, or when a
// layout's offsets stop covering its slots exactly once.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

import { ROOT } from "./helpers/target.mjs";

const require = createRequire(import.meta.url);
const native = require(path.join(ROOT, "native.js"));
const wire = require(path.join(ROOT, "lib", "wire.js"));

/** The binding's exported constants: upper-case names with a number or string value. */
const CONSTANTS = Object.entries(native).filter(([name, v]) => /^[A-Z][A-Z0-9_]*$/.test(name) && (typeof v === "number" || typeof v === "string"));

/** The JS shell's sources (what the package ships besides the addon). */
function jsSources() {
  const files = ["index.js", "native.js", "register.mjs"];
  for (const dir of ["lib", "launcher", "bin"]) {
    for (const name of fs.readdirSync(path.join(ROOT, dir))) if (/\.(c|m)?js$/.test(name)) files.push(path.join(dir, name));
  }
  return files.map((file) => ({ file, text: fs.readFileSync(path.join(ROOT, file), "utf8") }));
}

/** `.rs` files under `dir`, recursively. @param {string} dir @returns {string[]} */
function rustFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? rustFiles(p) : d.name.endsWith(".rs") ? [p] : [];
  });
}

test("the binding exports the wire constants the decoder needs", () => {
  const names = new Set(CONSTANTS.map(([name]) => name));
  for (const name of ["NONE", "NO_ID_KEY", "FLAG_SUPPRESSED", "FLAG_RETAINED_TAIL", "PAGE_OK", "PAGE_NOT_ON_BRANCH", "PAGE_PAST_ENTRY", "NODE_STRIDE", "ITEM_STRIDE", "PAGE_ITEM_STRIDE", "BATCH_VALUES", "SUMMARY_FIELDS"]) {
    assert.ok(names.has(name), `native.${name}`);
  }
  assert.equal(native.NONE, 0xffffffff, "NONE is u32::MAX, which no position reaches");
});

test("no constant of the binding is defined again in the JS shell", () => {
  const names = new Set(CONSTANTS.map(([name]) => name));
  const found = [];
  for (const { file, text } of jsSources()) {
    for (const m of text.matchAll(/\b(?:const|let|var)\s+([A-Z][A-Z0-9_]*)\s*=\s*([^;\n]*)/g)) {
      // `const X = native.X` reads it; any other definition of a binding's name spells it again.
      if (names.has(m[1]) && !/\bnative\b/.test(m[2])) found.push(`${file}: ${m[0]}`);
    }
  }
  assert.deepEqual(found, []);
});

test("the decoder defines no layout number of its own, only how much it asks for per call", () => {
  const text = fs.readFileSync(path.join(ROOT, "lib", "wire.js"), "utf8");
  const numeric = [...text.matchAll(/^const\s+([A-Z][A-Z0-9_]*)\s*=\s*[-(\d]/gm)].map((m) => m[1]);
  // BATCH_BYTES and CALL_BYTES are JS's own choice, sent to the core as arguments.
  assert.deepEqual(numeric.sort(), ["BATCH_BYTES", "CALL_BYTES"]);
});

test("the decoder's constants are the binding's values", () => {
  for (const name of ["NONE", "FLAG_SUPPRESSED", "FLAG_RETAINED_TAIL", "PAGE_OK", "PAGE_NOT_ON_BRANCH"]) {
    assert.equal(wire[name], native[name], name);
  }
  assert.equal(wire.keyOf(undefined), native.NO_ID_KEY, "undefined is keyed with the core's spelling");
  assert.equal(wire.valueOfKey(native.NO_ID_KEY), undefined);
});

test("each constant the binding exports is defined once in its sources", () => {
  const sources = rustFiles(path.join(ROOT, "src")).map((f) => fs.readFileSync(f, "utf8"));
  for (const [name] of CONSTANTS) {
    const defs = sources.reduce((n, text) => n + [...text.matchAll(new RegExp(`\\bconst\\s+${name}\\s*:`, "g"))].length, 0);
    assert.equal(defs, 1, `${name} is defined ${defs} times in src/`);
  }
});

test("each layout's offsets cover its slots exactly once", () => {
  const covers = (what, offsets, size) => assert.deepEqual([...offsets].sort((a, b) => a - b), Array.from({ length: size }, (_, i) => i), what);
  const n = native;
  covers("tree node", [n.NODE_ENTRY, n.NODE_LABEL, n.NODE_SORT_BY_DATE, n.NODE_CHILD_COUNT], n.NODE_STRIDE);
  covers("tree head", [n.TREE_ROOT_COUNT, n.TREE_ROOTS], 2);
  covers("plan head", [n.PLAN_THINKING, n.PLAN_MODEL, n.PLAN_COUNT], n.PLAN_ITEMS);
  covers("plan item", [n.ITEM_ENTRY, n.ITEM_EDIT, n.ITEM_FLAGS], n.ITEM_STRIDE);
  covers("page head", [n.PAGE_STATUS, n.PAGE_TOTAL, n.PAGE_AFTER_COMPACTION, n.PAGE_START, n.PAGE_COUNT, n.PAGE_LEAF, n.PAGE_LEAF_ITEMS], n.PAGE_ITEMS);
  covers("page item", [n.PAGE_ITEM_ENTRY, n.PAGE_ITEM_WITHIN], n.PAGE_ITEM_STRIDE);
  covers("batch", [n.BATCH_TEXT, n.BATCH_PLAN, n.BATCH_NAMES, n.BATCH_WIDE], n.BATCH_VALUES);
  assert.equal(new Set([n.PAGE_OK, n.PAGE_NOT_ON_BRANCH, n.PAGE_PAST_ENTRY]).size, 3, "page statuses differ");
  assert.equal(n.FLAG_SUPPRESSED & n.FLAG_RETAINED_TAIL, 0, "the item flags are separate bits");
});
