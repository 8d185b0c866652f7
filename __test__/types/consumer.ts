// Type test: compiled with `tsc -p __test__/types` (node scripts/typecheck.js), never run.
//
// It uses pi-session-native the way a consumer would, and checks that its declarations
// line up with those of the module it replaces (@earendil-works/pi-coding-agent 1.6.0,
// session-manager.d.ts): every method accepts the reference's argument types, our
// instances fit where the reference's types are expected, and entry and message types are
// assignable in both directions with the same property names.

import {
  CURRENT_SESSION_VERSION,
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
  MAX_SESSION_TRANSCRIPT_PAGE_SIZE,
  mergeSessions,
  migrateSessionEntries,
  moveSessions,
  parseSessionEntries,
  projectContextEntry,
  scanSecrets,
  sessionEntryToContextMessages,
  syncSessions,
} from "pi-session-native";
import type * as Ours from "pi-session-native";

import type * as Ref from "../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";
import type * as RefMessages from "../../node_modules/@earendil-works/pi-coding-agent/dist/core/messages.js";
import type * as RefAi from "@earendil-works/pi-ai";
import type { AgentMessage as RefAgentMessage } from "@earendil-works/pi-agent-core";

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** `true` when A and B are assignable to each other. */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** `true` when A and B have the same property names (catches a missing optional property). */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
/** Both of the above. */
type Same<A, B> = Mutual<A, B> extends true ? SameKeys<A, B> : false;

/** Compiles only when its argument is `true`. */
function ok<T extends true>(_: T): void {}
/** A value of type T, for use in calls. */
declare function any<T>(): T;

// ---------------------------------------------------------------------------
// Constants and free functions
// ---------------------------------------------------------------------------

const version: 3 = CURRENT_SESSION_VERSION;
const refVersion: typeof Ref.CURRENT_SESSION_VERSION = CURRENT_SESSION_VERSION;
// @ts-expect-error the version is the literal 3
const wrongVersion: 4 = CURRENT_SESSION_VERSION;

const refEntries = any<Ref.SessionEntry[]>();
const refFileEntries = any<Ref.FileEntry[]>();
const refById = any<Map<string, Ref.SessionEntry>>();
const refEdit = any<Ref.ContextEditEntry>();

assertValidSessionId("0196a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b");
migrateSessionEntries(refFileEntries);
const parsed: Ref.FileEntry[] = parseSessionEntries("{}\n");
const latest: Ref.CompactionEntry | null = getLatestCompactionEntry(refEntries);
const contextMessages: RefAgentMessage[] = sessionEntryToContextMessages(refEntries[0]!);
const contextEntries: Ref.SessionEntry[] = buildContextEntries(refEntries);
buildContextEntries(refEntries, null);
buildContextEntries(refEntries, "abcd1234", refById);
const projected: RefAgentMessage[] = projectContextEntry(refEntries[0]!, refEdit);
projectContextEntry(refEntries[0]!, undefined);
const projection: Ref.SessionProjection = buildSessionProjection(refEntries, undefined, refById);
const context: Ref.SessionContext = buildSessionContext(refEntries, "abcd1234");
const defaultDir: string = getDefaultSessionDir("/work");
getDefaultSessionDir("/work", "/home/u/.pi/agent");
const loaded: Ref.FileEntry[] = loadEntriesFromFile("/tmp/s.jsonl");
const recent: string | null = findMostRecentSession("/tmp/sessions");
findMostRecentSession("/tmp/sessions", "/work");

// @ts-expect-error an id is a string
assertValidSessionId(42);
// @ts-expect-error the edit argument is required (it may be undefined, but must be passed)
projectContextEntry(refEntries[0]!);
// @ts-expect-error byId is a Map, not an object
buildSessionContext(refEntries, null, {});
// @ts-expect-error not exported by the module
import("pi-session-native").then((m) => m.noSuchExport);

// ---------------------------------------------------------------------------
// Factories
// ---------------------------------------------------------------------------

const refOptions = any<Ref.NewSessionOptions>();
const progress: Ref.SessionListProgress = (loadedCount, total, partial) => {
  const first: Ref.SessionInfo | undefined = partial?.[0];
  void [loadedCount, total, first];
};
const signal = new AbortController().signal;

