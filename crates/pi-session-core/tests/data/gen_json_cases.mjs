// Regenerates the JSON conformance fixtures from Node itself, so the Rust tests compare against
// what V8's JSON.parse + JSON.stringify really do:
//
//   node crates/pi-session-core/tests/data/gen_json_cases.mjs
//
// json_cases.jsonl: hand-picked edge cases, one per line:
//   {"name": ..., "input": <document text> | "input_hex": <document bytes>, "output": <JSON.stringify(JSON.parse(input))> | null}
// (input_hex is used when the document is not valid UTF-8; Node decodes it with Buffer.toString("utf8").)
// json_props.jsonl: seeded random documents with random spacing and escape spellings, same shape.

import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

function expected(buf) {
  try {
    return JSON.stringify(JSON.parse(buf.toString("utf8")));
  } catch {
    return null;
  }
}

function isValidUtf8(buf) {
  return Buffer.compare(Buffer.from(buf.toString("utf8"), "utf8"), buf) === 0;
}

function record(name, input) {
  const buf = typeof input === "string" ? Buffer.from(input, "utf8") : input;
  if (typeof input === "string" && /[\ud800-\udfff]/.test(input.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ""))) {
    throw new Error(`case ${name}: raw lone surrogates cannot be stored in a UTF-8 file`);
  }
  const rec = { name };
  if (isValidUtf8(buf)) rec.input = buf.toString("utf8");
  else rec.input_hex = buf.toString("hex");
  rec.output = expected(buf);
  return JSON.stringify(rec);
}

const hex = (h) => Buffer.from(h.replace(/\s+/g, ""), "hex");
const cat = (...parts) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p)));

