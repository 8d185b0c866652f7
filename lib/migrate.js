"use strict";
// Entry objects of old session versions, brought to the current one in place, as the reference
// does (`migrateSessionEntries`), and `parseSessionEntries`. Files are migrated by the core
// (crates/pi-session-core/src/file/migrate.rs); this is for entries a caller holds.
const { CURRENT_SESSION_VERSION } = require("../native.js");
const { randomEntryId } = require("./appends.js");

/** Parse JSONL text into entries; malformed lines are skipped, as the reference does.
 * Deliberately the reference's function exactly, over a caller's text: it does not read an entry
 * glued after a torn record (README, "Concurrent writers"), as every reader of session files here
 * does; callers that compare it with the reference's get the same answer.
 * @param {string} content @returns {any[]} */
function parseSessionEntries(content) {
  const entries = [];
  for (const line of content.trim().split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line));
    } catch {
      // Malformed lines are skipped, as the reference does.
    }
  }
  return entries;
}

/** Migrate entry objects to the current version in place (v1 ids/parents, v3 role rename). The
 * same rules as the core's file/migrate.rs, which migrates a file's records: this one must be JS,
 * because the reference's exported function changes the caller's own objects.
 * __test__/rule-twins.test.mjs holds the two to the same answers.
 * @param {any[]} entries */
function migrateSessionEntries(entries) {
  const header = entries.find((e) => e.type === "session");
  const version = header?.version ?? 1;
  if (version >= CURRENT_SESSION_VERSION) return;
  if (version < 2) {
    let prevId = null;
    for (const entry of entries) {
      if (entry.type === "session") {
        entry.version = 2;
        continue;
      }
      entry.id = randomEntryId();
      entry.parentId = prevId;
      prevId = entry.id;
      if (entry.type === "compaction" && typeof entry.firstKeptEntryIndex === "number") {
        const target = entries[entry.firstKeptEntryIndex];
        if (target && target.type !== "session") entry.firstKeptEntryId = target.id;
        delete entry.firstKeptEntryIndex;
      }
    }
  }
  if (version < 3) {
    for (const entry of entries) {
      if (entry.type === "session") {
        entry.version = 3;
        continue;
      }
      if (entry.type === "message" && entry.message && entry.message.role === "hookMessage") entry.message.role = "custom";
    }
  }
}

module.exports = { parseSessionEntries, migrateSessionEntries };
