// The core's path rules against Node's own: the same inputs go to the core (native pathRule, both
// rule sets, whatever OS runs this) and to Node's `path.win32`/`path.posix`, `url.fileURLToPath`
// and the reference's own normalizePath/session-dir encoding; the answers must be equal. The core
// applies `win32` when built for Windows and `posix` elsewhere, so a Linux run holds the Windows
// rules to Node's as well.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";

import { tempDir, useHome, withCwd, withEnv } from "./helpers/fixtures.mjs";

const require = createRequire(import.meta.url);
const native = require("../native.js");

const STYLES = { win32: path.win32, posix: path.posix };

const PATHS = [
  "", ".", "..", "/", "\\", "//", "C:", "C:\\", "C:/", "c:x", "C:x\\..\\..\\y", "c:/x/../y/", "D:/a//b",
  "\\\\server\\share", "\\\\server\\share\\", "//server/share/a/../b", "\\\\server", "\\\\server\\",
  "\\\\.\\pipe\\x", "\\\\?\\C:\\x\\..\\y", "a\\\\b//c\\", "..\\..\\a", "a/./b/.", "\\foo\\..\\..\\bar",
  "C:\\..", "x:y", "a:b/c", "a\\b:", "C:\\Users\\ana\\proj\\", "C:\\naïve\\ü", "/a/b/../c/./d/", "/..",
  "a/../..", "./", "a/..", "x//y/", "../../a/", "1:\\x", ":\\", "/home/u/proj:x y",
];

const JOINS = [
  ["C:\\Users\\ana", ".pi/agent"], ["C:\\a\\", "sessions"], ["", "f.jsonl"], [".", ""], ["", ""],
  ["//server", "share"], ["\\\\server\\share", "x"], ["//", "x"], ["///a", "b"], ["C:", "x"],
  ["./custom", "f.jsonl"], ["x/../y", "f.jsonl"], ["a", "..\\..\\b"], ["C:\\x", "D:\\y"],
  ["\\\\.\\pipe", "x"], ["/root", "x/"], ["/x", "../y"], ["..a/.b", "...c"], ["t/", "f.jsonl"],
];

const RESOLVES = [
  [], [""], ["."], [".."], ["x\\y\\"], ["C:\\Users\\ana\\proj", ".."], ["C:\\a\\..\\b\\"], ["c:\\Users\\ANA"],
  ["C:\\Users\\ana\\proj", "/rooted"], ["\\\\server\\share\\x\\.."], ["\\\\server\\share"],
  ["//s/h/"], ["\\\\.\\pipe\\p"], ["C:\\w", "a/b/../../.."], ["\\\\?\\C:\\x"], ["C:\\Users\\ana", "c:x"],
  ["/a/b/"], ["/a//b/../c/"], ["/"], ["/a", "b", "/c", "d"], ["rel/x"],
];

test("the core normalizes, joins and tests absoluteness exactly as Node's path.win32 and path.posix do", () => {
  for (const [style, api] of Object.entries(STYLES)) {
    for (const p of PATHS) {
      assert.equal(native.pathRule(style, "normalize", [p]), api.normalize(p), `${style}.normalize(${JSON.stringify(p)})`);
      assert.equal(native.pathRule(style, "isAbsolute", [p]), String(api.isAbsolute(p)), `${style}.isAbsolute(${JSON.stringify(p)})`);
    }
    for (const [a, b] of JOINS) {
      assert.equal(native.pathRule(style, "join", [a, b]), api.join(a, b), `${style}.join(${JSON.stringify([a, b])})`);
    }
  }
});

test("the core resolves against process.cwd() exactly as Node's path.win32 and path.posix do", () => {
  for (const [style, api] of Object.entries(STYLES)) {
    for (const parts of RESOLVES) {
      assert.equal(native.pathRule(style, "resolve", parts), api.resolve(...parts), `${style}.resolve(${JSON.stringify(parts)})`);
    }
  }
});

test("file URLs, tilde and shell drive paths expand as the reference's normalizePath does on each platform", () => {
  const winHome = "C:\\Users\\ana";
  // The reference on Windows: normalizeWindowsShellPath, then ~ / ~/ / ~\, then fileURLToPath.
  const cases = [
    ["~", winHome],
    ["~\\.pi\\agent", path.win32.join(winHome, ".pi\\agent")],
    ["~/x/y", path.win32.join(winHome, "x/y")],
    ["/c/Users/ana/proj", "C:\\Users\\ana\\proj"],
    ["/mnt/d/x", "D:\\x"],
    ["/tmp/x", "/tmp/x"],
    ["file:///C:/a%20b/%C3%BC", fileURLToPath("file:///C:/a%20b/%C3%BC", { windows: true })],
    ["file://server/share/x", fileURLToPath("file://server/share/x", { windows: true })],
    ["file:///C|/x", fileURLToPath("file:///C|/x", { windows: true })],
    ["relative\\x", "relative\\x"],
  ];
  for (const [input, expected] of cases) {
    assert.equal(native.pathRule("win32", "expand", [input, winHome]), expected, `win32 expand(${JSON.stringify(input)})`);
  }
  const posixCases = [
    ["~", "/h"],
    ["~/x", "/h/x"],
    ["~\\x", "~\\x"],
    ["/c/x", "/c/x"],
    ["file:///x%20y/z", fileURLToPath("file:///x%20y/z", { windows: false })],
  ];
  for (const [input, expected] of posixCases) {
    assert.equal(native.pathRule("posix", "expand", [input, "/h"]), expected, `posix expand(${JSON.stringify(input)})`);
  }
});

