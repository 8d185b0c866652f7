"use strict";
// Entry objects whose big values are read when code first reads them (the core's `lazy` module
// says which members those are, and why).
//
// An entry made from a skeleton is the reference's plain object, member for member and in the
// same order, except that each lazy member of its *holder* (the entry, or its `message`) is an
// own enumerable accessor at its place. The first read fetches the value from the core, parses
// it, and turns the member into the data property the reference has (so a second read is a
// plain property read); an assignment or `delete` works on it as on any property. Everything
// that reads properties sees the reference's values: JSON.stringify (same bytes, same order),
// Object.keys, for…in, spread, Object.entries, structuredClone, assert.deepStrictEqual. For
// util.inspect/console.log, which would show an accessor as `[Getter/Setter]`, a holder has a
// non-enumerable own `Symbol.for("nodejs.util.inspect.custom")` method that reads every lazy
// member first and then removes itself.
//
// Holders are made by one constructor per shape (the holder's member names in order, with the
// lazy ones marked), so all holders of a shape share V8's fast layout; a member turned into
// data later keeps it. Each holder keeps, in private fields no reflection sees, the load it came
// from (the core's LazyValues, which reads values even after the manager moved on) and its
// record's position.
//
// Code that reads one member of many entries in order (JSON.stringify of a branch, an export,
// /tree's previews) reads ahead: when a read follows one of the same member and shape a little
// earlier in the file, the values of the next holders of that shape are fetched in one call,
// the window doubling up to READ_AHEAD_MAX holders (READ_AHEAD_BYTES of values).
const { parseHeld } = require("./wire.js");

const INSPECT = Symbol.for("nodejs.util.inspect.custom");

/** Whether functions can be generated from strings in this process (not under
 * --disallow-code-generation-from-strings): shapes' constructors and columns' builders are. */
const CODEGEN = (() => {
  try {
    return new Function("return 1")() === 1;
  } catch {
    return false;
  }
})();

/** The first read-ahead window (holders), and the largest. */
const READ_AHEAD_MIN = 16;
const READ_AHEAD_MAX = 1024;
/** At most about this many bytes of values are read ahead at once, in batches of this many. */
const READ_AHEAD_BYTES = 8 << 20;
const READ_AHEAD_BATCH = 512 << 10;
/** A read counts as "in order" when it is at most this many records after the one before. */
const READ_AHEAD_GAP = 64;

/** Lets `Holder`'s constructor add its private fields to an object made elsewhere. */
class Stamp {
  /** @param {object} o */
  constructor(o) {
    return o;
  }
}

/** Values of holders that cannot take a data property (frozen, sealed): holder -> key -> value.
 * (Rare: only a holder frozen before its lazy values were read.) @type {WeakMap<object, Record<string, unknown>>} */
const keptValues = new WeakMap();

/** The private fields of a holder: its shape (which knows its load) and its record's position.
 * Two fields, so stamping a holder costs V8 two steps; the shape is one object per load. */
class Holder extends Stamp {
  #shape;
  #pos;
  /** @param {object} o @param {number} pos @param {Shape} shape */
  constructor(o, pos, shape) {
    super(o);
    this.#shape = shape;
    this.#pos = pos;
  }
  /** @param {any} o */
  static is(o) {
    return #shape in o;
  }
  /** @param {any} o @returns {LazyLoad} */
  static load(o) {
    return o.#shape.load;
  }
  /** @param {any} o @returns {number} */
  static pos(o) {
    return o.#pos;
  }
  /** @param {any} o @returns {Shape} */
  static shape(o) {
    return o.#shape;
  }
  /** @param {any} o @returns {Record<string, unknown> | undefined} */
  static kept(o) {
    return keptValues.get(o);
  }
  /** Keeps `value` as the member `key` of a holder that cannot take it as a property.
   * @param {any} o @param {string} key @param {unknown} value */
  static keep(o, key, value) {
    let kept = keptValues.get(o);
    if (kept === undefined) keptValues.set(o, (kept = Object.create(null)));
    /** @type {Record<string, unknown>} */ (kept)[key] = value;
  }
}

/** @typedef {{ id: number, load: LazyLoad, holder: number, keys: string[], lazy: number[], lazyKeys: string[], make: Function }} Shape */

/** The accessor of each lazy member name, shared by every holder (one AccessorPair per name). */
const accessors = new Map();

/** @param {string} key */
function accessorOf(key) {
  let d = accessors.get(key);
  if (d === undefined) {
    d = {
      get() {
        if (this === peeked && key === peekedKey) {
          peeked = null;
          return peekAt(this, key);
        }
        return read(this, key);
      },
      set(/** @type {unknown} */ value) {
        write(this, key, value);
      },
      enumerable: true,
      configurable: true,
    };
    accessors.set(key, d);
  }
  return d;
}

