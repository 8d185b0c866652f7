"use strict";
// One place that builds the errors this package throws: a plain `Error` (same message text as the
// reference, so callers matching on it keep working) with a stable `code`.

/** @returns {Error & {code: string}} */
function sessionError(code, message, Ctor = Error) {
  const err = /** @type {Error & { code: string }} */ (new Ctor(message));
  err.code = code;
  return err;
}

/** Give an error raised by JS itself (a TypeError from bad input, a JSON.stringify failure) a code. */
function withCode(err, code) {
  if (err && typeof err === "object" && err.code === undefined) {
    try {
      err.code = code;
    } catch {
      // Frozen or exotic error objects keep what they have.
    }
  }
  return err;
}

module.exports = { sessionError, withCode };
