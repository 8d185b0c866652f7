// What crosses between helpers/older-reference.mjs and its child as JSON (IPC's default
// serialization, the one that also works between Bun and Node): Dates, undefined, non-finite
// numbers and -0 as tagged objects; keys keep their order. A signal crosses as its state and, when
// aborted, its reason's name and message: the reference throws the caller's reason, and each
// runtime words its default one differently (Node "This operation was aborted", Bun "The operation
// was aborted.").
export function encode(v) {
  if (v === undefined) return { $undefined: true };
  if (typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0))) return { $number: String(v === 0 ? "-0" : v) };
  if (v instanceof Date) return { $date: String(v.getTime()) };
  if (v instanceof AbortSignal) return { $abortSignal: v.aborted ? { name: v.reason?.name, message: v.reason?.message } : null };
  if (typeof v === "function") throw new Error("older-reference: functions (progress callbacks) cannot cross to the child");
  if (Array.isArray(v)) return v.map(encode);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
  return v;
}

export function decode(v) {
  if (Array.isArray(v)) return v.map(decode);
  if (!v || typeof v !== "object") return v;
  const keys = Object.keys(v);
  if (keys.length === 1) {
    if (keys[0] === "$undefined") return undefined;
    if (keys[0] === "$number") return v.$number === "-0" ? -0 : Number(v.$number);
    if (keys[0] === "$date") return new Date(Number(v.$date));
    if (keys[0] === "$abortSignal") {
      const reason = v.$abortSignal;
      return reason ? AbortSignal.abort(new DOMException(reason.message, reason.name)) : new AbortController().signal;
    }
  }
  return Object.fromEntries(keys.map((k) => [k, decode(v[k])]));
}