/** The holder `obj` is, or inherits from (an `Object.create(holder)`); null if none. @param {any} obj */
function holderOf(obj) {
  for (let o = obj; o !== null && typeof o === "object"; o = Object.getPrototypeOf(o)) {
    if (Holder.is(o)) return o;
  }
  return null;
}

/** A read of the lazy member `key` through `obj`. @param {any} obj @param {string} key */
function read(obj, key) {
  const h = holderOf(obj);
  if (h === null) return undefined;
  const kept = Holder.kept(h);
  if (kept !== undefined && key in kept) return kept[key];
  return fetch(h, key);
}

/** An assignment to the lazy member `key` through `obj`: a data property from then on, as the
 * reference's member is (on `obj` itself when it merely inherits from a holder).
 * @param {any} obj @param {string} key @param {unknown} value */
function write(obj, key, value) {
  // The reference's member of a frozen object is read-only: the assignment fails, as it does in
  // strict code (every ES module), also through an object inheriting from it.
  const h = holderOf(obj);
  if (h !== null && Object.isFrozen(h)) throw readOnly(key);
  if (h === obj) settle(obj, key, value);
  else Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** The error the engine throws for an assignment to the read-only member `key` of a plain
 * object (its own words: V8's and JavaScriptCore's differ). @param {string} key */
function readOnly(key) {
  const o = Object.freeze({ [key]: null });
  try {
    /** @type {any} */ (o)[key] = 0; // throws: this module is strict
  } catch (e) {
    return e;
  }
  return new TypeError(`Cannot assign to read only property '${key}'`);
}

/** Makes `key` of holder `h` the data property `value`, or pins it if `h` cannot take it.
 * @param {any} h @param {string} key @param {unknown} value */
function settle(h, key, value) {
  try {
    Object.defineProperty(h, key, { value, writable: true, enumerable: true, configurable: true });
  } catch {
    Holder.keep(h, key, value);
  }
}

/** Is `key` of `h` still the lazy accessor, not read yet? @param {any} h @param {string} key */
function stillLazy(h, key) {
  const kept = Holder.kept(h);
  if (kept !== undefined && key in kept) return false;
  const d = Object.getOwnPropertyDescriptor(h, key);
  // (A data property, the common answer once read, needs no look at the accessors.)
  return d !== undefined && d.get !== undefined && d.get === accessorOf(key).get;
}

/** Reads the lazy member `key` of holder `h` from the core (with the holders after it of the same
 * shape when reads go in order), settles it, and returns its value. @param {any} h @param {string} key */
function fetch(h, key) {
  const load = Holder.load(h);
  const pos = Holder.pos(h);
  const shape = Holder.shape(h);
  const stream = load.streamOf(shape, key);
  const inOrder = pos > stream.last && pos - stream.last <= READ_AHEAD_GAP;
  stream.window = inOrder ? Math.min(stream.window * 2, READ_AHEAD_MAX) : READ_AHEAD_MIN / 2;
  stream.last = pos;
  if (inOrder) {
    const ahead = load.holdersAfter(pos, shape, key, stream.window);
    if (ahead.length > 1 && ahead.holders[0] === h) {
      const value = readAhead(load, ahead, key, stream);
      if (value !== NOT_READ) return value;
    }
  }
  const value = readOne(load, pos, key);
  settle(h, key, value);
  return value;
}

/** What readAhead gives when the first holder's value is to be read alone. */
const NOT_READ = Symbol("not read");

/** Reads the member `key` of the holders `ahead` in batches prepared on other threads while this
 * one parses the one before (they cover a prefix of the holders, the first being the one read),
 * settles them, and returns the first one's value; NOT_READ when that one is to be read alone
 * (see readOne): its batch did not parse, or a line failed its check before any batch came.
 * @param {LazyLoad} load @param {{ positions: Uint32Array, holders: any[] }} ahead @param {string} key
 * @param {{ last: number }} stream */
function readAhead(load, ahead, key, stream) {
  let done = 0;
  /** @type {unknown} */
  let first = NOT_READ;
  /** Holders (indexes into `ahead`) of batches that did not parse. @type {number[]} */
  const apart = [];
  const take = (/** @type {Uint32Array} */ of, /** @type {any} */ batch) => {
    stream.last = of[of.length - 1];
    let values;
    try {
      values = parseHeld(batch, load.file);
    } catch {
      // A value of it no longer parses (its line changed in the file): each is read alone
      // below, so that only the changed one fails, when it is read.
      for (let i = 0; i < of.length; i++) apart.push(done + i);
      done += of.length;
      return;
    }
    if (done === 0) first = values[0];
    for (let i = 0; i < values.length; i++) settle(ahead.holders[done + i], key, values[i]);
    done += values.length;
  };
  try {
    load.native.eachValues(ahead.positions, key, READ_AHEAD_BATCH, READ_AHEAD_BYTES, take);
  } catch (e) {
    // A line of a batch not handed over yet failed its check (changed or cut short in the
    // file): the holders from there on stay lazy, each to fail or read when it is read.
    if (done === 0 && /** @type {any} */ (e)?.code !== "SESSION_FILE_CHANGED") throw e;
  }
  for (const i of apart) {
    if (i === 0) continue;
    try {
      settle(ahead.holders[i], key, readOne(load, ahead.positions[i], key));
    } catch {
      // Left lazy: read, it throws again.
    }
  }
  return first;
}

/** The lazy member `key` of the record at `pos` of `load`, read alone. @param {LazyLoad} load @param {number} pos @param {string} key */
function readOne(load, pos, key) {
  return parseHeld(load.native.value(pos, key), load.file)[0];
}

/** Reads every lazy member of holder `h` that is still lazy. @param {any} h */
function readAll(h) {
  for (const key of Holder.shape(h).lazyKeys) {
    if (stillLazy(h, key)) fetch(h, key);
  }
}

/** The holder's util.inspect: its values first, then it is the plain object it shows. A holder
 * that could not take them as data properties (frozen, sealed, or a member made non-configurable)
 * shows a plain copy of its members instead of its accessors.
 * @this {any} */
function inspectHolder() {
  // `this` is the holder (Node and Bun call the method on the inspected object).
  if (!Holder.is(this)) return this;
  readAll(this);
  if (Holder.kept(this) === undefined) {
    // (Not `delete`: on a holder frozen or sealed after its values were read, it would throw
    // in this strict code. The method then stays, hidden, and shows the object as it is.)
    Reflect.deleteProperty(this, INSPECT);
    return this;
  }
  /** @type {Record<string | symbol, unknown>} */
  const copy = {};
  for (const k of Reflect.ownKeys(this)) {
    if (Object.prototype.propertyIsEnumerable.call(this, k)) copy[k] = this[k];
  }
  return copy;
}
const INSPECT_PROPERTY = { value: inspectHolder, writable: true, enumerable: false, configurable: true };

/** Builds the constructor of a shape: from the parsed skeleton holder `o`, a new object with
 * the same members in the same order, the lazy ones as accessors, then stamped.
 * @param {{ holder: number, keys: string[], lazy: number[] }} spec */
function makerOf(spec) {
  const lazy = new Set(spec.lazy);
  const descriptors = spec.keys.map((k, i) => (lazy.has(i) ? accessorOf(k) : null));
  if (CODEGEN) {
    // One straight-line function per shape: monomorphic stores, and V8 shares the layout.
    let body = '"use strict"; const r = {};\n';
    spec.keys.forEach((k, i) => {
      const name = JSON.stringify(k);
      body += lazy.has(i) ? `D(r, ${name}, A[${i}]);\n` : `r[${name}] = o[${name}];\n`;
    });
    body += "D(r, I, H); return r;";
    const make = new Function("o", "D", "A", "I", "H", body);
    return (/** @type {any} */ o) => make(o, Object.defineProperty, descriptors, INSPECT, INSPECT_PROPERTY);
  }
  // Code generation is refused: the same, by loop.
  return (/** @type {any} */ o) => {
    const r = {};
    spec.keys.forEach((k, i) => {
      if (lazy.has(i)) Object.defineProperty(r, k, descriptors[i]);
      else /** @type {any} */ (r)[k] = o[k];
    });
    Object.defineProperty(r, INSPECT, INSPECT_PROPERTY);
    return r;
  };
}

/**
 * The lazy values of one load (the core's LazyValues) and the entry objects made of it (the
 * session state's `objs` of that load, by position).
 */
class LazyLoad {
  /** @param {any} native @param {any[]} objs @param {string | undefined} file its session file (for messages) */
  constructor(native, objs, file) {
    // Its bytes go as soon as the GC has taken it (and with it every entry made from it).
    native.track();
    this.native = native;
    this.objs = objs;
    this.file = file;
    /** @type {Shape[] | null} */
    this.shapes = null;
    /** Read-ahead state per shape and member. @type {Map<string, { last: number, window: number }>} */
    this.streams = new Map();
  }

  /** @param {number} id @returns {Shape} */
  shape(id) {
    if (this.shapes === null) {
      this.shapes = this.native.shapes().map((/** @type {string} */ json, /** @type {number} */ i) => {
        const spec = JSON.parse(json);
        /** @type {Function | null} */
        let made = null;
        // (Made when first used: entries built from columns have their holders already.)
        const make = (/** @type {any} */ o) => (made ??= makerOf(spec))(o);
        return { id: i, load: this, holder: spec.holder, keys: spec.keys, lazy: spec.lazy, lazyKeys: spec.lazy.map((/** @type {number} */ k) => spec.keys[k]), make };
      });
    }
    return /** @type {Shape[]} */ (this.shapes)[id];
  }

  /** @param {Shape} shape @param {string} key */
  streamOf(shape, key) {
    const name = `${shape.id}:${key}`;
    let s = this.streams.get(name);
    if (s === undefined) this.streams.set(name, (s = { last: -Infinity, window: READ_AHEAD_MIN / 2 }));
    return s;
  }

  /** The holders of `shape` from position `pos` on whose `key` is still lazy, at most `count`.
   * @param {number} pos @param {Shape} shape @param {string} key @param {number} count */
  holdersAfter(pos, shape, key, count) {
    /** @type {number[]} */
    const positions = [];
    /** @type {any[]} */
    const holders = [];
    const objs = this.objs;
    for (let p = pos; p < objs.length && positions.length < count; p++) {
      const e = objs[p];
      if (e === undefined || e === null || typeof e !== "object") continue;
      const h = shape.holder === 1 ? e.message : e;
      if (h === null || typeof h !== "object" || !Holder.is(h) || Holder.shape(h) !== shape || Holder.pos(h) !== p) continue;
      if (stillLazy(h, key)) {
        positions.push(p);
        holders.push(h);
      }
    }
    return { positions: Uint32Array.from(positions), holders, length: positions.length };
  }

  /** Stamps the holders of entries built from columns (lib/columns.js), whose lazy members are
   * in place already; an entry built as one value (listed in `whole`) is a parsed skeleton,
   * adopted as one. Pairs of `holders` as for adopt.
   * @param {any[]} items @param {Uint32Array} holders @param {ArrayLike<number>} positions
   * @param {number} at @param {number[]} whole */
  adoptBuilt(items, holders, positions, at, whole) {
    const wholes = whole.length > 0 ? new Set(whole) : null;
    for (let j = 0; j < holders.length; j += 2) {
      const i = holders[j];
      if (wholes !== null && wholes.has(i)) {
        this.adopt(items, holders.subarray(j, j + 2), positions, at);
        continue;
      }
      const shape = this.shape(holders[j + 1]);
      const e = items[i];
      new Holder(shape.holder === 1 ? e.message : e, positions[at + i], shape);
    }
  }

  /** Turns the parsed skeletons `items` (of the records `positions[at + i]`) into the entry
   * objects, for the items `holders` names: pairs [item, shapeId, …] (eachSkeletons).
   * @param {any[]} items @param {Uint32Array} holders @param {ArrayLike<number>} positions @param {number} at */
  adopt(items, holders, positions, at) {
    for (let j = 0; j < holders.length; j += 2) {
      const i = holders[j];
      const shape = this.shape(holders[j + 1]);
      const e = items[i];
      const pos = positions[at + i];
      if (shape.holder === 1) {
        const m = shape.make(e.message);
        new Holder(m, pos, shape);
        e.message = m;
      } else {
        const r = shape.make(e);
        new Holder(r, pos, shape);
        items[i] = r;
      }
    }
  }
}

/** What a peek gives for a lazy member not read yet: a value that is not null or undefined, as
 * the member's is (a lazy value is big, so never null, undefined or another falsy value). */
const UNREAD = Object.freeze({ unread: true });
/** The object and member a peek is reading (only that one read of our accessor is a peek). */
let peeked = null;
let peekedKey = "";

/** The member `key` of `obj` as a plain read gives it, except that a lazy member not read yet
 * gives UNREAD instead of being read: for callers that only ask whether it is null. Cheaper than
 * looking at the property's descriptor, and the same for every other kind of property (a data
 * property, a caller's own accessor, a Proxy). @param {any} obj @param {string} key */
function peek(obj, key) {
  peeked = obj;
  peekedKey = key;
  try {
    return obj[key];
  } finally {
    peeked = null;
  }
}

/** Our accessor read by a peek: what a read would give, without fetching a value not read yet.
 * @param {any} obj @param {string} key */
function peekAt(obj, key) {
  const h = holderOf(obj);
  if (h === null) return undefined;
  const kept = Holder.kept(h);
  if (kept !== undefined && key in kept) return kept[key];
  return UNREAD;
}

module.exports = { LazyLoad, peek, accessorOf, CODEGEN, INSPECT, INSPECT_PROPERTY };
