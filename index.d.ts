// Type declarations for pi-session-native.
//
// Hand-written and committed. The shapes mirror the `session-manager` module of
// @earendil-works/pi-coding-agent 1.6.0 so that this package can replace it; the
// type test in __test__/types checks that both sides stay assignable to each other.
//
// The message types below are declared here rather than imported: the packages that
// define them upstream (@earendil-works/pi-ai, @earendil-works/pi-agent-core) are not
// dependencies of this package. They are structurally the same, so values flow freely
// between this package and code typed against the upstream packages.

// ---------------------------------------------------------------------------
// JSON values
// ---------------------------------------------------------------------------

/** Any value that survives a JSON round trip unchanged. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;

/** A JSON object: string keys, JSON values. */
export type JsonObject = {
  [key: string]: JsonValue;
};

// ---------------------------------------------------------------------------
// Content blocks and usage
// ---------------------------------------------------------------------------

/** A block of plain text inside a message. */
export interface TextContent {
  type: "text";
  text: string;
  /** Opaque provider signature for this text block, kept so it can be sent back verbatim. */
  textSignature?: string;
}

/** The model's reasoning, as reported by the provider. */
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  /** Opaque provider signature; for redacted thinking it holds the encrypted payload. */
  thinkingSignature?: string;
  /** Set when the provider withheld the reasoning text. */
  redacted?: boolean;
}

/** An inline image, base64-encoded. */
export interface ImageContent {
  type: "image";
  /** Base64 image bytes. */
  data: string;
  /** For example `"image/png"`. */
  mimeType: string;
}

/** A tool invocation requested by the model. */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: JsonObject;
  thoughtSignature?: string;
  /** Namespace of the tool, for providers that group tools. */
  namespace?: string;
  /** Present when the model sent arguments that were not a JSON object; `arguments` is then `{}`. */
  argumentsError?: string;
}

/** Token counts and cost of one model call (or of the calls behind a summary). */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Part of `cacheWrite` stored with a one-hour retention, when the provider reports it. */
  cacheWrite1h?: number;
  /** Reasoning tokens, already included in `output`; absent when the provider does not break them out. */
  reasoning?: number;
  totalTokens: number;
  cost: {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    /** Billed cost when the provider reports one, otherwise an estimate from the model catalog. */
    total: number;
    /** True when `total` came from the provider rather than from the catalog. */
    totalFromProvider?: boolean;
  };
}

/** Why the model stopped producing output. */
export type StopReason = "pending" | "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";

/** Thinking levels a model call can be made with. */
export type ModelThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/** Provider-side constrained sampling for a tool's arguments. */
export type ConstrainedSamplingConfig =
  | {
      type: "json_schema";
      strict: "prefer" | "require";
    }
  | {
      type: "grammar";
      variants: Partial<Record<"openai_lark" | "openai_regex", string>>;
    };

/** A tool the model may call; `parameters` is a JSON Schema of its arguments. */
export interface Tool<TParameters extends object = object> {
  name: string;
  description: string;
  parameters: TParameters;
  constrainedSampling?: false | ConstrainedSamplingConfig;
}

/** Names a tool that was declared earlier. */
export interface ToolReference {
  name: string;
}

/** An error or notice attached to an assistant message while it was produced. */
export interface AssistantMessageDiagnostic {
  type: string;
  timestamp: number;
  error?: {
    name?: string;
    message: string;
    stack?: string;
    code?: string | number;
  };
  details?: JsonObject;
}

/** Handle for a response the provider will finish later (batch or background requests). */
export interface DeferredHandle {
  provider: string;
  modelId: string;
  api: string;
  /** Provider token such as a response id. */
  id: string;
  expiresAt?: number;
  pollAfterMs?: number;
  /** Whatever the provider needs to rebuild the final message. */
  data?: JsonValue;
}

/** One call a tool made to another tool while it ran. */
export interface NestedToolCallRecord {
  id: string;
  name: string;
  /** Left out when too large; `argumentsBytes` then gives the size. */
  arguments?: JsonObject;
  argumentsBytes?: number;
  status: "ok" | "error" | "unfinished";
  durationMs?: number;
  error?: string;
}

/** The calls a tool made to other tools (results are not recorded). */
export interface NestedToolCalls {
  calls: NestedToolCallRecord[];
  /** False when calls were dropped or arguments left out. */
  complete: boolean;
}

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

/**
 * System instructions and tool declarations at one point of the conversation.
 * The first one is the system prompt; later ones add text, replace named `sections`
 * (`null` removes one) and add or remove tools.
 */
export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  sections?: Record<string, string | null>;
  toolsAdded?: Tool[];
  toolsRemoved?: ToolReference[];
  /** Unix time in milliseconds. */
  timestamp: number;
}

/** A message typed by the user. */
export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  /** Unix time in milliseconds. */
  timestamp: number;
}

/** A model response. */
export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  /** Wire API used for the call, for example `"anthropic-messages"`. */
  api: string;
  /** Provider id, for example `"anthropic"`. */
  provider: string;
  /** Model id as requested. */
  model: string;
  /** Model id as reported back by the provider, when it differs. */
  responseModel?: string;
  responseId?: string;
  providerThinkingLevel?: string;
  thinkingLevel?: ModelThinkingLevel;
  diagnostics?: AssistantMessageDiagnostic[];
  usage: Usage;
  stopReason: StopReason;
  deferred?: DeferredHandle;
  errorMessage?: string;
  rawStopReason?: string;
  endTurn?: boolean;
  /** Unix time in milliseconds when the request started. */
  timestamp: number;
  durationMs?: number;
}

/** The result of running a tool, sent back to the model. */
export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  /** Tool-specific data kept with the result. */
  details?: JsonValue;
  /** Usage of the tool's own model calls, if any; not counted in the main context. */
  usage?: Usage;
  nestedCalls?: NestedToolCalls;
  isError: boolean;
  /** Unix time in milliseconds. */
  timestamp: number;
  durationMs?: number;
}

/** A message a model provider understands directly. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/** A shell command the user ran with `!` (or `!!`, which keeps it out of the model context). */
export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
  /** Where the untruncated output was saved, if it was. */
  fullOutputPath?: string;
  /** Unix time in milliseconds. */
  timestamp: number;
  /** True for `!!` commands: shown to the user, never sent to the model. */
  excludeFromContext?: boolean;
}

/** A message injected by an extension. */
export interface CustomMessage<T = unknown> {
  role: "custom";
  /** Identifies the extension (or kind of message) that produced it. */
  customType: string;
  content: string | (TextContent | ImageContent)[];
  /** Whether the UI shows it. */
  display: boolean;
  /** Extension data; not sent to the model. */
  details?: T;
  /** Unix time in milliseconds. */
  timestamp: number;
}

/** Context message standing for a branch the conversation came back from. */
export interface BranchSummaryMessage {
  role: "branchSummary";
  summary: string;
  fromId: string | null;
  /** Unix time in milliseconds. */
  timestamp: number;
}

/** Context message standing for everything a compaction summarized. */
export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  tokensBefore: number;
  /** Unix time in milliseconds. */
  timestamp: number;
}

/**
 * The message kinds an agent conversation can hold beyond {@link Message}, keyed by role.
 * Add your own kinds with declaration merging and they become part of {@link AgentMessage}:
 *
 * ```ts
 * declare module "pi-session-native" {
 *   interface CustomAgentMessages {
 *     note: { role: "note"; text: string; timestamp: number };
 *   }
 * }
 * ```
 */
export interface CustomAgentMessages {
  bashExecution: BashExecutionMessage;
  custom: CustomMessage;
  branchSummary: BranchSummaryMessage;
  compactionSummary: CompactionSummaryMessage;
}

/** Any message a session can store or a context can contain. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

// ---------------------------------------------------------------------------
// Session file records
// ---------------------------------------------------------------------------

/** The version written in the header of every new session file. */
export declare const CURRENT_SESSION_VERSION: 3;

