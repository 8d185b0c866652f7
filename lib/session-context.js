"use strict";
// A manager's buildSessionContext and buildSessionProjection, from the core's context plan: the
// core chooses the records (crates/pi-session-core/src/context.rs), wire.js decodes the plan, and
// this module builds the message objects.
const ctx = require("./context.js");
const { NONE, decodePlan } = require("./wire.js");
const { peek } = require("./lazy.js");

/** @typedef {ReturnType<typeof decodePlan>} PlanItems */
/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */

/**
 * The messages one plan item contributes: the one projection rule of buildSessionContext and
 * buildSessionProjection.
 * @param {any} sourceEntry @param {any} edit the context edit in effect, or undefined
 * @param {boolean} silent the item contributes nothing (a compaction after the leading one)
 * @returns {any[]}
 */
function projectItem(sourceEntry, edit, silent) {
  if (silent) return [];
  // A stored message, or its content-null copy (the common path of projection, kept inline).
  if (edit === undefined && sourceEntry.type === "message") {
    const message = sourceEntry.message;
    // A content not read yet is big (lib/lazy.js), so not null: a peek does not read it.
    if (peek(message, "content") != null) return [message];
    return ctx.sessionEntryToContextMessages(sourceEntry);
  }
  return ctx.projectContextEntry(sourceEntry, edit);
}

/** Objects for the records a plan (or a page of one) names: each item's entry and context edit,
 * and the settings records when `withSettings`.
 * @param {SessionState} s @param {PlanItems} plan @param {boolean} withSettings */
function materializePlan(s, plan, withSettings) {
  const count = plan.count;
  const want = new Uint32Array(count * 2 + 2);
  let w = 0;
  if (withSettings) {
    if (plan.thinking !== NONE) want[w++] = plan.thinking;
    if (plan.model !== NONE) want[w++] = plan.model;
  }
  for (let i = 0; i < count; i++) {
    want[w++] = plan.entry(i);
    const edit = plan.edit(i);
    if (edit !== NONE) want[w++] = edit;
  }
  s.materialize(want, w);
}

/** The plan's items as `{ sourceEntry, messages }`, their messages also pushed onto `messages`
 * when given (after materializePlan).
 * @param {SessionState} s @param {PlanItems} plan @param {any[] | null} messages @param {boolean} withItems */
function projectItems(s, plan, messages, withItems) {
  const objs = s.objs;
  const count = plan.count;
  const items = withItems ? new Array(count) : null;
  for (let i = 0; i < count; i++) {
    const sourceEntry = objs[plan.entry(i)];
    const editPos = plan.edit(i);
    const edit = editPos === NONE ? undefined : objs[editPos];
    const m = projectItem(sourceEntry, edit, plan.silent(i));
    if (messages !== null) for (let j = 0; j < m.length; j++) messages.push(m[j]);
    if (items !== null) items[i] = { sourceEntry, messages: m };
  }
  return items;
}

/** buildSessionContext (`withEntries` false) or buildSessionProjection (true).
 * @param {SessionState} s @param {boolean} withEntries */
function project(s, withEntries) {
  const plan = decodePlan(s.core.contextPlan());
  materializePlan(s, plan, true);
  const objs = s.objs;
  const { thinkingLevel, model } = ctx.settingsFrom(
    plan.thinking === NONE ? undefined : objs[plan.thinking],
    plan.model === NONE ? undefined : objs[plan.model],
  );
  /** @type {any[]} */
  const messages = [];
  const entries = projectItems(s, plan, messages, withEntries);
  return withEntries ? { entries, messages, thinkingLevel, model } : { messages, thinkingLevel, model };
}

module.exports = { projectItem, project };
