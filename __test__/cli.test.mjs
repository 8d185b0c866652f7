// The `pi-sessions` bin: every command run as `node bin/pi-sessions.js …` in a child process with
// PI_CODING_AGENT_DIR pointed at a temp dir; `list --json` equal to SessionManager.list/listAll;
// an HTML export opened in headless Chromium (skipped when no browser is installed).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { createRequire } from "node:module";
import { ROOT } from "./helpers/target.mjs";
import { tempDir, useAgentDir, defaultSessionDirFor } from "./helpers/fixtures.mjs";

const require = createRequire(import.meta.url);
const { SessionManager } = require("../index.js");

const BIN = path.join(ROOT, "bin", "pi-sessions.js");
const FIXTURES = path.join(ROOT, "fixtures");
const FIXTURE_CWD = "/tmp/pi-fixture-project";

/** Run the bin; returns {code, out, err}. */
function cli(args, { agentDir, cwd = os.tmpdir(), env = {} } = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, NO_COLOR: "1", COLUMNS: "120", ...env },
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Fixtures the reference lists (their expectation has a listInfo). */
function listableFixtures() {
  return fs
    .readdirSync(FIXTURES)
    .filter((f) => f.endsWith(".jsonl"))
    .filter((f) => JSON.parse(fs.readFileSync(path.join(FIXTURES, f.replace(/\.jsonl$/, ".expect.json")), "utf8")).listInfo !== null)
    .sort();
}

/** An agent dir whose fixture project holds every listable fixture. */
function agentWithFixtures(t) {
  const agentDir = tempDir(t, "pi-cli-agent-");
  const dir = defaultSessionDirFor(agentDir, FIXTURE_CWD);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of listableFixtures()) fs.copyFileSync(path.join(FIXTURES, f), path.join(dir, f));
  return { agentDir, dir };
}

/** The fields `list --json` shares with SessionInfo, from either side. */
function comparable(info) {
  const date = (d) => (d instanceof Date ? (Number.isNaN(d.getTime()) ? null : d.toISOString()) : d);
  return {
    path: info.path,
    id: info.id ?? null,
    cwd: info.cwd,
    name: info.name ?? null,
    parentSessionPath: info.parentSessionPath ?? null,
    created: date(info.created),
    modified: date(info.modified),
    messageCount: info.messageCount,
    firstMessage: info.firstMessage,
  };
}

describe("pi-sessions list --json equals SessionManager listings", () => {
  test("list --cwd equals SessionManager.list(cwd) for every listable fixture", async (t) => {
    const { agentDir } = agentWithFixtures(t);
    useAgentDir(t, agentDir);
    const r = cli(["list", "--cwd", FIXTURE_CWD, "--json"], { agentDir });
    assert.equal(r.code, 0, r.err);
    const ours = JSON.parse(r.out);
    const expected = await SessionManager.list(FIXTURE_CWD);
    assert.ok(expected.length > 15);
    assert.deepEqual(ours.map(comparable), expected.map(comparable));
    for (const s of ours) assert.equal(s.size, fs.statSync(s.path).size);
  });

  test("list --all equals SessionManager.listAll() across projects", async (t) => {
    const { agentDir } = agentWithFixtures(t);
    const other = defaultSessionDirFor(agentDir, "/home/someone/elsewhere");
    fs.mkdirSync(other, { recursive: true });
    fs.copyFileSync(path.join(FIXTURES, "v3-conversation.jsonl"), path.join(other, "x.jsonl"));
    useAgentDir(t, agentDir);
    const r = cli(["list", "--all", "--json"], { agentDir });
    assert.equal(r.code, 0, r.err);
    const expected = await SessionManager.listAll();
    assert.deepEqual(JSON.parse(r.out).map(comparable), expected.map(comparable));
  });

  test("plain list reads the project of the working directory, like SessionManager.list(process cwd)", async (t) => {
    const agentDir = tempDir(t, "pi-cli-agent-");
    const project = fs.realpathSync(tempDir(t, "pi-cli-project-"));
    const dir = defaultSessionDirFor(agentDir, project);
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(path.join(FIXTURES, "v3-conversation.jsonl"), path.join(dir, "a.jsonl"));
    fs.copyFileSync(path.join(FIXTURES, "crlf.jsonl"), path.join(dir, "b.jsonl"));
    useAgentDir(t, agentDir);
    const r = cli(["list", "--json"], { agentDir, cwd: project });
    assert.equal(r.code, 0, r.err);
    const expected = await SessionManager.list(project);
    assert.equal(expected.length, 2);
    assert.deepEqual(JSON.parse(r.out).map(comparable), expected.map(comparable));
  });

  test("the demo's sessions list the same through the bin and through listAll()", async (t) => {
    const root = tempDir(t, "pi-cli-demo-");
    const demo = path.join(root, "d");
    const r = cli(["demo", "--dir", demo], { agentDir: path.join(root, "unused") });
    assert.equal(r.code, 0, r.err);
    const agentDir = path.join(demo, "agent");
    useAgentDir(t, agentDir);
    const l = cli(["list", "--all", "--json"], { agentDir });
    const expected = await SessionManager.listAll();
    assert.equal(expected.length, 3);
    assert.deepEqual(JSON.parse(l.out).map(comparable), expected.map(comparable));
  });
});