const sm: SessionManager = SessionManager.create("/work");
SessionManager.create("/work", "/tmp/sessions", refOptions);
SessionManager.open("/tmp/s.jsonl");
SessionManager.open("/tmp/s.jsonl", "/tmp/sessions", "/work");
SessionManager.continueRecent("/work");
SessionManager.continueRecent("/work", "/tmp/sessions");
SessionManager.inMemory();
SessionManager.inMemory("/work", refOptions, refFileEntries);
SessionManager.forkFrom("/tmp/s.jsonl", "/work");
SessionManager.forkFrom("/tmp/s.jsonl", "/work", "/tmp/sessions", refOptions);
const foundPath: string | undefined = SessionManager.findById("/work", "some-id");
SessionManager.findById("/work", "some-id", "/tmp/sessions");

async function listing(): Promise<void> {
  const a: Ref.SessionInfo[] = await SessionManager.list("/work");
  await SessionManager.list("/work", "/tmp/sessions", progress, signal);
  await SessionManager.list("/work", undefined, undefined, signal);
  const b: Ref.SessionInfo[] = await SessionManager.listAll();
  await SessionManager.listAll(progress);
  await SessionManager.listAll(progress, signal);
  await SessionManager.listAll("/tmp/sessions");
  await SessionManager.listAll("/tmp/sessions", progress, signal);
  await SessionManager.listAll(undefined, progress);
  const info = b[0]!;
  const dates: [Date, Date] = [info.created, info.modified];
  void [a, dates];
}

// @ts-expect-error the constructor is private: use a factory
new SessionManager();
// @ts-expect-error cwd is required
SessionManager.create();
// @ts-expect-error cwd is a string
SessionManager.create(123);
// @ts-expect-error options is an object
SessionManager.create("/work", "/tmp/sessions", "id");
// @ts-expect-error path is required
SessionManager.open();
// @ts-expect-error preloaded entries are records, not strings
SessionManager.inMemory("/work", {}, ["{}"]);
// @ts-expect-error targetCwd is required
SessionManager.forkFrom("/tmp/s.jsonl");
// @ts-expect-error the progress callback is a function
SessionManager.listAll("/tmp/sessions", "not a callback");
// @ts-expect-error a number is neither a directory nor a callback
SessionManager.listAll(123);

// ---------------------------------------------------------------------------
// Instance methods, called with the reference's types
// ---------------------------------------------------------------------------

const refUser = any<RefAi.UserMessage>();
const refAssistant = any<RefAi.AssistantMessage>();
const refToolResult = any<RefAi.ToolResultMessage>();
const refSystem = any<RefAi.SystemMessage>();
const refCustom = any<RefMessages.CustomMessage>();
const refBash = any<RefMessages.BashExecutionMessage>();
const refUsage = any<RefAi.Usage>();
const refContent = any<(RefAi.TextContent | RefAi.ImageContent)[]>();
const refReplacement = any<Ref.ContextEditEntry["replacement"]>();
const refAgentMessages = any<RefAgentMessage[]>();

sm.setSessionFile("/tmp/other.jsonl");
const newPath: string | undefined = sm.newSession();
sm.newSession(refOptions);
const persisted: boolean = sm.isPersisted();
const cwd: string = sm.getCwd();
const dir: string = sm.getSessionDir();
const isDefault: boolean = sm.usesDefaultSessionDir();
const sessionId: string = sm.getSessionId();
const sessionFile: string | undefined = sm.getSessionFile();
const flushed: boolean = sm.flush();
const disposed: void = any<SessionManager>().dispose();
const newer: Ours.SessionEntry[] = sm.getEntriesSince(sm.getEntries().length - 1);
// @ts-expect-error the count is a number
sm.getEntriesSince("1");
const reservedId: string = sm.reserveEntryId();
const withReserved: string = sm.appendMessage(refUser, { id: reservedId, flush: true });
const appendOptions: Ours.AppendMessageOptions = { flush: false };
sm.appendMessage(refAssistant, appendOptions);
const released: boolean = sm.releaseEntryId(reservedId);
// @ts-expect-error flush is a boolean
sm.appendMessage(refUser, { flush: "yes" });
// @ts-expect-error a reserved id is a string
sm.appendMessage(refUser, { id: 5 });
sm.setExclusive(true);
sm.setFsync(false);
sm.setRestoreMissing(true);
// @ts-expect-error restore mode is switched with a boolean
sm.setRestoreMissing(1);

