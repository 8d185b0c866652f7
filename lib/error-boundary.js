"use strict";
// Every error a SessionManager method throws (or a promise it returns rejects with) is an `Error`
// with a string `code`. The core's errors have one already (`ENTRY_NOT_FOUND`, `SESSION_LOCKED`,
// `ENOENT`, ...). What JavaScript itself raises while handling a bad value gets
// `INVALID_ARGUMENT`: a TypeError from a value of the wrong type (`setSessionFile(5)`), a cyclic
// or BigInt-holding object, a getter or Proxy trap that throws, a value stored earlier and met now
// (the reference accepts anything in `appendMessage`), and a napi type check of the addon. A Rust
// panic caught at the boundary gets `INTERNAL_ERROR` (a bug to report). The message stays as written,
// so callers matching on the reference's text keep working; a thrown non-Error (a Proxy trap
// throwing a string) becomes a TypeError whose `cause` is the thrown value. Left as they are: an
// error that has a code of its own (a DOMException's is a number), and the reason of the
// caller's aborted signal, which `list`/`listAll` reject with as the reference does.
//
// Wrapping happens once, at load: each method is replaced by a function of the same name and
// length that calls it and only does work when it throws.

const CODE = "INVALID_ARGUMENT";
/** napi-rs statuses used as `code`. `GenericFailure` is also what a caught Rust panic gets. */
const NAPI_STATUS = new Set([
  "InvalidArg",
  "ObjectExpected",
  "StringExpected",
  "NameExpected",
  "FunctionExpected",
  "NumberExpected",
  "BooleanExpected",
  "ArrayExpected",
  "BigintExpected",
  "DateExpected",
  "ArrayBufferExpected",
  "DetachableArraybufferExpected",
  "GenericFailure",
]);

function describe(value) {
  try {
    return typeof value === "symbol" ? value.toString() : String(value);
  } catch {
    return typeof value;
  }
}

/** `err` with a string code (the same object when it can take one). */
function coded(err) {
  try {
    return withCode(err);
  } catch {
    // The thrown value throws when looked at (a Proxy): wrap it without touching it further.
    const wrapped = /** @type {TypeError & { code?: string }} */ (new TypeError("Invalid argument", { cause: err }));
    wrapped.code = CODE;
    return wrapped;
  }
}

function withCode(err) {
  if (err instanceof Error || (err !== null && typeof err === "object" && typeof err.message === "string")) {
    let code;
    if (err.code === undefined) code = CODE;
    // A napi status: a value of the wrong type reached the addon, or a Rust panic was caught.
    else if (typeof err.code === "string" && NAPI_STATUS.has(err.code)) code = err.code === "GenericFailure" ? "INTERNAL_ERROR" : CODE;
    // A code of its own stays, including the number of a DOMException.
    else return err;
    try {
      err.code = code;
      if (err.code === code) return err;
    } catch {
      // Frozen or exotic: wrapped below.
    }
    const wrapped = /** @type {TypeError & { code?: string }} */ (new TypeError(String(err.message), { cause: err }));
    wrapped.code = code;
    return wrapped;
  }
  const wrapped = /** @type {TypeError & { code?: string }} */ (new TypeError(`Invalid argument: ${describe(err)}`, { cause: err }));
  wrapped.code = CODE;
  return wrapped;
}

/** The reason of an aborted signal among the arguments is passed on as is (as the reference's
 * listing rejects with it). */
function isAbortReason(err, args) {
  try {
    for (const a of args) if (a instanceof AbortSignal && a.aborted && a.reason === err) return true;
  } catch {
    // An argument that throws when looked at (a Proxy) is not the caller's signal.
  }
  return false;
}

// Methods that cannot raise an uncoded error (pure reads of the manager's own state, or getLabel,
// which codes its own) are left unwrapped: they are the hot path, and a wrapper would cost more
// than they do.
const UNWRAPPED = new Set([
  "getLeafId",
  "getLeafEntry",
  "getEntry",
  "getEntries",
  "getEntryCount",
  "getHeader",
  "getLabel",
  "getCwd",
  "getSessionDir",
  "getSessionId",
  "getSessionFile",
  "isPersisted",
]);

function wrap(fn, name, isAsync) {
  // Fixed parameters instead of rest/apply keep the wrapper cheap; callers pass at most seven.
  const guarded = isAsync
    ? {
        [name](...args) {
          let result;
          try {
            result = fn.apply(this, args);
          } catch (err) {
            throw isAbortReason(err, args) ? err : coded(err);
          }
          return result.catch((err) => {
            throw isAbortReason(err, args) ? err : coded(err);
          });
        },
      }[name]
    : {
        [name](a, b, c, d, e, f, g) {
          try {
            return arguments.length <= 7 ? fn.call(this, a, b, c, d, e, f, g) : fn.apply(this, arguments);
          } catch (err) {
            throw isAbortReason(err, [a, b, c, d, e, f, g]) ? err : coded(err);
          }
        },
      }[name];
  Object.defineProperty(guarded, "length", { value: fn.length });
  return guarded;
}

/** Wrap every method of the class and every static function of it. */
function guardErrors(Class) {
  for (const target of [Class.prototype, Class]) {
    for (const name of Object.getOwnPropertyNames(target)) {
      if (name === "constructor" || name === "prototype" || name === "length" || name === "name") continue;
      const desc = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(target, name));
      if (typeof desc.value !== "function" || (target !== Class && UNWRAPPED.has(name))) continue;
      const isAsync = target === Class && (name === "list" || name === "listAll");
      Object.defineProperty(target, name, { ...desc, value: wrap(desc.value, name, isAsync) });
    }
  }
  return Class;
}

module.exports = { guardErrors, coded };
