"use strict";
// What crosses between the JS shell and the core (`NativeSession`), both ways: ids as keys, entry
// lines parsed back into objects, the core's query results (tree, context plan, transcript page)
// decoded, entry text encoded as UTF-8, and the skeletons an `inMemory` session gives the core
// instead of whole entries.
//
// Ids cross to the core as keys: the JSON text of the id (see crates/pi-session-core/src/record.rs).
// Query results cross as one Uint32Array each, encoded by the binding (src/wire.rs, one encoder
// per format) and decoded here. Every constant of those layouts (NONE, the flags, the page
// statuses, each offset and stride) is the binding's, read from it below and never spelled again
// here (__test__/wire-constants.test.mjs fails when one is).
const native = require("../native.js");
const { sessionError } = require("./errors.js");

const {
  // "No record", in a position slot of every format and from the scalar position getters of
  // NativeSession (headerPos, leafPos, lookup, labelPos, sessionNamePos).
  NONE,
  // The key of an absent id (`undefined`).
  NO_ID_KEY,
  // The tree (getTree):  [rootCount, rootIndex × rootCount, nodeCount, node × nodeCount, childIndex…]
  //   node:              [entryPos, labelPos|NONE, sortByDate, childCount]
  // Every node comes after its children; the children of all nodes follow the nodes, node after
  // node, as node indexes (as are the roots). sortByDate 1: the node's children are in file order
  // and are sorted here by `new Date(timestamp)`, as the reference sorts them (only JS has its Date
  // semantics); 0: they are in final order.
  TREE_ROOT_COUNT,
  TREE_ROOTS,
  NODE_STRIDE,
  NODE_ENTRY,
  NODE_LABEL,
  NODE_SORT_BY_DATE,
  NODE_CHILD_COUNT,
  // The context plan (contextPlan): [thinkingPos|NONE, modelPos|NONE, count, item × count]
  //   item:                          [entryPos, editPos|NONE, flags]
  PLAN_THINKING,
  PLAN_MODEL,
  PLAN_COUNT,
  PLAN_ITEMS,
  ITEM_STRIDE,
  ITEM_ENTRY,
  ITEM_EDIT,
  ITEM_FLAGS,
  // Item flags: contributes no message (a compaction after the leading one); the leading
  // compaction carries `retainedTail` (informational here).
  FLAG_SUPPRESSED,
  FLAG_RETAINED_TAIL,
  // A transcript page (transcriptPage):
  //   [status, total, itemsAfterLatestCompaction, start, count, leafPos|NONE, leafItems, item × count]
  //   item: [entryPos, within] (the entry that makes the item, and which of its items it is)
  //   status: PAGE_OK, or PAGE_NOT_ON_BRANCH / PAGE_PAST_ENTRY for a boundary refused (then
  //   nothing follows)
  PAGE_STATUS,
  PAGE_TOTAL,
  PAGE_AFTER_COMPACTION,
  PAGE_START,
  PAGE_COUNT,
  PAGE_LEAF,
  PAGE_LEAF_ITEMS,
  PAGE_ITEMS,
  PAGE_ITEM_STRIDE,
  PAGE_ITEM_ENTRY,
  PAGE_ITEM_WITHIN,
  PAGE_OK,
  PAGE_NOT_ON_BRANCH,
  PAGE_PAST_ENTRY,
  // A batch with cuts (parseLines): where it holds its parts, and the tags of its cut plan, from
  // the core that writes them.
  BATCH_TEXT,
  BATCH_PLAN,
  BATCH_NAMES,
  BATCH_WIDE,
  BATCH_VALUES,
  BATCH_STEP_NAME,
  BATCH_FROM_VALUES,
  // The slots per session of a summary batch (eachSummary).
  SUMMARY_FIELDS,
} = native;

/** @typedef {{ entry: any, children: TreeNode[], label: unknown, labelTimestamp: unknown }} TreeNode */
/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */

/**
 * getTree's roots from the tree format, as the reference's nodes
 * `{ entry, children, label, labelTimestamp }` over the session's own entry objects.
 * @param {Uint32Array} plan
 * @param {SessionState} s
 * @returns {TreeNode[]}
 */