const idUser: string = sm.appendMessage(refUser);
sm.appendMessage(refAssistant);
sm.appendMessage(refToolResult);
sm.appendMessage(refSystem);
sm.appendMessage(refCustom);
sm.appendMessage(refBash);
sm.appendThinkingLevelChange("high");
sm.appendModelChange("anthropic", "claude-sonnet-4-5");
const usageEntry: Ref.UsageEntry = sm.appendUsage("cache_warm", "anthropic", "claude", refUsage);
sm.appendUsage("cache_warm", "anthropic", "claude", refUsage, "note");
const compactionId: string = sm.appendCompaction("summary", idUser, 12000);
sm.appendCompaction("summary", null, 12000, { readFiles: ["a.ts"] }, true, refUsage);
sm.appendCompaction<{ readFiles: string[] }>("summary", null, 12000, { readFiles: [] }, false, refUsage, refAgentMessages);
sm.appendCompaction("summary", idUser, 12000, undefined, undefined, undefined, []);
sm.appendCustomEntry("my-extension");
sm.appendCustomEntry("my-extension", { any: "data" });
sm.appendSessionInfo("name");
const sessionName: string | undefined = sm.getSessionName();
sm.appendCustomMessageEntry("my-extension", "text", true);
sm.appendCustomMessageEntry("my-extension", refContent, false, { extra: 1 });
sm.appendContextEdit(idUser, refReplacement);
sm.appendContextEdit(idUser, null);
sm.appendContextEdit(idUser, { content: "replacement" });
sm.appendContextEdit(idUser, { content: [{ type: "text", text: "replacement" }] });
sm._persist(refEntries[0]!);

