// Damaged session files, ours against the reference.
//   - DAMAGED_COUNT (default 200) variants of fixtures/**/*.jsonl, damaged with a seeded PRNG
//     (DAMAGED_SEED, default 4): truncation, byte flips, NUL bytes, invalid UTF-8, CRLF, BOMs,
//     duplicated / dropped / swapped lines, rewired parents (cycles, dangling), garbage lines.
//     Each is opened by both implementations (each on its own copy): both throw the same message,
//     or both load the same entries (ids and types; counts only for v1 files, whose ids are
//     generated), the same leaf and index size, and leave the same bytes (ours keeps unreadable
//     lines through a migration and leaves a backup: for migrated files only ours is checked
//     to keep every original line). Without a parent cycle, branch, context entries and tree
//     must match too; with one, the reference is not asked (it hangs) and ours must terminate.
//     Deliberate differences: a line after the header holding an entry glued after bytes that
//     are not JSON (a torn record; a BOM, NUL bytes or a joined line do this too) is read by ours
//     as the reference reads the file without those bytes (helpers/torn-records.mjs; ours leaves
//     them in place, and a migration writes them on a line of their own); a file whose header
//     follows records of no pi type without id or parentId is read by ours as the reference
//     reads it without them (they stay in place); a
//     v1 file with scalar records (`42`), on which the reference's
//     migration throws a TypeError, is opened by ours; and where the reference's context building
//     throws on a damaged entry, ours may answer instead.
//   - DAMAGED_BIG_COUNT (default 100) more variants, opened by ours with every file read as a big
//     session (the streaming scan of a file over 64 MiB, its lines left in the file).
//   - The committed corpus fixtures/damaged/*.jsonl against its .expect.json (the reference's
//     recorded behaviour).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { loadOurs, loadReference, tuneFor } from "./helpers/target.mjs";
import { withoutTornBytes } from "./helpers/torn-records.mjs";
import { Rng } from "./parity/prng.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(HERE, "..", "fixtures");
const COUNT = Number(process.env.DAMAGED_COUNT ?? 200);
const SEED = Number(process.env.DAMAGED_SEED ?? 4);
/** Variants (from DAMAGED_SEED + 1) opened again with every file read as a big session. */
const BIG_COUNT = Number(process.env.DAMAGED_BIG_COUNT ?? 100);

const ours = loadOurs();
const reference = await loadReference();

function listFixtures(dir, rel = "") {
  const out = [];
  for (const name of fs.readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    const r = rel ? `${rel}/${name}` : name;
    if (fs.statSync(full).isDirectory()) out.push(...listFixtures(full, r));
    else if (name.endsWith(".jsonl")) out.push(r);
  }
  return out;
}

// ----- damage ---------------------------------------------------------------------------------

function splitLines(buf) {
  const out = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0x0a) {
      out.push(buf.subarray(start, i));
      start = i + 1;
    }
  }
  out.push(buf.subarray(start));
  return out;
}
const joinLines = (lines) => Buffer.concat(lines.flatMap((l, i) => (i === 0 ? [l] : [Buffer.from("\n"), l])));

const GARBAGE = [
  "{",
  "}",
  "null",
  "42",
  '"text"',
  "[1,2]",
  '{"type":"session","version":3,"id":"second-header","cwd":"/x"}',
  '{"type":"message","id":"zz","parentId":"nowhere","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"z"}}',
  '{"type":"label","id":"lb","parentId":null,"targetId":"missing","label":"x"}',
  '{"id":"\\ud800","parentId":"\\udfff"}',
  '{"a":1e999,"b":-0}',
  "   ",
  "\r",
];
const BAD_UTF8 = [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xc0, 0xaf]];