const cases = [
  // whitespace
  ["no whitespace", '{"a":1,"b":[1,2]}'],
  ["spaces everywhere", ' { "a" : 1 , "b" : [ 1 , 2 ] } '],
  ["tabs newlines carriage returns", '\t{\n"a"\r:\t1\r\n}\n'],
  ["form feed is not whitespace", '{\f"a":1}'],
  ["vertical tab is not whitespace", '\v1'],
  ["nbsp is not whitespace", "\u00a01"],
  ["line separator is not whitespace", "\u20281"],
  ["bom prefix is rejected", "\ufeff{}"],
  ["empty document", ""],
  ["whitespace only", "  \n"],
  // duplicate and integer-like keys
  ["duplicate key last value first position", '{"a":1,"b":2,"a":3}'],
  ["duplicate key three times", '{"a":1,"a":2,"b":0,"a":3}'],
  ["duplicate nested", '{"x":{"k":1,"k":{"z":2}},"x":{"k":0}}'],
  ["integer-like keys come first ascending", '{"b":1,"10":2,"1":3,"a":4,"0":5}'],
  ["leading zero key is a name", '{"b":1,"01":2,"1":3}'],
  ["negative key is a name", '{"b":1,"-1":2,"0":3}'],
  ["4294967294 is an index", '{"b":1,"4294967294":2,"5":3}'],
  ["4294967295 is a name", '{"b":1,"4294967295":2,"5":3}'],
  ["4294967296 is a name", '{"b":1,"4294967296":2,"5":3}'],
  ["10-digit index below max", '{"b":1,"1000000000":2,"999999999":3}'],
  ["decimal key is a name", '{"b":1,"1.5":2,"2":3}'],
  ["escaped digit key is an index", '{"b":1,"\\u0031":2}'],
  ["plus key is a name", '{"b":1,"+1":2}'],
  ["space key is a name", '{"b":1," 1":2}'],
  ["empty key", '{"":1,"a":2,"":3}'],
  ["duplicate integer keys", '{"2":"a","1":"b","2":"c"}'],
  ["descending integer keys", '{"5":5,"4":4,"3":3,"2":2,"1":1,"0":0}'],
  ["many named keys with duplicates", "{" + Array.from({ length: 40 }, (_, i) => `"k${i % 25}":${i}`).join(",") + "}"],
  ["__proto__ key", '{"__proto__":1,"a":2}'],
  ["__proto__ object key", '{"__proto__":{"x":1}}'],
  ["constructor key", '{"constructor":1}'],
  // unicode
  ["emoji raw", '"😀 x"'],
  ["emoji escaped pair", '"\\ud83d\\ude00"'],
  ["emoji escaped uppercase", '"\\uD83D\\uDE00"'],
  ["line separator raw", '"a\u2028b\u2029c"'],
  ["line separator escaped", '"\\u2028\\u2029"'],
  ["non-ascii raw", '"héllo wörld ☃ 中文"'],
  ["non-ascii escaped", '"\\u00e9\\u4e2d"'],
  ["del raw", '"\u007f"'],
  ["escaped del", '"\\u007f"'],
  ["escaped nul", '"\\u0000"'],
  ["escaped controls", '"\\u0001\\u0008\\u0009\\u000a\\u000b\\u000c\\u000d\\u001f\\u0020"'],
  ["escaped uppercase control", '"\\u001F\\u000B"'],
  ["every short escape", '"\\"\\\\\\/\\b\\f\\n\\r\\t"'],
  ["escaped quote and backslash via u", '"\\u0022\\u005c\\u005C\\u002f"'],
  ["slash raw", '"a/b"'],
  ["lone high surrogate", '"\\ud800"'],
  ["lone low surrogate", '"\\udc00"'],
  ["lone high uppercase", '"\\uDBFF"'],
  ["lone high then text", '"\\ud800abc"'],
  ["lone high at end after text", '"abc\\udbff"'],
  ["reversed surrogate pair", '"\\ude00\\ud83d"'],
  ["two high then low", '"\\ud800\\ud800\\udc00"'],
  ["high then escaped non-surrogate", '"\\ud800\\u0041"'],
  ["high then short escape", '"\\ud800\\n"'],
  ["high then raw emoji", '"\\ud83d😀"'],
  ["lone surrogate key", '{"\\udc00":1,"\\ud800":2}'],
  ["surrogate pair key", '{"\\ud83d\\ude00":1}'],
  ["raw tab inside string", '"a\tb"'],
  ["raw newline inside string", '"a\nb"'],
  ["raw nul inside string", '"a\u0000b"'],
  ["raw unit separator inside string", '"\u001f"'],
  // invalid utf-8
  ["invalid byte ff in string", cat('"a', hex("ff"), 'b"')],
  ["lone continuation byte", cat('"', hex("80"), '"')],
  ["truncated 2-byte sequence", cat('"', hex("c3"), '"')],
  ["truncated 3-byte sequence", cat('"', hex("e2 82"), '"')],
  ["truncated 4-byte sequence", cat('"', hex("f0 9f 98"), '"')],
  ["truncated 4-byte then ascii", cat('"', hex("f0 9f 98"), 'x"')],
  ["overlong slash", cat('"', hex("c0 af"), '"')],
  ["overlong 3-byte", cat('"', hex("e0 80 af"), '"')],
  ["utf-8 encoded surrogate", cat('"', hex("ed a0 80"), '"')],
  ["utf-8 encoded surrogate pair", cat('"', hex("ed a0 bd ed b8 80"), '"')],
  ["above U+10FFFF", cat('"', hex("f4 90 80 80"), '"')],
  ["f5 lead byte", cat('"', hex("f5 80 80 80"), '"')],
  ["invalid bytes in key", cat('{"k', hex("fe"), '":1}')],
  ["invalid bytes with escapes", cat('"\\n', hex("c3"), '\\t', hex("a9"), '"')],
  ["invalid byte outside string", cat("[1,", hex("ff"), "]")],
  ["valid multibyte then invalid", cat('"é', hex("80"), '中"')],
  // numbers
  ["zero", "0"],
  ["negative zero", "-0"],
  ["negative zero float", "-0.0"],
  ["negative zero exponent", "-0e5"],
  ["array of negative zeros", "[-0,0,-0.0]"],
  ["point one", "0.1"],
  ["one e21", "1e21"],
  ["just below 1e21", "999999999999999999999"],
  ["one e-7", "1e-7"],
  ["one e-6", "0.000001"],
  ["upper E400", "1E400"],
  ["negative 1e400", "-1e400"],
  ["negative tiny underflow", "-1e-400"],
  ["huge integer", "123456789012345678901234567890"],
  ["integer rounding", "123456789012345680000"],
  ["min subnormal", "5e-324"],
  ["below min subnormal", "2e-324"],
  ["half min subnormal rounds up", "2.4703282292062328e-324"],
  ["max double", "1.7976931348623157e308"],
  ["just above max double rounds", "1.7976931348623158e308"],
  ["overflow max double", "1.7976931348623159e308"],
  ["2.5e-7", "2.5e-7"],
  ["100e-2", "100e-2"],
  ["exponent plus", "1e+2"],
  ["exponent minus zero", "1e-0"],
  ["fraction trailing zeros", "1.500"],
  ["five point zero", "5.0"],
  ["2^53", "9007199254740992"],
  ["2^53 plus one", "9007199254740993"],
  ["15 digits", "123456789012345"],
  ["16 digits", "1234567890123456"],
  ["17 digits", "12345678901234567"],
  ["negative integer", "-42"],
  ["tricky rounding", "2.2250738585072011e-308"],
  ["tricky halfway", "9007199254740993.0000000001"],
  ["long fraction", "0.1000000000000000055511151231257827021181583404541015625"],
  ["many digits", "1" + "0".repeat(400)],
  ["many fraction digits", "0." + "3".repeat(500)],
  ["huge exponent", "1e99999999999999999999"],
  ["huge negative exponent", "1e-99999999999999999999"],
  ["zero with huge exponent", "0e99999999999999999999"],
  ["0.1+0.2 literal", "0.30000000000000004"],
  ["1e-7 spelled out", "0.0000001"],
  ["123e18", "123e18"],
  ["1.5e300 times", "[1.5e300,-2.5e-300,3e100]"],
  // literals and non-object documents
  ["number document", "5"],
  ["string document", '"s"'],
  ["null document", "null"],
  ["empty array", "[]"],
  ["true document", "true"],
  ["false document", "false"],
  ["empty object", "{}"],
  ["empty containers with whitespace", "[ { } , [ ] ]"],
  ["nested mix", '{"a":[{"b":null,"c":[true,false]},"x",-1.5e-3]}'],
  // malformed
  ["trailing comma array", "[1,]"],
  ["trailing comma object", '{"a":1,}'],
  ["leading comma", "[,1]"],
  ["double comma", "[1,,2]"],
  ["missing comma", "[1 2]"],
  ["missing colon", '{"a" 1}'],
  ["missing value", '{"a":}'],
  ["non-string key", "{a:1}"],
  ["number key", "{1:1}"],
  ["NaN literal", "NaN"],
  ["Infinity literal", "Infinity"],
  ["negative Infinity", "-Infinity"],
  ["undefined", "undefined"],
  ["single quotes", "'a'"],
  ["single quoted key", "{'a':1}"],
  ["leading zero", "01"],
  ["negative leading zero", "-01"],
  ["leading zeros fraction", "00.5"],
  ["trailing dot", "1."],
  ["leading dot", ".5"],
  ["leading plus", "+1"],
  ["lone minus", "-"],
  ["minus space", "- 1"],
  ["exponent without digits", "1e"],
  ["exponent sign without digits", "1e+"],
  ["dot exponent", "1.e5"],
  ["hex number", "0x10"],
  ["truncated string", '"abc'],
  ["truncated after escape", '"abc\\'],
  ["truncated unicode escape", '"\\u12'],
  ["truncated object", '{"a":1'],
  ["truncated array", "[1,2"],
  ["truncated key", '{"a'],
  ["truncated literal", "tru"],
  ["misspelled literal", "nul"],
  ["uppercase literal", "True"],
  ["bad escape x", '"\\x41"'],
  ["bad escape a", '"\\a"'],
  ["bad escape apostrophe", '"\\\'"'],
  ["bad escape zero", '"\\0"'],
  ["bad unicode escape G", '"\\u12G4"'],
  ["bad unicode escape short", '"\\u123"'],
  ["unicode escape with plus", '"\\u+123"'],
  ["uppercase U escape", '"\\U0041"'],
  ["two values", "1 2"],
  ["two objects", "{}{}"],
  ["trailing garbage", '{"a":1}x'],
  ["trailing nul", "1\u0000"],
  ["line comment", "[1] // c"],
  ["block comment", "/* c */ [1]"],
  ["unclosed nesting", "[[[[[["],
  ["mismatched brackets", "[1}"],
  ["mismatched braces", '{"a":1]'],
  ["close without open", "]"],
  ["colon in array", "[1:2]"],
  ["comma in place of colon", '{"a",1}'],
  ["backslash outside string", "\\"],
  ["raw non-ascii outside string", "é"],
  // deep but small
  ["nested arrays 50", "[".repeat(50) + "]".repeat(50)],
  ["nested objects 30", '{"a":'.repeat(30) + "1" + "}".repeat(30)],
];