function decodeTree(plan, s) {
  const rootCount = plan[TREE_ROOT_COUNT];
  const nodeCount = plan[TREE_ROOTS + rootCount];
  const nodeAt = TREE_ROOTS + rootCount + 1;
  const nodeEnd = nodeAt + nodeCount * NODE_STRIDE;
  const objs = s.objs;
  // The entries and label records the nodes show, parsed at once when some are missing (once
  // getEntries() has been answered, none are: pi's footer asks right after a resume).
  if (!s.hasAllEntries()) {
    /** @type {number[]} */
    const missing = [];
    for (let j = nodeAt; j < nodeEnd; j += NODE_STRIDE) {
      if (objs[plan[j + NODE_ENTRY]] === undefined) missing.push(plan[j + NODE_ENTRY]);
      const label = plan[j + NODE_LABEL];
      if (label !== NONE && objs[label] === undefined) missing.push(label);
    }
    if (missing.length > 0) s.entries(missing);
  }
  /** @type {TreeNode[]} */
  const nodes = new Array(nodeCount);
  // One pass: a node's children are made before it. Children arrays are made at their final
  // size (most nodes have one child): pushing into an empty array would allocate room for 17.
  for (let k = 0, j = nodeAt, c = nodeEnd; k < nodeCount; k++, j += NODE_STRIDE) {
    const cc = plan[j + NODE_CHILD_COUNT];
    let children;
    if (cc === 0) children = [];
    else if (cc === 1) children = [nodes[plan[c]]];
    else {
      children = [nodes[plan[c]], nodes[plan[c + 1]]];
      for (let i = 2; i < cc; i++) children.push(nodes[plan[c + i]]);
      if (plan[j + NODE_SORT_BY_DATE] === 1) children.sort((a, b) => new Date(a.entry.timestamp).getTime() - new Date(b.entry.timestamp).getTime());
    }
    c += cc;
    const labelPos = plan[j + NODE_LABEL];
    const labelEntry = labelPos === NONE ? undefined : objs[labelPos];
    nodes[k] = { entry: objs[plan[j + NODE_ENTRY]], children, label: labelEntry?.label, labelTimestamp: labelEntry?.timestamp };
  }
  const roots = new Array(rootCount);
  for (let r = 0; r < rootCount; r++) roots[r] = nodes[plan[TREE_ROOTS + r]];
  return roots;
}

/**
 * A context plan, read in place: the settings positions, and per item its entry, its context
 * edit and whether it is silent.
 */
class PlanItems {
  /** @param {Uint32Array} buf */
  constructor(buf) {
    this.buf = buf;
    /** How many items this plan holds. */
    this.count = buf[PLAN_COUNT];
    /** Position of the last thinking_level_change on the path, or NONE. */
    this.thinking = buf[PLAN_THINKING];
    /** Position of the last model_change or assistant message on the path, or NONE. */
    this.model = buf[PLAN_MODEL];
  }
  /** @param {number} i */
  entry(i) {
    return this.buf[PLAN_ITEMS + i * ITEM_STRIDE + ITEM_ENTRY];
  }
  /** The item's context edit position, or NONE. @param {number} i */
  edit(i) {
    return this.buf[PLAN_ITEMS + i * ITEM_STRIDE + ITEM_EDIT];
  }
  /** Whether the item contributes no message. @param {number} i */
  silent(i) {
    return (this.buf[PLAN_ITEMS + i * ITEM_STRIDE + ITEM_FLAGS] & FLAG_SUPPRESSED) !== 0;
  }
}

/** The context plan (contextPlan). @param {Uint32Array} buf */
function decodePlan(buf) {
  return new PlanItems(buf);
}

/** A transcript page, read in place. */
class TranscriptPageView {
  /** @param {Uint32Array} buf */
  constructor(buf) {
    this.buf = buf;
    /** PAGE_OK, PAGE_NOT_ON_BRANCH or PAGE_PAST_ENTRY. */
    this.status = buf[PAGE_STATUS];
    const ok = this.status === PAGE_OK;
    /** Items of the whole branch. */
    this.total = ok ? buf[PAGE_TOTAL] : 0;
    /** Items after the branch's latest compaction. */
    this.afterCompaction = ok ? buf[PAGE_AFTER_COMPACTION] : 0;
    /** The index of the page's first item in the branch's. */
    this.start = ok ? buf[PAGE_START] : 0;
    this.count = ok ? buf[PAGE_COUNT] : 0;
    /** The branch's last entry (NONE for an empty branch) and how many items it makes. */
    this.leaf = ok ? buf[PAGE_LEAF] : NONE;
    this.leafItems = ok ? buf[PAGE_LEAF_ITEMS] : 0;
  }
  /** The position of the entry that makes item `i` of the page. @param {number} i */
  entry(i) {
    return this.buf[PAGE_ITEMS + i * PAGE_ITEM_STRIDE + PAGE_ITEM_ENTRY];
  }
  /** Which of that entry's items it is. @param {number} i */
  within(i) {
    return this.buf[PAGE_ITEMS + i * PAGE_ITEM_STRIDE + PAGE_ITEM_WITHIN];
  }
}

