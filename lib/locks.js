"use strict";
// Exclusive mode's lease files (`<file>.lock`, see crates/pi-session-core/src/lock/) are removed
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

// PI_SESSION_EXCLUSIVE puts every manager in exclusive mode; the binding reads and parses it.
if (native.exclusiveFromEnv()) releaseLocksAtExit();

module.exports = { releaseLocksAtExit };
