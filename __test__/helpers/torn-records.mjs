// The reading rule for an entry glued after a torn record (crates/pi-session-core/src/torn.rs;
// README, "Concurrent writers"), written again from its definition as the tests' oracle: in a line
// after the header that JSON.parse rejects, the first `{"type":"` (not at the line's start) from
// which the rest of the line parses as an entry (no header; a string `id`; a `parentId` that is a
// string or null) starts an entry, and the bytes before it are a torn record. Ours reads a file
// as the reference reads the same file with those torn bytes removed.

const BOUNDARY = Buffer.from('{"type":"');

const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Is `v` (a parsed line) an entry by the rule? */
export function isEntry(v) {
  return isObj(v) && v.type !== "session" && typeof v.id === "string" && (typeof v.parentId === "string" || v.parentId === null);
}

function parse(buf) {
  try {
    return { value: JSON.parse(buf.toString("utf8")) };
  } catch {
    return null;
  }
}

/** Where the glued entry begins in `line` (a Buffer that does not parse), or -1. */
export function gluedAt(line) {
  for (let at = line.indexOf(BOUNDARY, 1); at !== -1; at = line.indexOf(BOUNDARY, at + 1)) {
    const tail = parse(line.subarray(at));
    // At most one boundary of a line can parse (torn.rs): the first that does decides.
    if (tail) return isEntry(tail.value) ? at : -1;
  }
  return -1;
}

/** `bytes` with the torn bytes of every line after the header that holds a glued entry removed,
 * and how many lines held one. */
export function withoutTornBytes(bytes) {
  const parts = [];
  let glued = 0;
  let afterHeader = false;
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    let line = bytes.subarray(start, end);
    const parsed = parse(line);
    if (parsed) {
      afterHeader ||= isObj(parsed.value) && parsed.value.type === "session";
    } else if (afterHeader) {
      const at = gluedAt(line);
      if (at > 0) {
        line = line.subarray(at);
        glued++;
      }
    }
    parts.push(line);
    if (end === bytes.length) break;
    parts.push(Buffer.from("\n"));
    start = end + 1;
  }
  return { bytes: glued ? Buffer.concat(parts) : bytes, glued };
}
