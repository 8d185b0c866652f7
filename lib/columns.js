"use strict";
// Entry objects built from columns (the core's `materialize::columns`) instead of parsed from
// their skeletons' JSON, one batch at a time.
//
// A batch is the JSON array of its values (each short value once), and per entry a *signature*
// and its slots: the signature is the skeleton's JSON with every string and number replaced by
// the number of its slot (the entry's `refs` give each slot's index into the values) and each
// lazy member by -1, given as `[number of slots, signature]`. One function per signature,
// generated once it has built a few entries, builds its entries as object literals, so all
// entries of a signature share V8's layout and no entry's JSON is parsed alone; a holder (the
// object with lazy members) is built member by member, each lazy member the accessor
// lib/lazy.js gives every holder, in its place. What a signature leaves as a value (arrays, odd
// objects, or the whole entry) comes out of the values as `JSON.parse` made it.
//
// Used where code can be generated (not under --disallow-code-generation-from-strings, where
// the skeletons' JSON is parsed as before). A signature met rarely, or whose function cannot be
// made, builds by a loop over its parsed signature.
const { accessorOf, CODEGEN, INSPECT, INSPECT_PROPERTY } = require("./lazy.js");

/** @typedef {(values: any[], refs: Uint32Array, at: number) => any} Make */
/** A signature's builder. Every builder has the same kinds of values in the same fields (`sig`
 * always an array, `make` always a plain function), so V8 keeps one layout for them all, which
 * the code compiled for the loop that uses them relies on.
 * @typedef {{ slots: number, whole: boolean, sig: [number, any], uses: number, ready: boolean, make: Make }} Builder */

/** The builder of each signature met (a few per session: one per kind of entry). @type {Map<string, Builder>} */
const builders = new Map();
/** Signatures past this many are not kept (each batch parses them again, and loops). */
const MAX_BUILDERS = 4096;
/** A signature's function is generated once it has built this many entries by the loop (making
 * one costs about what a few dozen entries cost to build by the loop). */
const GENERATE_AFTER = 16;

/** @param {string} sig @returns {Builder} */
function builderOf(sig) {
  let b = builders.get(sig);
  if (b === undefined) {
    const parsed = JSON.parse(sig);
    const [slots, tree] = parsed;
    b = { slots, whole: typeof tree === "number", sig: parsed, uses: 0, ready: false, make: interpreted(tree) };
    if (builders.size < MAX_BUILDERS) builders.set(sig, b);
  }
  return b;
}

/** Generates the function of each builder of `of` that has built enough entries by the loop. A
 * batch's entries are built first and this runs after them: kept out of the loop that builds
 * them, the code generator is no part of what V8 compiles for that loop.
 * @param {Builder[]} of */
function generateUsed(of) {
  for (const b of of) {
    if (!b.ready && b.uses >= GENERATE_AFTER) {
      b.ready = true;
      b.make = generated(b.sig[1], b.slots) ?? b.make;
    }
  }
}

/** Whether an object of a parsed signature is a holder (has lazy members). @param {any} node */
const isHolder = (node) => Object.keys(node).some((k) => node[k] === -1);

/** A JS property name for generated code. @param {string} k */
const name = (k) => JSON.stringify(k);

/** The generated builder of a parsed signature and its number of slots; null when code cannot
 * be made. @param {any} tree @param {number} slots */
