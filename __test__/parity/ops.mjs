// Operation generators for the parity suite.
//
// An operation is a plain descriptor generated once from the sequence's Rng and then applied to
// both implementations. Anything implementation-specific (entry ids, file paths, session ids,
// temp dirs) is referenced symbolically through Ref objects and resolved per side: Ref("id", k)
// is the k-th entry id that side has seen, Ref("file", k) the k-th .jsonl file of that side's
// last snapshot (both sorted the same way), and so on.
//
// Generation only looks at state that has already been compared equal across the two sides
// (taken from side A), so both sides always receive the same operation.
//
// Excluded on purpose, because our implementation deliberately differs there (docs/behaviour.md, "Differences from the reference, on purpose") or
// the reference behaviour is engine-defined:
//   - v1/v2 session files on disk (opening one rewrites it: we keep malformed lines and leave a
//     .bak backup; forkFrom of a v1 file: we migrate first). Migration is only exercised in
//     memory (inMemory with preloaded v1/v2 entries, migrateSessionEntries on arrays).
//   - session files containing malformed lines or a torn last line (a rewrite would keep them
//     on our side). Non-session "garbage" files are used, but only ones the reference refuses
//     to load, so they are never rewritten. A refused setSessionFile still makes the file the
//     manager's, so later appends land in it: after the one without a final newline we write a
//     newline first (an append never starts after another writer's torn bytes), where the
//     reference glues the entry to it; the runner compares that file as we write it.
//   - entries whose parentId forms a cycle (the reference hangs; we stop).
//   - preloaded entries with unparseable timestamps (getTree order is engine-defined).
//   - calls whose reference error text is a V8 TypeError message (appendMessage(null),
//     appendSessionInfo(non-string), open/loadEntriesFromFile(undefined)).
//   - list() progress callbacks (completion order of concurrent reads is not deterministic).

import { MESSAGE_TS_BASE } from "./data.mjs";

export class Ref {
  constructor(kind, arg) {
    this.kind = kind;
    this.arg = arg;
  }
}

export const ref = (kind, arg) => new Ref(kind, arg);

const UNKNOWN_IDS = ["zzzzzzzz", "nope-404", "00000000", "", "ghost-id"];
const BAD_SESSION_IDS = ["-bad", "a b", "", "bad-", ".a", "ä", "a/b", "a\nb", "x_"];
const ID_PREFIXES = ["s", "Ab.c", "x_y-z", "9", "S"];

/** Generation context: rng, data generator, counters and a view of side A's current state. */
export class GenContext {
  constructor(rng, data) {
    this.rng = rng;
    this.data = data;
    this.counter = 0;
    this.convoBias = rng.chance(0.12) ? 0 : 0.45 + rng.next() * 0.4;
    this.state = null;
  }

  fresh() {
    return ++this.counter;
  }

  customId() {
    return `${this.rng.pick(ID_PREFIXES)}${this.fresh()}`;
  }

  unknownId() {
    return this.rng.pick(UNKNOWN_IDS);
  }

  /** An id of an entry in the current manager, or an unknown literal. */
  knownId(pUnknown = 0.1) {
    const { entries, idCount } = this.state;
    if (entries.length === 0 || this.rng.chance(pUnknown)) return this.unknownId();
    if (idCount > entries.length && this.rng.chance(0.08)) return ref("id", this.rng.int(idCount));
    return ref("id", this.rng.pick(entries).k);
  }

  branchId(pUnknown = 0.1) {
    const onBranch = this.state.entries.filter((e) => e.onBranch);
    if (onBranch.length === 0 || this.rng.chance(pUnknown)) return this.knownId(pUnknown);
    return ref("id", this.rng.pick(onBranch).k);
  }

  fileRef() {
    const { files } = this.state;
    if (files.length === 0) return null;
    return ref("file", this.rng.int(files.length));
  }

  dirRef(table) {
    return this.rng.weighted(table);
  }

  cwdRef() {
    return this.rng.chance(0.75) ? ref("cwd") : ref("cwd2");
  }
}

const sm = (name, method, args, extra = {}) => ({ name, call: "sm", method, args, ...extra });
const st = (name, method, args, extra = {}) => ({ name, call: "static", method, args, ...extra });
const fn = (name, method, args, extra = {}) => ({ name, call: "fn", method, args, ...extra });

