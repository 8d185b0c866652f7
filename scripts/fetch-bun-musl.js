#!/usr/bin/env node
// Bun's musl builds, made runnable on this Debian machine: scripts/test-platforms.js loads the
// linux-x64-musl and linux-arm64-musl binaries in them (arm64 under qemu-user) and runs the
// suites there, so that those binaries run somewhere before a user's Alpine box.
//
//   node scripts/fetch-bun-musl.js x64|arm64   -> the path of that Bun (its arm64 one runs under
//                                                 qemu-user, binfmt_misc registered)
//
// A musl process needs musl's dynamic loader and, for Bun, a libstdc++ and a libgcc_s built for
// musl. Debian packages no musl libstdc++, and bookworm's musl (1.2.3) cannot load the one we can
// get: it is linked with packed relative relocations (DT_RELR), which musl reads from 1.2.4 on.
// So, from the registries only, each file pinned by its SHA-256:
//   - Bun: @oven/bun-linux-<x64|aarch64>-musl from npm, the version scripts/fetch-bun.js pins;
//   - musl 1.2.5: Debian trixie's `musl` package for the architecture;
//   - libstdc++ and libgcc_s built for musl: the copies auditwheel put into kiwisolver's
//     musllinux_1_2 wheel on PyPI (a small wheel that carries them).
// They are put together in .cache/bun-<version>-musl-<arch>/ (gitignored): lib/ holds the loader
// and the libraries, bin/bun is Bun with its loader path and library path set to lib/
// (patchelf), so Bun and every process it starts run without anything installed system-wide.
// Needs dpkg-deb, unzip and patchelf (scripts/test-platforms.js installs them when missing).
"use strict";

const { spawnSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const { installCached } = require("./fetch-node.js");
const { BUN_VERSION } = require("./fetch-bun.js");

const DEBIAN = "http://deb.debian.org/debian/pool/main/m/musl";
const MUSL_DEB = "1.2.5-3.1~deb13u1";
const PYPI = "https://files.pythonhosted.org/packages";
const WHEEL = "kiwisolver-1.5.1-cp312-cp312-musllinux_1_2";

/** Per architecture: its names at npm (Bun's packages), at Debian and at musl (the wheel's tag
 * too), and the SHA-256 of musl's package and of the wheel (with the wheel's folder on PyPI). */
const ARCHES = {
  x64: {
    npm: "x64",
    debian: "amd64",
    musl: "x86_64",
    muslSha256: "fd4231e1c189c0ebe01182747f83817593fefa7f6b690c484410646288b60058",
    wheel: ["ba/d3/024208ec1079d273f1047468d1bdffbf38bb75b7b268090fd3a0301b9d9a", "b03af77d77e50edba2030fd5f7c352ff209314b09030a3cba7c14edf9a09a444"],
  },
  arm64: {
    npm: "aarch64",
    debian: "arm64",
    musl: "aarch64",
    muslSha256: "46cf1fcaa2d49d1573ef0ceabdb36e04a359a9a37d8e4304024f9018682e3f35",
    wheel: ["cb/c3/38df144a08b6c5d75ca4504e5cc3141bb3bfef64c04f4ef48204f42711b6", "bfd1de989b3330420e29de39352f5c049905c9e3ee67233a50d550e3d652c148"],
  },
};

/** What is fetched for `arch` and the names its files go by. @param {string} arch */
function runtimeOf(arch) {
  const a = ARCHES[arch];
  if (!a) throw new Error(`fetch-bun-musl: no musl runtime for ${arch} (x64 or arm64)`);
  return {
    bun: `@oven/bun-linux-${a.npm}-musl`,
    musl: [`${DEBIAN}/musl_${MUSL_DEB}_${a.debian}.deb`, a.muslSha256],
    wheel: [`${PYPI}/${a.wheel[0]}/${WHEEL}_${a.musl}.whl`, a.wheel[1]],
    triple: `${a.musl}-linux-musl`,
    loader: `ld-musl-${a.musl}.so.1`,
    libc: `libc.musl-${a.musl}.so.1`,
  };
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  if (r.error || r.status !== 0) throw new Error(`fetch-bun-musl: ${cmd} ${args.join(" ")}: ${(r.error?.message ?? r.stderr).trim()}`);
  return r.stdout;
}

/** Downloads `url` to `file` and checks its SHA-256 (a child Node does the fetch: this script is
 * synchronous, as its callers are). */
function download([url, sha256], file) {
  const script = "fetch(process.argv[1]).then(async (r) => { if (!r.ok) throw new Error(`HTTP ${r.status}`); require('fs').writeFileSync(process.argv[2], Buffer.from(await r.arrayBuffer())); })";
  run(process.execPath, ["-e", script, url, file]);
  const got = crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
  if (got !== sha256) throw new Error(`fetch-bun-musl: ${url}: SHA-256 ${got}, expected ${sha256}`);
}

/** Bun for musl on `arch` ("x64" or "arm64"), put together in .cache/ when missing: the paths of
 * Bun and of the musl loader it runs on (musl's libc itself).
 * @param {string} arch @returns {{ bun: string, loader: string }} */
function fetchBunMusl(arch) {
  const rt = runtimeOf(arch);
  const dir = path.resolve(__dirname, "..", ".cache", `bun-${BUN_VERSION}-musl-${arch}`);
  const bun = path.join(dir, "bin", "bun");
  const lib = path.join(dir, "lib");
  const made = { bun, loader: path.join(lib, rt.loader) };
  const ready = path.join(dir, ".ready");
  if (fs.existsSync(ready) && fs.existsSync(bun)) return made;
  fs.rmSync(dir, { recursive: true, force: true });
  const work = path.join(dir, "work");
  fs.mkdirSync(lib, { recursive: true });
  fs.mkdirSync(work, { recursive: true });

  // --force: npm would refuse a package for another libc (and, for arm64, another cpu).
  const fromNpm = installCached({
    what: "fetch-bun-musl",
    spec: `${rt.bun}@${BUN_VERSION}`,
    dir: path.join(dir, "npm"),
    binaryOf: (d) => path.join(d, "node_modules", rt.bun, "bin", "bun"),
    ready: (b) => fs.existsSync(b),
    force: true,
  });

  download(rt.musl, path.join(work, "musl.deb"));
  run("dpkg-deb", ["-x", path.join(work, "musl.deb"), path.join(work, "musl")]);
  // The loader is musl's libc itself (the package's ld-musl-*.so.1 is a link to it).
  fs.copyFileSync(path.join(work, "musl", "usr", "lib", rt.triple, "libc.so"), made.loader);
  fs.symlinkSync(rt.loader, path.join(lib, rt.libc));

  download(rt.wheel, path.join(work, "runtime.whl"));
  run("unzip", ["-q", "-o", path.join(work, "runtime.whl"), "kiwisolver.libs/*", "-d", path.join(work, "wheel")]);
  for (const name of fs.readdirSync(path.join(work, "wheel", "kiwisolver.libs"))) {
    fs.copyFileSync(path.join(work, "wheel", "kiwisolver.libs", name), path.join(lib, name));
    // auditwheel renamed it (libstdc++-<hash>.so.6.0.33); Bun asks for the usual name.
    if (name.startsWith("libstdc++-")) fs.symlinkSync(name, path.join(lib, "libstdc++.so.6"));
  }
  if (!fs.existsSync(path.join(lib, "libstdc++.so.6"))) throw new Error("fetch-bun-musl: the wheel held no libstdc++");

  fs.mkdirSync(path.dirname(bun), { recursive: true });
  fs.copyFileSync(fromNpm, bun);
  fs.chmodSync(bun, 0o755);
  run("patchelf", ["--set-interpreter", made.loader, "--set-rpath", lib, bun]);
  // (The package's copy is not needed once bin/bun is made.)
  for (const d of [work, path.join(dir, "npm")]) fs.rmSync(d, { recursive: true, force: true });
  fs.writeFileSync(ready, `${BUN_VERSION}\n`);
  return made;
}

module.exports = { fetchBunMusl };

if (require.main === module) {
  try {
    console.log(fetchBunMusl(process.argv[2] ?? "x64").bun);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
