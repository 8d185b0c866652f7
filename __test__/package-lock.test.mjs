// The committed package-lock.json is the one npm itself writes for package.json, so `npm install`
// in a checkout leaves it as it is (it used to add the root's `bin` and drop `hasInstallScript`,
// a dirty tree after the first command of the README). npm 11 wrote it; npm 10 (Node 22's own)
// drops the `libc` fields of the platform packages, so the check needs npm 11 or later.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { tempDir } from "./helpers/fixtures.mjs";
import { ROOT } from "./helpers/target.mjs";

const isWindows = process.platform === "win32";

/** This process's environment without the npm_* variables of an enclosing `npm test`. */
function plainEnv(extra) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  return { ...env, npm_config_update_notifier: "false", ...extra };
}

function npm(args, options) {
  const r = spawnSync(isWindows ? "npm.cmd" : "npm", args, { encoding: "utf8", shell: isWindows, ...options });
  if (r.error) throw r.error;
  return r;
}

const version = npm(["--version"], { env: plainEnv() }).stdout.trim();
const skip = Number(version.split(".")[0]) >= 11 ? false : `npm ${version} writes locks differently from npm 11, which wrote this one`;

test("npm install leaves the committed package-lock.json byte for byte as it is", { skip }, (t) => {
  const dir = tempDir(t, "pi-lock-");
  for (const name of ["package.json", "package-lock.json"]) fs.copyFileSync(path.join(ROOT, name), path.join(dir, name));
  // Offline with an empty cache: the lock alone must satisfy package.json, nothing is fetched.
  const r = npm(["install", "--package-lock-only", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: dir,
    env: plainEnv({ npm_config_cache: path.join(dir, "cache") }),
  });
  assert.equal(r.status, 0, `npm ${version} install --package-lock-only failed:\n${r.stderr}`);
  assert.equal(
    fs.readFileSync(path.join(dir, "package-lock.json"), "utf8"),
    fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8"),
    `npm ${version} rewrote package-lock.json: commit the lock it writes`,
  );
});
