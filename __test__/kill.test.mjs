// Kill test: a child process appends in a loop and is killed with SIGKILL at a random moment,
// round after round, on the same files. After every round:
//   - every line of the file parses, except the last when it is torn (and earlier torn last lines
//     that a later open repaired: they stay, as complete but unparseable lines, never dropped);
//   - every id the child printed (after its append returned) is in the file;
//   - our SessionManager.open repairs a torn tail by appending exactly one "\n", and gives the same
//     entries and leaf as the reference's open of the same bytes; an empty file (a kill between the
//     create and the write of a first flush) gets the same new header line as the reference gives it.
// Two chains of rounds run side by side; every 4th round of a chain starts a new session file, and
// about one round in seven appends only 256 KB–1 MB entries to a file of its own (kills inside a
// long write are what tear lines).
//   KILL_ROUNDS (default 110) rounds in all; KILL_SEED (default 7) seeds the delays.
//
// Then two writers on one file: one appends 20 kB tool results all along, while others, one after
// the other, start a large entry and are killed inside its `write` (their own worker thread
// watches the file grow: the kill lands while the line is being copied in, so it tears it).
// Every entry acknowledged to the one that goes on is read back by our open; where it is our
// writer, also by the reference's (its entries never follow torn bytes on their line). Once with
// our writer going on (the killed ones alternately ours and the reference's), once with the
// reference's (ours killed).
//   KILL_TEAR_ROUNDS (default 10) killed writers per run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { ENTRY_ID_RE, assistant, rng, tempDir, user } from "./helpers/fixtures.mjs";
import { loadOurs, loadReference } from "./helpers/target.mjs";
import { gluedAt } from "./helpers/torn-records.mjs";
import { Rng } from "./parity/prng.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(HERE, "helpers", "append-child.mjs");
const ROUNDS = Number(process.env.KILL_ROUNDS ?? 110);
const SEED = Number(process.env.KILL_SEED ?? 7);
const CHAINS = 2;
// A child stops appending after CAP appends and waits for its kill: one chain's checks block the
// event loop and can delay the other chain's kill timer, which must not let files grow unbounded.
const CAP = 3000;
const TEAR_ROUNDS = Number(process.env.KILL_TEAR_ROUNDS ?? 10);

const ours = loadOurs();
const reference = await loadReference();

/** Run one child until it is killed; resolves with the ids it printed in complete lines. */
function killRound(opts, rng) {
  return new Promise((resolve, reject) => {
    // Four rounds in five, the child kills itself (a worker thread sends SIGKILL) 5–80 ms after
    // "ready", while it appends: that timer does not depend on this process, busy checking another
    // chain's file. The others are killed from here 80–400 ms after the spawn, so some kills land
    // while the child starts, opens and repairs the file.
    const fromSpawn = rng.chance(0.2);
    const args = fromSpawn ? opts : { ...opts, killAfterMs: opts.bigOnly ? 1 + rng.int(30) : 5 + rng.int(76) };
    const child = spawn(process.execPath, [CHILD, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), fromSpawn ? 80 + rng.int(320) : 20_000);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const lines = out.split("\n");
      lines.pop(); // an incomplete last line was cut by the kill
      const error = lines.find((l) => l.startsWith("error "));
      if (error) return reject(new Error(`child failed: ${error}\n${err}`));
      if (signal !== "SIGKILL") return reject(new Error(`child exited ${code} ${signal}: ${err}`));
      const file = lines.find((l) => l.startsWith("file "))?.slice(5);
      const ids = lines.filter((l) => /^[0-9a-f]{8}$/.test(l));
      resolve({ file, ids, idle: lines.includes("done") });
    });
  });
}

/** Line ranges of a file's bytes (split on "\n"; the last range is the part after the last "\n"). */
function lineRanges(bytes) {
  const out = [];
  let start = 0;
  for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, start)) {
    out.push([start, nl]);
    start = nl + 1;
  }
  out.push([start, bytes.length]);
  return out;
}

function openCopy(impl, bytes, dir, name) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  const sm = impl.SessionManager.open(file);
  return { sm, after: fs.readFileSync(file) };
}