/**
 * The most items one {@link SessionManager.readTranscriptPage} page may hold (200, upstream's
 * value); a larger `limit` is refused with `TRANSCRIPT_PAGE_UNBOUNDED`. Not in the reference.
 */
export declare const MAX_SESSION_TRANSCRIPT_PAGE_SIZE: 200;

/** First line of a session file. */
export interface SessionHeader {
  type: "session";
  /** File format version; a missing value means version 1. Older files are migrated on load. */
  version?: number;
  /** Session id (a UUIDv7 unless one was chosen with {@link NewSessionOptions.id}). */
  id: string;
  /** ISO 8601 creation time; the file name is derived from it. */
  timestamp: string;
  /** Absolute working directory the session belongs to. */
  cwd: string;
  /** Path of the session file this one was forked or branched from. */
  parentSession?: string;
}

/** Options for starting a session. */
export interface NewSessionOptions {
  /**
   * Use this id instead of a generated one. It must start and end with an ASCII letter or
   * digit and contain only letters, digits, `-`, `_` and `.` (see {@link assertValidSessionId}).
   */
  id?: string;
  /** Recorded in the header as the session this one came from. */
  parentSession?: string;
}

/** Fields every entry has. Entries form a tree through `parentId`. */
export interface SessionEntryBase {
  type: string;
  /** Unique within the session: 8 hex characters, or a full UUID in the rare case of collisions. */
  id: string;
  /** The entry this one follows; `null` for a root. */
  parentId: string | null;
  /** ISO 8601 time the entry was appended. */
  timestamp: string;
}

/** A conversation message. */
export interface SessionMessageEntry extends SessionEntryBase {
  type: "message";
  message: AgentMessage;
}

/** The thinking level was changed from here on. */
export interface ThinkingLevelChangeEntry extends SessionEntryBase {
  type: "thinking_level_change";
  thinkingLevel: string;
}

/** The model was changed from here on. */
export interface ModelChangeEntry extends SessionEntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}

/** Usage that is billed to the session but is not part of the model context. */
export interface UsageEntry extends SessionEntryBase {
  type: "usage";
  /** Free-form category, for example `"cache_warm"`. */
  kind: string;
  provider: string;
  model: string;
  usage: Usage;
  /** Short human-readable remark; only written when non-empty. */
  note?: string;
}

/**
 * The conversation before this point was summarized. When building context, the newest
 * compaction on the path replaces what came before it.
 */
export interface CompactionEntry<T = unknown> extends SessionEntryBase {
  type: "compaction";
  summary: string;
  /**
   * First entry before the compaction that is still sent to the model. Equal to the
   * compaction's own id when nothing before it is kept.
   */
  firstKeptEntryId: string;
  /** Context size, in tokens, before compacting. */
  tokensBefore: number;
  /** Data for the extension or tool that made the summary. */
  details?: T;
  /** Cost of producing the summary. */
  usage?: Usage;
  /** True when an extension made the summary rather than pi itself. */
  fromHook?: boolean;
  /** The system prompt and tool set in force at this point, folded into one message. */
  systemMessage?: SystemMessage;
  /**
   * The messages that follow the summary in the rebuilt context, stored in the entry itself.
   * When present (any array, even an empty one) the context is rebuilt from this entry alone:
   * `[systemMessage?, summary, ...retainedTail]` then the entries after it, and entries before
   * the compaction are not read. Written as the last key of the entry. Readers that do not
   * know this field still work: they keep using `firstKeptEntryId`.
   */
  retainedTail?: AgentMessage[];
}

/** Summary of a branch that was left when the leaf moved elsewhere. */
export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
  type: "branch_summary";
  /** Leaf before the move, or `"root"` when there was none. */
  fromId: string;
  summary: string;
  /** Data for the extension or tool that made the summary; not sent to the model. */
  details?: T;
  /** Cost of producing the summary. */
  usage?: Usage;
  /** True when an extension made the summary rather than pi itself. */
  fromHook?: boolean;
}

/**
 * Extension state saved in the session. Never part of the model context; an extension finds
 * its entries again by `customType` when a session is reopened.
 */
export interface CustomEntry<T = unknown> extends SessionEntryBase {
  type: "custom";
  customType: string;
  data?: T;
}

/**
 * A message from an extension that does take part in the model context (it is sent as a
 * user message). `display` says whether the UI shows it.
 */
export interface CustomMessageEntry<T = unknown> extends SessionEntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  /** Extension data; not sent to the model. */
  details?: T;
  display: boolean;
}

/** What a context edit may put in place of a message's content. */
export type ContextEditableContent =
  | UserMessage["content"]
  | AssistantMessage["content"]
  | ToolResultMessage["content"]
  | CustomMessage["content"];

/**
 * Changes what an earlier entry on the same branch contributes to the model context, without
 * touching the entry itself. The latest edit of a target wins.
 */
export interface ContextEditEntry extends SessionEntryBase {
  type: "context_edit";
  targetId: string;
  /** `null` drops the target from the context; otherwise its content is replaced. */
  replacement: {
    content: ContextEditableContent;
  } | null;
}

/** Sets (or, with `undefined` or `""`, clears) the label of an entry. */
export interface LabelEntry extends SessionEntryBase {
  type: "label";
  targetId: string;
  label: string | undefined;
}

/** Session metadata; currently the display name. */
export interface SessionInfoEntry extends SessionEntryBase {
  type: "session_info";
  name?: string;
}

/** Any entry of a session (everything in the file but the header). */
export type SessionEntry =
  | SessionMessageEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | UsageEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | ContextEditEntry
  | LabelEntry
  | SessionInfoEntry;

/** Any record of a session file, header included. */
export type FileEntry = SessionHeader | SessionEntry;

// ---------------------------------------------------------------------------
// Derived views
// ---------------------------------------------------------------------------

/** One node of {@link SessionManager.getTree}. */
export interface SessionTreeNode {
  /** The stored entry (the same object every read returns). */
  entry: SessionEntry;
  /** Children, oldest first. */
  children: SessionTreeNode[];
  /** Current label of the entry, if any. */
  label?: string;
  /** When that label was set. */
  labelTimestamp?: string;
}

/** What one entry contributes to the model context. */
export interface ProjectedSessionEntry {
  /** The stored entry. */
  sourceEntry: SessionEntry;
  /** Its messages after context edits; empty for entries that only change settings or were dropped. */
  messages: AgentMessage[];
}

/** The model context, with each message traced back to the entry it came from. */
export interface SessionProjection {
  entries: ProjectedSessionEntry[];
  /** All messages of `entries`, in order. */
  messages: AgentMessage[];
  /** Last thinking level set on the path; `"off"` if none. */
  thinkingLevel: string;
  /** Last model set or used on the path; `null` if none. */
  model: {
    provider: string;
    modelId: string;
  } | null;
}

/** The messages to send to the model, and the settings in force at the leaf. */
export interface SessionContext {
  messages: AgentMessage[];
  /** Last thinking level set on the path; `"off"` if none. */
  thinkingLevel: string;
  /** Last model set or used on the path; `null` if none. */
  model: {
    provider: string;
    modelId: string;
  } | null;
}

/** Summary of one session file, as returned by {@link SessionManager.list}. */
export interface SessionInfo {
  /** Path of the session file. */
  path: string;
  id: string;
  /** Working directory from the header; `""` for old sessions without one. */
  cwd: string;
  /** Display name from the latest `session_info` entry. */
  name?: string;
  /** Header `parentSession`, for forked or branched sessions. */
  parentSessionPath?: string;
  created: Date;
  /** Time of the latest user or assistant message (falls back to the creation time, then the file time). */
  modified: Date;
  /** Number of `message` entries on all branches. */
  messageCount: number;
  /** Text of the first user message, or `"(no messages)"`. */
  firstMessage: string;
  /** Text of all user and assistant messages, joined by spaces (for searching). */
  allMessagesText: string;
}

