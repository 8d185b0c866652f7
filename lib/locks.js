"use strict";
// Exclusive mode's lease files (`<file>.lock`, see crates/pi-session-core/src/lock.rs) are removed
// when their manager leaves exclusive mode or is garbage-collected. A process that exits first
// would leave them behind (they would be taken over later as stale, its pid being gone); this
// removes them on a normal exit instead. Armed once, on first use of exclusive mode.
const native = require("../native.js");

let armed = false;

function releaseLocksAtExit() {
  if (armed) return;
  armed = true;
  process.once("exit", () => {
    try {
      native.releaseAllLocks();
    } catch {
      // Nothing useful to do while exiting.
    }
  });
}

if (/^(1|true|always)$/.test(process.env.PI_SESSION_EXCLUSIVE ?? "")) releaseLocksAtExit();

module.exports = { releaseLocksAtExit };