test("a Windows cwd names its session directory as the reference computes it", () => {
  // The reference: `--${resolvedCwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`.
  const encode = (cwd) => `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  for (const cwd of ["C:\\Users\\ana\\proj", "c:/Users/ana/proj/", "\\\\srv\\share\\p", "D:\\", "C:\\a b\\ü:x"]) {
    const resolved = path.win32.resolve(cwd);
    assert.equal(native.pathRule("win32", "resolve", [cwd]), resolved);
    assert.equal(native.pathRule("win32", "encodeCwd", [resolved]), encode(resolved), cwd);
  }
  assert.equal(native.pathRule("win32", "encodeCwd", ["C:\\Users\\ana\\proj"]), "--C--Users-ana-proj--");
});

test("an unknown rule or style is refused with INVALID_ARGUMENT", () => {
  assert.throws(() => native.pathRule("vms", "normalize", ["x"]), { code: "INVALID_ARGUMENT" });
  assert.throws(() => native.pathRule("win32", "relative", ["a", "b"]), { code: "INVALID_ARGUMENT" });
});

test("the JS shell reads shell drive paths on Windows as the core does (one rule, two places)", () => {
  // lib/paths.js keeps its own copy because the reference's path functions run in JS over caller
  // strings; the core's is what its listing and cwd checks use. Both must give the same answers.
  const { fromShellPath } = require("../lib/paths.js");
  const inputs = [
    "/c", "/c/", "/c/Users/ana/proj", "/D/x/y", "/mnt/c/x", "/cygdrive/e/a b", "/p", "/proj", "//c/x",
    "/c\\x", "c/x", "C:\\x", "/", "", "/1/x", "/cc/x", "/mnt/cc", "/cygdrive/", "/c/ü/naïve",
  ];
  for (const input of inputs) {
    assert.equal(fromShellPath(input), native.pathRule("win32", "expand", [input, "C:\\h"]), JSON.stringify(input));
  }
  assert.equal(fromShellPath("/p"), "P:\\", "a one-letter root is a drive, as the reference reads it");
});

test("the exported getDefaultSessionDir names the directory the core's factories use (one rule, two places)", (t) => {
  // lib/paths.js keeps the reference's function, with Node's path, because the package exports it
  // over the caller's strings; the core decides every other place (native.sessionPlace). Both must
  // name the same directory for the same cwd and agent dir.
  const { getDefaultSessionDir } = require("../lib/paths.js");
  const root = tempDir(t, "pi-default-dir-");
  const home = useHome(t);
  withCwd(t, root);
  const agents = [path.join(root, "agent"), "rel-agent", "rel/../agent2/", "~/.pi/agent", "~", pathToFileURL(path.join(root, "url agent")).href];
  const cwds = ["/work/proj", "/work/proj/", "/a//b/../c", ".", "sub/dir", "~", "~/proj", "/with:colon/x y", pathToFileURL(path.join(root, "url cwd")).href];
  withEnv(t, { PI_CODING_AGENT_DIR: undefined }); // restored after the test
  for (const agent of agents) {
    process.env.PI_CODING_AGENT_DIR = agent;
    for (const cwd of cwds) {
      const core = native.sessionPlace(cwd, null, false);
      assert.equal(getDefaultSessionDir(cwd), core.dir, `agent ${agent}, cwd ${cwd}`);
      assert.equal(getDefaultSessionDir(cwd, agent), core.dir, `agent ${agent} given, cwd ${cwd}`);
      assert.equal(core.shared, false);
    }
  }
  assert.ok(fs.existsSync(path.join(home, ".pi", "agent", "sessions")), "the JS function makes the directory");
});

test("a factory's given session dir is shared unless it is the cwd's default one, whatever its spelling", (t) => {
  const agent = tempDir(t, "pi-shared-dir-");
  withEnv(t, { PI_CODING_AGENT_DIR: agent });
  const cwd = "/work/proj";
  const own = native.sessionPlace(cwd, null, false).dir;
  const cases = [
    [own, false],
    [`${own}/`, false],
    [path.join(own, "x", ".."), false],
    [path.join(agent, "sessions", "--work-other--"), true],
    ["", false],
    ["/elsewhere", true],
  ];
  for (const [given, shared] of cases) {
    const place = native.sessionPlace(cwd, given, false);
    assert.equal(place.shared, shared, JSON.stringify(given));
    assert.equal(place.dir, given === "" ? own : given, "a given dir is kept as given");
    assert.equal(place.cwd, cwd);
  }
});