/**
 * Called by the list functions after each file is read.
 * @param loaded files done so far
 * @param total files to read
 * @param partialSessions when given, the sessions found so far, most recently active first
 */
export type SessionListProgress = (loaded: number, total: number, partialSessions?: readonly SessionInfo[]) => void;

/** The read-only part of a {@link SessionManager}. */
export type ReadonlySessionManager = Pick<
  SessionManager,
  | "getCwd"
  | "getSessionDir"
  | "getSessionId"
  | "getSessionFile"
  | "getLeafId"
  | "getLeafEntry"
  | "getEntry"
  | "getLabel"
  | "getBranch"
  | "buildContextEntries"
  | "buildSessionProjection"
  | "getHeader"
  | "getEntries"
  | "getTree"
  | "getSessionName"
>;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/**
 * The `code` of errors thrown by this package:
 *
 * - `ENTRY_NOT_FOUND`: an entry id is not in the session (`branch`, `branchWithSummary`,
 *   `appendLabelChange`, `appendContextEdit`, `createBranchedSession`).
 *   Message: `Entry <id> not found`.
 * - `NOT_ON_ACTIVE_BRANCH`: `appendContextEdit` target is not on the path from the leaf to the root.
 * - `NOT_EDITABLE`: `appendContextEdit` target does not contribute editable content
 *   (only user, assistant and tool-result messages and custom message entries do).
 * - `INVALID_REPLACEMENT`: `appendContextEdit` replacement is neither `null` nor an object
 *   whose `content` is a string or an array.
 * - `INVALID_SESSION_ID`: a chosen session id fails {@link assertValidSessionId}.
 * - `INVALID_SESSION_FILE`: a non-empty file that is not a pi session was opened; it is left untouched.
 * - `FORK_SOURCE_INVALID`: `forkFrom` source is missing, empty or not a session.
 * - `INVALID_ARGUMENT`: an argument has the wrong type or shape.
 * - `IO_ERROR`: reading or writing the file system failed; the message names the path.
 * - `SESSION_LOCKED`: the session file is being written by another session manager or process.
 * - `ON_ACTIVE_BRANCH`: `pruneBranch` was asked to delete an entry of the active path.
 *   Message: `Cannot delete the branch you are currently on`.
 * - `TRANSCRIPT_PAGE_UNBOUNDED` (a `RangeError`): `readTranscriptPage` without a whole `limit`
 *   (or `subscribeTranscript` with a `resetPageSize`) from 1 to
 *   {@link MAX_SESSION_TRANSCRIPT_PAGE_SIZE}. Message: `Session transcript limit must be an
 *   integer from 1 to 200`.
 * - `TRANSCRIPT_CURSOR_AMBIGUOUS` (a `TypeError`): `readTranscriptPage` given `before` and `after`.
 *   Message: `Use either before or after, not both`.
 * - `TRANSCRIPT_CURSOR_INVALID` (a `TypeError`): a cursor that is not one this package gave out.
 * - `TRANSCRIPT_CURSOR_FOREIGN` (a `RangeError`): a cursor of another session. Message:
 *   `Session transcript cursor belongs to a different session`.
 * - `TRANSCRIPT_CURSOR_STALE`: a cursor whose entry is no longer on the active branch. Message:
 *   `Session transcript cursor is not on the active branch`.
 * - `INVALID_ENTRY_ID` (a `TypeError`): `reserveEntryId(id)` with an id that is not of the form
 *   of a session id (`Session entry id must be non-empty, …`), or a bad `appendMessage` `id`.
 * - `ENTRY_ID_NOT_RESERVED`: `appendMessage(…, { id })` with an id not reserved. Message:
 *   `Session entry ID was not reserved: <id>`.
 * - `DUPLICATE_ENTRY_ID`: an id an entry has already (`Session entry ID already exists: <id>`),
 *   or `reserveEntryId(id)` of an id reserved already.
 *
 * Where the original module throws a message, the same text is used.
 */
export type SessionErrorCode =
  | "ENTRY_NOT_FOUND"
  | "NOT_ON_ACTIVE_BRANCH"
  | "NOT_EDITABLE"
  | "INVALID_REPLACEMENT"
  | "INVALID_SESSION_ID"
  | "INVALID_SESSION_FILE"
  | "FORK_SOURCE_INVALID"
  | "INVALID_ARGUMENT"
  | "IO_ERROR"
  | "SESSION_LOCKED"
  | "ON_ACTIVE_BRANCH"
  | "TRANSCRIPT_PAGE_UNBOUNDED"
  | "TRANSCRIPT_CURSOR_AMBIGUOUS"
  | "TRANSCRIPT_CURSOR_INVALID"
  | "TRANSCRIPT_CURSOR_FOREIGN"
  | "TRANSCRIPT_CURSOR_STALE"
  | "INVALID_ENTRY_ID"
  | "ENTRY_ID_NOT_RESERVED"
  | "DUPLICATE_ENTRY_ID";

/**
 * Where a {@link SessionManager.readTranscriptPage} page sits: `limit` items (1 to
 * {@link MAX_SESSION_TRANSCRIPT_PAGE_SIZE}) just before the `before` cursor, or just after the
 * `after` cursor, or, with neither, the newest `limit` items. Not both cursors.
 */
export interface SessionTranscriptPageOptions {
  limit: number;
  before?: string;
  after?: string;
}

/**
 * One item of the transcript: a message the entry `id` makes, as
 * {@link sessionEntryToContextMessages} makes it (a compaction makes its summary, after its
 * `systemMessage` when it has one; a branch summary its summary message).
 */
export interface SessionTranscriptItem {
  id: string;
  entryTimestamp: string;
  message: AgentMessage;
}

/**
 * One page of the transcript: items of the whole active branch, root to leaf, oldest first.
 * Cursors are opaque; one stays good while its entry is on the active branch (appends keep it
 * good; a branch change that leaves its entry behind makes it `TRANSCRIPT_CURSOR_STALE`).
 */
export interface SessionTranscriptPage {
  items: SessionTranscriptItem[];
  cursors: {
    /** Pass as `before` for the items before this page (null for an empty page). */
    before: string | null;
    /** Pass as `after` for the items after this page, or, on the newest page, for those
     * appended later (null for an empty branch). */
    after: string | null;
  };
  hasMoreBefore: boolean;
  hasMoreAfter: boolean;
  /** How many items the whole branch makes. */
  totalItems: number;
  /** How many of them come after the branch's latest compaction (all without one). */
  itemsAfterLatestCompaction: number;
}

/**
 * What a {@link SessionManager.subscribeTranscript} listener hears:
 * - `append`: an entry that makes items was committed at the end of the branch; `after` is the
 *   cursor past its items (`before` the one before them, an addition);
 * - `reset`: the branch or the session changed; `page` is the newest page, `resetPageSize` items.
 *   `reason` (an addition): `branch` (the leaf moved: `branch`, `branchWithSummary`,
 *   `resetLeaf`) or `session` (`newSession`, `setSessionFile`, `createBranchedSession`,
 *   `pruneBranch`).
 */
export type SessionTranscriptChange =
  | {
      type: "append";
      items: SessionTranscriptItem[];
      before: string;
      after: string;
      totalItems: number;
      itemsAfterLatestCompaction: number;
    }
  | { type: "reset"; reason: "branch" | "session"; page: SessionTranscriptPage };

export type SessionTranscriptChangeListener = (change: SessionTranscriptChange) => void;

/** One block of {@link buildTranscriptProjection}: an entry shown as itself. */
export interface TranscriptEntryBlock {
  kind: "entry";
  /** Stable: the same entry gives the same id in every projection. */
  id: string;
  entryId: string;
  entry: SessionEntry;
}

/** An assistant message (its tool calls follow as blocks of their own). */
export interface TranscriptAssistantBlock {
  kind: "assistant";
  id: string;
  entryId: string;
  entry: SessionMessageEntry;
  message: AgentMessage & { role: "assistant" };
}

