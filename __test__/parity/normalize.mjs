// Normalization of values and file text produced by a SessionManager implementation, so that two
// runs of the same operations (on two implementations, or twice on the same one) compare equal
// byte for byte except for what is random or clock-derived by design:
//
//   - entry ids (8 lower-case hex chars; 36-char uuid fallback)        -> id#N / uuid4#N
//   - session ids (uuid v7)                                            -> uuid7#N
//   - ISO timestamps taken from the real clock (2026-11-29T18:55:33.520Z) -> <TS>
//   - their file-name form (2026-11-29T18-55-33-520Z)                  -> <FTS>
//   - millisecond clock numbers (Date.now()-like integers)             -> <MS>
//   - Date objects holding a real-clock time                           -> {$date: "<DATE>"}
//   - temp-dir prefixes registered with addRoot(), raw and in the
//     encoded form used for default session dir names (--tmp-x-y--)    -> <ROOT> / <ROOTENC>
//
// Ids and uuids are numbered by order of first appearance, per Normalizer instance, so that the
// structure (which entry points at which) is still compared. Use one Normalizer per
// implementation and feed both the same sequence of values.
//
// Usage from another test:
//   const norm = new Normalizer().addRoot(tmpDir);
//   assert.deepStrictEqual(norm.value(sm.getTree()), expected);   // returned values
//   const text = norm.text(fs.readFileSync(file, "utf8"));          // file bytes
//   norm.string(sm.getSessionFile());                               // a path / message
//
// "Real clock" means inside a window around the time this module was loaded, so that fixed
// timestamps carried by test data (e.g. 2001-01-01T00:00:00.000Z or 978307200000) are kept as is.

const MODULE_LOADED_AT = Date.now();
const WINDOW_SLACK_MS = 10 * 60 * 1000;

const ISO_RE = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;
const FILE_TS_RE = /\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z/g;
const UUID_RE = /(?<![0-9A-Za-z])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z])/g;
const HEX8_RE = /(?<![0-9A-Za-z])[0-9a-f]{8}(?![0-9A-Za-z])/g;
const HEX8_FULL_RE = /^[0-9a-f]{8}$/;
const UUID_FULL_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// An 8-hex JSON string token in file text (ids are always written as strings).
const JSON_HEX8_RE = /"([0-9a-f]{8})"/g;
// Cheap pre-checks that let most strings skip the lookbehind regexes.
const MAYBE_HEX8_RE = /[0-9a-f]{8}/;
const MAYBE_TS_RE = /\dT\d\d/;
// A 13-digit JSON number in file text (a millisecond clock value).
const JSON_MS_RE = /(?<=[:[,])\d{13}(?=[,\]}])/g;

/** The encoded form of a path used in default session dir names (see docs/behaviour.md, "Where sessions live"). */
export function encodeCwdLikeReference(p) {
  return p.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-");
}

function fileTsToIso(fts) {
  // 2026-11-29T18-55-33-520Z -> 2026-11-29T18:55:33.520Z
  return `${fts.slice(0, 13)}:${fts.slice(14, 16)}:${fts.slice(17, 19)}.${fts.slice(20)}`;
}

export class Normalizer {
  /**
   * @param {{ roots?: string[], clockFrom?: number, clockSlackMs?: number }} [options]
   */
  constructor(options = {}) {
    this.ids = new Map();
    this.uuids = new Map();
    this.uuidCount = 0;
    this.rootPairs = [];
    // Long strings with nothing but (possibly) root prefixes in them normalize the same way
    // forever; caching them keeps repeated large message texts cheap.
    this.stableCache = new Map();
    this.clockFrom = (options.clockFrom ?? MODULE_LOADED_AT) - (options.clockSlackMs ?? WINDOW_SLACK_MS);
    this.clockSlack = options.clockSlackMs ?? WINDOW_SLACK_MS;
    for (const root of options.roots ?? []) this.addRoot(root);
  }

  /** Replace this directory prefix (and its encoded default-dir form) in every string. */
  addRoot(root, placeholder = "<ROOT>") {
    this.stableCache?.clear();
    const enc = encodeCwdLikeReference(root);
    this.rootPairs.push([root, placeholder]);
    this.rootPairs.push([enc, `${placeholder.slice(0, -1)}ENC>`]);
    // Longest first, so a root nested in another is replaced before its parent.
    this.rootPairs.sort((a, b) => b[0].length - a[0].length);
    return this;
  }

  /** Whether a millisecond count looks like it came from the real clock during this run. */
  isClock(ms) {
    return Number.isInteger(ms) && ms >= this.clockFrom && ms <= Date.now() + this.clockSlack;
  }

  /** Placeholder for an entry id (assigned on first sight). */
  id(raw) {
    let ph = this.ids.get(raw);
    if (ph === undefined) {
      ph = `id#${this.ids.size}`;
      this.ids.set(raw, ph);
    }
    return ph;
  }

  /** Placeholder for a uuid (assigned on first sight); the version nibble is kept. */
  uuid(raw) {
    let ph = this.uuids.get(raw);
    if (ph === undefined) {
      ph = `uuid${raw[14]}#${this.uuidCount++}`;
      this.uuids.set(raw, ph);
    }
    return ph;
  }