function damageOnce(rng, bytes) {
  const len = bytes.length;
  switch (rng.int(12)) {
    case 0: {
      const at = rng.int(len + 1);
      return [bytes.subarray(0, at), `truncate@${at}`];
    }
    case 1: {
      const copy = Buffer.from(bytes);
      const n = 1 + rng.int(3);
      for (let i = 0; i < n && copy.length; i++) copy[rng.int(copy.length)] ^= 1 << rng.int(8);
      return [copy, `flip×${n}`];
    }
    case 2: {
      const at = rng.int(len + 1);
      const n = rng.chance(0.5) ? 1 : 1 + rng.int(200);
      return [Buffer.concat([bytes.subarray(0, at), Buffer.alloc(n), bytes.subarray(at)]), `nul×${n}@${at}`];
    }
    case 3: {
      const at = rng.int(len + 1);
      return [Buffer.concat([bytes.subarray(0, at), Buffer.from(rng.pick(BAD_UTF8)), bytes.subarray(at)]), `badutf8@${at}`];
    }
    case 4: {
      const lines = splitLines(bytes);
      const every = 1 + rng.int(3);
      return [joinLines(lines.map((l, i) => (i % every === 0 && i < lines.length - 1 ? Buffer.concat([l, Buffer.from("\r")]) : l))), `crlf/${every}`];
    }
    case 5: {
      const lines = splitLines(bytes);
      const i = rng.int(lines.length);
      lines[i] = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), lines[i]]);
      return [joinLines(lines), `bom@line${i}`];
    }
    case 6: {
      const lines = splitLines(bytes);
      const i = rng.int(lines.length);
      lines.splice(rng.int(lines.length + 1), 0, lines[i]);
      return [joinLines(lines), `dup-line${i}`];
    }
    case 7: {
      const lines = splitLines(bytes);
      const i = rng.int(lines.length);
      lines.splice(i, 1);
      return [joinLines(lines), `drop-line${i}`];
    }
    case 8: {
      const lines = splitLines(bytes);
      const i = rng.int(lines.length);
      const j = rng.int(lines.length);
      [lines[i], lines[j]] = [lines[j], lines[i]];
      return [joinLines(lines), `swap${i},${j}`];
    }
    case 9: {
      // Point one parentId at another id of the file (cycles, self-parents) or nowhere.
      const text = bytes.toString("latin1");
      const ids = [...text.matchAll(/"id":"([^"]*)"/g)].map((m) => m[1]);
      const spots = [...text.matchAll(/"parentId":("[^"]*"|null)/g)];
      if (!spots.length) return [bytes, "rewire(none)"];
      const spot = rng.pick(spots);
      const target = !ids.length || rng.chance(0.2) ? "dangling" : rng.pick(ids);
      const at = spot.index + '"parentId":'.length;
      const out = Buffer.concat([bytes.subarray(0, at), Buffer.from(`"${target}"`, "latin1"), bytes.subarray(at + spot[1].length)]);
      return [out, `rewire@${at}->${target}`];
    }
    case 10: {
      const lines = splitLines(bytes);
      const at = rng.int(lines.length + 1);
      lines.splice(at, 0, Buffer.from(rng.pick(GARBAGE)));
      return [joinLines(lines), `garbage@${at}`];
    }
    default: {
      const lines = splitLines(bytes);
      const i = rng.int(lines.length);
      lines[i] = lines[i].subarray(0, rng.int(lines[i].length + 1));
      return [joinLines(lines), `tear-line${i}`];
    }
  }
}

// ----- observation ----------------------------------------------------------------------------

const isObj = (e) => e !== null && typeof e === "object" && !Array.isArray(e);
const idOf = (e) => (isObj(e) ? (e.id ?? null) : null);

/** Whether following parentId links through the reference's index (last record of an id wins)
 * ever revisits an entry (the reference's walks never end on such files), or its tree has a loop
 * (docs/behaviour.md, "Differences from the reference, on purpose": ours makes the first entry
 * of a cycle a root). */
function hasCycle(entries) {
  const byId = new Map();
  for (const e of entries) if (isObj(e)) byId.set(e.id, e);
  for (const start of byId.values()) {
    const seen = new Set();
    let cur = start;
    while (cur) {
      if (seen.has(cur)) return true;
      seen.add(cur);
      cur = cur.parentId ? byId.get(cur.parentId) : undefined;
    }
  }
  // getTree() links a node to `nodeMap.get(parentId)`, where an id-less entry is the node of
  // `undefined`: a loop there leaves nodes out of the reference's tree (ours makes them roots).
  const nodeOf = new Map();
  for (const e of entries) nodeOf.set(isObj(e) ? e.id : undefined, e);
  const treeParent = (e) => {
    const [id, pid] = isObj(e) ? [e.id, e.parentId] : [undefined, undefined];
    return pid === null || pid === id ? undefined : nodeOf.get(pid);
  };
  for (const start of entries) {
    const seen = new Set();
    for (let cur = start; cur !== undefined; cur = treeParent(cur)) {
      if (seen.has(cur)) return true;
      seen.add(cur);
    }
  }
  // getTree() also loops when a duplicate id puts a node inside its own subtree.
  const counts = new Map();
  for (const e of entries) if (isObj(e)) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
  return [...counts.values()].some((n) => n > 1);
}

