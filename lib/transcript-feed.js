"use strict";
// One manager's side of the transcript read model (an addition; see lib/transcript.js and
// readTranscriptPage): its cursor tag, the count of branch changes that cursors must match, the
// subscribers, and the transcript's length while known.
const { sessionError } = require("./errors.js");
const transcript = require("./transcript.js");
const { projectItem } = require("./projection.js");

/** @typedef {(event: object) => void} TranscriptListener */

class TranscriptFeed {
  /** @param {() => number} countNow the core's transcript length (after the latest append) */
  constructor(countNow) {
    this.countNow = countNow;
    this.tag = transcript.newManagerTag();
    this.epoch = 0;
    /** The subscriptions (null: none). @type {Set<{ listener: TranscriptListener }> | null} */
    this.listeners = null;
    /** The transcript's length while known (-1: not asked, or changed by a reset). */
    this.total = -1;
  }

  /** Call `listener` after each committed append and on each branch or session change.
   * @param {unknown} listener @returns {() => void} the unsubscribe function */
  subscribe(listener) {
    if (typeof listener !== "function") {
      throw sessionError("INVALID_ARGUMENT", "subscribeTranscript(listener) expects a function", TypeError);
    }
    // A wrapper per subscription, so that one function subscribed twice is called twice.
    const subscription = { listener: /** @type {TranscriptListener} */ (listener) };
    (this.listeners ??= new Set()).add(subscription);
    return () => {
      const set = this.listeners;
      if (set === null || !set.delete(subscription)) return;
      if (set.size === 0) this.listeners = null;
    };
  }

  /** `entry` was committed. A compaction or a context edit re-projects entries already read, so
   * its readers start over instead. @param {any} entry */
  appended(entry) {
    if (entry.type === "compaction" || entry.type === "context_edit") {
      this.reset("projection");
      return;
    }
    if (this.total < 0 && this.listeners === null) return;
    let total = this.total;
    if (total >= 0) this.total = ++total;
    if (this.listeners === null) return;
    // The core's count, once: it includes the entry just committed.
    if (total < 0) total = this.total = this.countNow();
    const { tag, epoch } = this;
    this.emit({
      type: "append",
      entries: [{ sourceEntry: entry, messages: projectItem(entry, undefined, false) }],
      before: transcript.cursorOf(tag, epoch, total - 1),
      after: transcript.cursorOf(tag, epoch, total),
      total,
    });
  }

  /** The branch, the session or the projection changed: every cursor given out so far is stale.
   * @param {"session" | "branch" | "projection"} reason */
  reset(reason) {
    this.epoch++;
    this.total = -1;
    if (this.listeners !== null) this.emit({ type: "reset", reason });
  }

  /** @param {object} event */
  emit(event) {
    if (this.listeners === null) return;
    for (const { listener } of Array.from(this.listeners)) {
      try {
        listener(event);
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

module.exports = { TranscriptFeed };