test("appends killed with SIGKILL at random moments lose nothing that was acknowledged", { timeout: 120_000 }, async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-kill-")));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const started = Date.now();
  const stats = { rounds: 0, bigRounds: 0, acknowledged: 0, tornTails: 0, emptyRounds: 0, idleKills: 0, emptyFiles: 0 };

  /** The properties, for a file some children appended to and were killed. */
  function verify({ file, printed, repairedTorn }, where, tag) {
    const bytes = fs.readFileSync(file);
    const endsClean = bytes.length === 0 || bytes[bytes.length - 1] === 0x0a;
    const ranges = lineRanges(bytes);
    for (let i = 0; i < ranges.length; i++) {
      const [s, e] = ranges[i];
      const last = i === ranges.length - 1;
      if (last && (endsClean || e === s)) continue;
      const text = bytes.subarray(s, e).toString("utf8");
      try {
        JSON.parse(text);
      } catch {
        assert.ok(last || repairedTorn.has(s), `${where}: line ${i + 1} (offset ${s}) is torn but is not the last line: ${text.slice(0, 80)}…`);
      }
    }
    if (!endsClean) {
      stats.tornTails++;
      repairedTorn.add(ranges[ranges.length - 1][0]);
    }
    const mine = openCopy(ours, bytes, path.join(root, "check", `${tag}-ours`), "s.jsonl");
    const theirs = openCopy(reference, bytes, path.join(root, "check", `${tag}-ref`), "s.jsonl");
    if (bytes.length === 0) {
      // Killed between the exclusive create of the first write and its one `write`: nothing was
      // acknowledged, and open initialises the empty file with a new header, as the reference does.
      stats.emptyFiles++;
      assert.equal(printed.size, 0, `${where}: ids were acknowledged but the file is empty`);
      const header = (after) => {
        const lines = after.toString("utf8").split("\n");
        assert.equal(lines.length, 2, `${where}: open of the empty file wrote more than a header line`);
        const { id, timestamp, ...rest } = JSON.parse(lines[0]);
        assert.match(id, /^[0-9a-f-]{36}$/);
        assert.ok(!Number.isNaN(Date.parse(timestamp)));
        return rest;
      };
      assert.deepEqual(header(mine.after), header(theirs.after), `${where}: the empty file was initialised unlike the reference`);
    } else {
      // The repair is exactly one "\n", and only when the file did not end with one.
      const expected = endsClean ? bytes : Buffer.concat([bytes, Buffer.from("\n")]);
      assert.ok(mine.after.equals(expected), `${where}: open changed the file other than by one "\\n"`);
      assert.ok(theirs.after.equals(expected), `${where}: the reference's open did something else`);
    }
    const entryIds = mine.sm.getEntries().map((e) => e.id);
    const have = new Set(entryIds);
    for (const id of printed) assert.ok(have.has(id), `${where}: acknowledged id ${id} is missing`);
    assert.deepEqual(entryIds, theirs.sm.getEntries().map((e) => e.id), `${where}: entries differ from the reference`);
    assert.equal(mine.sm.getLeafId(), theirs.sm.getLeafId(), `${where}: leaf differs from the reference`);
    fs.rmSync(path.join(root, "check"), { recursive: true, force: true });
  }

  async function chain(c) {
    const rng = new Rng(SEED * 100 + c);
    const dir = path.join(root, `chain${c}`);
    const bigDir = path.join(root, `big${c}`);
    fs.mkdirSync(dir);
    fs.mkdirSync(bigDir);
    let current = null; // { file, printed, repairedTorn }
    const rounds = Math.ceil(ROUNDS / CHAINS);
    for (let r = 0; r < rounds; r++) {
      // Some rounds write only 256 KB–1 MB entries to a file of their own, so that kills land
      // inside long writes (torn lines); the others continue the chain's file.
      const big = rng.chance(0.15);
      const fresh = big || current === null || r % 4 === 0;
      const opts = {
        ...(fresh ? { dir: big ? bigDir : dir } : { file: current.file }),
        ...(big ? { bigOnly: true, maxBytes: 16 << 20 } : { bigEvery: 100, count: CAP }),
        seed: rng.u32(),
        hold: true,
      };
      const { file: childFile, ids, idle } = await killRound(opts, rng);
      stats.rounds++;
      if (idle) stats.idleKills++;
      if (ids.length === 0) stats.emptyRounds++;
      stats.acknowledged += ids.length;
      if (fresh && !childFile) continue; // killed before it even had a session
      const target = fresh ? { file: childFile, printed: new Set(), repairedTorn: new Set() } : current;
      if (!big) current = target;
      for (const id of ids) target.printed.add(id);
      const where = `chain ${c} round ${r}${big ? " (big entries)" : ""} (${target.file})`;
      if (!fs.existsSync(target.file)) {
        assert.equal(target.printed.size, 0, `${where}: ids were acknowledged but the file does not exist`);
        if (!big) current = null;
        continue;
      }
      verify(target, where, `c${c}r${r}`);
      if (big) {
        stats.bigRounds++;
        fs.rmSync(target.file);
      }
    }
  }

  await Promise.all(Array.from({ length: CHAINS }, (_, c) => chain(c)));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  t.diagnostic(
    `${stats.rounds} rounds (${stats.bigRounds} with big entries) in ${seconds}s, ${stats.acknowledged} acknowledged appends, ` +
      `${stats.tornTails} torn tails repaired, ${stats.emptyRounds} rounds killed before any append, ` +
      `${stats.idleKills} killed after their last append, ${stats.emptyFiles} files left empty`,
  );
  assert.ok(stats.rounds >= 100);
  assert.ok(stats.acknowledged > 0);
});

