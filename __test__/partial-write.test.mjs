// A write that fails half-way (disk full, file size limit) leaves no partial line: the file is cut
// back to where it was, memory is rolled back, and the next append starts on a clean line.
// Simulated with a file size limit (`ulimit -f`): the kernel writes up to the limit, returns a
// short count, and fails the rest with EFBIG. POSIX shells only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";

import { tempDir } from "./helpers/fixtures.mjs";
import { ROOT } from "./helpers/target.mjs";

test("an append cut short by a file size limit leaves the file and the session as they were", { skip: process.platform === "win32" }, (t) => {
  const dir = tempDir(t, "pi-partial-");
  const script = `
    process.on("SIGXFSZ", () => {}); // get EFBIG instead of being killed
    const fs = require("node:fs");
    const { SessionManager } = require(${JSON.stringify(path.join(ROOT, "index.js"))});
    const sm = SessionManager.create(${JSON.stringify(dir)}, ${JSON.stringify(dir)});
    sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
    const file = sm.getSessionFile();
    const before = fs.readFileSync(file);
    const leaf = sm.getLeafId();
    let code;
    try {
      // 4 MB: more than the limit (512 KB or 1 MB, depending on the shell's ulimit unit).
      sm.appendMessage({ role: "assistant", content: "x".repeat(4 << 20), timestamp: 2 });
    } catch (err) {
      code = err.code;
    }
    const after = fs.readFileSync(file);
    const rolledBack = sm.getEntries().length === 1 && sm.getLeafId() === leaf;
    sm.appendMessage({ role: "user", content: "small", timestamp: 3 });
    const lines = fs.readFileSync(file, "utf8").trimEnd().split("\\n");
    console.log(JSON.stringify({
      code,
      unchanged: before.equals(after),
      rolledBack,
      parse: lines.every((l) => { try { JSON.parse(l); return true; } catch { return false; } }),
      reopened: SessionManager.open(file).getEntries().length,
    }));`;
  const r = spawnSync("sh", ["-c", `ulimit -f 1024 && exec "${process.execPath}" -e '${script.replace(/'/g, "'\\''")}'`], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { code: "EFBIG", unchanged: true, rolledBack: true, parse: true, reopened: 2 });
});