describe("every command runs through the bin", () => {
  test("list prints a table, and says so when a project has no sessions", (t) => {
    const { agentDir } = agentWithFixtures(t);
    const r = cli(["list", "--cwd", FIXTURE_CWD], { agentDir });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^SESSION\s+MSGS\s+LAST ACTIVITY\s+SIZE\s+ID/);
    assert.match(r.out, /Listing files/);
    const empty = cli(["list"], { agentDir, cwd: tempDir(t) });
    assert.equal(empty.code, 0);
    assert.match(empty.out, /^No sessions in /);
  });

  test("show, tree and stats accept an id prefix", (t) => {
    const { agentDir } = agentWithFixtures(t);
    const show = cli(["show", "0193f0a0-1111"], { agentDir });
    assert.equal(show.code, 0, show.err);
    assert.match(show.out, /● user {2}\d\d:\d\d:\d\d {2}e0000004/);
    assert.match(show.out, /▸ thinking, 1 line folded/);
    const json = JSON.parse(cli(["show", "0193f0a0-1111", "--json"], { agentDir }).out);
    assert.equal(json.leafId, "e0000019");
    assert.equal(json.entries.length, 17);
    const tree = cli(["tree", "0193f0a0-1111"], { agentDir });
    assert.equal(tree.code, 0, tree.err);
    assert.match(tree.out, /e0000019 user {2}Thanks ◀ leaf/);
    const stats = JSON.parse(cli(["stats", "0193f0a0-1111", "--json"], { agentDir }).out);
    assert.equal(stats.total.input, 170);
    assert.equal(stats.total.cost, 0.006);
    const ambiguous = cli(["show", "0193f0a0"], { agentDir });
    assert.equal(ambiguous.code, 2);
    assert.match(ambiguous.err, /ambiguous/);
  });

  test("tree orders children as getTree() does, also where timestamps are not strict ISO", (t) => {
    const agentDir = tempDir(t, "pi-cli-agent-");
    const dir = tempDir(t, "pi-cli-tree-");
    const file = path.join(dir, "s.jsonl");
    const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 600);
    const msg = (id, parentId, timestamp, role = "user") => ({
      type: "message",
      id,
      parentId,
      timestamp,
      message: { role, content: `text of ${id}`, timestamp: 1 },
    });
    // The children of a1 in file order, none in timestamp order; only k2 is strict ISO, so the
    // order is JavaScript's Date sort (k4's invalid date compares equal to every other).
    const records = [
      { type: "session", version: 3, id: "tree-order", timestamp: new Date(T0).toISOString(), cwd: "/tmp/p" },
      msg("a1", null, new Date(T0).toISOString()),
      msg("k1", "a1", "2026-01-02T03:04:09+00:00", "assistant"),
      msg("k2", "a1", new Date(T0 + 2000).toISOString(), "assistant"),
      msg("k3", "a1", "2026-01-02", "assistant"),
      msg("k4", "a1", "yesterday", "assistant"),
      msg("k5", "a1", T0 + 500, "assistant"),
      msg("k6", "a1", "2026-01-02T03:04:08.000+00:00", "assistant"),
    ];
    fs.writeFileSync(file, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const want = SessionManager.open(file, dir)
      .getTree()[0]
      .children.map((n) => n.entry.id);
    const r = cli(["tree", file, "--full"], { agentDir });
    assert.equal(r.code, 0, r.err);
    const drawn = r.out
      .split("\n")
      .map((line) => /\b(k\d) assistant {2}text of/.exec(line)?.[1])
      .filter((id) => id !== undefined);
    assert.deepEqual(drawn, want);
    assert.notDeepEqual(want, ["k1", "k2", "k3", "k4", "k5", "k6"], "the file order is not the tree order");
  });

  test("search finds text and exits 3 (not found) when nothing matches", (t) => {
    const { agentDir } = agentWithFixtures(t);
    const r = cli(["search", "two files", "--cwd", FIXTURE_CWD], { agentDir });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /There are two files/);
    assert.equal(cli(["search", "zzz-no-such-text", "--all"], { agentDir }).code, 3);
  });

  test("verify reports damage with file and line and exits 1; clean files exit 0", (t) => {
    const agentDir = tempDir(t);
    const torn = path.join(FIXTURES, "torn-last-line.jsonl");
    const r = cli(["verify", torn], { agentDir });
    assert.equal(r.code, 1);
    assert.ok(r.out.includes(`${torn}:4: error: torn last line`), r.out);
    const j = JSON.parse(cli(["verify", torn, "--json"], { agentDir }).out);
    assert.deepEqual(
      j.files[0].findings.map((f) => [f.code, f.line]),
      [["torn-last-line", 4]],
    );
    assert.equal(cli(["verify", path.join(FIXTURES, "v3-conversation.jsonl")], { agentDir }).code, 0);
  });

  test("repair writes a copy that verifies clean, and --in-place keeps a backup", (t) => {
    const dir = tempDir(t);
    const out = path.join(dir, "fixed.jsonl");
    const r = cli(["repair", path.join(FIXTURES, "blank-and-malformed-lines.jsonl"), "--out", out], { agentDir: dir });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /verifies clean/);
    assert.equal(cli(["verify", out], { agentDir: dir }).code, 0);
    const copy = path.join(dir, "torn.jsonl");
    fs.copyFileSync(path.join(FIXTURES, "torn-last-line.jsonl"), copy);
    const inPlace = cli(["repair", copy, "--in-place"], { agentDir: dir });
    assert.equal(inPlace.code, 0, inPlace.err);
    assert.deepEqual(fs.readFileSync(`${copy}.bak`), fs.readFileSync(path.join(FIXTURES, "torn-last-line.jsonl")));
    // The repaired file opens in SessionManager with the same entries the original had.
    const a = SessionManager.open(copy, dir).getEntries().map((e) => e.id);
    assert.deepEqual(a, ["d1000001", "d1000002"]);
  });

  test("export writes Markdown, HTML and JSON", (t) => {
    const dir = tempDir(t);
    const f = path.join(FIXTURES, "v3-conversation.jsonl");
    assert.match(cli(["export", f], { agentDir: dir }).out, /^# Listing files\n/);
    const html = path.join(dir, "s.html");
    const r = cli(["export", f, "--format", "html", "--out", html], { agentDir: dir });
    assert.equal(r.code, 0, r.err);
    assert.match(fs.readFileSync(html, "utf8"), /^<!doctype html>/);
    const json = JSON.parse(cli(["export", f, "--format", "json"], { agentDir: dir }).out);
    assert.equal(json.name, "Listing files");
  });

  test("output into a pipe nobody reads yet arrives whole (Node makes a piped stdout non-blocking)", { skip: process.platform === "win32" && "needs sh" }, (t) => {
    const dir = tempDir(t);
    const f = path.join(dir, "2025-01-01T00-00-00-000Z_big.jsonl");
    const text = "all work and no play ".repeat(20_000); // 420 KB: far more than a pipe holds
    const lines = [
      { type: "session", version: 3, id: "big", timestamp: "2025-01-01T00:00:00.000Z", cwd: dir },
      { type: "message", id: "m1", parentId: null, timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } },
    ];
    fs.writeFileSync(f, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const r = spawnSync("sh", ["-c", `"${process.execPath}" "${BIN}" export "${f}" --format json | (sleep 1; cat)`], {
      encoding: "utf8",
      env: { ...process.env, PI_CODING_AGENT_DIR: dir, NO_COLOR: "1" },
      maxBuffer: 64 << 20,
      timeout: 60_000,
    });
    assert.equal(r.stderr, "");
    const json = JSON.parse(r.stdout);
    assert.ok(JSON.stringify(json).includes(text.trim()), "the whole message came through");
  });

  test("rm needs --yes without a terminal and then deletes", (t) => {
    const { agentDir, dir } = agentWithFixtures(t);
    const target = path.join(dir, "v3-conversation.jsonl");
    const refused = cli(["rm", target], { agentDir });
    assert.equal(refused.code, 2);
    assert.ok(fs.existsSync(target));
    const done = cli(["rm", target, "--yes"], { agentDir, env: { PATH: path.dirname(process.execPath) } });
    assert.equal(done.code, 0, done.err);
    assert.ok(!fs.existsSync(target));
  });

  test("demo builds sample data and runs list, tree, show and stats on it", (t) => {
    const root = tempDir(t);
    const r = cli(["demo", "--dir", path.join(root, "demo")], { agentDir: path.join(root, "none") });
    assert.equal(r.code, 0, r.err);
    for (const step of ["$ pi-sessions list", "$ pi-sessions tree", "$ pi-sessions show", "$ pi-sessions stats"]) {
      assert.ok(r.out.includes(step), step);
    }
    assert.match(r.out, /Weather forecast cache/);
  });

  test("every command answers --help, and usage errors exit 2", (t) => {
    const agentDir = tempDir(t);
    for (const c of ["list", "show", "tree", "stats", "search", "verify", "repair", "export", "rm", "demo"]) {
      const r = cli([c, "--help"], { agentDir });
      assert.equal(r.code, 0, c);
      assert.ok(r.out.includes(`Usage: pi-sessions ${c} `), c);
    }
    const bad = cli(["nope"], { agentDir });
    assert.equal(bad.code, 2);
    assert.match(bad.err, /unknown command 'nope'/);
    const missing = cli(["show", "deadbeef"], { agentDir });
    assert.equal(missing.code, 3, "no such session is not a usage error");
    assert.match(missing.err, /^pi-sessions: no session with an id starting with deadbeef /);
  });

  test("NO_COLOR and a pipe mean no escape codes; --color always forces them", (t) => {
    const f = path.join(FIXTURES, "v3-conversation.jsonl");
    const agentDir = tempDir(t);
    assert.ok(!cli(["show", f], { agentDir }).out.includes("\x1b["));
    const forced = cli(["show", f, "--color", "always"], { agentDir, env: { NO_COLOR: "" } });
    assert.ok(forced.out.includes("\x1b["));
  });
});

