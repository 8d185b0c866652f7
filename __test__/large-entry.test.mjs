// Regression: an entry whose UTF-8 text is larger than the append buffer (64 KB at start) was
// refused on its first append with `INVALID_ARGUMENT: length out of range` and lost: the call read
// the old buffer before encode() replaced it with a larger one. Found by the kill test.
// Runs in a child process so that the buffer starts at its initial size.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";

import { ROOT } from "./helpers/target.mjs";

test("the first entry larger than the append buffer is appended, written and found again", () => {
  const script = `
    const fs = require("node:fs"), os = require("node:os"), path = require("node:path");
    const { SessionManager } = require(${JSON.stringify(path.join(ROOT, "index.js"))});
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-large-"));
    try {
      const sm = SessionManager.create(dir, dir);
      const big = "é".repeat(200000); // 400 KB of UTF-8
      const a = sm.appendMessage({ role: "user", content: big, timestamp: 1 });
      const b = sm.appendCustomEntry("blob", { big: "x".repeat(1 << 20) });
      const again = SessionManager.open(sm.getSessionFile());
      console.log(JSON.stringify({
        count: again.getEntries().length,
        a: again.getEntry(a)?.message.content === big,
        b: again.getEntry(b)?.data.big.length,
      }));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }`;
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { count: 2, a: true, b: 1 << 20 });
});
