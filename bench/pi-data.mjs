// The data of `npm run bench:pi`: agent dirs holding the 3,000 sessions of the scale set
// (bench/scale-gen.mjs, part `many`), 1,000 of them in the project the agent runs in.
//
//   bench/data/pi/agent-stock/   the agent dir stock pi runs with (pi-native never runs here)
//   bench/data/pi/agent-native/  the agent dir pi-native runs with
//   bench/data/pi/agent-empty/   no sessions: for startup times
//   bench/data/pi/home/          HOME of every run
//
// In both session trees, every third session of the scale set in time order (1,000) is in the
// project's session dir, `sessions/--tmp-pi-scale-project--/` (their headers' cwd is the project,
// /tmp/pi-scale-project, which is created empty); the other 2,000 are spread over 20 other
// projects' dirs, 100 each (their headers keep the project's cwd: neither listing filters the
// default dir by cwd). The files are hard links to the scale set, so the trees cost no disk
// space; bench/data/pi/manifest.json records the inode of every link and a tree is rebuilt when
// one no longer matches (the scale set was regenerated).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { ensureScaleData, SCALE_CWD } from "./scale-gen.mjs";

export const PI_DATA_VERSION = 1;
export const PI_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "data", "pi");
export const PROJECT_CWD = SCALE_CWD;
export const PROJECT_DIR_NAME = `--${SCALE_CWD.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
const OTHER_PROJECTS = 20;

const encode = (cwd) => `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;

/** Where each scale file goes: [relative dir under sessions/, file name]. */
function plan(names) {
  const sorted = [...names].sort();
  let other = 0;
  return sorted.map((name, i) => {
    if (i % 3 === 0) return [PROJECT_DIR_NAME, name];
    const dir = encode(`/tmp/pi-scale-other-${String(other++ % OTHER_PROJECTS).padStart(2, "0")}`);
    return [dir, name];
  });
}

function treeOk(agentDir, rec) {
  for (const [dir, name, ino] of rec.links) {
    try {
      if (fs.statSync(path.join(agentDir, "sessions", dir, name)).ino !== ino) return false;
    } catch {
      return false;
    }
  }
  for (const dir of fs.readdirSync(path.join(agentDir, "sessions"))) {
    const files = fs.readdirSync(path.join(agentDir, "sessions", dir)).filter((f) => f.endsWith(".jsonl"));
    if (files.length !== rec.perDir[dir]) return false;
  }
  return true;
}

/**
 * Ensures the scale set and the agent dirs. Returns
 * { projectCwd, agentStock, agentNative, agentEmpty, home, sessions, projectSessions, projectBytes, totalBytes }.
 */
export async function ensurePiData(log = (...a) => console.error(...a)) {
  const scale = (await ensureScaleData(log, { only: ["many"] })).many;
  if (!scale || scale.skipped) throw new Error(`bench:pi needs the scale set's 3,000 sessions: ${scale?.skipped ?? "not generated"}`);
  fs.mkdirSync(PI_DIR, { recursive: true });
  fs.mkdirSync(PROJECT_CWD, { recursive: true });
  const manifestPath = path.join(PI_DIR, "manifest.json");
  let manifest = {};
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  } catch {}
  const sizes = new Map(scale.files);
  const layout = plan(sizes.keys());
  const out = {
    projectCwd: PROJECT_CWD,
    agentStock: path.join(PI_DIR, "agent-stock"),
    agentNative: path.join(PI_DIR, "agent-native"),
    agentEmpty: path.join(PI_DIR, "agent-empty"),
    home: path.join(PI_DIR, "home"),
    sessions: layout.length,
    projectSessions: layout.filter(([dir]) => dir === PROJECT_DIR_NAME).length,
    projectBytes: layout.filter(([dir]) => dir === PROJECT_DIR_NAME).reduce((s, [, n]) => s + sizes.get(n), 0),
    totalBytes: scale.totalBytes,
  };
  fs.mkdirSync(out.agentEmpty, { recursive: true });
  fs.mkdirSync(out.home, { recursive: true });
  if (manifest.version !== PI_DATA_VERSION) manifest = { version: PI_DATA_VERSION };
  for (const key of ["agentStock", "agentNative"]) {
    const agentDir = out[key];
    const rec = manifest[key];
    if (rec && rec.links.length === layout.length && treeOk(agentDir, rec)) continue;
    log(`bench:pi data: linking ${layout.length} sessions into ${path.relative(process.cwd(), agentDir) || agentDir}`);
    fs.rmSync(path.join(agentDir, "sessions"), { recursive: true, force: true });
    const links = [];
    const perDir = {};
    for (const [dir, name] of layout) {
      const target = path.join(agentDir, "sessions", dir);
      if (!perDir[dir]) fs.mkdirSync(target, { recursive: true });
      perDir[dir] = (perDir[dir] ?? 0) + 1;
      const source = path.join(scale.sessionDir, name);
      fs.linkSync(source, path.join(target, name));
      links.push([dir, name, fs.statSync(source).ino]);
    }
    manifest[key] = { links, perDir };
    fs.writeFileSync(manifestPath, `${JSON.stringify(manifest)}\n`);
  }
  return out;
}
