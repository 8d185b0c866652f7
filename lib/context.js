"use strict";
// Turning entries into model messages. These functions work on entry *objects*: the exported
// free functions receive arbitrary arrays from callers, and the SessionManager hands them the
// entries the Rust core selected (so the messages are the caller's own objects, as in the reference).
// The path walk and the compaction selection (sessionPath, selectContextEntries) are a twin of the
// core's (store/view.rs, context.rs): the free functions must work on caller arrays the core never
// saw. __test__/rule-twins.test.mjs holds the two to the same answers.

const ISO_MS = (timestamp) => new Date(timestamp).getTime();

/** Messages one entry contributes to the model context. A twin of the core's count of them
 * (record.rs `context_items`, what the transcript pages by): this is the reference's export over a
 * caller's object, which must stay JS; __test__/rule-twins.test.mjs holds the two to the same
 * count for every entry shape. */
function sessionEntryToContextMessages(entry) {
  switch (entry.type) {
    case "message": {
      const message = entry.message;
      if (message.role === "system" && message.content == null) return [{ ...message, content: "" }];
      if ((message.role === "user" || message.role === "assistant" || message.role === "toolResult") && message.content == null) {
        return [{ ...message, content: [] }];
      }
      return [message];
    }
    case "custom_message":
      return [
        {
          role: "custom",
          customType: entry.customType,
          content: entry.content ?? [],
          display: entry.display,
          details: entry.details,
          timestamp: ISO_MS(entry.timestamp),
        },
      ];
    case "branch_summary":
      if (!entry.summary) return [];
      return [{ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: ISO_MS(entry.timestamp) }];
    case "compaction": {
      const summary = { role: "compactionSummary", summary: entry.summary, tokensBefore: entry.tokensBefore, timestamp: ISO_MS(entry.timestamp) };
      const out = entry.systemMessage ? [entry.systemMessage, summary] : [summary];
      // The seed format's self-contained checkpoint: the kept context travels inside the entry.
      if (Array.isArray(entry.retainedTail)) out.push(...entry.retainedTail);
      return out;
    }
    default:
      return [];
  }
}

const EDITABLE_ROLES = new Set(["user", "assistant", "toolResult", "custom"]);

/** An entry's messages with its latest context edit applied (a reference export over objects:
 * the text-block rule is applied again here, as there, to edits written by anyone). */
function projectContextEntry(entry, edit) {
  const messages = sessionEntryToContextMessages(entry);
  if (!edit) return messages;
  const replacement = edit.replacement;
  if (replacement === null) return [];
  return messages.map((message) => {
    if (!EDITABLE_ROLES.has(message.role)) return message;
    const wrap = (message.role === "assistant" || message.role === "toolResult") && typeof replacement.content === "string";
    return { ...message, content: wrap ? [{ type: "text", text: replacement.content }] : replacement.content };
  });
}

/** Model and thinking level from a root-first path (last writer wins). */
function contextSettings(path) {
  let thinkingLevel = "off";
  /** @type {{ provider: unknown, modelId: unknown } | null} */
  let model = null;
  for (const entry of path) {
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "message" && entry.message.role === "assistant") {
      model = { provider: entry.message.provider, modelId: entry.message.model };
    }
  }
  return { thinkingLevel, model };
}

function settingsFrom(thinkingEntry, modelEntry) {
  const thinkingLevel = thinkingEntry === undefined ? "off" : thinkingEntry.thinkingLevel;
  /** @type {{ provider: unknown, modelId: unknown } | null} */
  let model = null;
  if (modelEntry !== undefined) {
    model =
      modelEntry.type === "model_change"
        ? { provider: modelEntry.provider, modelId: modelEntry.modelId }
        : { provider: modelEntry.message.provider, modelId: modelEntry.message.model };
  }
  return { thinkingLevel, model };
}

// ----- free functions over caller-supplied entry arrays ------------------------------------------
// The same path and selection rules as the core's (store/view.rs `context_path`, context.rs `select`),
// which a SessionManager uses; these are the module's exports over the caller's own objects, of
// any shape and value, which only JS can read as the reference does.