/** Trim trailing arguments at a random point (exercises optional parameters being absent). */
function trimArgs(g, args, minLen) {
  const len = minLen + g.rng.int(args.length - minLen + 1);
  return args.slice(0, len);
}

/** Entries for SessionManager.inMemory(cwd, options, entries). Fixed ids and 2001 timestamps. */
export function preloadedEntries(g, { header, version = 3 }) {
  const d = g.data;
  const ts = (minutes) => new Date(MESSAGE_TS_BASE + minutes * 60000).toISOString();
  const ids = ["a1b2c3d4", "b2c3d4e5", "c3d4e5f6", "d4e5f6a7", "e5f6a7b8", "f6a7b8c9", "a7b8c9d0", "b8c9d0e1", "c9d0e1f2", "d0e1f2a3", "e1f2a3b4"];
  const all = [
    { type: "message", id: ids[0], parentId: null, timestamp: ts(1), message: d.userMessage() },
    { type: "model_change", id: ids[1], parentId: ids[0], timestamp: ts(2), provider: "anthropic", modelId: "claude-pre" },
    { type: "message", id: ids[2], parentId: ids[1], timestamp: ts(5), message: d.assistantMessage() },
    { type: "thinking_level_change", id: ids[3], parentId: ids[2], timestamp: ts(6), thinkingLevel: "high" },
    // A sibling of ids[2] with an earlier timestamp: getTree must sort it first.
    { type: "message", id: ids[4], parentId: ids[1], timestamp: ts(3), message: d.systemMessage() },
    { type: "label", id: ids[5], parentId: ids[4], timestamp: ts(7), targetId: ids[2], label: "pre-label" },
    { type: "label", id: ids[6], parentId: ids[5], timestamp: ts(8), targetId: "ghost-id", label: "ghost" },
    { type: "compaction", id: ids[7], parentId: ids[6], timestamp: ts(9), summary: d.nonEmptyText(), firstKeptEntryId: g.rng.pick([ids[4], ids[5], ids[7], "zzzzzzzz"]), tokensBefore: 1234 },
    { type: "custom_message", customType: "pre", content: d.customMessageContent(), display: true, details: d.details(), id: ids[8], parentId: ids[7], timestamp: ts(10) },
    { type: "session_info", id: ids[9], parentId: ids[8], timestamp: ts(11), name: d.sessionName() },
    { type: "branch_summary", id: ids[10], parentId: ids[3], timestamp: ts(12), fromId: ids[9], summary: d.text() },
  ];
  const entries = all.slice(0, 1 + g.rng.int(all.length));
  if (version === 2 && entries.length > 1) {
    entries[entries.length - 1] = { type: "message", id: entries[entries.length - 1].id, parentId: entries[entries.length - 1].parentId, timestamp: ts(20), message: { role: "hookMessage", customType: "legacy", content: "hook", display: true, timestamp: MESSAGE_TS_BASE } };
  }
  if (version === 1) {
    for (const e of entries) {
      delete e.id;
      delete e.parentId;
      if (e.type === "compaction") {
        delete e.firstKeptEntryId;
        e.firstKeptEntryIndex = g.rng.int(entries.length + 2);
      }
    }
  }
  if (!header) return entries;
  const h = { type: "session", id: `pre-${g.fresh()}`, timestamp: ts(0), cwd: "/preloaded/cwd" };
  if (version !== 1) h.version = version;
  return [h, ...entries];
}

// ---------------------------------------------------------------------------------------------
// Sequence start

export function genStart(g) {
  return g.rng.weighted([
    [45, () => st("create", "create", [ref("cwd"), ref("sessDir")], { becomesCurrent: true })],
    [12, () => st("create", "create", [ref("cwd")], { becomesCurrent: true })],
    [6, () => st("create", "create", [ref("cwd"), ref("sessDir"), { id: g.customId() }], { becomesCurrent: true })],
    [8, () => st("continueRecent", "continueRecent", [ref("cwd"), ref("sessDir")], { becomesCurrent: true })],
    [7, () => st("inMemory", "inMemory", [ref("cwd")], { becomesCurrent: true })],
    [4, () => st("inMemory", "inMemory", [ref("cwd"), { id: g.customId() }], { becomesCurrent: true })],
    [10, () => st("inMemory", "inMemory", [ref("cwd"), undefined, preloadedEntries(g, { header: g.rng.chance(0.6) })], { becomesCurrent: true })],
    [3, () => st("inMemory", "inMemory", [ref("cwd"), { id: g.customId() }, preloadedEntries(g, { header: false })], { becomesCurrent: true })],
    [2, () => st("inMemory", "inMemory", [], { becomesCurrent: true })],
  ])();
}