const lines = cases.map(([name, input]) => record(name, input));
writeFileSync(join(here, "json_cases.jsonl"), lines.join("\n") + "\n");

// ---- random documents --------------------------------------------------------------------

// mulberry32: small seeded PRNG so the fixture is reproducible.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(0x5eed);
const int = (n) => Math.floor(rand() * n);
const pick = (xs) => xs[int(xs.length)];

const ws = () => (rand() < 0.7 ? "" : pick([" ", "  ", "\n", "\t", "\r\n", " \t "]));

const specialNumbers = [
  0, -0, 1, -1, 0.1, 0.2, 0.30000000000000004, 1e21, 1e20, 1e-7, 1e-6, 123456789012345680000, 5e-324,
  Number.MAX_VALUE, Number.MIN_VALUE, Number.MAX_SAFE_INTEGER, 2 ** 53, 4294967295, 4294967296, 1e308, 2.5e-7, 100,
];

function randomNumber() {
  switch (int(6)) {
    case 0:
      return pick(specialNumbers);
    case 1:
      return int(1000) - 500;
    case 2:
      return (rand() - 0.5) * 10 ** (int(40) - 20);
    case 3: {
      // random bit pattern of a finite double
      const b = new DataView(new ArrayBuffer(8));
      b.setUint32(0, int(2 ** 32));
      b.setUint32(4, int(2 ** 32));
      const x = b.getFloat64(0);
      return Number.isFinite(x) ? x : 1.5;
    }
    case 4:
      return Math.round(rand() * 1e6) / 1000;
    default:
      return int(2 ** 31) * (rand() < 0.5 ? -1 : 1);
  }
}