function treeIds(nodes) {
  return nodes.map((n) => [idOf(n.entry), treeIds(n.children)]);
}

/** The value of `fn()`, or what it threw (the reference throws on some damaged entries too). */
function attempt(fn) {
  try {
    return fn();
  } catch (err) {
    // Damaged entries (a message without `message`) make both throw, with different wording.
    return { threw: err?.constructor?.name };
  }
}

/** What opening `bytes` gives. `deep`: also branch, context and tree, which the reference may
 * only be asked without a cycle (`cycleSafe` is true for ours: its walks always end). */
function observe(impl, bytes, dir, deep, cycleSafe = false, name = "s.jsonl") {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  let sm;
  try {
    sm = impl.SessionManager.open(file);
  } catch (err) {
    return { throws: String(err.message).split(dir).join("<DIR>"), after: fs.readFileSync(file) };
  }
  const entries = sm.getEntries();
  const o = {
    after: fs.readFileSync(file),
    others: fs.readdirSync(dir).filter((n) => n !== name).sort(),
    // As fixtures/gen-expectations.mjs records them.
    types: entries.map((e) => (isObj(e) ? (e.type ?? null) : `<non-object ${JSON.stringify(e)}>`)),
    ids: entries.map(idOf),
    leaf: sm.getLeafId() ?? null,
    indexSize: sm.getEntryCount(),
    cyclic: hasCycle(entries),
  };
  if (deep && (cycleSafe || !o.cyclic)) {
    o.branch = attempt(() => sm.getBranch().map(idOf));
    o.context = attempt(() => sm.buildContextEntries().map(idOf));
    o.messages = attempt(() => JSON.stringify(sm.buildSessionContext().messages));
    o.tree = attempt(() => JSON.stringify(treeIds(sm.getTree())));
  }
  return o;
}

const PI_TYPES = new Set([
  "session", "message", "thinking_level_change", "model_change", "usage", "compaction",
  "branch_summary", "custom", "custom_message", "label", "session_info", "context_edit",
]);

/** Line numbers of the records that lead the header (README "What is different, on purpose":
 * objects of no pi type with neither `id` nor `parentId`, directly followed by a header with a
 * string id), or null when the file has none. */
function leadingLines(bytes) {
  const lead = [];
  const lines = splitLines(bytes);
  for (let i = 0; i < lines.length; i++) {
    let e;
    try {
      e = JSON.parse(lines[i].toString("utf8"));
    } catch {
      continue;
    }
    if (!e) continue;
    if (isObj(e) && !PI_TYPES.has(e.type) && !("id" in e) && !("parentId" in e)) lead.push(i);
    else return lead.length > 0 && isObj(e) && e.type === "session" && typeof e.id === "string" ? lead : null;
  }
  return null;
}

/** The version migration reads: of the first session record (`?? 1`). */
function headerVersion(bytes) {
  for (const line of splitLines(bytes)) {
    let e;
    try {
      e = JSON.parse(line.toString("utf8"));
    } catch {
      continue;
    }
    if (isObj(e) && e.type === "session") return e.version ?? 1;
  }
  return 1;
}

function splitKeep(buf) {
  return splitLines(buf).map((l) => l.toString("latin1"));
}

// ----- tests ----------------------------------------------------------------------------------

test(`${COUNT} damaged variants of the fixtures open as the reference opens them`, { timeout: 120_000 }, (t) => {
  variants(t, COUNT, SEED);
});

test(`${BIG_COUNT} damaged variants read as big sessions (their lines left in the file) open as the reference opens them`, { timeout: 120_000 }, (t) => {
  tuneFor(t, { lazyFileBytes: 0, backedLineBytes: 0 });
  variants(t, BIG_COUNT, SEED + 1);
});

