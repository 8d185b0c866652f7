// File-system side of the parity suite: snapshots of a temp root (normalized paths and text) and
// deterministic mtimes.
//
// Why mtimes are rewritten: findMostRecentSession()/continueRecent() order files by mtime, and
// the kernel's coarse timestamps make ties common; ties then fall back to directory order, which
// differs between two roots holding differently named files. After every operation the harness
// gives each file written during that operation a fresh, unique whole-second mtime far in the
// past (2001), in a deterministic order. The relative order is the real one (the file written
// last is the most recent), so the behaviour under test is unchanged.

import fs from "node:fs";
import path from "node:path";

const MTIME_BASE_MS = 1_000_000_000_000; // 2001-09-09, well before any real write

// Our listing cache (README "Listing cache") lives in its own hidden directory of the agent dir and
// has no counterpart in the reference; it is the one thing the comparison leaves out.
const OWN_CACHE_DIR = ".pi-session-native";

/** All files and directories under root: [{ rel, abs, isDir }], raw order by rel. */
export function walk(root) {
  const out = [];
  const visit = (dir) => {
    let names;
    try {
      names = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of names) {
      if (d.name === OWN_CACHE_DIR) continue;
      const abs = path.join(dir, d.name);
      const rel = path.relative(root, abs);
      if (d.isDirectory()) {
        out.push({ rel, abs, isDir: true });
        visit(abs);
      } else {
        out.push({ rel, abs, isDir: false });
      }
    }
  };
  visit(root);
  out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return out;
}

/**
 * Snapshot of a root: items sorted by a key that does not depend on the random parts of the
 * names, then normalized (assigning placeholders) in that order.
 * Returns [{ rel, abs, isDir, name (normalized rel), text (normalized content) }].
 */
export function snapshot(root, norm) {
  const items = walk(root).map((it) => ({ ...it, key: norm.string(it.rel, false) }));
  items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  for (const it of items) {
    it.name = norm.string(it.rel);
    if (!it.isDir) {
      const buf = fs.readFileSync(it.abs);
      it.text = norm.text(buf.toString("utf8"));
      it.bytes = buf.length;
    }
  }
  return items;
}

/** Per-root counter of handed-out mtimes. */
export class MtimeClock {
  constructor() {
    this.next = 0;
    this.threshold = Date.now() - 60_000;
  }

  /**
   * Give files written since the last call (mtime in the real-clock range) a unique past mtime.
   * `items` may be a snapshot() result, to avoid walking the tree again.
   */
  settle(root, norm, items = walk(root)) {
    const written = [];
    for (const it of items) {
      if (it.isDir) continue;
      let st;
      try {
        st = fs.statSync(it.abs);
      } catch {
        continue;
      }
      if (st.mtimeMs >= this.threshold) written.push({ ...it, key: norm.string(it.rel, false) });
    }
    written.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const it of written) {
      const t = new Date(MTIME_BASE_MS + ++this.next * 1000);
      fs.utimesSync(it.abs, t, t);
    }
    return written.length;
  }
}