const leafId: string | null = sm.getLeafId();
const leaf: Ref.SessionEntry | undefined = sm.getLeafEntry();
const entry: Ref.SessionEntry | undefined = sm.getEntry(idUser);
const children: Ref.SessionEntry[] = sm.getChildren(idUser);
const label: string | undefined = sm.getLabel(idUser);
sm.appendLabelChange(idUser, "bookmark");
sm.appendLabelChange(idUser, undefined);
const branchEntries: Ref.SessionEntry[] = sm.getBranch();
sm.getBranch(idUser);
const builtEntries: Ref.SessionEntry[] = sm.buildContextEntries();
const builtProjection: Ref.SessionProjection = sm.buildSessionProjection();
const builtContext: Ref.SessionContext = sm.buildSessionContext();
const header: Ref.SessionHeader | null = sm.getHeader();
const count: number = sm.getEntryCount();
const entries: Ref.SessionEntry[] = sm.getEntries();
const tree: Ref.SessionTreeNode[] = sm.getTree();
sm.branch(idUser);
sm.resetLeaf();
const summaryId: string = sm.branchWithSummary(idUser, "summary");
sm.branchWithSummary(null, "summary", { any: 1 }, true, refUsage);
const branchedPath: string | undefined = sm.createBranchedSession(idUser);
const subtreeSize: number = sm.countSubtree(idUser);
const pruned: Ours.PruneResult = sm.pruneBranch(idUser);
const prunedBytes: number = pruned.bytesBefore - pruned.bytesAfter;
const prunedWritten: boolean = pruned.written;
void subtreeSize;
const prunedIds: string[] = pruned.removedEntryIds;
const prunedContext: boolean = pruned.contextChanged;
const namedReservation: string = sm.reserveEntryId("chosen-id");
const firstPage: Ours.SessionTranscriptPage = sm.readTranscriptPage({ limit: MAX_SESSION_TRANSCRIPT_PAGE_SIZE });
const olderPage: Ours.SessionTranscriptPage = firstPage.cursors.before === null ? firstPage : sm.readTranscriptPage({ limit: 10, before: firstPage.cursors.before });
const pageMessages: Ours.AgentMessage[] = olderPage.items.map((item: Ours.SessionTranscriptItem) => item.message);
const pageCounts: number = olderPage.totalItems + olderPage.itemsAfterLatestCompaction;
const maxPage: 200 = MAX_SESSION_TRANSCRIPT_PAGE_SIZE;
const unsubscribe: () => void = sm.subscribeTranscript(
  (change: Ours.SessionTranscriptChange) => {
    if (change.type === "append") {
      const cursor: string = change.after;
      const total: number = change.totalItems;
      void [cursor, total];
    } else {
      const reason: "branch" | "session" = change.reason;
      const page: Ours.SessionTranscriptPage = change.page;
      void [reason, page];
    }
  },
  { resetPageSize: 20 },
);
const blocks: Ours.TranscriptProjection = buildTranscriptProjection(sm);
for (const block of blocks.blocks) {
  if (block.kind === "tool") {
    const callId: string = block.toolCall.id;
    const index: number = block.contentIndex;
    void [callId, index, block.result];
  }
}
// The follow functions: merge, sync and move with their reports.
const merged: Ours.MergeSessionsReport = mergeSessions("a.jsonl", "b.jsonl", { inPlace: true });
const synced: Ours.SyncSessionsReport = syncSessions("/mnt/share/pi.git", {
  dryRun: true,
  paths: "map",
  branch: "pi",
  purge: ["0193f0a0"],
});
for (const s of synced.synced) {
  const action: "push" | "pull" | "merge" = s.action;
  const restored: "here" | "remote" | null = s.restored;
  void [action, restored, s.copiesRemoved.length];
}
for (const d of synced.deleted) {
  const from: "here" | "remote" = d.from;
  const how: "trash" | "removed" = d.how;
  void [from, how, d.local];
}
const purgedNames: string[] = synced.purged.map((p) => p.remote);
const branchName: string | null = synced.branch;
void [purgedNames, branchName, synced.rewritten, synced.restored];
const problemCodes: string[] = synced.problems.map((p) => p.code);
const moved: Ours.MoveSessionsReport = moveSessions("/old", "/new", { apply: false });
const moveStatus: Array<"planned" | "moved" | "skipped" | "failed"> = moved.files.map((f) => f.status);
void [merged.leafId, problemCodes, moveStatus];
// Secrets: the scan as a library call, and what sync held back.
const scanned: Ours.ScanSecretsReport = scanSecrets({ all: true }, { includeAcknowledged: true });
const places: Array<Ours.SecretFinding["place"]> = scanned.sessions.flatMap((s) => s.findings.map((f) => f.place));
const oneFile: number = scanSecrets("s.jsonl").findings + scanSecrets(["a.jsonl", "b.jsonl"]).acknowledged;
const heldBack: boolean[] = syncSessions("git@host:r.git", { secrets: "skip" }).secrets.map((f) => f.sent);
// @ts-expect-error a policy is one of four names
syncSessions("r", { secrets: "sometimes" });
// @ts-expect-error `all` must be true
scanSecrets({ all: false });
void [places, oneFile, heldBack];
void [prunedIds, prunedContext, namedReservation, pageCounts];
// @ts-expect-error a page needs a limit
sm.readTranscriptPage({});
void pageMessages;
void maxPage;
void prunedBytes;
void prunedWritten;

// Narrowing on the entry union works as with the reference.
for (const e of sm.getEntries()) {
  if (e.type === "compaction") {
    const kept: string = e.firstKeptEntryId;
    const tail: RefAgentMessage[] | undefined = e.retainedTail;
    void [kept, tail];
  } else if (e.type === "message" && e.message.role === "assistant") {
    const model: string = e.message.model;
    void model;
  }
}