function generated(tree, slots) {
  /** @type {string[]} */
  const holders = [];
  /** @type {object[]} */
  const accessors = [];
  /** @param {any} node @returns {string} */
  const expr = (node) => {
    if (typeof node === "number") return `V[R[a + ${node}]]`;
    if (node === null || typeof node !== "object") return String(node);
    if (!isHolder(node)) {
      // (A literal's `__proto__: v` would set the prototype; a computed name makes a member.)
      const members = Object.keys(node).map((k) => `${k === "__proto__" ? `[${name(k)}]` : name(k)}: ${expr(node[k])}`);
      return `{${members.join(", ")}}`;
    }
    // A holder's member names are plain (see the core's lazy module): assignments in order.
    const h = `h${holders.length}`;
    let code = `const ${h} = {};\n`;
    for (const k of Object.keys(node)) {
      if (node[k] === -1) code += `D(${h}, ${name(k)}, A[${accessors.push(accessorOf(k)) - 1}]);\n`;
      else code += `${h}[${name(k)}] = ${expr(node[k])};\n`;
    }
    holders.push(`${code}D(${h}, I, H);\n`);
    return h;
  };
  const top = expr(tree);
  try {
    const body = `"use strict";\nreturn function build(V, R, a) {\n${holders.join("")}return ${top};\n};`;
    // (Reflect.defineProperty: the same on a new object, and cheaper than Object's in V8.)
    const make = new Function("D", "A", "I", "H", body)(Reflect.defineProperty, accessors, INSPECT, INSPECT_PROPERTY);
    // One throwaway object with a string in every slot first: V8 then keeps each member as a
    // field of any value, where a field that had only held numbers would box every double (a
    // cost, a time) in a heap number of its own, made anew per entry. The entries point at the
    // numbers JSON.parse made instead (in old space for a batch of this size), so the first
    // getBranch() of a big session leaves the collector fewer young objects to copy.
    make(ANY_VALUE, new Uint32Array(slots), 0);
    return make;
  } catch {
    return null;
  }
}

/** The values of the throwaway build: every slot is this string. */
const ANY_VALUE = [""];

/** The builder of a parsed signature as a loop over it. @param {any} tree */
function interpreted(tree) {
  /** @param {any} node @param {any[]} V @param {Uint32Array} R @param {number} a @returns {any} */
  const build = (node, V, R, a) => {
    if (typeof node === "number") return V[R[a + node]];
    if (node === null || typeof node !== "object") return node;
    /** @type {Record<string, unknown>} */
    const o = {};
    let holder = false;
    for (const k of Object.keys(node)) {
      if (node[k] === -1) holder = Reflect.defineProperty(o, k, accessorOf(k));
      else if (k === "__proto__") Reflect.defineProperty(o, k, { value: build(node[k], V, R, a), writable: true, enumerable: true, configurable: true });
      else o[k] = build(node[k], V, R, a);
    }
    if (holder) Reflect.defineProperty(o, INSPECT, INSPECT_PROPERTY);
    return o;
  };
  // (A function, not an arrow: the generated function replaces it in the same field.)
  return function interpretedBuild(/** @type {any[]} */ V, /** @type {Uint32Array} */ R, /** @type {number} */ a) {
    return build(tree, V, R, a);
  };
}

/**
 * The entries of a column batch: `values` (its parsed values), `refs` and `sigs` as the core
 * gives them. `whole` lists the entries that are one of the values as parsed (their lazy members,
 * if any, still the skeleton's placeholders: adopted as parsed skeletons are).
 * @param {any[]} values @param {Uint32Array} refs @param {string[]} sigs
 * @returns {{ items: any[], whole: number[] }}
 */
function buildBatch(values, refs, sigs) {
  /** @type {Builder[]} */
  const of = [];
  for (let i = 0; i < sigs.length; i++) of.push(builderOf(sigs[i]));
  /** @type {any[]} */
  const items = [];
  /** @type {number[]} */
  const whole = [];
  buildItems(values, refs, of, items, whole);
  generateUsed(of);
  return { items, whole };
}

/** buildBatch's loop: each entry by its signature's builder, in order. Only this runs per entry
 * (V8 compiles it for a big batch; the rest of a batch's work stays out of what it compiles).
 * @param {any[]} values @param {Uint32Array} refs @param {Builder[]} of @param {any[]} items
 * @param {number[]} whole */
function buildItems(values, refs, of, items, whole) {
  const end = refs.length;
  for (let at = 0; at < end; ) {
    const b = of[refs[at]];
    if (b.whole) whole.push(items.length);
    items.push(b.make(values, refs, at + 1));
    b.uses++;
    at += 1 + b.slots;
  }
}

module.exports = { CODEGEN, buildBatch, builderOf, generated, interpreted };
