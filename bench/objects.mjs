// The objects a resume hands out, written as JSON so a fresh process can time V8 making them:
// the floor of our first getBranch() (bench/objects-floor.mjs, and the FLOOR column of the resume
// section of bench/scale.mjs).
//
// The first getBranch() hands out the branch's entries with what pi reads of them at once; their
// big members stay behind accessors (the core's `lazy` module decides which). `JSON.parse` of
// those entries as one JSON array (ours, every member that is still an accessor left out, so none
// is read) is V8's own fastest general way to make them.
import fs from "node:fs";
import path from "node:path";

/** A holder's data members as they are; its accessors (the lazy members) left out, unread. */
function dataMembers(holder) {
  const out = {};
  for (const k of Object.keys(holder)) {
    const d = Object.getOwnPropertyDescriptor(holder, k);
    if (!("get" in d)) out[k] = d.value;
  }
  return out;
}

/**
 * Opens `file` with `SessionManager` (ours) and writes to `dir` the branch's entries as they are
 * handed out at once (skeletons.json) and the context's messages, content included
 * (context.json). Returns the number of entries on the branch.
 * @param {any} SessionManager @param {string} file @param {string} dir
 */
export function writeResumeObjects(SessionManager, file, dir) {
  const sm = SessionManager.open(file);
  const branch = sm.getBranch().map((e) => {
    const s = dataMembers(e);
    if (s.message !== null && typeof s.message === "object") s.message = dataMembers(s.message);
    return s;
  });
  fs.writeFileSync(path.join(dir, "skeletons.json"), JSON.stringify(branch));
  fs.writeFileSync(path.join(dir, "context.json"), JSON.stringify(sm.buildSessionContext().messages));
  return branch.length;
}

/**
 * In a fresh process: reads `file`, then `JSON.parse` of each text writeResumeObjects wrote to
 * `dir` (the texts themselves are read before the clock starts).
 * @param {string} file @param {string} dir
 */
export function parseResumeObjects(file, dir) {
  const a = fs.readFileSync(path.join(dir, "skeletons.json"), "utf8");
  const b = fs.readFileSync(path.join(dir, "context.json"), "utf8");
  const t0 = performance.now();
  fs.readFileSync(file);
  const t1 = performance.now();
  const entries = JSON.parse(a);
  const t2 = performance.now();
  const messages = JSON.parse(b);
  const t3 = performance.now();
  return { readMs: t1 - t0, skeletonsMs: t2 - t1, contextMs: t3 - t2, entries: entries.length, messages: messages.length };
}