/** Start an append-child; `ids()` are the ids it printed (acknowledged), `exit` its end. */
function startWriter(opts) {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(opts)], { stdio: ["pipe", "pipe", "pipe"] });
  const state = { child, lines: [], stderr: "" };
  let buf = "";
  let onReady;
  state.ready = new Promise((resolve) => {
    onReady = resolve;
  });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buf += chunk;
    const parts = buf.split("\n");
    buf = parts.pop(); // an incomplete last line was cut by a kill
    for (const line of parts) {
      state.lines.push(line);
      if (line === "ready" || line.startsWith("error ")) onReady(line);
    }
  });
  child.stderr.on("data", (chunk) => {
    state.stderr += chunk;
  });
  state.exit = new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      onReady("closed");
      resolve({ code, signal });
    });
  });
  state.ids = () => state.lines.filter((l) => ENTRY_ID_RE.test(l));
  return state;
}

/** Lines of `bytes` (split on "\n") that do not parse and are not blank, and how many of them
 * hold an entry glued after their torn bytes. */
function tornLines(bytes) {
  let torn = 0;
  let glued = 0;
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    const line = bytes.subarray(start, end);
    try {
      if (line.toString("utf8").trim()) JSON.parse(line.toString("utf8"));
    } catch {
      torn++;
      if (gluedAt(line) > 0) glued++;
    }
    start = end + 1;
  }
  return { torn, glued };
}

test("a writer killed inside a large write takes none of the other writer's acknowledged entries with it", { timeout: 60_000 }, async (t) => {
  const root = tempDir(t, "pi-kill-tear-");
  const next = rng(SEED * 1000 + 33);
  const report = [];
  let tornInAll = 0;
  for (const survivorIsReference of [false, true]) {
    const dir = path.join(root, survivorIsReference ? "reference-goes-on" : "ours-goes-on");
    fs.mkdirSync(dir);
    const sm = ours.SessionManager.create(dir, dir);
    sm.appendMessage(user("start"));
    sm.appendMessage(assistant("ok"));
    const file = sm.getSessionFile();
    const survivor = startWriter({ file, size: 20_000, pauseMs: 4, untilInput: true, reference: survivorIsReference, seed: next(1 << 30) });
    assert.equal(await survivor.ready, "ready", survivor.stderr);
    let killed = 0;
    for (let r = 0; r < TEAR_ROUNDS; r++) {
      // 4–8 MB, killed once the file grew by 512 kB: inside the write of its line (the other
      // writer adds less than that while this one prepares its line).
      const victimIsReference = !survivorIsReference && r % 2 === 1;
      const size = (4 << 20) + next(4 << 20);
      const victim = startWriter({ file, count: 1, size, killInWrite: 1 << 19, reference: victimIsReference, seed: next(1 << 30) });
      const { code, signal } = await victim.exit;
      assert.ok(signal === "SIGKILL" || code === 0, `killed writer ${r}: exit ${code} ${signal}: ${victim.stderr}`);
      if (signal === "SIGKILL") killed++;
      // Let the other writer append after the tear before the next one starts.
      await new Promise((resolve) => setTimeout(resolve, 5 + next(20)));
    }
    survivor.child.stdin.write("stop\n");
    const end = await survivor.exit;
    assert.equal(end.code, 0, survivor.stderr);
    const acknowledged = survivor.ids();
    assert.ok(acknowledged.length > TEAR_ROUNDS, `the other writer went on (${acknowledged.length} appends)`);

    const bytes = fs.readFileSync(file);
    const { torn, glued } = tornLines(bytes);
    tornInAll += torn;
    const readBy = (impl, name) => {
      const copy = path.join(dir, `${name}.jsonl`);
      fs.writeFileSync(copy, bytes);
      return new Set(impl.SessionManager.open(copy).getEntries().map((e) => e.id));
    };
    const mine = readBy(ours, "read-by-ours");
    const missing = acknowledged.filter((id) => !mine.has(id));
    assert.deepEqual(missing, [], "entries acknowledged to the writer that went on, missing from our open");
    const theirs = readBy(reference, "read-by-reference");
    const lostByReference = acknowledged.filter((id) => !theirs.has(id));
    if (!survivorIsReference) {
      assert.deepEqual(lostByReference, [], "our writer's entries, missing from the reference's open");
    }
    report.push(
      `${survivorIsReference ? "reference" : "ours"} went on: ${acknowledged.length} appends, ${killed} of ${TEAR_ROUNDS} killed, ` +
        `${torn} torn lines (${glued} with an entry glued after them), ${lostByReference.length} of its entries lost by the reference`,
    );
  }
  t.diagnostic(report.join("; "));
  assert.ok(tornInAll > 0, "no write was torn: the scenario proved nothing");
});