// ----- HTML export in headless Chromium ---------------------------------------------------------

function findChromium() {
  for (const name of ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]) {
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
      const p = path.join(dir, name);
      try {
        fs.accessSync(p, fs.constants.X_OK);
        return p;
      } catch {
        // keep looking
      }
    }
  }
  return null;
}

const CHROMIUM = findChromium();

function chromium(args, userDataDir) {
  return spawnSync(
    CHROMIUM,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      `--user-data-dir=${userDataDir}`,
      ...args,
    ],
    { encoding: "buffer", timeout: 120_000 },
  );
}

/** Decode an 8-bit RGB/RGBA PNG (what Chromium writes) into {width, height, channels, pixels}. */
function decodePng(buf) {
  assert.deepEqual([...buf.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], "PNG signature");
  let off = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString("latin1", off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, "8-bit depth");
      channels = { 2: 3, 6: 4 }[data[9]];
      assert.ok(channels, `colour type ${data[9]}`);
    } else if (type === "IDAT") idat.push(data);
    off += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[y * stride + x] = v & 255;
    }
  }
  return { width, height, channels, pixels };
}

describe("clock times are the user's local time", () => {
  // The time zone comes from the OS (TZ here, as for every Unix program), daylight saving included.
  function exportAt(t, tz, created, messageAt) {
    const dir = tempDir(t, "pi-cli-tz-");
    const file = path.join(dir, "s.jsonl");
    const header = { type: "session", version: 3, id: "7a1e0000-0000-4000-8000-000000000001", timestamp: created, cwd: "/tmp/tz" };
    const user = { type: "message", id: "a0000001", parentId: null, timestamp: messageAt, message: { role: "user", content: "hi", timestamp: Date.parse(messageAt) } };
    fs.writeFileSync(file, `${JSON.stringify(header)}\n${JSON.stringify(user)}\n`);
    const r = cli(["export", file, "--format", "md"], { agentDir: path.join(dir, "agent"), env: { TZ: tz } });
    assert.equal(r.code, 0, r.err);
    return r.out;
  }

  test("an export shows the same moment in UTC, India and New York, with New York's summer time", (t) => {
    const winter = "2025-01-15T10:00:00.000Z";
    const summer = "2025-07-15T10:00:00.000Z";
    const cases = [
      ["UTC", "2025-01-15 10:00", "2025-07-15 10:00"],
      ["Asia/Kolkata", "2025-01-15 15:30", "2025-07-15 15:30"],
      ["America/New_York", "2025-01-15 05:00", "2025-07-15 06:00"],
    ];
    for (const [tz, created, message] of cases) {
      const out = exportAt(t, tz, winter, summer);
      assert.match(out, new RegExp(`- Created: ${created}\\n`), `${tz}: the header's time`);
      assert.match(out, new RegExp(`<sub>${message} · \``), `${tz}: the message's time`);
    }
  });
});

