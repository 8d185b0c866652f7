"use strict";
// buildTranscriptProjection(session) (not in the reference; the shape of upstream's proposal): the
// active branch as the blocks a transcript view renders, each with an id that stays the same for
// the same content, so a view can keep its components across rebuilds. Like the transcript read
// model it follows getBranch(), not the context: compaction must not erase what a person sees.
//
// An assistant message is a block, and each tool call in it a block of its own that later holds
// the tool result answering it; results that answer no pending call are listed apart.

/** The block id of an entry: its id made safe to nest in other ids. @param {unknown} entryId */
function entryBlockId(entryId) {
  return `entry:${encodeURIComponent(String(entryId))}`;
}

/** Entry types that are shown as one block of their own (a message that is neither an assistant
 * message nor a tool result is too). Every other type (settings, labels, names, context edits,
 * usage records, types of other programs) renders nothing. */
const SHOWN_TYPES = new Set(["compaction", "branch_summary", "custom", "custom_message"]);

/**
 * @param {{ getBranch(): any[] }} session a SessionManager (or anything with its getBranch())
 * @returns {{ blocks: any[], unpairedToolResults: { entry: any, result: any }[] }}
 */
function buildTranscriptProjection(session) {
  return projectBranch(session.getBranch());
}

/** The projection of a root-first run of branch entries. @param {readonly any[]} entries */
function projectBranch(entries) {
  /** @type {any[]} */
  const blocks = [];
  /** @type {{ entry: any, result: any }[]} */
  const unpairedToolResults = [];
  // The tool call block still waiting for its result, by call id (the latest call of an id wins).
  /** @type {Map<unknown, any>} */
  const waiting = new Map();
  for (const entry of entries) {
    if (entry.type !== "message") {
      if (SHOWN_TYPES.has(entry.type)) blocks.push({ kind: "entry", id: entryBlockId(entry.id), entryId: entry.id, entry });
      continue;
    }
    const message = entry.message;
    const base = entryBlockId(entry.id);
    if (message?.role === "assistant") {
      blocks.push({ kind: "assistant", id: `${base}:assistant`, entryId: entry.id, entry, message });
      const content = Array.isArray(message.content) ? message.content : [];
      /** How often each call id was seen in this message, so repeated ids still get distinct blocks. */
      const seen = new Map();
      for (let contentIndex = 0; contentIndex < content.length; contentIndex++) {
        const toolCall = content[contentIndex];
        if (toolCall?.type !== "toolCall") continue;
        const nth = seen.get(toolCall.id) ?? 0;
        seen.set(toolCall.id, nth + 1);
        const block = {
          kind: "tool",
          id: `${base}:tool:${encodeURIComponent(String(toolCall.id))}:${nth}`,
          entryId: entry.id,
          entry,
          contentIndex,
          toolCall,
        };
        blocks.push(block);
        waiting.set(toolCall.id, block);
      }
    } else if (message?.role === "toolResult") {
      const block = waiting.get(message.toolCallId);
      if (block === undefined) {
        unpairedToolResults.push({ entry, result: message });
      } else {
        block.resultEntry = entry;
        block.result = message;
        waiting.delete(message.toolCallId);
      }
    } else {
      blocks.push({ kind: "entry", id: base, entryId: entry.id, entry });
    }
  }
  return { blocks, unpairedToolResults };
}

module.exports = { buildTranscriptProjection };