  /** Register an id as known, so it is also replaced when embedded in longer strings. */
  registerId(raw) {
    if (typeof raw !== "string") return undefined;
    if (HEX8_FULL_RE.test(raw)) return this.id(raw);
    if (UUID_FULL_RE.test(raw)) return this.uuid(raw);
    return undefined;
  }

  _common(s, assign) {
    for (const [raw, ph] of this.rootPairs) {
      if (raw && s.includes(raw)) s = s.split(raw).join(ph);
    }
    if (MAYBE_TS_RE.test(s)) {
      s = s.replace(ISO_RE, (m) => (this.isClock(Date.parse(m)) ? "<TS>" : m));
      s = s.replace(FILE_TS_RE, (m) => (this.isClock(Date.parse(fileTsToIso(m))) ? "<FTS>" : m));
    }
    if (MAYBE_HEX8_RE.test(s)) {
      s = s.replace(UUID_RE, (m) => (assign ? this.uuid(m) : (this.uuids.get(m) ?? "uuid?")));
    }
    return s;
  }

  _knownIds(s) {
    if (!MAYBE_HEX8_RE.test(s)) return s;
    return s.replace(HEX8_RE, (m) => this.ids.get(m) ?? m);
  }

  /**
   * Normalize one string value. A string that is exactly 8 hex chars is an id (assigned);
   * 8-hex runs inside longer strings are replaced only when already known as ids.
   * With assign=false nothing new is numbered (used to compute stable sort keys).
   */
  string(s, assign = true) {
    if (s.length >= 48) {
      const hit = this.stableCache.get(s);
      if (hit !== undefined) return hit;
      if (!MAYBE_HEX8_RE.test(s) && !MAYBE_TS_RE.test(s)) {
        const out = this._common(s, assign);
        if (this.stableCache.size < 5000) this.stableCache.set(s, out);
        return out;
      }
    }
    s = this._common(s, assign);
    if (HEX8_FULL_RE.test(s)) return assign ? this.id(s) : (this.ids.get(s) ?? "id?");
    return this._knownIds(s);
  }

  /** Normalize file text (JSONL): ids as JSON string tokens, clock numbers, paths, timestamps. */
  text(t) {
    t = this._common(t, true);
    t = t.replace(JSON_HEX8_RE, (_m, hex) => `"${this.id(hex)}"`);
    t = this._knownIds(t);
    t = t.replace(JSON_MS_RE, (m) => (this.isClock(Number(m)) ? "<MS>" : m));
    return t;
  }

  /**
   * Deep-normalize a returned value into a fresh structure that assert.deepStrictEqual can
   * compare: undefined-valued keys, array holes, NaN and -0 are preserved; Date objects become
   * {$date: ...}; objects whose prototype is not Object.prototype get a `$class` marker.
   */
  value(v) {
    return this._value(v, new Set());
  }

  _value(v, stack) {
    switch (typeof v) {
      case "string":
        return this.string(v);
      case "number":
        return this.isClock(v) ? "<MS>" : v;
      case "undefined":
      case "boolean":
        return v;
      case "bigint":
        return { $bigint: String(v) };
      case "symbol":
        return { $symbol: String(v.description) };
      case "function":
        return { $function: v.name };
      default:
        break;
    }
    if (v === null) return null;
    if (v instanceof Date) {
      const t = v.getTime();
      if (Number.isNaN(t)) return { $date: "Invalid Date" };
      return { $date: this.isClock(t) ? "<DATE>" : v.toISOString() };
    }
    if (stack.has(v)) return { $cycle: true };
    stack.add(v);
    try {
      if (Array.isArray(v)) {
        const out = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          if (i in v) out[i] = this._value(v[i], stack);
        }
        return out;
      }
      const out = {};
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype) {
        const name = proto === null ? "null" : (proto.constructor?.name ?? "?");
        Object.defineProperty(out, "$class", { value: name, enumerable: true, writable: true, configurable: true });
      }
      for (const key of Object.keys(v)) {
        const nv = this._value(v[key], stack);
        if (key === "__proto__") {
          // defineProperty keeps an own "__proto__" key an own key.
          Object.defineProperty(out, key, { value: nv, enumerable: true, writable: true, configurable: true });
        } else {
          out[key] = nv;
        }
      }
      return out;
    } finally {
      stack.delete(v);
    }
  }
}

/**
 * First path at which two (already deep-equal) values list object keys in a different order,
 * or null. deepStrictEqual ignores key order; JSON.stringify of returned entries does not.
 */
export function keyOrderDiff(a, b, path = "$") {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const d = keyOrderDiff(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.join("\u0000") !== kb.join("\u0000")) {
    return { path, a: ka, b: kb };
  }
  for (const k of ka) {
    const d = keyOrderDiff(a[k], b[k], `${path}.${k}`);
    if (d) return d;
  }
  return null;
}

/** Deep clone preserving Date, undefined-valued keys, array holes, -0, NaN and own "__proto__" keys. */
export function cloneAwkward(v) {
  if (v === null || typeof v !== "object") return v;
  if (v instanceof Date) return new Date(v.getTime());
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) if (i in v) out[i] = cloneAwkward(v[i]);
    return out;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) return v;
  const out = {};
  for (const k of Object.keys(v)) {
    Object.defineProperty(out, k, { value: cloneAwkward(v[k]), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