/** `count` damaged variants from `seed`, each opened by both implementations and compared. */
function variants(t, count, seed) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-damaged-")));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const fixtures = listFixtures(FIXTURES).filter((f) => !f.startsWith("damaged/"));
  const rng = new Rng(seed);
  const stats = { loaded: 0, refused: 0, migrated: 0, cyclic: 0, referenceThrew: 0, lenient: 0, leading: 0, glued: 0 };
  for (let n = 0; n < count; n++) {
    const name = rng.pick(fixtures);
    let bytes = fs.readFileSync(path.join(FIXTURES, name));
    const recipe = [name];
    for (let k = 1 + rng.int(3); k > 0; k--) {
      const [next, what] = damageOnce(rng, bytes);
      bytes = next;
      recipe.push(what);
    }
    const where = `variant ${n} [${recipe.join(" ")}]`;
    const before = bytes;
    const original = fs.readFileSync(path.join(FIXTURES, name), "utf8");
    // Our own deliberate differences: retainedTail contexts, cycles (the reference would hang).
    const deep = !original.includes("retainedTail") && !name.startsWith("cycles/");
    const mine = observe(ours, bytes, path.join(root, `${n}-ours`), deep, true);
    // What the reference reads like ours: the file without the torn bytes before glued entries.
    const plain = withoutTornBytes(bytes);
    if (plain.glued) stats.glued++;
    const theirs = observe(reference, plain.bytes, path.join(root, `${n}-ref`), deep && !mine.cyclic);

    if (/^Cannot create property '\w+' on /.test(theirs.throws ?? "") && mine.throws === undefined) {
      // A v1 file with scalar records: the reference's migration throws (it cannot give `42` an
      // id). Ours migrates the objects, keeps the rest in place, and leaves a backup.
      stats.referenceThrew++;
      assert.ok(fs.existsSync(path.join(root, `${n}-ours`, "s.jsonl.bak")), `${where}: backup`);
      continue;
    }
    const lead = theirs.throws !== undefined && mine.throws === undefined ? leadingLines(bytes) : null;
    if (lead) {
      // Records before the header: the reference refuses the file, ours reads it as the reference
      // reads the file without them, and keeps them in place.
      stats.leading++;
      const kept = withoutTornBytes(joinLines(splitLines(bytes).filter((_, i) => !lead.includes(i)))).bytes;
      const plain = observe(reference, kept, path.join(root, `${n}-ref-plain`), deep && !mine.cyclic);
      assert.equal(plain.throws, undefined, `${where}: without its leading records the reference reads it`);
      const after = splitLines(mine.after);
      for (const i of lead) assert.ok(after[i].equals(splitLines(before)[i]), `${where}: leading line ${i} kept`);
      assert.deepEqual(mine.types, plain.types, `${where}: entry types`);
      assert.equal(mine.indexSize, plain.indexSize, `${where}: index size`);
      if (headerVersion(before) >= 2) {
        assert.deepEqual(mine.ids, plain.ids, `${where}: entry ids`);
        assert.equal(mine.leaf, plain.leaf, `${where}: leaf`);
        if (deep && !mine.cyclic) {
          for (const what of ["branch", "context", "messages", "tree"]) {
            if (plain[what]?.threw !== undefined && mine[what]?.threw === undefined) continue;
            assert.deepEqual(mine[what], plain[what], `${where}: ${what}`);
          }
        }
      }
      continue;
    }
    if (theirs.throws !== undefined || mine.throws !== undefined) {
      assert.equal(mine.throws, theirs.throws, `${where}: one implementation threw`);
      assert.ok(mine.after.equals(before), `${where}: a refused file was modified`);
      stats.refused++;
      continue;
    }
    stats.loaded++;
    // An empty file gets a fresh header (generated id and time) from both. Torn bytes before a
    // glued entry stay in ours.
    const sameBytes =
      before.length === 0
        ? mine.after.subarray(0, 17).equals(theirs.after.subarray(0, 17))
        : withoutTornBytes(mine.after).bytes.equals(theirs.after);
    const migrated = !sameBytes || mine.others.length > 0;
    if (migrated) {
      stats.migrated++;
      // Ours: the original bytes kept as a backup, and every line of the original still there.
      const bakPath = path.join(root, `${n}-ours`, "s.jsonl.bak");
      assert.ok(fs.existsSync(bakPath), `${where}: ours changed the file differently from the reference, without a migration`);
      const bak = fs.readFileSync(bakPath);
      const repaired = before.length && before[before.length - 1] !== 0x0a ? Buffer.concat([before, Buffer.from("\n")]) : before;
      assert.ok(bak.equals(before) || bak.equals(repaired), `${where}: the backup is not the original`);
      // A glued line is written as two: its torn bytes, then its entry.
      const expected = splitKeep(repaired).length + plain.glued;
      assert.equal(splitKeep(mine.after).length, expected, `${where}: the migration dropped lines`);
    } else {
      assert.deepEqual(mine.others, [], `${where}`);
    }
    assert.deepEqual(mine.types, theirs.types, `${where}: entry types`);
    const generatedIds = headerVersion(before) < 2; // v1 migration makes up ids
    if (!generatedIds) {
      assert.deepEqual(mine.ids, theirs.ids, `${where}: entry ids`);
      assert.equal(mine.leaf, theirs.leaf, `${where}: leaf`);
    }
    assert.equal(mine.indexSize, theirs.indexSize, `${where}: index size`);
    assert.equal(mine.cyclic, theirs.cyclic, `${where}: cycle detection`);
    if (mine.cyclic) {
      stats.cyclic++;
      continue;
    }
    if (deep && !generatedIds) {
      for (const what of ["branch", "context", "messages", "tree"]) {
        // Where the reference throws on a damaged entry (a message without `message`), ours may
        // throw too or give its answer; where the reference answers, ours gives the same answer.
        if (theirs[what]?.threw !== undefined && mine[what]?.threw === undefined) {
          stats.lenient++;
          continue;
        }
        assert.deepEqual(mine[what], theirs[what], `${where}: ${what}`);
      }
    }
  }
  t.diagnostic(
    `${count} variants: ${stats.loaded} loaded (${stats.migrated} migrated, ${stats.cyclic} with cycles), ` +
      `${stats.refused} refused by both, ${stats.leading} read past records before the header, ${stats.glued} with an entry glued after a torn record, ` +
      `${stats.referenceThrew} opened where the reference's migration throws, ` +
      `${stats.lenient} answers where the reference's context building throws`,
  );
}