// @ts-expect-error no such method
sm.noSuchMethod();
// @ts-expect-error private in the reference too: not part of the surface
sm.fileEntries;
// @ts-expect-error a message needs a known role
sm.appendMessage({ role: "narrator", content: "x", timestamp: 0 });
// @ts-expect-error summaries are appended with appendCompaction / branchWithSummary
sm.appendMessage({ role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 0 });
// @ts-expect-error modelId is required
sm.appendModelChange("anthropic");
// @ts-expect-error tokensBefore is a number
sm.appendCompaction("summary", idUser, "12000");
// @ts-expect-error retainedTail holds messages
sm.appendCompaction("summary", idUser, 1, undefined, undefined, undefined, ["text"]);
// @ts-expect-error usage needs every counter
sm.appendUsage("cache_warm", "anthropic", "claude", { input: 1 });
// @ts-expect-error a replacement is null or { content }, never a bare string
sm.appendContextEdit(idUser, "replacement");
// @ts-expect-error display is required
sm.appendCustomMessageEntry("my-extension", "text");
// @ts-expect-error the label is required (pass undefined to clear)
sm.appendLabelChange(idUser);
// @ts-expect-error flush takes no argument
sm.flush(true);
// @ts-expect-error dispose takes no argument
sm.dispose(true);
// @ts-expect-error exclusive mode is switched with a boolean
sm.setExclusive("yes");
// @ts-expect-error the leaf id may be null
sm.getLeafId().length;
// @ts-expect-error the entry may be undefined
sm.getEntry(idUser).id;

// ---------------------------------------------------------------------------
// Where the reference's types are expected
// ---------------------------------------------------------------------------

// The read-only view needs no cast.
const readonlyView: Ref.ReadonlySessionManager = sm;
const ourReadonlyView: Ours.ReadonlySessionManager = any<Ref.ReadonlySessionManager>();

// All public members of the reference's class are present with compatible types...
const publicSurface: Pick<Ref.SessionManager, keyof Ref.SessionManager> = sm;
// ...and the reference's instances fit our surface minus our additions.
type Additions = "flush" | "setExclusive" | "setFsync" | "dispose" | "getEntriesSince" | "reserveEntryId" | "releaseEntryId" | "setRestoreMissing" | "countSubtree" | "pruneBranch" | "readTranscriptPage" | "subscribeTranscript";
const fromReference: Omit<SessionManager, Additions> = any<Ref.SessionManager>();

// The reference class declares private fields, which makes its instance type nominal:
// nothing declared elsewhere is assignable to it without a cast.
// @ts-expect-error private fields of the reference's class
const refManagerNoCast: Ref.SessionManager = sm;
const refManager: Ref.SessionManager = sm as unknown as Ref.SessionManager;

// Same method names: the reference's public members plus our additions, nothing else.
ok<Mutual<Exclude<keyof SessionManager, keyof Ref.SessionManager>, Additions>>(true);
ok<Mutual<Exclude<keyof Ref.SessionManager, keyof SessionManager>, never>>(true);

// Same parameters for every instance method; appendCompaction and appendMessage have one more, optional, at the end.
type RefMethods = Omit<Ref.SessionManager, "appendCompaction" | "appendMessage">;
type ParamsMatch = {
  [K in keyof RefMethods]: Mutual<Parameters<RefMethods[K]>, Parameters<SessionManager[K]>>;
};
ok<ParamsMatch[keyof ParamsMatch]>(true);
type CompactionParams = Parameters<SessionManager["appendCompaction"]>;
ok<Mutual<CompactionParams, [...Parameters<Ref.SessionManager["appendCompaction"]>, retainedTail?: Ours.AgentMessage[] | undefined]>>(
  true,
);
// appendMessage takes options too (an addition).
type AppendMessageParams = Parameters<SessionManager["appendMessage"]>;
ok<Mutual<AppendMessageParams, [...Parameters<Ref.SessionManager["appendMessage"]>, options?: Ours.AppendMessageOptions | undefined]>>(true);
// Same return types.
type ReturnsMatch = {
  [K in keyof Ref.SessionManager]: Mutual<ReturnType<Ref.SessionManager[K]>, ReturnType<SessionManager[K]>>;
};
ok<ReturnsMatch[keyof ReturnsMatch]>(true);

