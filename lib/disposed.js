"use strict";
// What a manager becomes after dispose(): its prototype is replaced by one whose methods throw,
// so that no hot path of a live manager has to check whether it was disposed.
const { sessionError } = require("./errors.js");

/** The prototype of a disposed `Class` instance: still a `Class` (instanceof holds), every method
 * throws SESSION_DISPOSED, dispose() does nothing. @param {Function} Class */
function disposedPrototype(Class) {
  const proto = Object.create(Class.prototype);
  for (const name of Object.getOwnPropertyNames(Class.prototype)) {
    if (name === "constructor" || typeof Object.getOwnPropertyDescriptor(Class.prototype, name)?.value !== "function") continue;
    const method =
      name === "dispose"
        ? { dispose() {} }.dispose
        : {
            [name]() {
              throw sessionError("SESSION_DISPOSED", `SessionManager.${name}() called after dispose()`);
            },
          }[name];
    Object.defineProperty(proto, name, { value: method, writable: true, configurable: true, enumerable: false });
  }
  return proto;
}

module.exports = { disposedPrototype };