// ---------------------------------------------------------------------------------------------
// Steps

function genAppendCompaction(g) {
  const d = g.data;
  const firstKept = g.rng.weighted([
    [40, () => g.branchId(0)],
    [15, () => g.knownId(0)],
    [20, () => null],
    [15, () => g.unknownId()],
    [10, () => undefined],
  ])();
  const args = [d.text(), firstKept, d.rng.pick([0, 1234, 99999, 1e21, -0, NaN, 0.5])];
  args.push(d.details(), d.fromHook(), d.maybeUsage());
  return sm("appendCompaction", "appendCompaction", trimArgs(g, args, 3));
}

function genContextEdit(g) {
  const { entries } = g.state;
  const editable = (e) => e.type === "custom_message" || (e.type === "message" && ["user", "assistant", "toolResult"].includes(e.role));
  const pools = [
    [50, entries.filter((e) => e.onBranch && editable(e))],
    [15, entries.filter((e) => e.onBranch && !editable(e))],
    [15, entries.filter((e) => !e.onBranch)],
  ];
  let target;
  const which = g.rng.weighted([...pools.map(([w, p], i) => [p.length ? w : 0, i]), [6, -1]]);
  if (which === -1) target = g.unknownId();
  else target = ref("id", g.rng.pick(pools[which][1]).k);
  const d = g.data;
  const replacement = g.rng.weighted([
    [25, () => ({ content: d.text() })],
    [20, () => ({ content: d.textBlocks() })],
    [15, () => null],
    [5, () => ({ content: d.text(), extra: d.special() })],
    [5, () => ({ content: [] })],
    [3, () => "bare string"],
    [3, () => ["array"]],
    [3, () => ({ content: 5 })],
    [3, () => ({})],
    [3, () => ({ content: null })],
    [2, () => 42],
    [2, () => undefined],
  ])();
  return sm("appendContextEdit", "appendContextEdit", [target, replacement]);
}

function genNewSession(g) {
  const opts = g.rng.weighted([
    [25, () => "none"],
    [10, () => undefined],
    [10, () => ({})],
    [15, () => ({ parentSession: g.rng.chance(0.5) && g.state.curFile ? ref("curFile") : "/some/parent session ü.jsonl" })],
    [25, () => ({ id: g.customId() })],
    [10, () => ({ id: g.rng.pick(BAD_SESSION_IDS) })],
    [5, () => ({ id: g.customId(), parentSession: "rel/parent.jsonl" })],
  ])();
  return sm("newSession", "newSession", opts === "none" ? [] : [opts]);
}

function missingPath(g, base = "sessDir") {
  return ref("path", { base, rel: `missing-${g.fresh()}.jsonl` });
}

/** A garbage file whose last line has no newline (see the note at the top). */
export const GARBAGE_WITHOUT_NEWLINE = "garbage without newline";

const GARBAGE = [
  "not json at all\n",
  '{"type":"message","id":"x"}\n',
  "\n\n   \n",
  '{"type":"session","id":5}\n',
  GARBAGE_WITHOUT_NEWLINE,
  '[1,2,3]\n{"type":"session","id":"late-header"}\n',
];

function genSetSessionFile(g) {
  const kind = g.rng.weighted([
    [35, "existing"],
    [20, "missing"],
    [4, "missingDir"],
    [22, "empty"],
    [14, "garbage"],
    [5, "current"],
  ]);
  const file = g.fileRef();
  if (kind === "existing" && file) return sm("setSessionFile", "setSessionFile", [file]);
  if (kind === "current" && g.state.curFile) return sm("setSessionFile", "setSessionFile", [ref("curFile")]);
  if (kind === "missingDir") return sm("setSessionFile", "setSessionFile", [ref("path", { base: "root", rel: `nodir-${g.fresh()}/x.jsonl` })]);
  if (kind === "empty" || kind === "garbage") {
    const base = g.rng.chance(0.5) ? "sessDir" : "miscDir";
    const p = ref("path", { base, rel: `${kind}-${g.fresh()}.jsonl` });
    const content = kind === "empty" ? "" : g.rng.pick(GARBAGE);
    return sm("setSessionFile", "setSessionFile", [p], { pre: { write: p, content } });
  }
  return sm("setSessionFile", "setSessionFile", [missingPath(g)]);
}

