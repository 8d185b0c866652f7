"use strict";
// One place that builds the errors this package throws: a plain `Error` (same message text as the
// reference, so callers matching on it keep working) with a stable `code`; and the one check of
// an optional path argument that builds one.

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

/** An optional path argument of a library function (`fn`'s option `name`): the string as given
 * (the core resolves it), or undefined when absent (napi refuses null in an options object);
 * anything else is INVALID_ARGUMENT. @param {unknown} value @param {string} name @param {string} fn */
function pathOption(value, name, fn) {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== "string") throw sessionError("INVALID_ARGUMENT", `${fn}: ${name} must be a path`, TypeError);
  return value;
}

module.exports = { sessionError, withCode, pathOption };