/** A transcript page (transcriptPage). @param {Uint32Array} buf */
function decodeTranscriptPage(buf) {
  return new TranscriptPageView(buf);
}

/**
 * Upper bound of the JSON text fetched from the core in one call when materializing entries: the
 * text is garbage once parsed, so small batches keep a big materialization's peak near the size
 * of the objects themselves.
 */
const BATCH_BYTES = 1024 * 1024;
/** About how many bytes of lines one `eachLinesJson` call covers: it returns how many positions
 * it got through, and the caller calls again for the rest. */
const CALL_BYTES = 16 * BATCH_BYTES;

/**
 * The core's key for a JS id value, or null when no record can have it (objects, NaN, symbols).
 * @param {unknown} value
 * @returns {string | null}
 */
function keyOf(value) {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : null;
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
      return NO_ID_KEY;
    case "object":
      return value === null ? "null" : null;
    default:
      return null;
  }
}

/** The id value a key stands for (the inverse of keyOf). @param {string} key */
function valueOfKey(key) {
  return key === NO_ID_KEY ? undefined : JSON.parse(key);
}

/** A batch of record lines as the core gives it (`batch_value` in src/cut.rs).
 * @typedef {string | [string, Uint32Array, string[], string, ...string[]]} Batch */

/**
 * Parses a batch of record lines as the core gives it (`line`, and each batch of `eachLinesJson`):
 * the JSON text `[line, line, …]`, or `[text, plan, names, wide, ...values]` when strings were
 * cut out of it (each replaced by 0 in the text; `batch_value` in src/cut.rs). Per cut, `plan`
 * holds the item it belongs to, the number of steps, each step as two numbers (BATCH_STEP_NAME
 * and an index into `names`, or BATCH_STEP_INDEX and an array index), then BATCH_FROM_VALUES for
 * the next of `values` or BATCH_FROM_WIDE, start and end of a slice of `wide` (the tags come
 * from the core, through src/cut.rs). The strings are put back where they were, so the objects equal `JSON.parse`
 * of the original lines, member order included (assigning to an existing own property keeps its
 * place; the core cuts nothing where a name repeats). Returns an array of items.
 * @param {Batch} r
 * @returns {any[]}
 */
function parseLines(r) {
  if (typeof r === "string") return JSON.parse(r);
  const items = JSON.parse(/** @type {string} */ (r[BATCH_TEXT]));
  const plan = /** @type {Uint32Array} */ (r[BATCH_PLAN]);
  const names = /** @type {string[]} */ (r[BATCH_NAMES]);
  const wide = /** @type {string} */ (r[BATCH_WIDE]);
  let next = BATCH_VALUES;
  for (let i = 0; i < plan.length; ) {
    let o = items[plan[i++]];
    const depth = plan[i++];
    for (let d = 1; d < depth; d++) {
      const at = plan[i + 1];
      o = o[plan[i] === BATCH_STEP_NAME ? names[at] : at];
      i += 2;
    }
    const key = plan[i] === BATCH_STEP_NAME ? names[plan[i + 1]] : plan[i + 1];
    i += 2;
    if (plan[i++] === BATCH_FROM_VALUES) o[key] = r[next++];
    else {
      o[key] = wide.slice(plan[i], plan[i + 1]);
      i += 2;
    }
  }
  return items;
}

/**
 * parseLines of text the core read from a session's lines. Text that does not parse was changed
 * in the file after the open, where the open's check of each line (its length and its ends) does
 * not look: that is reported as the core reports a change it sees, `SESSION_FILE_CHANGED`.
 * @param {Batch} r @param {string | undefined} file the session file, for the message
 * @returns {any[]}
 */
function parseHeld(r, file) {
  try {
    return parseLines(r);
  } catch (e) {
    throw e instanceof SyntaxError ? fileChanged(file) : e;
  }
}

/** @param {string | undefined} file */
function fileChanged(file) {
  return sessionError("SESSION_FILE_CHANGED", `Session file changed on disk since it was opened${file === undefined ? "" : `: ${file}`}`);
}