function sessionPath(entries, leafId, byId) {
  if (leafId === null) return [];
  const index = byId ?? new Map(entries.map((e) => [e.id, e]));
  let leaf;
  if (leafId) leaf = index.get(leafId);
  leaf ??= entries[entries.length - 1];
  if (!leaf) return [];
  const path = [];
  const seen = new Set();
  // Unlike the reference, a parentId cycle ends the walk instead of looping forever.
  for (let cur = leaf; cur && !seen.has(cur); cur = cur.parentId ? index.get(cur.parentId) : undefined) {
    seen.add(cur);
    path.push(cur);
  }
  return path.reverse();
}

function selectContextEntries(path) {
  /** @type {{ id: unknown, retainedTail?: unknown, firstKeptEntryId?: unknown } | null} */
  let compaction = null;
  for (const entry of path) if (entry.type === "compaction") compaction = entry;
  if (!compaction) return path;
  const at = path.findIndex((e) => e.id === compaction.id);
  if (at < 0) return path;
  const out = [compaction];
  if (!Array.isArray(compaction.retainedTail)) {
    let found = false;
    for (let i = 0; i < at; i++) {
      const e = path[i];
      if (e.id === compaction.firstKeptEntryId) found = true;
      if (found && !(e.type === "message" && e.message.role === "system")) out.push(e);
    }
  }
  for (let i = at + 1; i < path.length; i++) out.push(path[i]);
  return out;
}

function buildContextEntries(entries, leafId, byId) {
  return selectContextEntries(sessionPath(entries, leafId, byId));
}

function projectSelection(contextEntries) {
  const edits = new Map();
  for (const e of contextEntries) if (e.type === "context_edit") edits.set(e.targetId, e);
  const projected = new Array(contextEntries.length);
  const messages = [];
  for (let i = 0; i < contextEntries.length; i++) {
    const sourceEntry = contextEntries[i];
    const m = sourceEntry.type === "compaction" && i > 0 ? [] : projectContextEntry(sourceEntry, edits.get(sourceEntry.id));
    projected[i] = { sourceEntry, messages: m };
    for (const x of m) messages.push(x);
  }
  return { entries: projected, messages };
}

function buildSessionProjection(entries, leafId, byId) {
  const path = sessionPath(entries, leafId, byId);
  const { thinkingLevel, model } = contextSettings(path);
  const { entries: projected, messages } = projectSelection(selectContextEntries(path));
  return { entries: projected, messages, thinkingLevel, model };
}

function buildSessionContext(entries, leafId, byId) {
  const { messages, thinkingLevel, model } = buildSessionProjection(entries, leafId, byId);
  return { messages, thinkingLevel, model };
}

function getLatestCompactionEntry(entries) {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i].type === "compaction") return entries[i];
  return null;
}

// ----- the system-message checkpoint of appendCompaction -----------------------------------------

function contentText(content) {
  if (typeof content === "string") return content;
  return content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
}

/** Replay every system message into one: base text joined by blank lines, sections patched by
 * name (null deletes), tools removed then added by name. Undefined when there is nothing. */
function foldSystemMessages(messages) {
  const content = [];
  const sections = new Map();
  const tools = new Map();
  let timestamp;
  for (const message of messages) {
    if (message.role !== "system") continue;
    timestamp ??= message.timestamp;
    const text = contentText(message.content);
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  for (const message of messages) {
    if (message.role !== "system") continue;
    for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
    for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
  }
  const toolList = [...tools.values()];
  if (timestamp === undefined && toolList.length === 0) return undefined;
  return {
    role: "system",
    content: content.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(toolList.length > 0 ? { toolsAdded: toolList } : {}),
    timestamp: timestamp ?? 0,
  };
}

module.exports = {
  sessionEntryToContextMessages,
  projectContextEntry,
  settingsFrom,
  buildContextEntries,
  buildSessionProjection,
  buildSessionContext,
  getLatestCompactionEntry,
  foldSystemMessages,
};