/** A tool call of an assistant message, with the result that answered it once there is one. */
export interface TranscriptToolBlock {
  kind: "tool";
  id: string;
  entryId: string;
  entry: SessionMessageEntry;
  /** Where the call is in the message's `content`. */
  contentIndex: number;
  toolCall: { type: "toolCall"; id: string; name: string; arguments: Record<string, any> };
  resultEntry?: SessionMessageEntry;
  result?: AgentMessage & { role: "toolResult" };
}

export type TranscriptBlock = TranscriptEntryBlock | TranscriptAssistantBlock | TranscriptToolBlock;

export interface TranscriptProjection {
  blocks: TranscriptBlock[];
  /** Tool results that answer no call pending before them. */
  unpairedToolResults: Array<{ entry: SessionMessageEntry; result: AgentMessage & { role: "toolResult" } }>;
}

/**
 * The active branch (`session.getBranch()`, root to leaf) as the blocks a transcript view
 * renders, each with a stable id: an entry block for user, custom and other messages,
 * compactions, branch summaries and custom entries; an assistant block and one tool block per
 * tool call (paired with its result, which gets no block of its own); settings, labels and
 * names render nothing. Compaction erases nothing here. Not in the reference (upstream's
 * proposal).
 */
export declare function buildTranscriptProjection(session: { getBranch(): SessionEntry[] }): TranscriptProjection;

/** Options of {@link mergeSessions}: where the merged session goes (at most one of the two). */
export interface MergeSessionsOptions {
  /** A new file to write (an existing file is refused with `EEXIST`). */
  out?: string | null;
  /** Write the result into `a` (atomically: temp file, fsync, rename). */
  inPlace?: boolean;
}

/** What {@link mergeSessions} did: the report `pi-sessions merge --json` prints. */
export interface MergeSessionsReport {
  /** The session id both files share. */
  session: string;
  /** The file written (`out`, or `a` with `inPlace`), or null when nothing was written. */
  out: string | null;
  /** Entries in the merged session. */
  entries: number;
  /** Entries of `b` whose id `a` uses for other content: kept as siblings under `newId`, with
   * `mergedFrom: id`. */
  conflicts: Array<{ id: string; newId: string }>;
  /** Lines that are no entry, kept as they were (each distinct line once). */
  keptLines: number;
  /** The last entry's id: the tip of the latest continuation, where `SessionManager.open` resumes. */
  leafId: string | null;
  /** The merged file's text, only when neither `out` nor `inPlace` was given. */
  text?: string;
}

/**
 * Join two copies of one session (the same header id) that grew apart, e.g. on two machines, as
 * `pi-sessions merge` does: every entry of both once, an entry of `b` whose id `a` uses for other
 * content kept beside it under a new id, the latest continuation last so a reader resumes there.
 * Throws `SESSION_MISMATCH` for two different sessions (nothing written), `INVALID_SESSION_FILE`
 * for a file that is no session, `ENOENT`/`EEXIST` and the other errno codes for file errors,
 * `INVALID_ARGUMENT` for both `out` and `inPlace`. Not in the reference.
 */
export declare function mergeSessions(a: string, b: string, options?: MergeSessionsOptions): MergeSessionsReport;

/** Options of {@link syncSessions}. */
export interface SyncSessionsOptions {
  /** The agent directory whose sessions are synced (default `PI_CODING_AGENT_DIR`, else `~/.pi/agent`). */
  agentDir?: string;
  /** The remote is a shared folder kept in step by a file-sync tool, not a git repository. */
  folder?: boolean;
  /** Report what would change and write nothing (a git remote is still fetched into `<agentDir>/sync/`). */
  dryRun?: boolean;
  /** The path map: lines `<path on the remote> = <path here>` (default `<agentDir>/sync/paths`). */
  paths?: string;
  /** The git branch the sessions are kept on (default `main`; a folder takes none). */
  branch?: string;
  /** Deleted sessions (ids, id prefixes as in pi's file names, or file names) to take out of the
   * git remote's whole history after the sync: the branch is rewritten and force-pushed; other
   * machines follow at their next sync. One still on the remote is reported in `problems`
   * (`INVALID_ARGUMENT`) and nothing is purged. */
  purge?: string[];
  /**
   * Sessions to send that hold unacknowledged credentials: `auto` (default) holds them back for a
   * git remote reached over the network and sends them with a warning to a local repository or
   * folder; `skip`, `warn`, or `refuse` (throws `SYNC_SECRETS_FOUND`, nothing sent).
   */
  secrets?: "auto" | "skip" | "refuse" | "warn";
}

/** A session {@link syncSessions} held back, or sent with a warning, because it holds credentials. */
export interface SyncSecretsSession {
  id: string;
  path: string;
  /** The kinds found, each once (see {@link SecretFinding.kind}). */
  kinds: string[];
  findings: number;
  /** False: held back (both sides left as they were; what the remote lacks of it deletes nothing
   * here, and the next sync judges it as a session changed here); true: sent (`warn`). */
  sent: boolean;
  /** This run reported it first; later runs only count it. */
  first: boolean;
}

/** A session {@link syncSessions} wrote (or, in a dry run, would write). */
export interface SyncedSession {
  /** The session id (the header's). */
  id: string;
  /** The local file. */
  local: string;
  /** Its file name on the remote. */
  remote: string;
  /** `push`: copied to the remote; `pull`: copied here; `merge`: changed on both sides (or conflict
   * copies merged in), both now hold every entry. */
  action: "push" | "pull" | "merge";
  /** Entries kept beside a differing one under a new id (`mergedFrom`). */
  conflicts: number;
  /** Conflict copies (`x.sync-conflict-….jsonl`, `x (conflict).jsonl`) merged in and removed. */
  copiesRemoved: string[];
  /** Bytes pi appended while the file was rewritten, carried over. */
  tail: number;
  /** The side that had deleted this session since the last sync while the other continued it:
   * it is back there now, with the other side's lines (new work beats an old deletion). */
  restored: "here" | "remote" | null;
}

/** A session {@link syncSessions} deleted (or, in a dry run, would delete) because the other
 * side had deleted it since the last sync. */
export interface SyncDeletedSession {
  id: string;
  /** The local file (gone now, or going). */
  local: string;
  /** Its file name on the remote. */
  remote: string;
  /** The side it was removed from: `remote` (it was deleted here) or `here` (deleted on the
   * remote, by another machine's sync). */
  from: "here" | "remote";
  /** `trash`: moved to the trash by a `trash` command; `removed`: deleted (a git remote keeps it
   * in its history). */
  how: "trash" | "removed";
}

/** A session {@link syncSessions} took out of the git remote's history (`purge`). */
export interface SyncPurgedSession {
  id: string;
  /** Its file name on the remote. */
  remote: string;
}

/** A session {@link syncSessions} left as it was. */
export interface SyncProblem {
  /** `SESSION_MISMATCH` (two files of different sessions), `SYNC_UNMAPPED_PATH` (a project path of
   * another machine with no mapping), `SESSION_LOCKED`, `SYNC_DUPLICATE_SESSION`, or an errno name. */
  code: string;
  id: string | null;
  path: string;
  message: string;
}

/** What {@link syncSessions} did: the report `pi-sessions sync --json` prints. */
export interface SyncSessionsReport {
  remote: string;
  transport: "git" | "folder";
  /** The git branch; null for a folder. */
  branch: string | null;
  dryRun: boolean;
  /** Rounds run (more than one when another machine pushed first). */
  rounds: number;
  /** The remote's history had been rewritten by a purge on another machine; this machine now
   * follows the new history. */
  rewritten: boolean;
  synced: SyncedSession[];
  deleted: SyncDeletedSession[];
  purged: SyncPurgedSession[];
  pushed: number;
  pulled: number;
  merged: number;
  /** Sessions brought back on a side that had deleted them (see `SyncedSession.restored`). */
  restored: number;
  /** Sessions both sides already held alike. */
  unchanged: number;
  problems: SyncProblem[];
  /** The secrets policy in force (`auto` resolved to `skip` or `warn`). */
  secretsPolicy: "skip" | "refuse" | "warn";
  secrets: SyncSecretsSession[];
}

