"use strict";
// Contexts from the core's projection plan: buildSessionContext, buildSessionProjection and the
// transcript read model's pages. The core chooses the records (crates/pi-session-core/src/
// context.rs); this module decodes its plan, in this one place, and builds the message objects.
//
// The wire format (a Uint32Array; NONE for "no record"):
//   plan: [thinkingPos, modelPos, count, item × count]                 (projectionPlan)
//   page: [thinkingPos, modelPos, total, start, item × count]          (projectionPage)
//   item: [entryPos, editPos, flags]                                   flags & 1: contributes nothing
const ctx = require("./context.js");
const transcript = require("./transcript.js");
const { sessionError } = require("./errors.js");
const { NONE } = require("./wire.js");

const PLAN_THINKING = 0;
const PLAN_MODEL = 1;
const PLAN_COUNT = 2;
const PLAN_ITEMS = 3;
const PAGE_TOTAL = 2;
const PAGE_START = 3;
const PAGE_ITEMS = 4;
const ITEM_STRIDE = 3;
const ITEM_ENTRY = 0;
const ITEM_EDIT = 1;
const ITEM_FLAGS = 2;
/** Flag of an item that contributes no message (a compaction after the leading one). */
const FLAG_SILENT = 1;

/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */

/**
 * The messages one plan item contributes: the one projection rule of buildSessionContext,
 * buildSessionProjection and the transcript read model.
 * @param {any} sourceEntry @param {any} edit the context edit in effect, or undefined @param {number} flags
 * @returns {any[]}
 */
function projectItem(sourceEntry, edit, flags) {
  if (flags & FLAG_SILENT) return [];
  // A stored message, or its content-null copy (the common path of projection, kept inline).
  if (edit === undefined && sourceEntry.type === "message") {
    const message = sourceEntry.message;
    if (message.content != null) return [message];
    return ctx.sessionEntryToContextMessages(sourceEntry);
  }
  return ctx.projectContextEntry(sourceEntry, edit);
}

/** Objects for the records a plan (or a page of one) names: its `count` items from `at` on,
 * each with its context edit, and the settings records when `withSettings`.
 * @param {SessionState} s @param {Uint32Array} plan @param {number} at @param {number} count @param {boolean} withSettings */
function materializePlan(s, plan, at, count, withSettings) {
  const want = new Uint32Array(count * 2 + 2);
  let w = 0;
  if (withSettings) {
    if (plan[PLAN_THINKING] !== NONE) want[w++] = plan[PLAN_THINKING];
    if (plan[PLAN_MODEL] !== NONE) want[w++] = plan[PLAN_MODEL];
  }
  for (let i = 0; i < count; i++) {
    const k = at + i * ITEM_STRIDE;
    want[w++] = plan[k + ITEM_ENTRY];
    if (plan[k + ITEM_EDIT] !== NONE) want[w++] = plan[k + ITEM_EDIT];
  }
  s.materialize(want, w);
}

/** The `count` items of `plan` from `at` on, as `{ sourceEntry, messages }`, their messages also
 * pushed onto `messages` when given (after materializePlan).
 * @param {SessionState} s @param {Uint32Array} plan @param {number} at @param {number} count
 * @param {any[] | null} messages @param {boolean} withItems */
function projectItems(s, plan, at, count, messages, withItems) {
  const objs = s.objs;
  const items = withItems ? new Array(count) : null;
  for (let i = 0; i < count; i++) {
    const k = at + i * ITEM_STRIDE;
    const sourceEntry = objs[plan[k + ITEM_ENTRY]];
    const edit = plan[k + ITEM_EDIT] === NONE ? undefined : objs[plan[k + ITEM_EDIT]];
    const m = projectItem(sourceEntry, edit, plan[k + ITEM_FLAGS]);
    if (messages !== null) for (let j = 0; j < m.length; j++) messages.push(m[j]);
    if (items !== null) items[i] = { sourceEntry, messages: m };
  }
  return items;
}

/** buildSessionContext (`withEntries` false) or buildSessionProjection (true).
 * @param {SessionState} s @param {boolean} withEntries */
function project(s, withEntries) {
  const plan = s.n.projectionPlan();
  const count = plan[PLAN_COUNT];
  materializePlan(s, plan, PLAN_ITEMS, count, true);
  const objs = s.objs;
  const { thinkingLevel, model } = ctx.settingsFrom(
    plan[PLAN_THINKING] === NONE ? undefined : objs[plan[PLAN_THINKING]],
    plan[PLAN_MODEL] === NONE ? undefined : objs[plan[PLAN_MODEL]],
  );
  /** @type {any[]} */
  const messages = [];
  const entries = projectItems(s, plan, PLAN_ITEMS, count, messages, withEntries);
  return withEntries ? { entries, messages, thinkingLevel, model } : { messages, thinkingLevel, model };
}

/** readTranscriptPage: one page of the active branch's projected context; only the page's
 * entries are parsed. @param {SessionState} s @param {any} options */
function readPage(s, options) {
  const feed = s.feed;
  const { limit, anchor, backward } = transcript.pageRequest(options, feed.tag, feed.epoch);
  const page = s.n.projectionPage(anchor === null ? NONE : anchor, limit, backward);
  const total = page[PAGE_TOTAL];
  const start = page[PAGE_START];
  const count = (page.length - PAGE_ITEMS) / ITEM_STRIDE;
  if (anchor !== null && anchor > total) {
    // Not reachable through our own cursors (every change that shortens the transcript resets it).
    throw sessionError("TRANSCRIPT_CURSOR_STALE", `Transcript cursor ${options.before ?? options.after} is past the end of the transcript`);
  }
  feed.total = total;
  materializePlan(s, page, PAGE_ITEMS, count, false);
  const entries = projectItems(s, page, PAGE_ITEMS, count, null, true);
  const end = start + count;
  return {
    entries,
    before: transcript.cursorOf(feed.tag, feed.epoch, start),
    after: transcript.cursorOf(feed.tag, feed.epoch, end),
    hasBefore: start > 0,
    hasAfter: end < total,
    total,
  };
}

module.exports = { projectItem, project, readPage };
