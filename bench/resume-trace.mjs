// Recording what the pi agent calls on its SessionManager (bench/record-agent-calls.mjs).
//
// traceInstance(sm, record) returns a Proxy of `sm` that calls record({ call, args }) for every
// method the agent calls on it, in order, then runs the method on the real object (so calls a
// method makes on its own `this` are not recorded: only what the agent asks for).
// traceStatics(Class, record) rebinds the statics that return a SessionManager (open, create,
// continueRecent, inMemory, forkFrom) so that they record the call and return a traced instance.
//
// Arguments are recorded as their kind, not their value: "leaf" (the id of the current leaf),
// "entry" (the id of another entry), "message:<role>", "string", "object", "undefined", or the
// value itself for booleans and numbers.
const STATICS_RETURNING_INSTANCE = ["open", "create", "continueRecent", "inMemory", "forkFrom"];

function argKind(sm, a) {
  if (a === undefined) return "undefined";
  if (a === null) return "null";
  if (typeof a === "boolean" || typeof a === "number") return a;
  if (typeof a === "function") return "function";
  if (typeof a === "string") {
    try {
      if (a === sm.getLeafId()) return "leaf";
      if (sm.getEntry(a)) return "entry";
    } catch {}
    return "string";
  }
  if (typeof a === "object" && typeof a.role === "string") return `message:${a.role}`;
  return Array.isArray(a) ? "array" : "object";
}

export function traceInstance(sm, record) {
  const wrapped = new Map();
  return new Proxy(sm, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof prop === "symbol" || prop === "then") return value;
      if (typeof value !== "function") {
        record({ get: prop });
        return value;
      }
      let w = wrapped.get(prop);
      if (!w) {
        w = {
          [prop](...args) {
            record({ call: prop, args: args.map((a) => argKind(target, a)) });
            return value.apply(target, args);
          },
        }[prop];
        wrapped.set(prop, w);
      }
      return w;
    },
  });
}

export function traceStatics(Class, record) {
  for (const name of STATICS_RETURNING_INSTANCE) {
    const original = Class[name];
    if (typeof original !== "function") continue;
    Object.defineProperty(Class, name, {
      configurable: true,
      writable: true,
      value: {
        [name](...args) {
          record({ static: name, args: args.map((a) => (a === undefined ? "undefined" : typeof a)) });
          const sm = original.apply(Class, args);
          return traceInstance(sm, record);
        },
      }[name],
    });
  }
}
