// ES module entry point. It re-exports the CommonJS entry (index.js) instead of loading
// the addon a second time, so `import` and `require` hand out the very same SessionManager
// class and functions (instanceof and identity checks hold across both).
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const sessionModule = require("./index.js");

export const {
  CURRENT_SESSION_VERSION,
  MAX_SESSION_TRANSCRIPT_PAGE_SIZE,
  SessionManager,
  assertValidSessionId,
  buildContextEntries,
  buildSessionContext,
  buildSessionProjection,
  buildTranscriptProjection,
  findMostRecentSession,
  getDefaultSessionDir,
  getLatestCompactionEntry,
  loadEntriesFromFile,
  mergeSessions,
  moveSessions,
  migrateSessionEntries,
  parseSessionEntries,
  projectContextEntry,
  scanSecrets,
  sessionEntryToContextMessages,
  syncSessions,
} = sessionModule;