// Same static methods, same parameters; the factories return our class.
type Statics = "create" | "open" | "continueRecent" | "inMemory" | "forkFrom" | "findById" | "list";
type StaticParamsMatch = {
  [K in Statics]: Mutual<Parameters<(typeof Ref.SessionManager)[K]>, Parameters<(typeof SessionManager)[K]>>;
};
ok<StaticParamsMatch[Statics]>(true);
ok<Mutual<Exclude<keyof typeof SessionManager, keyof typeof Ref.SessionManager>, never>>(true);
ok<Mutual<Exclude<keyof typeof Ref.SessionManager, keyof typeof SessionManager>, never>>(true);
ok<Mutual<ReturnType<typeof SessionManager.create>, SessionManager>>(true);
ok<Mutual<ReturnType<typeof SessionManager.findById>, ReturnType<typeof Ref.SessionManager.findById>>>(true);
ok<Mutual<ReturnType<typeof SessionManager.list>, ReturnType<typeof Ref.SessionManager.list>>>(true);

// ---------------------------------------------------------------------------
// Entry and message types, both directions
// ---------------------------------------------------------------------------

// Spelled out once...
const ourEntry = any<Ours.SessionEntry>();
const refEntry = any<Ref.SessionEntry>();
const asRefEntry: Ref.SessionEntry = ourEntry;
const asOurEntry: Ours.SessionEntry = refEntry;
const asRefFileEntry: Ref.FileEntry = any<Ours.FileEntry>();
const asOurFileEntry: Ours.FileEntry = any<Ref.FileEntry>();
const asRefMessage: RefAgentMessage = any<Ours.AgentMessage>();
const asOurMessage: Ours.AgentMessage = any<RefAgentMessage>();

// ...then for every named type.
ok<Same<Ours.SessionHeader, Ref.SessionHeader>>(true);
ok<Same<Ours.NewSessionOptions, Ref.NewSessionOptions>>(true);
ok<Same<Ours.SessionEntryBase, Ref.SessionEntryBase>>(true);
ok<Same<Ours.SessionMessageEntry, Ref.SessionMessageEntry>>(true);
ok<Same<Ours.ThinkingLevelChangeEntry, Ref.ThinkingLevelChangeEntry>>(true);
ok<Same<Ours.ModelChangeEntry, Ref.ModelChangeEntry>>(true);
ok<Same<Ours.UsageEntry, Ref.UsageEntry>>(true);
// Our compaction entry has one more (optional) key, retainedTail.
ok<Mutual<Ours.CompactionEntry, Ref.CompactionEntry>>(true);
ok<Mutual<Ours.CompactionEntry<{ n: number }>, Ref.CompactionEntry<{ n: number }>>>(true);
ok<Same<Omit<Ours.CompactionEntry, "retainedTail">, Ref.CompactionEntry>>(true);
ok<Same<Ours.BranchSummaryEntry, Ref.BranchSummaryEntry>>(true);
ok<Same<Ours.BranchSummaryEntry<{ n: number }>, Ref.BranchSummaryEntry<{ n: number }>>>(true);
ok<Same<Ours.CustomEntry, Ref.CustomEntry>>(true);
ok<Same<Ours.CustomEntry<string[]>, Ref.CustomEntry<string[]>>>(true);
ok<Same<Ours.CustomMessageEntry, Ref.CustomMessageEntry>>(true);
ok<Same<Ours.CustomMessageEntry<{ n: number }>, Ref.CustomMessageEntry<{ n: number }>>>(true);
ok<Same<Ours.ContextEditEntry, Ref.ContextEditEntry>>(true);
ok<Mutual<Ours.ContextEditableContent, Ref.ContextEditableContent>>(true);
ok<Same<Ours.LabelEntry, Ref.LabelEntry>>(true);
ok<Same<Ours.SessionInfoEntry, Ref.SessionInfoEntry>>(true);
ok<Mutual<Ours.SessionEntry, Ref.SessionEntry>>(true);
ok<Mutual<Ours.FileEntry, Ref.FileEntry>>(true);
ok<Mutual<Ours.SessionEntry["type"], Ref.SessionEntry["type"]>>(true);
ok<Same<Ours.SessionTreeNode, Ref.SessionTreeNode>>(true);
ok<Same<Ours.ProjectedSessionEntry, Ref.ProjectedSessionEntry>>(true);
ok<Same<Ours.SessionProjection, Ref.SessionProjection>>(true);
ok<Same<Ours.SessionContext, Ref.SessionContext>>(true);
ok<Same<Ours.SessionInfo, Ref.SessionInfo>>(true);
ok<Mutual<Ours.SessionListProgress, Ref.SessionListProgress>>(true);
ok<Mutual<Ours.ReadonlySessionManager, Omit<Ref.ReadonlySessionManager, never>>>(true);