describe("HTML export in headless Chromium", () => {
  // CI installs Chromium (.ci/run), so there a missing browser is a failure, not a skip.
  const missing = "no Chromium on PATH: install Debian's `chromium` package (apt-get install -y chromium) to run this check";
  const skip = CHROMIUM || process.env.CI ? false : missing;

  test("the export parses to the expected page and renders (screenshot with ink on it)", { skip, timeout: 300_000 }, (t) => {
    assert.ok(CHROMIUM, missing);
    const dir = tempDir(t, "pi-cli-html-");
    const demo = path.join(dir, "demo");
    assert.equal(cli(["demo", "--dir", demo], { agentDir: path.join(dir, "none") }).code, 0);
    const agentDir = path.join(demo, "agent");
    const listed = JSON.parse(cli(["list", "--all", "--json"], { agentDir }).out);
    const main = listed.find((s) => s.name === "Weather forecast cache");
    const html = path.join(dir, "export.html");
    assert.equal(cli(["export", main.path, "--format", "html", "--out", html], { agentDir }).code, 0);
    const profile = fs.mkdtempSync(path.join(dir, "profile-"));

    // The DOM Chromium builds: the articles and notes we wrote, and no script anywhere.
    const dom = chromium(["--dump-dom", `file://${html}`], profile);
    assert.equal(dom.status, 0, dom.stderr.toString());
    const text = dom.stdout.toString("utf8");
    assert.match(text, /<h1>Weather forecast cache<\/h1>/);
    assert.ok(!/<script/i.test(text), "no script elements");
    const articles = text.match(/<article class="(user|assistant|tool|summary|custom|system)"/g) ?? [];
    const shown = JSON.parse(cli(["show", main.path, "--json"], { agentDir }).out).entries;
    const conversational = shown.filter((e) => ["message", "compaction", "branch_summary", "custom_message"].includes(e.type));
    assert.equal(articles.length, conversational.length);

    // A screenshot: a real page-sized PNG, mostly white with text and coloured accents on it.
    const png = path.join(dir, "export.png");
    const shot = chromium(["--hide-scrollbars", "--window-size=1000,1400", `--screenshot=${png}`, `file://${html}`], profile);
    assert.equal(shot.status, 0, shot.stderr.toString());
    const img = decodePng(fs.readFileSync(png));
    assert.equal(img.width, 1000);
    assert.equal(img.height, 1400);
    let ink = 0;
    let accent = 0;
    for (let i = 0; i < img.pixels.length; i += img.channels) {
      const [r, g, b] = [img.pixels[i], img.pixels[i + 1], img.pixels[i + 2]];
      if (r < 200 || g < 200 || b < 200) ink++;
      // The user accent #1a7f37 and the assistant accent #0969da.
      if ((Math.abs(r - 0x1a) < 12 && Math.abs(g - 0x7f) < 12 && Math.abs(b - 0x37) < 12) || (Math.abs(r - 0x09) < 12 && Math.abs(g - 0x69) < 12 && Math.abs(b - 0xda) < 12)) accent++;
    }
    const total = img.width * img.height;
    assert.ok(ink / total > 0.01, `text rendered (${ink} dark pixels)`);
    assert.ok(ink / total < 0.5, "not a blank or black page");
    assert.ok(accent > 200, `role colours rendered (${accent} accent pixels)`);
  });
});