/**
 * Keep this machine's sessions and a remote's as one history, as `pi-sessions sync` does: a
 * session new on one side is copied, one changed on both is merged (every entry of both), one
 * deleted on one side since the last sync is deleted on the other (to the trash here when a `trash`
 * command is on PATH) unless the other side continued it, file-sync conflict copies are merged and
 * removed, project paths (`cwd`, a fork's `parentSession`) mapped by the path map. Safe while pi
 * appends (appends made during the sync are carried over). Throws `SYNC_REMOTE_NOT_GIT`,
 * `SYNC_REMOTE_NOT_FOLDER`, `SYNC_GIT_FAILED` or `INVALID_ARGUMENT` with nothing written; a
 * session that cannot be synced is reported in `problems` and left alone. Not in the reference.
 */
export declare function syncSessions(remote: string, options?: SyncSessionsOptions): SyncSessionsReport;

/** One credential-shaped string {@link scanSecrets} found: never the secret itself. */
export interface SecretFinding {
  /** 1-based line of the session file. */
  line: number;
  /** The entry that holds it; null in the header or in a line that is not JSON. */
  entryId: string | null;
  place: "user" | "tool-output" | "tool-args" | "assistant" | "thinking" | "custom" | "summary" | "other";
  /** `anthropic-api-key`, `openai-api-key`, `openrouter-api-key`, `groq-api-key`, `xai-api-key`,
   * `google-api-key`, `aws-access-key-id`, `aws-secret-access-key`, `github-token`, `gitlab-token`,
   * `slack-token`, `slack-webhook`, `stripe-live-key`, `npm-token`, `private-key`, `url-password`,
   * `jwt`. */
  kind: string;
  /** 16 hex digits of the secret's SHA-256: what `pi-sessions secrets --ack` takes. */
  fingerprint: string;
  /** A masked preview: a few characters and the length, never the whole secret. */
  preview: string;
  /** The secret's bytes in the file, `[start, end)`, JSON escapes included. */
  start: number;
  end: number;
}

/** A session {@link scanSecrets} found something in (or could not read). */
export interface SecretScanSession {
  path: string;
  /** The header's id; null without a header. */
  id: string | null;
  findings: SecretFinding[];
  /** Findings left out because they are acknowledged. */
  acknowledged: number;
  /** Why the file could not be read; null when it was scanned. */
  error: string | null;
}

/** Options of {@link scanSecrets}. */
export interface ScanSecretsOptions {
  /** The agent directory: its sessions for `{ all: true }`, its acknowledgements (default
   * `PI_CODING_AGENT_DIR`, else `~/.pi/agent`). */
  agentDir?: string;
  /** Report acknowledged findings too. */
  includeAcknowledged?: boolean;
}

/** What {@link scanSecrets} found: `pi-sessions secrets --json`'s report. */
export interface ScanSecretsReport {
  /** Session files looked at. */
  scanned: number;
  /** Unacknowledged findings in all of them. */
  findings: number;
  acknowledged: number;
  /** The sessions with findings (or a read error), in the order given. */
  sessions: SecretScanSession[];
}

/**
 * Look for credential-shaped strings (provider API keys, AWS keys, GitHub/GitLab/Slack/Stripe/npm
 * tokens, PEM private keys, URL passwords, JWTs) in session files, as `pi-sessions secrets` does:
 * `target` is a path, an array of paths, or `{ all: true }` for every session of the agent dir.
 * Synchronous (files are scanned on one thread per core meanwhile). Not in the reference.
 */
export declare function scanSecrets(
  target: string | string[] | { all: true },
  options?: ScanSecretsOptions,
): ScanSecretsReport;

/** Options of {@link moveSessions}. */
export interface MoveSessionsOptions {
  /** Move the files; without it only the plan is returned. */
  apply?: boolean;
  /** The agent directory (default `PI_CODING_AGENT_DIR`, else `~/.pi/agent`). */
  agentDir?: string;
}

/** One file of {@link moveSessions}. */
export interface MovedSessionFile {
  from: string;
  to: string;
  id: string | null;
  /** What the plan says: `move`, `resume` (an earlier run wrote the destination) or `skip`. */
  action: "move" | "resume" | "skip";
  status: "planned" | "moved" | "skipped" | "failed";
  rewrites: Array<{ field: string; from: string | null; to: string }>;
  /** Bytes carried over beyond the first copy. */
  tail: number;
  /** `locked`, `other-session`, `diverged`, `not-a-session`, `error`, or null. */
  reason: string | null;
  message: string | null;
}

/** What {@link moveSessions} did or would do: the report `pi-sessions move --json` prints. */
export interface MoveSessionsReport {
  from: string;
  to: string;
  oldDir: string;
  newDir: string;
  applied: boolean;
  files: MovedSessionFile[];
  moved: number;
  skipped: number;
}

/**
 * Carry a renamed or moved project's sessions to its new directory's session dir, as
 * `pi-sessions move` does: each header's `cwd` (and a `parentSession` naming a moved file)
 * rewritten, atomic and resumable, what pi appended meanwhile carried over. Only the plan unless
 * `apply`. Throws `INVALID_ARGUMENT` when both directories have one session dir. Not in the reference.
 */
export declare function moveSessions(oldDir: string, newDir: string, options?: MoveSessionsOptions): MoveSessionsReport;

/** What {@link SessionManager.pruneBranch} did: upstream's `{ removedEntryIds, contextChanged }`
 * and our counts. */
export interface PruneResult {
  /** Ids of every entry deleted, the label entries dropped with the branch included. */
  removedEntryIds: string[];
  /** Whether a compaction of the active path now keeps from another entry (its
   * `firstKeptEntryId` named a deleted entry). */
  contextChanged: boolean;
  /** Entries of the deleted subtree (the entry itself included). */
  removed: number;
  /** Label entries elsewhere that named a deleted entry, deleted with it. */
  labelsDropped: number;
  /** Size of the session's records, one JSON line each, before and after. */
  bytesBefore: number;
  bytesAfter: number;
  /** Whether the session file was rewritten (false while the session is not on disk yet). */
  written: boolean;
}

/**
 * Shape of the errors this package throws: a normal `Error` (so `instanceof Error` holds and
 * `message` reads as usual) with a stable `code`; see {@link SessionErrorCode} for the list.
 *
 * ```js
 * try { manager.branch(id) } catch (err) { if (err.code === "ENTRY_NOT_FOUND") ... }
 * ```
 */
export interface SessionError extends Error {
  code: string;
  /** File-system failures only, as on Node's own `fs` errors: the negative errno (`-2`). */
  errno?: number;
  /** File-system failures only: the call that failed (`"open"`, `"mkdir"`, `"read"`, ...). */
  syscall?: string;
  /** File-system failures of a call on a path (not on a descriptor): that path. */
  path?: string;
}

// ---------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------

/**
 * Throws (code `INVALID_SESSION_ID`) unless `id` is a usable session id: ASCII letters, digits,
 * `-`, `_` and `.`, starting and ending with a letter or digit.
 */
export declare function assertValidSessionId(id: string): void;

/**
 * Upgrades parsed records to the current format, in place: gives version 1 entries ids and
 * parent links, and renames the old `hookMessage` role to `custom`. A list without a header
 * is treated as version 1.
 */
export declare function migrateSessionEntries(entries: FileEntry[]): void;

/**
 * Parses the text of a session file, one JSON value per line. Blank lines and lines that are
 * not valid JSON are skipped; nothing else is checked. This is the reference's function exactly:
 * unlike `loadEntriesFromFile` and `SessionManager.open`, it does not read an entry that another
 * writer glued after the torn bytes of a writer killed mid-line (such a line is skipped whole).
 */