// Entry text crosses to the core as UTF-8 in a reused buffer: TextEncoder.encodeInto is several
// times cheaper than passing a JS string through N-API.
const encoder = new TextEncoder();
const utf8 = {
  /** The buffer the last `encode` wrote (replaced by a larger one when a line does not fit). */
  bytes: new Uint8Array(1 << 16),
  /**
   * Writes `line` into `utf8.bytes` and returns its length in bytes. Read `utf8.bytes` after the
   * call: it may be a new buffer.
   * @param {string} line
   */
  encode(line) {
    let { read, written } = encoder.encodeInto(line, utf8.bytes);
    if (read < line.length) {
      utf8.bytes = new Uint8Array(Math.max(utf8.bytes.length * 2, Buffer.byteLength(line) + 16));
      ({ written } = encoder.encodeInto(line, utf8.bytes));
    }
    return written;
  },
};

/** An id-like member as the core may key it: JSON's own scalars pass, anything else (an object,
 * BigInt, NaN) can equal no id of the session, and is left out. @param {unknown} v */
function keyMember(v) {
  return typeof v === "string" || typeof v === "boolean" || v === null || (typeof v === "number" && Number.isFinite(v)) ? v : undefined;
}

/**
 * What an `inMemory` session gives the core for an entry: a skeleton of the members it reads
 * (record.rs `note_member`), while the entry itself stays the caller's object. The reference never
 * serializes such entries, so it takes values `JSON.stringify` refuses (BigInt, cycles, throwing
 * `toJSON`), and so does this, and an append costs no serialization of the payload. Not for
 * headers and labels (see goesWhole).
 * @param {any} entry
 * @returns {string}
 */
function skeletonOf(entry) {
  /** @type {Record<string, unknown>} */
  const s = { type: entry.type, id: entry.id, parentId: entry.parentId, timestamp: entry.timestamp };
  switch (entry.type) {
    case "message": {
      const m = entry.message;
      if (m !== null && (typeof m === "object" || typeof m === "function")) {
        let role;
        try {
          role = m.role;
        } catch {
          // As in the reference, a message whose role cannot be read fails where it is read.
        }
        s.message = { role: typeof role === "string" ? role : undefined };
      }
      break;
    }
    case "compaction":
      s.firstKeptEntryId = keyMember(entry.firstKeptEntryId);
      // As long as the caller's: its messages are items of the transcript (record::Meta).
      if (Array.isArray(entry.retainedTail)) s.retainedTail = new Array(entry.retainedTail.length).fill(0);
      // The transcript counts a truthy systemMessage as an item of its own (record::Meta).
      if (entry.systemMessage) s.systemMessage = true;
      break;
    case "branch_summary":
      if (entry.summary) s.summary = true;
      break;
    case "context_edit":
      s.targetId = keyMember(entry.targetId);
      break;
  }
  return JSON.stringify(s);
}

/** Headers and labels reach the core whole even in an `inMemory` session: it copies their values
 * into a branched session (the core's `mark_skeletons` keeps to the same rule). @param {any} entry */
function goesWhole(entry) {
  return entry.type === "session" || entry.type === "label";
}

/**
 * Calls `fn(info, first, all, last)` for each session of a summary batch (`SummaryRun.next`,
 * `SummaryBatch` in src/listing.rs): SUMMARY_FIELDS slots per session, the info's JSON text (null
 * for a file that is not a session), its first message and its whole message text. `last` is true
 * for the batch's last session.
 * @param {Array<string | null>} batch
 * @param {(info: string | null, first: string | null, all: string | null, last: boolean) => void} fn
 */
function eachSummary(batch, fn) {
  for (let j = 0; j < batch.length; j += SUMMARY_FIELDS) {
    fn(batch[j], batch[j + 1], batch[j + 2], j + SUMMARY_FIELDS >= batch.length);
  }
}
module.exports = {
  NONE,
  eachSummary,
  FLAG_SUPPRESSED,
  FLAG_RETAINED_TAIL,
  decodeTree,
  decodePlan,
  decodeTranscriptPage,
  PAGE_OK,
  PAGE_NOT_ON_BRANCH,
  BATCH_BYTES,
  CALL_BYTES,
  keyOf,
  valueOfKey,
  parseLines,
  parseHeld,
  utf8,
  skeletonOf,
  goesWhole,
};
