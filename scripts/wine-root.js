// A newer Wine than the machine's, for scripts/test-windows.js: Debian trixie's Wine 10, in a
// Debian root of its own under .cache/wine-10/root/, run by chroot.
//
// Why: the machine (Debian bookworm) has Wine 8, under which Node 24 and 26 for Windows crash at
// start, a deleted file's name stays until its last handle closes (Windows 10 on NTFS deletes
// with POSIX semantics, which Node asks for), and cmd.exe ends a batch at a failed `goto` without
// running the rest of its line (npm's .cmd shims rely on it). Wine 10 does all three as Windows
// does. Its packages need trixie's C library, so they live in a trixie root, not on the host.
//
// Made once, from the Debian registry only: `debootstrap --variant=minbase trixie` (debootstrap
// itself from apt when missing), then `apt-get install wine wine64` inside it. Needs root (for
// debootstrap, chroot and mount). The project's checkout is bind-mounted into the root at its
// own path, so a path means the same file inside and out; the mounts are made in a private mount
// namespace (`unshare --mount`) that ends with the run, so nothing stays mounted into
// .cache/wine-10/root/ afterwards (a later `rm -rf .cache` cannot reach into the checkout).
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const SUITE = "trixie";
const PACKAGES = ["wine", "wine64"];
// The environment variable the re-executed runner finds itself under (inside the namespace).
const INSIDE = "PI_WINE_ROOT_NAMESPACE";

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", ...options });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: exit code ${r.status}`);
}

function has(cmd) {
  const r = spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
  return r.status === 0;
}

function rootDir(cache) {
  return path.join(cache, "wine-10", "root");
}

/** The wine loader inside the root (Debian keeps the 64-bit one here). */
const LOADER = "/usr/lib/wine/wine64";

/**
 * The trixie root with Wine in it, made when missing; its path. A root whose making was cut
 * short (no `.ready` marker) is made again from the start.
 */
function ensureWineRoot(cache, log = (s) => process.stdout.write(s)) {
  const root = rootDir(cache);
  const ready = path.join(cache, "wine-10", ".ready");
  if (fs.existsSync(ready) && fs.existsSync(path.join(root, LOADER.slice(1)))) return root;
  if (process.getuid?.() !== 0) {
    throw new Error("the Wine 10 root needs root (debootstrap, chroot, mount); run as root, or pass --wine host for the machine's own Wine");
  }
  const mirror = process.env.DEBIAN_MIRROR || "http://deb.debian.org/debian";
  if (!has("debootstrap")) {
    log("wine-root: apt-get install debootstrap\n");
    run("apt-get", ["-o", "DPkg::Lock::Timeout=600", "install", "-y", "-q", "debootstrap"], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  }
  fs.rmSync(path.join(cache, "wine-10"), { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  log(`wine-root: debootstrap --variant=minbase ${SUITE} into ${root} (a few minutes)\n`);
  run("debootstrap", ["--variant=minbase", "--include=ca-certificates", SUITE, root, mirror]);
  fs.copyFileSync("/etc/resolv.conf", path.join(root, "etc", "resolv.conf"));
  log(`wine-root: apt-get install ${PACKAGES.join(" ")} in the root\n`);
  // /proc and /dev for the packages' scripts, in a namespace of this command alone.
  const script = [
    `mount -t proc proc "${root}/proc"`,
    `mount --rbind /dev "${root}/dev"`,
    `chroot "${root}" apt-get update -q`,
    `DEBIAN_FRONTEND=noninteractive chroot "${root}" apt-get install -y -q --no-install-recommends ${PACKAGES.join(" ")}`,
  ].join(" && ");
  run("unshare", ["--mount", "--propagation", "private", "sh", "-c", script]);
  fs.writeFileSync(ready, `${new Date().toISOString()}\n`);
  return root;
}

/**
 * Runs this script again inside a private mount namespace with the root's mounts made (each of
 * `shared`, e.g. the project's checkout, at its own path; /proc, /dev), unless it already runs
 * there; returns the exit code of that run, or null when this process is the one inside.
 */
function enterNamespace(root, shared) {
  if (insideNamespace() === root) return null;
  const mounts = [
    `mount -t proc proc "${root}/proc"`,
    `mount --rbind /dev "${root}/dev"`,
    ...shared.flatMap((dir) => [`mkdir -p "${root}${dir}"`, `mount --bind "${dir}" "${root}${dir}"`]),
    `exec "$0" "$@"`,
  ].join(" && ");
  const r = spawnSync("unshare", ["--mount", "--propagation", "private", "sh", "-c", mounts, process.execPath, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, [INSIDE]: root },
  });
  if (r.error) throw new Error(`unshare: ${r.error.message}`);
  return r.status ?? 1;
}

/** The root whose namespace this process runs in (made ready by the process that entered it), or null. */
function insideNamespace() {
  return process.env[INSIDE] || null;
}

/** spawnSync arguments that run Wine 10 in the root with `args`, in `cwd` (a path the root shares). */
function wineCommand(root, cwd, args) {
  return ["chroot", [root, "/bin/sh", "-c", 'cd "$0" && exec "$@"', cwd, LOADER, ...args]];
}

function wineVersion(root) {
  const r = spawnSync("chroot", [root, LOADER, "--version"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

module.exports = { ensureWineRoot, enterNamespace, insideNamespace, wineCommand, wineVersion };