ok<Mutual<Ours.AgentMessage, RefAgentMessage>>(true);
ok<Mutual<Ours.Message, RefAi.Message>>(true);
ok<Same<Ours.UserMessage, RefAi.UserMessage>>(true);
ok<Same<Ours.AssistantMessage, RefAi.AssistantMessage>>(true);
ok<Same<Ours.ToolResultMessage, RefAi.ToolResultMessage>>(true);
ok<Same<Ours.SystemMessage, RefAi.SystemMessage>>(true);
ok<Same<Ours.BashExecutionMessage, RefMessages.BashExecutionMessage>>(true);
ok<Same<Ours.CustomMessage, RefMessages.CustomMessage>>(true);
ok<Same<Ours.CustomMessage<{ n: number }>, RefMessages.CustomMessage<{ n: number }>>>(true);
ok<Same<Ours.BranchSummaryMessage, RefMessages.BranchSummaryMessage>>(true);
ok<Same<Ours.CompactionSummaryMessage, RefMessages.CompactionSummaryMessage>>(true);
ok<Same<Ours.Usage, RefAi.Usage>>(true);
ok<Same<Ours.Usage["cost"], RefAi.Usage["cost"]>>(true);
ok<Same<Ours.TextContent, RefAi.TextContent>>(true);
ok<Same<Ours.ThinkingContent, RefAi.ThinkingContent>>(true);
ok<Same<Ours.ImageContent, RefAi.ImageContent>>(true);
ok<Same<Ours.ToolCall, RefAi.ToolCall>>(true);
ok<Same<Ours.Tool, RefAi.Tool>>(true);
ok<Same<Ours.ToolReference, RefAi.ToolReference>>(true);
ok<Mutual<Ours.StopReason, RefAi.StopReason>>(true);
ok<Mutual<Ours.JsonValue, RefAi.JsonValue>>(true);
ok<Same<Ours.DeferredHandle, RefAi.DeferredHandle>>(true);
ok<Same<Ours.NestedToolCalls, RefAi.NestedToolCalls>>(true);
ok<Same<Ours.NestedToolCallRecord, RefAi.NestedToolCallRecord>>(true);
ok<Mutual<Ours.ModelThinkingLevel, RefAi.ModelThinkingLevel>>(true);
ok<Mutual<NonNullable<Ours.AssistantMessage["diagnostics"]>, NonNullable<RefAi.AssistantMessage["diagnostics"]>>>(true);

// A wrong shape is still caught, so the checks above are not vacuous.
// @ts-expect-error a label entry is not a compaction entry
ok<Mutual<Ours.LabelEntry, Ref.CompactionEntry>>(true);
// @ts-expect-error a custom entry lacks `display`
ok<Same<Ours.CustomEntry, Ref.CustomMessageEntry>>(true);

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

try {
  sm.branch("missing");
} catch (caught) {
  const err = caught as Ours.SessionError;
  const asError: Error = err;
  const code: string = err.code;
  const known: Ours.SessionErrorCode = "ENTRY_NOT_FOUND";
  if (err.code === known) {
    void asError.message;
  }
  // @ts-expect-error not one of the documented codes
  const unknownCode: Ours.SessionErrorCode = "ENOENT";
  void [code, unknownCode];
}

// Keep every binding "used" without emitting anything.
void [
  version, refVersion, wrongVersion, parsed, latest, contextMessages, contextEntries, projected, projection,
  context, defaultDir, loaded, recent, foundPath, listing, newPath, persisted, cwd, dir, isDefault, sessionId,
  sessionFile, usageEntry, compactionId, sessionName, leafId, leaf, entry, children, label, branchEntries,
  builtEntries, builtProjection, builtContext, header, count, entries, tree, summaryId, branchedPath,
  readonlyView, ourReadonlyView, publicSurface, fromReference, refManagerNoCast, refManager, asRefEntry,
  asOurEntry, asRefFileEntry, asOurFileEntry, asRefMessage, asOurMessage,
];
