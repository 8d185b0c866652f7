"use strict";
// The changes that rebuild a session from part of itself: pruneBranch and createBranchedSession.
// The core rewrites the records (and the file); this module carries the entry objects across, so
// that what the reference keeps as objects stays objects.
const { keyOf } = require("./wire.js");

/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */

/** pruneBranch(entryId), after the check that the entry exists: surviving entry objects stay the
 * same objects (a re-parented one gets its new `parentId` / `firstKeptEntryId`).
 * @param {SessionState} s @param {unknown} entryId */
function pruneBranch(s, entryId) {
  const objs = s.objs;
  const r = s.n.pruneBranch(/** @type {string} */ (keyOf(entryId)), String(entryId));
  const kept = r.kept;
  s.replaced(kept.length);
  for (let i = 0; i < kept.length; i++) {
    const o = objs[kept[i]];
    if (o !== undefined) {
      s.objs[i] = o;
      s.mark(o, i);
    }
  }
  for (let k = 0; k < r.editPos.length; k++) {
    const o = s.objs[r.editPos[k]];
    if (o !== null && typeof o === "object") o[r.editMember[k]] = JSON.parse(r.editJson[k]);
  }
  s.syncLeaf();
  return { removed: r.removed, labelsDropped: r.labelsDropped, bytesBefore: r.bytesBefore, bytesAfter: r.bytesAfter, written: r.written };
}

/**
 * createBranchedSession(leafId): the core writes the new session (the path to `start`, labels
 * re-created for the entries on it); this makes its entry objects.
 *
 * Two of the reference's rules are applied here to the objects, as the core applies them to the
 * records (tree.rs `branched_lines`): a compaction's `firstKeptEntryId` that named a label record
 * (labels are left out of the path) names the next entry kept instead, and the re-created label
 * records carry the original labels' values.
 * @param {SessionState} s @param {boolean} persist @param {unknown} leafId @param {unknown} start
 * @returns {string | null} the new file
 */
function createBranchedSession(s, persist, leafId, start) {
  const key = start ? keyOf(start) : null;
  // The new entries are shallow copies of the old objects (nested values shared), as the
  // reference keeps them. That is only observable for entries already turned into objects: when
  // the whole path is, we copy them; otherwise the new entries are parsed lazily from the lines
  // the core wrote (equal values), which spares parsing a huge session just to copy it.
  const pathPos = key === null ? new Uint32Array(0) : s.n.branchPath(key);
  const objs = s.objs;
  // An in-memory session's entries may be held by JS alone (see skeletonOf): its path is always
  // copied from objects.
  const path = pathPos.every((p) => objs[p] !== undefined) ? Array.from(pathPos, (p) => objs[p]) : persist ? [] : s.entries(pathPos);
  const oldLabels = [];
  for (const e of path) {
    if (e.type === "label") continue;
    const pos = s.n.labelPos(keyOf(e.id) ?? "null");
    if (pos >= 0) oldLabels.push(s.entry(pos));
  }
  const file = s.n.createBranchedSession(key, `${leafId}`);
  s.replaced();
  let pos = 1;
  let parentId = null;
  const replacement = new Map();
  /** @type {unknown[]} */
  let pending = [];
  for (const entry of path) {
    if (entry.type === "label") {
      pending.push(entry.id);
      continue;
    }
    for (const id of pending) replacement.set(id, entry.id);
    pending = [];
    s.objs[pos++] =
      entry.type === "compaction"
        ? {
            ...entry,
            parentId,
            firstKeptEntryId:
              entry.firstKeptEntryId === entry.id ? entry.id : (replacement.get(entry.firstKeptEntryId) ?? entry.firstKeptEntryId),
          }
        : { ...entry, parentId };
    parentId = entry.id;
  }
  // Re-created label records carry the original label values.
  const total = oldLabels.length > 0 ? s.n.recordCount() : 0;
  for (; pos < total; pos++) {
    const label = s.entry(pos);
    const original = oldLabels.find((l) => l.targetId === label.targetId);
    if (original !== undefined) {
      label.label = original.label;
      s.origin?.positions.delete(label); // no longer what its line says, maybe
    }
  }
  s.syncLeaf();
  return file;
}

module.exports = { pruneBranch, createBranchedSession };
