"use strict";
// Where entry objects come from: the record of a manager's session each was made from or written
// as. Given such objects, `inMemory(cwd, options, entries)` takes the records from that session
// instead of serializing every entry and parsing it again: pi builds one from
// `[header, ...sm.getBranch()]` at each turn boundary when an extension listens, and serializing
// a big session each time cost hundreds of ms where the reference needs a few.
//
// An origin is one manager's session, `{ id, live, positions, objs, pending }`: its native
// session's tracking id (an id, so that entry objects never keep a session alive), whether that
// manager still holds it, and a WeakMap from its objects to their positions. A header object
// leads to its origin through HEADER_ORIGIN. One map per session rather than one for every
// object: a WeakMap that grows with every entry ever made cost 1.5-2.5 µs per insert, a small
// one ~0.3 µs.
//
// Objects made many at once (a resume makes every entry) go into the map later: their positions
// wait in `pending`, over the session's `objs`, and are added when the event loop is idle (see
// idle-parse.js) or when the map is read, whichever comes first. Adding them at once was 7-9 ms
// of an 11 MB session's resume, which nobody needs before an `inMemory` of its entries.
const native = require("../native.js");

/** @typedef {{ id: number, live: boolean, positions: WeakMap<object, number>, objs: any[], pending: number[] }} Origin */

/** A header object's origin. @type {WeakMap<object, Origin>} */
const HEADER_ORIGIN = new WeakMap();

/** A new origin: the session tracked as `id`, whose objects by position are `objs`.
 * @param {number} id @param {any[]} objs @returns {Origin} */
function newOrigin(id, objs) {
  return { id, live: true, positions: new WeakMap(), objs, pending: [] };
}

/** `obj` stands for the record at `pos` of `origin`'s session; a header leads to it (unless it
 * is shared with a live session: a preview's header, made from that one, keeps leading there).
 * @param {Origin} origin @param {object} obj @param {number} pos */
function place(origin, obj, pos) {
  origin.positions.set(obj, pos);
  if (/** @type {any} */ (obj).type === "session") {
    const prev = HEADER_ORIGIN.get(obj);
    if (prev === undefined || !prev.live) HEADER_ORIGIN.set(obj, origin);
  }
}

/** The session and positions the objects `entries` were all made from (header first, current
 * version), or null. @param {unknown} entries */
function recordsOf(entries) {
  if (!Array.isArray(entries) || entries.length === 0) return null;
  const head = entries[0];
  if (head === null || typeof head !== "object" || head.type !== "session" || head.version !== native.CURRENT_SESSION_VERSION) return null;
  const origin = HEADER_ORIGIN.get(head);
  if (origin === undefined || !origin.live) return null;
  addPending(origin, Infinity);
  const map = origin.positions;
  const positions = new Uint32Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const pos = e !== null && typeof e === "object" ? map.get(e) : undefined;
    if (pos === undefined) return null;
    positions[i] = pos;
  }
  return { id: origin.id, positions };
}

/** Adds `origin`'s pending objects to its map, until `deadline` (a `performance.now()` time);
 * returns whether some are still pending. @param {Origin} origin @param {number} deadline */
function addPending(origin, deadline) {
  const { pending, objs, positions } = origin;
  while (pending.length > 0) {
    // A slice checks the clock every 256 objects.
    for (let n = 0; n < 256 && pending.length > 0; n++) {
      const pos = /** @type {number} */ (pending.pop());
      const obj = objs[pos];
      if (obj !== undefined) positions.set(obj, pos);
    }
    if (deadline !== Infinity && performance.now() >= deadline) break;
  }
  return pending.length > 0;
}

module.exports = { newOrigin, place, recordsOf, addPending };