function genOpen(g) {
  const r = g.rng.next();
  let file;
  if (r < 0.3 && g.state.curFile) file = ref("curFile");
  else if (r < 0.4 && g.state.curFileExists) file = ref("curFile");
  else if (r < 0.9) file = g.fileRef() ?? missingPath(g);
  else file = missingPath(g, g.rng.chance(0.5) ? "sessDir" : "otherDir");
  const dir = g.dirRef([[60, undefined], [25, ref("sessDir")], [15, ref("otherDir")]]);
  const cwdOverride = g.dirRef([[70, undefined], [20, ref("cwd2")], [10, ref("cwd")]]);
  return st("open", "open", trimArgs(g, [file, dir, cwdOverride], 1), { becomesCurrent: true });
}

function genForkFrom(g) {
  const r = g.rng.next();
  let source;
  if (r < 0.45 && g.state.curFileExists) source = ref("curFile");
  else if (r < 0.55 && g.state.curFile) source = ref("curFile");
  else if (r < 0.93) source = g.fileRef() ?? missingPath(g);
  else source = missingPath(g);
  const dir = g.dirRef([[35, undefined], [45, ref("sessDir")], [20, ref("otherDir")]]);
  const options = g.rng.weighted([
    [40, () => "none"],
    [10, () => undefined],
    [10, () => ({})],
    [30, () => ({ id: g.customId() })],
    [10, () => ({ id: g.rng.pick(BAD_SESSION_IDS) })],
  ])();
  const args = [source, g.cwdRef(), dir];
  if (options !== "none") args.push(options);
  return st("forkFrom", "forkFrom", args, { becomesCurrent: true });
}

function listDir(g) {
  return g.dirRef([[25, undefined], [55, ref("sessDir")], [10, ref("otherDir")], [5, ""], [5, ref("defaultDir")]]);
}

function genSessionIdRef(g) {
  const { sidCount } = g.state;
  return g.rng.weighted([
    [40, () => ref("curSid")],
    [40, () => (sidCount ? ref("sid", g.rng.int(sidCount)) : ref("curSid"))],
    [20, () => g.rng.pick(["nope", "00000000-0000-7000-8000-000000000000", ""])],
  ])();
}

/** Discovery over the final file set, run at the end of every sequence. */
export function genEpilogue() {
  return [
    st("list", "list", [ref("cwd"), ref("sessDir")], { list: true }),
    st("list", "list", [ref("cwd")], { list: true }),
    st("listAll", "listAll", [ref("sessDir")], { list: true }),
    st("listAll", "listAll", [], { list: true }),
    st("findById", "findById", [ref("cwd"), ref("curSid"), ref("sessDir")]),
    st("continueRecent", "continueRecent", [ref("cwd"), ref("sessDir")], { becomesCurrent: true }),
  ];
}

const VALID_ID_CANDIDATES = ["1", "a", "A.b_c-9", "abc", "ä", "-a", "a-", ".a", "a b", "", "a..b", "a__b", "Z9", "x\n"];

