// The listing cache against the reference, by seeded random changes to a session dir between
// listings: lines appended, a message rewritten to the same size (also with its old mtime put
// back), the last line cut, files deleted, added and renamed, a name given, torn bytes left by a
// killed writer. After about every other change both list the dir, ours with its cache warm from
// the listings before; the answers must be equal. The reference lists a copy of the dir with the
// torn bytes taken out (ours reads an entry glued after them as the reference reads the file
// without them: helpers/torn-records.mjs), every file's mtime kept. list-cache.test.mjs pins the
// cache's cases by example.
//
// Environment: LIST_RANDOM_SEED (first seed, default 1), LIST_RANDOM_RUNS (default 20),
// LIST_RANDOM_STEPS (default 40).
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { assistant, chain, header, msgEntry, useAgentDir, user, writeSession } from "./helpers/fixtures.mjs";
import { loadOurs, loadReference } from "./helpers/target.mjs";
import { Rng } from "./parity/prng.mjs";
import { withoutTornBytes } from "./helpers/torn-records.mjs";

const ours = loadOurs();
const ref = await loadReference();
const SEED = Number(process.env.LIST_RANDOM_SEED ?? 1);
const RUNS = Number(process.env.LIST_RANDOM_RUNS ?? 20);
const STEPS = Number(process.env.LIST_RANDOM_STEPS ?? 40);
const shape = (infos) => infos.map((i) => ({ ...i, created: i.created.toISOString(), modified: i.modified.toISOString() })).sort((a, b) => (a.path < b.path ? -1 : 1));
const line = (o) => JSON.stringify(o) + "\n";

/** Writes `<dir>/<name>`: a header and a few messages. */
function writeRandomSession(rng, dir, name, id) {
  const messages = Array.from({ length: 1 + rng.int(5) }, (_, k) =>
    msgEntry(`${id.slice(0, 4)}${k}`, undefined, k % 2 ? assistant(`reply ${rng.int(1e6)}`, { timestamp: 1704067200000 + k }) : user(`ask ${rng.int(1e6)}`, 1704067200000 + k), `2024-01-01T00:00:0${k}.000Z`),
  );
  writeSession(dir, name, header({ id, timestamp: "2024-01-01T00:00:00.000Z", cwd: "/w" }), chain(messages));
}

/** Changes the session dir at random once; returns what it did. */
function change(rng, dir, s) {
  const live = fs.readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
  const what = rng.weighted([[3, "append"], [2, "samesize"], [1, "samesize-keep-mtime"], [1, "truncate"], [1, "delete"], [1, "add"], [1, "rename"], [1, "name"], [2, "list"], [1, "torn"]]);
  if (what === "add") {
    writeRandomSession(rng, dir, `n${s}.jsonl`, `idn${s}-${rng.int(1e6)}`);
    return `add n${s}.jsonl`;
  }
  if (what === "list" || live.length === 0) return "list";
  const name = rng.pick(live);
  const f = path.join(dir, name);
  if (what === "append") {
    const entry = { type: "message", id: `x${s}`, parentId: null, timestamp: "2024-01-02T00:00:00.000Z", message: { role: "user", content: `later ${rng.int(1e6)}`, timestamp: 1704153600000 } };
    fs.appendFileSync(f, line(entry));
  } else if (what === "samesize" || what === "samesize-keep-mtime") {
    // One digit of a message changed: the same size, other content.
    const st = fs.statSync(f);
    const text = fs.readFileSync(f, "utf8");
    const m = /(ask|reply|later) (\d)/.exec(text);
    if (m) {
      const at = m.index + m[1].length + 1;
      fs.writeFileSync(f, text.slice(0, at) + String((Number(m[2]) + 1) % 10) + text.slice(at + 1));
      if (what === "samesize-keep-mtime") fs.utimesSync(f, st.atime, st.mtime);
    }
  } else if (what === "truncate") {
    const lines = fs.readFileSync(f, "utf8").split("\n");
    if (lines.length > 3) fs.writeFileSync(f, lines.slice(0, -2).join("\n") + "\n");
  } else if (what === "delete") fs.rmSync(f);
  else if (what === "rename") fs.renameSync(f, path.join(dir, `r${s}.jsonl`));
  else if (what === "name") fs.appendFileSync(f, line({ type: "session_info", id: `i${s}`, parentId: null, timestamp: "2024-01-03T00:00:00.000Z", name: `name ${rng.int(100)}` }));
  else if (what === "torn") fs.appendFileSync(f, '{"type":"message","id":"torn');
  return `${what} ${name}`;
}

/** A copy of `dir` with the torn bytes taken out of each file, mtimes kept (the reference's view). */
function withoutTorn(dir, into) {
  fs.mkdirSync(into, { recursive: true });
  for (const n of fs.readdirSync(dir)) {
    const src = path.join(dir, n);
    const st = fs.statSync(src);
    fs.writeFileSync(path.join(into, n), withoutTornBytes(fs.readFileSync(src)).bytes);
    fs.utimesSync(path.join(into, n), st.atime, st.mtime);
  }
  return into;
}

for (let r = 0; r < RUNS; r++) {
  const seed = SEED + r;
  test(`seed ${seed}: list() with its cache answers as the reference after every change`, async (t) => {
    const rng = new Rng(seed);
    const agent = useAgentDir(t);
    const dir = path.join(agent, "sessions", "--w--");
    fs.mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 6; i++) writeRandomSession(rng, dir, `s${i}.jsonl`, `id${seed}x${i}`);
    const done = [];
    for (let s = 0; s < STEPS; s++) {
      const what = change(rng, dir, s);
      done.push(what);
      if (what !== "list" && !rng.chance(0.5)) continue;
      const byName = (xs) => xs.map((x) => ({ ...x, path: path.basename(x.path) }));
      const expected = byName(shape(await ref.SessionManager.list("/w", withoutTorn(dir, path.join(agent, "plain", `${s}`)))));
      const actual = byName(shape(await ours.SessionManager.list("/w", dir)));
      assert.deepStrictEqual(actual, expected, `step ${s} (replay: LIST_RANDOM_SEED=${seed} LIST_RANDOM_RUNS=1): ${done.join("; ")}`);
    }
  });
}
