// Which implementation a JS test runs against.
// Default: this package (../../index.js). PI_TEST_TARGET=reference runs the same test on the
// reference SessionManager module (used to check that a test states the reference's behaviour).
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, "..", "..");
export const REFERENCE_PATH = path.join(
  ROOT,
  "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js",
);

const require = createRequire(import.meta.url);

/** The reference module (the oracle). */
export async function loadReference() {
  // A file URL: a bare Windows path (C:\...) is not a specifier import() takes.
  return import(pathToFileURL(REFERENCE_PATH).href);
}

/** This package, loaded through its CommonJS entry. */
export function loadOurs() {
  return require(path.join(ROOT, "index.js"));
}

export const TARGET = process.env.PI_TEST_TARGET === "reference" ? "reference" : "ours";

/** The module under test. */
export async function loadTarget() {
  return TARGET === "reference" ? loadReference() : loadOurs();
}

/** The addon's internal size thresholds (`setTuning` in native.d.ts, not the package's API) for
 * managers made from now on; no argument restores the shipped ones. `{ lazyFileBytes: 0 }` makes
 * every file opened count as big, so small files take the paths of big sessions. */
export function setTuning(tuning) {
  require(path.join(ROOT, "native.js")).setTuning(tuning);
}

/** {@link setTuning} for managers made while `fn` runs, then the shipped thresholds again. */
export function withTuning(tuning, fn) {
  setTuning(tuning);
  try {
    return fn();
  } finally {
    setTuning();
  }
}

/** {@link setTuning} for the rest of test `t`. */
export function tuneFor(t, tuning) {
  setTuning(tuning);
  t.after(() => setTuning());
}
