// Which implementation a JS test runs against.
// Default: this package (../../index.js). PI_TEST_TARGET=reference runs the same test on the
// reference SessionManager module (used to check that a test states the reference's behaviour).
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
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
  return import(REFERENCE_PATH);
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