export function genStep(g) {
  const d = g.data;
  return g.rng.weighted([
    [26, () => sm("appendMessage", "appendMessage", [d.message(g.convoBias)])],
    [4, () => sm("appendThinkingLevelChange", "appendThinkingLevelChange", [d.thinkingLevel()])],
    [4, () => sm("appendModelChange", "appendModelChange", [d.rng.pick(["anthropic", "openai", "prövider"]), d.rng.pick(["m1", "m-2", "", "😀"])])],
    [3, () => sm("appendUsage", "appendUsage", trimArgs(g, [d.rng.pick(["compaction", "branch_summary", "title"]), "anthropic", "claude-x", d.usage(), d.rng.pick([undefined, "", "a note", 0, "note ü"])], 4))],
    [5, () => genAppendCompaction(g)],
    [3, () => sm("appendCustomEntry", "appendCustomEntry", trimArgs(g, [d.rng.pick(["ext", "ext-b", "😀"]), d.customData()], 1))],
    [3, () => sm("appendSessionInfo", "appendSessionInfo", [d.sessionName()])],
    [3, () => sm("appendCustomMessageEntry", "appendCustomMessageEntry", trimArgs(g, [d.rng.pick(["ext", "notes"]), d.customMessageContent(), d.rng.chance(0.5), d.details()], 3))],
    [6, () => genContextEdit(g)],
    [5, () => sm("appendLabelChange", "appendLabelChange", [g.knownId(0.1), d.label()])],
    [6, () => sm("branch", "branch", [g.knownId(0.15)])],
    [2, () => sm("resetLeaf", "resetLeaf", [])],
    [3, () => sm("branchWithSummary", "branchWithSummary", trimArgs(g, [g.rng.chance(0.15) ? null : g.knownId(0.15), d.rng.chance(0.15) ? "" : d.text(), d.details(), d.fromHook(), d.maybeUsage()], 2))],
    [2.5, () => sm("createBranchedSession", "createBranchedSession", [g.knownId(0.12)])],
    [2, () => genNewSession(g)],
    [2, () => genOpen(g)],
    [2.5, () => genSetSessionFile(g)],
    [2, () => genForkFrom(g)],
    [1.5, () => st("continueRecent", "continueRecent", trimArgs(g, [g.cwdRef(), listDir(g)], 1), { becomesCurrent: true })],
    [1.5, () => st("list", "list", trimArgs(g, [g.rng.chance(0.85) ? ref("cwd") : ref("cwd2"), listDir(g)], 1), { list: true })],
    [0.3, () => st("list", "list", [ref("cwd"), ref("sessDir"), undefined, ref("abortedSignal")], { list: true })],
    [1.2, () => st("listAll", "listAll", g.rng.weighted([[35, []], [35, [ref("sessDir")]], [10, [ref("otherDir")]], [10, [""]], [10, [ref("sessDir"), undefined, ref("abortedSignal")]]]), { list: true })],
    [1, () => st("findById", "findById", trimArgs(g, [g.cwdRef(), genSessionIdRef(g), listDir(g)], 2))],
    [1, () => st("inMemory", "inMemory", g.rng.weighted([
      [30, [ref("cwd")]],
      [15, [ref("cwd2"), { id: g.customId() }]],
      [25, [ref("cwd"), undefined, preloadedEntries(g, { header: g.rng.chance(0.6) })]],
      [8, [ref("cwd"), undefined, preloadedEntries(g, { header: true, version: g.rng.chance(0.5) ? 1 : 2 })]],
      [8, [ref("cwd"), { id: g.customId() }, preloadedEntries(g, { header: false })]],
      [7, [ref("cwd"), undefined, []]],
      [7, [ref("cwd"), { id: g.rng.pick(BAD_SESSION_IDS) }]],
    ]), { becomesCurrent: true })],
    [1.2, () => st("create", "create", g.rng.weighted([
      [40, [ref("cwd"), ref("sessDir")]],
      [20, [ref("cwd")]],
      [15, [ref("cwd2"), ref("otherDir")]],
      [15, [ref("cwd"), ref("sessDir"), { id: g.customId() }]],
      [10, [ref("cwd"), ref("sessDir"), { id: g.rng.pick(BAD_SESSION_IDS) }]],
    ]), { becomesCurrent: true })],
    [0.4, () => fn("getDefaultSessionDir", "getDefaultSessionDir", g.rng.weighted([[50, [g.cwdRef()]], [30, [g.cwdRef(), ref("agentDir")]], [20, [ref("cwd"), ref("path", { base: "root", rel: "alt-agent" })]]]))],
    [0.4, () => fn("assertValidSessionId", "assertValidSessionId", [g.rng.pick(VALID_ID_CANDIDATES)])],
    [0.5, () => ({ name: "migrateSessionEntries", call: "migrate", args: [preloadedEntries(g, { header: g.rng.chance(0.7), version: g.rng.pick([1, 2, 3]) })] })],
    [0.6, () => ({ name: "loadEntriesFromFile", call: "fn", method: "loadEntriesFromFile", args: [g.fileRef() ?? missingPath(g)] })],
  ])();
}