export declare function parseSessionEntries(content: string): FileEntry[];

/** The last compaction in `entries` (array order), or `null`. */
export declare function getLatestCompactionEntry(entries: SessionEntry[]): CompactionEntry | null;

/**
 * The context messages one entry stands for: its message, a summary message for compactions
 * and branch summaries, a custom message for custom message entries, nothing for the rest.
 */
export declare function sessionEntryToContextMessages(entry: SessionEntry): AgentMessage[];

/**
 * The entries that make up the model context at `leafId`: the path from the root, cut at the
 * newest compaction (which comes first, followed by the entries it keeps and those after it).
 * @param leafId where to start; `null` gives `[]`, `undefined` or an unknown id uses the last entry
 * @param byId index of `entries` by id, if the caller already has one
 */
export declare function buildContextEntries(
  entries: SessionEntry[],
  leafId?: string | null,
  byId?: Map<string, SessionEntry>,
): SessionEntry[];

/**
 * The messages one entry contributes after applying `edit` (its latest context edit):
 * a `null` replacement drops them, otherwise their content is replaced.
 */
export declare function projectContextEntry(entry: SessionEntry, edit: ContextEditEntry | undefined): AgentMessage[];

/**
 * The model context at `leafId` with, for every context entry, the messages it contributes.
 * Arguments as for {@link buildContextEntries}.
 */
export declare function buildSessionProjection(
  entries: SessionEntry[],
  leafId?: string | null,
  byId?: Map<string, SessionEntry>,
): SessionProjection;

/**
 * The messages to send to the model at `leafId`, with the thinking level and model in force.
 * Arguments as for {@link buildContextEntries}.
 */
export declare function buildSessionContext(
  entries: SessionEntry[],
  leafId?: string | null,
  byId?: Map<string, SessionEntry>,
): SessionContext;

/**
 * The directory where sessions for `cwd` are kept by default
 * (`<agentDir>/sessions/--<cwd with separators turned into dashes>--`), created if missing.
 * @param agentDir defaults to `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`
 */
export declare function getDefaultSessionDir(cwd: string, agentDir?: string): string;

/**
 * Reads and parses a session file. Returns `[]` when the file is missing or does not start
 * with a session header. If the last line lacks its newline, one is appended to the file so
 * later appends start on a fresh line (unless another writer ended that line meanwhile). An
 * entry glued after the torn bytes of a writer killed mid-line is read (the reference skips
 * that line whole).
 */
export declare function loadEntriesFromFile(filePath: string): FileEntry[];

/**
 * Path of the most recently modified session file in `sessionDir` (optionally only sessions
 * started in `cwd`), or `null`. Only headers are read.
 */
export declare function findMostRecentSession(sessionDir: string, cwd?: string): string | null;

// ---------------------------------------------------------------------------
// SessionManager
// ---------------------------------------------------------------------------

/**
 * A conversation session: a tree of entries stored as JSON lines in one file.
 *
 * Every entry points at its parent. The leaf is the current position: each append adds a
 * child of the leaf and moves the leaf to it; {@link SessionManager.branch} moves the leaf back so the next
 * append starts a new branch. Nothing is ever rewritten in place, with one exception: files
 * in an older format are upgraded when opened, through a temporary file and a rename, and the
 * original is kept next to it as a backup. Lines that cannot be parsed, unknown entry types
 * and unknown fields are kept, also by such an upgrade.
 *
 * When a file is written:
 * - A new session creates its file only once it holds a user or assistant message. Until
 *   then (model and thinking-level changes, system messages...) everything stays in memory,
 *   so starting and quitting without chatting leaves no file behind. The file is then written
 *   whole: header first, then every entry so far.
 * - After that, each append adds one line to the file. {@link SessionManager.flush} writes a new
 *   session's file at once, and forces what was written to stable storage.
 * - If a write fails, the append is undone in memory (entry removed, leaf restored) and the
 *   error is thrown.
 * - Sessions made with {@link SessionManager.inMemory} never touch the disk.
 *
 * Reading the same entry twice returns the same object. Treat returned entries as read-only.
 *
 * Instances are made with the static factories ({@link SessionManager.create},
 * {@link SessionManager.open}, {@link SessionManager.continueRecent},
 * {@link SessionManager.inMemory}, {@link SessionManager.forkFrom}).
 */
/** The options of {@link SessionManager.appendMessage} (an addition beyond the reference). */
export interface AppendMessageOptions {
  /**
   * The new entry's id: one {@link SessionManager.reserveEntryId} returned and not used or
   * released since. A non-string or empty id throws a `TypeError` with `code: "INVALID_ENTRY_ID"`;
   * an id that is not reserved throws `ENTRY_ID_NOT_RESERVED`, one an entry already has
   * `DUPLICATE_ENTRY_ID`.
   */
  id?: string;
  /**
   * `true`: the entry is durable when the call returns, as after {@link SessionManager.flush}: a
   * new session not written yet is written at once (even without a user or assistant message),
   * and the write is fsynced.
   */
  flush?: boolean;
}

export declare class SessionManager {
  private constructor();

  // --- where the session lives --------------------------------------------------------------

  /**
   * Switches this manager to another session file, loading it if it exists. A missing file
   * starts a new session that will be written at exactly this path; an empty file gets a fresh
   * header written at once. Throws `Session file is not a valid pi session: <path>` (code
   * `INVALID_SESSION_FILE`) for any other file that is not a session, without modifying it.
   * The manager's working directory is kept.
   */
  setSessionFile(sessionFile: string): void;

  /**
   * Starts a new, empty session in the same directory and returns its file path (`undefined`
   * for in-memory sessions). Nothing is written yet, and the previous file is left as it is.
   * Throws (code `INVALID_SESSION_ID`) for an invalid `options.id`, before changing anything.
   */
  newSession(options?: NewSessionOptions): string | undefined;

  /** Whether this session is backed by a file (false for {@link SessionManager.inMemory}). */
  isPersisted(): boolean;

  /** Absolute working directory of the session. */
  getCwd(): string;

  /** Directory where new session files go, as it was given (`""` for in-memory sessions). */
  getSessionDir(): string;

  /** Whether {@link SessionManager.getSessionDir} is the default directory for {@link SessionManager.getCwd}. */
  usesDefaultSessionDir(): boolean;

  /** Id of the session (from its header). */
  getSessionId(): string;

  /**
   * Path of the session file, or `undefined` for in-memory sessions. The file may not exist
   * yet (see the class description).
   */
  getSessionFile(): string | undefined;

  /**
   * Writes one entry that is already in memory to the session file, following the
   * write rules of the class description. Called by the append methods; not meant to be called directly.
   */
  _persist(entry: SessionEntry): void;

  /**
   * Makes the session durable now (an addition: the reference has no `flush`). A new session
   * whose file is not written yet (no user or assistant message so far) gets it at once: the
   * header and every entry held, exactly what its first write would have written. Then the
   * file is fsynced (a file just created, its directory too), so a crash or a power loss after
   * the call loses nothing appended before it. Later appends add one line each to the same
   * file, which ends up as the reference would have written it for the same calls.
   *
   * Idempotent: a second call leaves the file byte-identical (it only fsyncs again).
   * Returns `true` for a persisted session, `false` for an in-memory one (nothing is written).
   * Throws `EEXIST` if another writer created the file first (the entries stay pending).
   */
  flush(): boolean;

  /**
   * Releases what this manager holds now instead of when it is garbage-collected: its open
   * descriptors, the exclusive lease (`<file>.lock`, removed at once), the native memory of
   * its lines and index, and its entry caches (an addition: the reference has no `dispose`).
   * Nothing is written: what was appended is already on disk, and entries of a new session
   * that has no user or assistant message yet are dropped ({@link SessionManager.flush} first
   * to keep them). Entry objects handed out before stay valid.
   *
   * After it, every method throws an `Error` with `code: "SESSION_DISPOSED"` naming the
   * method; a second `dispose()` does nothing.
   */
  dispose(): void;