test("the committed corpus of damaged files opens as the reference recorded", (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-damaged-corpus-")));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const names = fs.readdirSync(path.join(FIXTURES, "damaged")).filter((n) => n.endsWith(".jsonl"));
  assert.ok(names.length >= 20, "fixtures/damaged has its corpus");
  for (const name of names) {
    const expect = JSON.parse(fs.readFileSync(path.join(FIXTURES, "damaged", name.replace(/\.jsonl$/, ".expect.json")), "utf8"));
    const bytes = fs.readFileSync(path.join(FIXTURES, "damaged", name));
    const o = observe(ours, bytes, path.join(root, name.replace(/\.jsonl$/, "")), true, true, name);
    const where = `damaged/${name}`;
    // Where ours reads an entry glued after a torn record, the expectation records what the
    // reference reads without the torn bytes (`oursReads`; fixtures/README.md).
    const reads = { ...expect, ...expect.oursReads };
    if (expect.open.throws) {
      assert.equal(o.throws, expect.open.error.replace("<DIR>/open", "<DIR>"), where);
      assert.ok(o.after.equals(bytes), `${where}: a refused file was modified`);
      continue;
    }
    assert.equal(o.throws, undefined, `${where}: ours threw ${o.throws}`);
    assert.equal(o.types.length, reads.entryCount, `${where}: entry count`);
    assert.deepEqual(o.types, reads.types, `${where}: types`);
    assert.equal(o.indexSize, reads.indexSize, `${where}: index size`);
    if (expect.file.change === "rewritten") {
      // Migrated: ids are generated; the original is kept as a backup and no line is dropped.
      assert.ok(o.others.includes(`${name}.bak`), `${where}: backup`);
      continue;
    }
    const change = o.after.equals(bytes)
      ? "unchanged"
      : o.after.equals(Buffer.concat([bytes, Buffer.from("\n")]))
        ? "appended-newline"
        : "other";
    assert.equal(change, expect.file.change, `${where}: file change`);
    assert.deepEqual(o.ids, reads.ids, `${where}: ids`);
    assert.equal(o.leaf, reads.leafId, `${where}: leaf`);
    if (Array.isArray(reads.branch)) assert.deepEqual(o.branch, reads.branch, `${where}: branch`);
    if (Array.isArray(reads.contextEntryIds)) assert.deepEqual(o.context, reads.contextEntryIds, `${where}: context entries`);
  }
});
