"use strict";
// One manager's transcript subscribers (the transcript read model's change events; see
// lib/transcript.js). An append that adds items is told as `append` once committed; a change that
// moves the branch or replaces the session is told as `reset` with the newest page, once the
// manager is consistent again (`settle()`), so a listener may read the session from its callback.
const { sessionError } = require("./errors.js");
const { sessionEntryToContextMessages } = require("./context.js");
const transcript = require("./transcript.js");

/** The page size of a subscription's resets when its options name none. */
const DEFAULT_RESET_PAGE_SIZE = 50;

/** @typedef {(change: object) => void} TranscriptListener */
/** @typedef {InstanceType<typeof import("./session-state.js").SessionState>} SessionState */

class TranscriptFeed {
  /** @param {SessionState} s */
  constructor(s) {
    this.s = s;
    /** The subscriptions (null: none). @type {Set<{ listener: TranscriptListener, resetPageSize: number }> | null} */
    this.listeners = null;
    /** The branch's item counts while known (kept by appends, forgotten by resets).
     * @type {{ totalItems: number, itemsAfterLatestCompaction: number } | null} */
    this.counts = null;
    /** Why the subscribers are owed a reset, until `settle()` tells them. @type {string | null} */
    this.pending = null;
  }

  /** @param {unknown} listener @param {unknown} options @returns {() => void} the unsubscribe function */
  subscribe(listener, options) {
    if (typeof listener !== "function") {
      throw sessionError("INVALID_ARGUMENT", "subscribeTranscript(listener) expects a function", TypeError);
    }
    let resetPageSize = DEFAULT_RESET_PAGE_SIZE;
    if (options !== undefined) {
      if (options === null || typeof options !== "object") {
        throw sessionError("INVALID_ARGUMENT", "subscribeTranscript(listener, options) expects options to be an object", TypeError);
      }
      const size = /** @type {any} */ (options).resetPageSize;
      if (size !== undefined) resetPageSize = transcript.checkSize(size, "Session transcript reset page size");
    }
    // A record per subscription, so that one function subscribed twice is called twice.
    const subscription = { listener: /** @type {TranscriptListener} */ (listener), resetPageSize };
    (this.listeners ??= new Set()).add(subscription);
    return () => {
      const set = this.listeners;
      if (set === null || !set.delete(subscription)) return;
      if (set.size === 0) this.listeners = null;
    };
  }

  /** `entry` was committed as the new leaf, the record at `pos`. @param {any} entry @param {number} pos */
  appended(entry, pos) {
    if (this.listeners === null) {
      this.counts = null;
      return;
    }
    const messages = sessionEntryToContextMessages(entry);
    const n = messages.length;
    let counts = this.counts;
    if (counts === null) {
      // The core's counts, once: they include the entry just committed.
      counts = this.counts = transcript.countsOf(this.s);
    } else {
      // The core counts one entry on (its items, a compaction's new start): no rule of its own here.
      const [total, after] = this.s.core.transcriptCountsAfter(pos, counts.totalItems, counts.itemsAfterLatestCompaction);
      counts.totalItems = total;
      counts.itemsAfterLatestCompaction = after;
    }
    if (n === 0) return;
    const sessionId = this.s.core.sessionId();
    this.emit(() => ({
      type: "append",
      items: messages.map((message) => ({ id: entry.id, entryTimestamp: entry.timestamp, message })),
      before: transcript.cursorOf(sessionId, entry.id, 0),
      after: transcript.cursorOf(sessionId, entry.id, n),
      totalItems: counts.totalItems,
      itemsAfterLatestCompaction: counts.itemsAfterLatestCompaction,
    }));
  }

  /** The branch or the session changed: subscribers are owed a reset (told by `settle()`).
   * @param {"session" | "branch"} reason */
  reset(reason) {
    this.counts = null;
    if (this.listeners !== null) this.pending = reason;
  }

  /** Tell the subscribers of a reset owed, each with the newest page of its size. */
  settle() {
    const reason = this.pending;
    if (reason === null) return;
    this.pending = null;
    this.emit((sub) => ({ type: "reset", reason, page: transcript.newestPage(this.s, sub.resetPageSize) }));
  }

  /** @param {(sub: { listener: TranscriptListener, resetPageSize: number }) => object} eventFor */
  emit(eventFor) {
    if (this.listeners === null) return;
    for (const sub of Array.from(this.listeners)) {
      try {
        sub.listener(eventFor(sub));
      } catch (err) {
        // The change is committed already: a failing listener must not make it look failed to
        // the caller, nor keep the others from hearing of it, nor end the process. It is reported.
        process.emitWarning("A subscribeTranscript listener threw; the change it was told of stands", {
          type: "TranscriptListenerWarning",
          code: "TRANSCRIPT_LISTENER_THREW",
          detail: String(/** @type {any} */ (err)?.stack ?? err),
        });
      }
    }
  }
}

module.exports = { TranscriptFeed, DEFAULT_RESET_PAGE_SIZE };