  /**
   * Exclusive mode for this manager (also turned on for every manager by `PI_SESSION_EXCLUSIVE=1`).
   * On: the manager holds the session file's lease, `<file>.lock` (pid, hostname, start time),
   * taken at once if the file exists, else before the first write, and again whenever it moves
   * to another file. While another live process holds the lease, this call, opening that file and
   * writing to it throw an `Error` with code `SESSION_LOCKED` whose message names the holder's pid
   * (the mode stays on). A lease whose process is gone (same host) is taken over. Off: the lease
   * is released. Managers not in exclusive mode take no lease and may share a file, but refuse to
   * write to a file whose lease a live process holds. Throws `INVALID_ARGUMENT` for a non-boolean.
   */
  setExclusive(on: boolean): void;

  /**
   * Restore mode (an addition; off by default, as the reference, or on for every manager with
   * `PI_SESSION_RESTORE_MISSING=1`). On, a write that finds the session file's directory gone
   * (an `rm -rf` of the sessions dir between two turns, a file opened in a directory that was
   * never made) makes the directory again and writes, instead of throwing `ENOENT`. An append
   * that finds the file itself gone writes the whole session back, header and every entry held
   * and then the new one, where the reference would leave a file of that one line; so does
   * {@link SessionManager.flush}. The file written back is complete or absent (a temp file
   * linked into place), fsynced with its directories when fsync per write is on; an exclusive
   * manager takes its lease again (`SESSION_LOCKED` if another process took it meanwhile). A
   * failed write leaves memory as it was. Throws `INVALID_ARGUMENT` for a non-boolean.
   */
  setRestoreMissing(on: boolean): void;

  /**
   * When on, every write of this manager (each append, the first write of a new session) is
   * fsynced before the call returns, so it survives a power loss (as `PI_SESSION_FSYNC=1` does for
   * every manager). Off (the default): a process crash loses nothing, a power loss may lose the
   * last appends. Throws `INVALID_ARGUMENT` for a non-boolean.
   */
  setFsync(on: boolean): void;

  // --- appending ----------------------------------------------------------------------------

  /**
   * Appends a message after the leaf and returns the new entry id. Compaction and branch
   * summaries are not messages to append: use {@link SessionManager.appendCompaction} and
   * {@link SessionManager.branchWithSummary}. Do not modify the message object after handing it over.
   *
   * `options` is an addition (the reference takes the message only), see {@link AppendMessageOptions}:
   * `id` appends with an id from {@link SessionManager.reserveEntryId}, `flush: true` makes the
   * entry durable before the call returns. A refused id (`INVALID_ENTRY_ID`,
   * `ENTRY_ID_NOT_RESERVED`, `DUPLICATE_ENTRY_ID`) changes nothing; a failed write keeps
   * the reservation.
   */
  appendMessage(message: Message | CustomMessage | BashExecutionMessage, options?: AppendMessageOptions): string;

  /**
   * A new entry id, reserved for {@link SessionManager.appendMessage} `(message, { id })` (an
   * addition): no entry of the session has it, no other reservation does, and no other append
   * takes it while it is reserved, so the id can be handed out (in a request, a log) before the
   * entry exists. The reservation is used by the append that names it, once that append has
   * succeeded; it is dropped by {@link SessionManager.releaseEntryId} and when the manager moves
   * to another session ({@link SessionManager.newSession}, {@link SessionManager.setSessionFile},
   * {@link SessionManager.createBranchedSession}). Reservations live in memory only.
   *
   * With `id`, that id is reserved and returned: it must have the form of a session id
   * (`INVALID_ENTRY_ID`, `Session entry id must be non-empty, …`) and be neither an entry's
   * (`DUPLICATE_ENTRY_ID`, `Session entry ID already exists: <id>`) nor reserved already.
   */
  reserveEntryId(id?: string): string;

  /**
   * Gives up the reservation of `id` (an addition). Returns `false` when `id` was not reserved
   * (never, already used, or already released). Throws a `TypeError` with
   * `code: "INVALID_ENTRY_ID"` for a non-string.
   */
  releaseEntryId(id: string): boolean;

  /** Records a thinking-level change after the leaf; returns the entry id. */
  appendThinkingLevelChange(thinkingLevel: string): string;

  /** Records a model change after the leaf; returns the entry id. */
  appendModelChange(provider: string, modelId: string): string;