// Spell a number differently while keeping its value (or, for long digit strings, its rounding).
function numberText(x) {
  const s = JSON.stringify(x);
  switch (int(6)) {
    case 0: {
      if (Number.isInteger(x) && Math.abs(x) < 1e15 && !Object.is(x, -0)) return s + ".0" + "0".repeat(int(3));
      return s;
    }
    case 1:
      return x.toExponential().replace("e", pick(["e", "E"]));
    case 2:
      return x.toExponential(int(20)).replace("e+", pick(["e", "e+", "E+"]));
    case 3:
      return Object.is(x, -0) ? "-0" : s;
    case 4:
      return (Math.abs(x) < 1e21 && Math.abs(x) > 1e-6 ? x.toPrecision(1 + int(21)) : s).replace(/^(-?)\./, "$10.");
    default:
      return s;
  }
}

const stringPieces = [
  () => "a", () => "hello", () => " ", () => "\"", () => "\\", () => "/", () => "\n", () => "\t", () => "\u0000",
  () => "\u001f", () => "\u007f", () => "é", () => "中", () => "😀", () => "\u2028", () => "\u2029", () => "\ufeff",
  () => "\ud800", () => "\udfff", () => "\udbff\udfff", () => String.fromCharCode(int(0x10000)),
  () => String.fromCodePoint(0x10000 + int(0x100000)), () => "0", () => "123",
];

function randomString() {
  let s = "";
  const n = int(8);
  for (let i = 0; i < n; i++) s += pick(stringPieces)();
  return s;
}

const keyPool = ["a", "b", "type", "id", "0", "1", "2", "10", "01", "-1", "1.5", "4294967294", "4294967295", "", "é", "\ud800", "😀", "__proto__"];
const randomKey = () => (rand() < 0.8 ? pick(keyPool) : randomString());

// Writes a JS string as a JSON literal, choosing random legal spellings for each code unit.
function stringText(s) {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i];
    const isHigh = c >= 0xd800 && c <= 0xdbff;
    const isLow = c >= 0xdc00 && c <= 0xdfff;
    const next = s.charCodeAt(i + 1);
    const pairs = isHigh && next >= 0xdc00 && next <= 0xdfff;
    const u = (code) => {
      const h = code.toString(16).padStart(4, "0");
      return "\\u" + (rand() < 0.5 ? h : h.toUpperCase());
    };
    if (c < 0x20 || ch === '"' || ch === "\\" || ((isHigh || isLow) && !pairs && !(isLow && i > 0 && s.charCodeAt(i - 1) >= 0xd800 && s.charCodeAt(i - 1) <= 0xdbff))) {
      const short = { '"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" }[ch];
      out += short && rand() < 0.7 ? short : u(c);
    } else if (pairs) {
      out += rand() < 0.5 ? s.slice(i, i + 2) : u(c) + u(next);
      i++;
    } else if (ch === "/" && rand() < 0.3) {
      out += "\\/";
    } else if (rand() < 0.1) {
      out += u(c);
    } else {
      out += ch;
    }
  }
  return out + '"';
}

// Random value written directly as JSON text with random spacing, spellings and duplicate keys.
function randomDoc(depth) {
  const r = rand();
  if (depth > 2 || r < 0.45) {
    switch (int(5)) {
      case 0:
        return pick(["null", "true", "false"]);
      case 1:
      case 2:
        return numberText(randomNumber());
      default:
        return stringText(randomString());
    }
  }
  if (r < 0.7) {
    const n = int(5);
    const items = Array.from({ length: n }, () => ws() + randomDoc(depth + 1) + ws());
    return "[" + (n ? items.join(",") : ws()) + "]";
  }
  const n = int(5);
  const members = [];
  for (let i = 0; i < n; i++) {
    const key = i > 0 && rand() < 0.1 ? members[int(members.length)].key : randomKey();
    members.push({ key, text: ws() + stringText(key) + ws() + ":" + ws() + randomDoc(depth + 1) + ws() });
  }
  return "{" + (n ? members.map((m) => m.text).join(",") : ws()) + "}";
}

const props = [];
for (let i = 0; i < 20000; i++) {
  const text = ws() + randomDoc(0) + ws();
  // Raw lone surrogates never occur in text (they are always escaped above).
  props.push(record(`random ${i}`, text));
}
writeFileSync(join(here, "json_props.jsonl"), props.join("\n") + "\n");
console.log(`wrote ${lines.length} cases and ${props.length} random documents`);
