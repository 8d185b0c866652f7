// Long lines appended to a written session are read back from its file rather than kept in
// memory (crates/pi-session-core: `Tuning::backed_line_bytes`, 1 KiB). What a caller sees must
// not change: a session grown with long messages, branched in the middle, then grown again, gives
// the same files and answers as the reference, byte for byte after normalization of ids and clock
// times.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { loadOurs, loadReference } from "./helpers/target.mjs";
import { tempDir, user, assistant } from "./helpers/fixtures.mjs";
import { Normalizer } from "./parity/normalize.mjs";

const CWD = "/tmp/backed-appends";

/** Tool output of about `kb` KiB, different for each `i`. */
const output = (i, kb) => Array.from({ length: kb * 16 }, (_, k) => `line ${i}.${k} of the tool's output, padded to 64 bytes...`.slice(0, 63)).join("\n");

function run(SessionManager, dir) {
  const sm = SessionManager.create(CWD, dir);
  const ids = [sm.appendMessage(user("run the tests"))];
  for (let i = 0; i < 40; i++) {
    ids.push(sm.appendMessage(assistant(`step ${i}`)));
    ids.push(sm.appendMessage({ role: "toolResult", toolCallId: `t${i}`, toolName: "bash", content: [{ type: "text", text: output(i, 1 + (i % 7) * 3) }], isError: false, timestamp: i }));
    if (i === 10) sm.appendLabelChange(ids[5], "checkpoint");
  }
  const source = sm.getSessionFile();
  const branched = sm.createBranchedSession(ids[31]);
  sm.appendMessage(user("and now?"));
  sm.appendMessage({ role: "toolResult", toolCallId: "last", toolName: "bash", content: [{ type: "text", text: output(99, 20) }], isError: false, timestamp: 99 });
  // Read back after the file was left: the branched session's own appended lines.
  const again = sm.createBranchedSession(sm.getLeafId());
  return { sm, files: [source, branched, again].map((f) => fs.readFileSync(f, "utf8")), context: sm.buildSessionContext() };
}

test("a session grown with long lines, branched and grown again, writes what the reference writes", async (t) => {
  const [dirOurs, dirRef] = [tempDir(t), tempDir(t)];
  const ours = run(loadOurs().SessionManager, dirOurs);
  const ref = run((await loadReference()).SessionManager, dirRef);
  const [no, nr] = [new Normalizer().addRoot(dirOurs), new Normalizer().addRoot(dirRef)];
  for (let i = 0; i < 3; i++) {
    // Compared line by line, so that a difference names its line rather than printing the files.
    const [a, b] = [no.text(ours.files[i]).split("\n"), nr.text(ref.files[i]).split("\n")];
    assert.equal(a.length, b.length, `file ${i}: line count`);
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) assert.fail(`file ${i}, line ${k + 1} differs:\n${a[k].slice(0, 300)}\n${b[k].slice(0, 300)}`);
  }
  assert.deepStrictEqual(no.value(ours.context), nr.value(ref.context));
  // The long lines are there: 40 tool results of 1-19 KiB.
  assert.ok(ours.files[0].length > 300_000, `${ours.files[0].length} bytes`);
});
