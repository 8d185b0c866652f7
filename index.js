"use strict";
// pi-session-native: the SessionManager module of @earendil-works/pi-coding-agent, backed by Rust.
const sm = require("./lib/session-manager.js");
const ctx = require("./lib/context.js");
const paths = require("./lib/paths.js");
const { buildTranscriptProjection } = require("./lib/transcript-blocks.js");
const { mergeSessions } = require("./lib/merge-sessions.js");
const { syncSessions } = require("./lib/sync-sessions.js");
const { moveSessions } = require("./lib/move-sessions.js");
const { scanSecrets } = require("./lib/secrets.js");

module.exports = {
  CURRENT_SESSION_VERSION: sm.CURRENT_SESSION_VERSION,
  MAX_SESSION_TRANSCRIPT_PAGE_SIZE: sm.MAX_SESSION_TRANSCRIPT_PAGE_SIZE,
  SessionManager: sm.SessionManager,
  assertValidSessionId: sm.assertValidSessionId,
  migrateSessionEntries: sm.migrateSessionEntries,
  parseSessionEntries: sm.parseSessionEntries,
  getLatestCompactionEntry: ctx.getLatestCompactionEntry,
  sessionEntryToContextMessages: ctx.sessionEntryToContextMessages,
  buildContextEntries: ctx.buildContextEntries,
  projectContextEntry: ctx.projectContextEntry,
  buildSessionProjection: ctx.buildSessionProjection,
  buildSessionContext: ctx.buildSessionContext,
  getDefaultSessionDir: paths.getDefaultSessionDir,
  loadEntriesFromFile: sm.loadEntriesFromFile,
  findMostRecentSession: sm.findMostRecentSession,
  buildTranscriptProjection,
  mergeSessions,
  syncSessions,
  moveSessions,
  scanSecrets,
};