  /**
   * Records usage that is not part of the model context (for example cache warming).
   * Unlike the other append methods this returns the whole entry, not its id.
   * @param note written only when non-empty
   */
  appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): UsageEntry;

  /**
   * Appends a compaction after the leaf and returns its id. The system prompt and tools in
   * force are saved in the entry (`systemMessage`) so the compacted context keeps them.
   * @param firstKeptEntryId first earlier entry the model still sees; `null` keeps none
   * @param tokensBefore context size before compacting
   * @param details extension data (not sent to the model)
   * @param fromHook true when an extension made the summary
   * @param usage cost of producing the summary
   * @param retainedTail messages to follow the summary in the rebuilt context; when given, the
   *   context is rebuilt from this entry alone (see {@link CompactionEntry.retainedTail})
   */
  appendCompaction<T = unknown>(
    summary: string,
    firstKeptEntryId: string | null,
    tokensBefore: number,
    details?: T,
    fromHook?: boolean,
    usage?: Usage,
    retainedTail?: AgentMessage[],
  ): string;

  /** Appends extension state (not part of the model context); returns the entry id. */
  appendCustomEntry(customType: string, data?: unknown): string;

  /**
   * Sets the session's display name; returns the entry id. Line breaks become spaces and the
   * name is trimmed; an empty name clears it.
   */
  appendSessionInfo(name: string): string;

  /** The display name from the latest `session_info` entry (on any branch), or `undefined`. */
  getSessionName(): string | undefined;

  /**
   * Appends an extension message that is part of the model context; returns the entry id.
   * @param customType identifies the extension
   * @param display whether the UI shows it
   * @param details extension data (not sent to the model)
   */
  appendCustomMessageEntry<T = unknown>(
    customType: string,
    content: string | (TextContent | ImageContent)[],
    display: boolean,
    details?: T,
  ): string;

  /**
   * Changes what an earlier entry on the current branch contributes to the model context;
   * returns the edit's id. `null` drops the entry from the context; `{ content }` replaces its
   * content. Throws with code `INVALID_REPLACEMENT`, `ENTRY_NOT_FOUND`, `NOT_ON_ACTIVE_BRANCH`
   * or `NOT_EDITABLE` (checked in that order).
   */
  appendContextEdit(targetId: string, replacement: ContextEditEntry["replacement"]): string;

  // --- reading ------------------------------------------------------------------------------

  /** Id of the current leaf, or `null` before the first entry (or after {@link SessionManager.resetLeaf}). */
  getLeafId(): string | null;

  /** The current leaf entry, or `undefined`. */
  getLeafEntry(): SessionEntry | undefined;

  /** The entry with this id, or `undefined`. */
  getEntry(id: string): SessionEntry | undefined;

  /** Entries whose parent is `parentId`, in the order they were appended. */
  getChildren(parentId: string): SessionEntry[];

  /** Current label of an entry, or `undefined`. */
  getLabel(id: string): string | undefined;

  /**
   * Sets the label of an entry (on any branch), or clears it when `label` is `undefined` or
   * `""`; returns the label entry's id. Throws `Entry <id> not found` (code `ENTRY_NOT_FOUND`).
   */
  appendLabelChange(targetId: string, label: string | undefined): string;

  /**
   * The entries from the root down to `fromId` (default: the leaf), of every type.
   * Returns `[]` for an unknown id or when there is no leaf.
   */
  getBranch(fromId?: string): SessionEntry[];

  /** The entries that make up the model context at the leaf; see {@link buildContextEntries}. */
  buildContextEntries(): SessionEntry[];

  /** The model context at the leaf, per contributing entry; see {@link buildSessionProjection}. */
  buildSessionProjection(): SessionProjection;

  /** The messages to send to the model at the leaf, with thinking level and model. */
  buildSessionContext(): SessionContext;

  /** The session header, or `null`. */
  getHeader(): SessionHeader | null;

  /** Number of distinct entries, without building the array {@link SessionManager.getEntries} returns. */
  getEntryCount(): number;

  /** All entries (not the header) in the order they were appended, as a new array. */
  getEntries(): SessionEntry[];

  /**
   * The entries after the first `count` of {@link SessionManager.getEntries}, as a new array of
   * the same objects (an addition: the reference has no such method). With `count` taken from
   * an earlier `getEntries().length` it returns exactly what was appended since, without
   * copying the whole list; `count` equal to the length gives `[]`.
   *
   * Throws a `RangeError` with `code: "ENTRY_COUNT_OUT_OF_RANGE"` when the session has fewer
   * than `count` entries, and with `code: "INVALID_ARGUMENT"` when `count` is not a
   * non-negative integer.
   */
  getEntriesSince(count: number): SessionEntry[];

  /**
   * All entries as a tree. Roots are entries without a (known) parent; children are sorted
   * oldest first.
   */
  getTree(): SessionTreeNode[];

  // --- moving the leaf ----------------------------------------------------------------------

  /**
   * Moves the leaf to an earlier entry; the next append starts a new branch there. Nothing is
   * written. Throws `Entry <id> not found` (code `ENTRY_NOT_FOUND`).
   */
  branch(branchFromId: string): void;

  /** Clears the leaf; the next append starts a new root. Nothing is written. */
  resetLeaf(): void;

  /**
   * Moves the leaf to `branchFromId` (`null`: before the first entry) and appends a summary of
   * the branch that was left; returns the summary's id. Throws `Entry <id> not found`
   * (code `ENTRY_NOT_FOUND`).
   */
  branchWithSummary(
    branchFromId: string | null,
    summary: string,
    details?: unknown,
    fromHook?: boolean,
    usage?: Usage,
  ): string;

  /**
   * Replaces this session with a new one that holds only the path from the root to `leafId`
   * (with the labels of those entries), in a new file in the same directory. The old file is
   * left as it is. Returns the new path, or `undefined` for in-memory sessions. Throws
   * `Entry <id> not found` (code `ENTRY_NOT_FOUND`).
   */
  createBranchedSession(leafId: string): string | undefined;

  /**
   * How many entries {@link SessionManager.pruneBranch} would delete with the branch at
   * `entryId`: the entry and everything under it (labels elsewhere that name them not counted);
   * 0 for an id no entry has. Not in the reference.
   */
  countSubtree(entryId: string): number;

  /**
   * Deletes an abandoned side branch: `entryId`, everything under it, and label entries that
   * name a deleted entry. Survivors under a deleted label get its nearest surviving ancestor as
   * `parentId`; a surviving compaction whose `firstKeptEntryId` named a deleted entry keeps from
   * the next surviving entry of its path. The leaf and `buildSessionContext()` stay as they were
   * (a label that is the leaf stays even when it names a deleted entry).
   * A session already on disk is rewritten atomically (temp file, fsync, rename, fsync of the
   * directory); one not yet written changes in memory only. Throws `Cannot delete the branch you
   * are currently on` (code `ON_ACTIVE_BRANCH`) for an entry of the active path and
   * `Entry <id> not found` (code `ENTRY_NOT_FOUND`). Not in the reference.
   */
  pruneBranch(entryId: string): PruneResult;

  /**
   * One page of the transcript: the whole active branch, root to leaf, each entry as
   * {@link sessionEntryToContextMessages} makes it (compaction narrows no transcript). Only the
   * page's entries are read and parsed, so a page costs what its entries cost, not what the
   * session costs. Throws `TRANSCRIPT_PAGE_UNBOUNDED`, `TRANSCRIPT_CURSOR_AMBIGUOUS`,
   * `TRANSCRIPT_CURSOR_INVALID`, `TRANSCRIPT_CURSOR_FOREIGN` or `TRANSCRIPT_CURSOR_STALE` (see
   * {@link SessionErrorCode}). Not in the reference (upstream's proposal).
   */
  readTranscriptPage(options: SessionTranscriptPageOptions): SessionTranscriptPage;

  /**
   * Calls `listener` synchronously after each committed append that makes transcript items
   * (never for a failed one; on disk as the write rules say: a new session's file waits for its
   * first assistant message, as in the reference), and with the newest page of `resetPageSize`
   * items (default 50) after each change of branch or session (see
   * {@link SessionTranscriptChange}). A listener's exception neither fails the change nor keeps
   * the other listeners from being called: it is reported as a process warning
   * (`TranscriptListenerWarning`, code `TRANSCRIPT_LISTENER_THREW`, the error's stack as
   * `detail`). Returns the function that unsubscribes. Not in the reference.
   */
  subscribeTranscript(listener: SessionTranscriptChangeListener, options?: { resetPageSize?: number }): () => void;

  // --- factories ----------------------------------------------------------------------------

  /**
   * Starts a new session for `cwd`. Nothing is written until the first user or assistant message.
   * @param sessionDir where the file goes; defaults to {@link getDefaultSessionDir}`(cwd)`
   */
  static create(cwd: string, sessionDir?: string, options?: NewSessionOptions): SessionManager;

  /**
   * Opens a session file (a missing file starts a new session at that path).
   * @param sessionDir directory for sessions started from this one; defaults to the file's directory
   * @param cwdOverride working directory to use instead of the one in the header
   */
  static open(path: string, sessionDir?: string, cwdOverride?: string): SessionManager;

  /**
   * Opens the most recently modified session of the directory, or starts a new one if there is none.
   * @param sessionDir defaults to {@link getDefaultSessionDir}`(cwd)`; a different directory is
   *   searched for sessions started in `cwd` only
   */
  static continueRecent(cwd: string, sessionDir?: string): SessionManager;

  /**
   * A session that is never written to disk.
   * @param cwd defaults to `process.cwd()`
   * @param entries records to start from; if they include a header, that header (and its id) is used
   */
  static inMemory(cwd?: string, options?: NewSessionOptions, entries?: FileEntry[]): SessionManager;

  /**
   * Copies a session (typically from another project) into a new session for `targetCwd`,
   * written immediately, with `parentSession` pointing at the source. Throws (code
   * `FORK_SOURCE_INVALID`) when the source is missing, empty or not a session.
   * @param sessionDir defaults to {@link getDefaultSessionDir}`(targetCwd)`
   */
  static forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string, options?: NewSessionOptions): SessionManager;

  /**
   * Path of the session with exactly this id, or `undefined`. Only file headers are read.
   * @param sessionDir defaults to {@link getDefaultSessionDir}`(cwd)`
   */
  static findById(cwd: string, id: string, sessionDir?: string): string | undefined;

  /**
   * Summaries of the sessions in one directory, most recently active first.
   * @param sessionDir defaults to {@link getDefaultSessionDir}`(cwd)`; a different directory is
   *   filtered to sessions started in `cwd`
   * @param signal aborting it rejects the promise with the signal's reason
   */
  static list(
    cwd: string,
    sessionDir?: string,
    onProgress?: SessionListProgress,
    signal?: AbortSignal,
  ): Promise<SessionInfo[]>;

  /**
   * Summaries of the sessions of every project (every directory under the sessions root),
   * most recently active first.
   * @param signal aborting it rejects the promise with the signal's reason
   */
  static listAll(onProgress?: SessionListProgress, signal?: AbortSignal): Promise<SessionInfo[]>;
  /**
   * Summaries of the sessions in one flat directory, most recently active first.
   * @param sessionDir directory to read; `""` or `undefined` reads every project instead
   */
  static listAll(sessionDir?: string, onProgress?: SessionListProgress, signal?: AbortSignal): Promise<SessionInfo[]>;
}
