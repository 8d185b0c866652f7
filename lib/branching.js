"use strict";
// The changes that rebuild a session from part of itself: pruneBranch and createBranchedSession.
// The core rewrites the records (and the file); this module carries the entry objects across, so
// that what the reference keeps as objects stays objects.
const { keyOf, valueOfKey } = require("./wire.js");

/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */

/** pruneBranch(entryId) (the core checks the entry and decides): surviving entry objects stay
 * the same objects (a re-parented one gets its new `parentId` / `firstKeptEntryId`). The result
 * is upstream's `{ removedEntryIds, contextChanged }` (the ids deleted, labels dropped with them
 * included) with our counts: entries of the subtree, labels dropped, the records' bytes before
 * and after, and whether the file was rewritten.
 * @param {SessionState} s @param {unknown} entryId */
function pruneBranch(s, entryId) {
  const objs = s.objs;
  const r = s.core.pruneBranch(keyOf(entryId), `${entryId}`);
  const kept = r.kept;
  s.replaced(kept.length);
  for (let i = 0; i < kept.length; i++) {
    const o = objs[kept[i]];
    if (o !== undefined) s.adopt(o, i);
  }
  for (let k = 0; k < r.editPos.length; k++) {
    const o = s.objs[r.editPos[k]];
    if (o !== null && typeof o === "object") o[r.editMember[k]] = JSON.parse(r.editJson[k]);
  }
  return {
    removedEntryIds: r.removedKeys.map(valueOfKey),
    contextChanged: r.contextChanged,
    removed: r.removed,
    labelsDropped: r.labelsDropped,
    bytesBefore: r.bytesBefore,
    bytesAfter: r.bytesAfter,
    written: r.written,
  };
}

/**
 * createBranchedSession(leafId): the core decides and writes the new session (branch/lines.rs: the
 * path without its label records, re-chained, a compaction's `firstKeptEntryId` that named such a
 * label moved on, the labels on the path re-created); this makes its entry objects from what it
 * says each record was made from. That stays here because the reference's new entries are
 * shallow copies of its old objects (`{ ...entry, parentId }`: nested values shared, ids the old
 * values) and its re-created labels carry the old label values, which only the old objects hold.
 * @param {SessionState} s @param {boolean} persist @param {unknown} leafId @param {unknown} start
 * @returns {string | null} the new file
 */
function createBranchedSession(s, persist, leafId, start) {
  const key = start ? keyOf(start) : null;
  // Copying is only observable for entries already turned into objects: those are copied, and
  // the others are parsed lazily from the lines the core wrote (equal values), which spares
  // parsing a huge session just to copy it. An in-memory session's entries may be held by JS
  // alone (see skeletonOf): its whole path is made into objects first.
  if (!persist && key !== null) s.entries(s.core.branchPath(key));
  const objs = s.objs;
  const r = s.core.createBranchedSession(key, `${leafId}`, Date.now());
  s.replaced();
  const from = r.from;
  /** @type {Map<number, number> | null} */
  let newIndex = null;
  /** The id of the new entry made from the old record `p`: its old object's, else its new line's.
   * @param {number} p */
  const idOf = (p) => {
    const o = objs[p];
    if (o !== undefined) return o.id;
    newIndex ??= new Map(Array.from(from, (q, i) => [q, i]));
    return s.entry(/** @type {number} */ (newIndex.get(p)) + 1).id;
  };
  for (let i = 0; i < r.kept; i++) {
    const o = objs[from[i]];
    if (o !== undefined) s.objs[i + 1] = { ...o, parentId: i === 0 ? null : idOf(from[i - 1]) };
  }
  for (let k = 0; k < r.firstKeptAt.length; k++) {
    const i = r.firstKeptAt[k];
    if (objs[from[i]] === undefined) continue; // its line says it
    const by = r.firstKeptFrom[k];
    s.objs[i + 1].firstKeptEntryId = by == null ? objs[from[i]].firstKeptEntryId : idOf(by);
  }
  // Re-created label records carry the original label values.
  for (let i = r.kept; i < from.length; i++) {
    const original = objs[from[i]];
    if (original === undefined) continue; // never read: its value is the one the line gives
    const label = s.entry(i + 1);
    label.label = original.label;
    s.unmark(label); // no longer what its line says, maybe
  }
  // The header is made now: the reference's always has a `parentSession` member, `undefined` when
  // none is written (in memory, or no file yet).
  s.adoptHeader();
  return r.file ?? null;
}

module.exports = { pruneBranch, createBranchedSession };
