// The platforms pi-session-native publishes a binary for: one row each. The build
// (scripts/build-platforms.js), the packing (scripts/pack.js), the platform tests
// (scripts/test-platforms.js) and the checks of npm/<suffix>/package.json all read this table;
// native.js (shipped, so self-contained) picks the same suffixes, which a test holds it to.
//
//   suffix   napi-rs platform name: npm/<suffix>/, package pi-session-native-<suffix>,
//            file pi-session-native.<suffix>.node
//   triple   the Rust target built
//   zig      the target handed to cargo-zigbuild (glibc targets pin the oldest glibc they need)
//   artifact the file cargo leaves in target/<triple>/release/
//   env      per-target environment of the build (macOS: the oldest release it runs on)
//   rustflags per-target flags (musl: link the C library dynamically, so the addon shares the
//            host's musl instead of carrying a second copy; macOS: a stable install name, and
//            `-S`, no debug stabs: rustc hands the linker C objects it unpacked into a temp dir
//            of a random name, zig's linker names each in a stab and hashes the image, stabs
//            included, into LC_UUID, and the strip after the link drops the stabs but not the
//            UUID, so without -S every build, even of one checkout, had a UUID of its own)
"use strict";

const PLATFORMS = [
  {
    suffix: "linux-x64-gnu",
    triple: "x86_64-unknown-linux-gnu",
    zig: "x86_64-unknown-linux-gnu.2.17",
    os: "linux",
    cpu: "x64",
    libc: "glibc",
    artifact: "libpi_session_native.so",
    abi: "glibc ≥ 2.17",
  },
  {
    suffix: "linux-arm64-gnu",
    triple: "aarch64-unknown-linux-gnu",
    zig: "aarch64-unknown-linux-gnu.2.17",
    os: "linux",
    cpu: "arm64",
    libc: "glibc",
    artifact: "libpi_session_native.so",
    abi: "glibc ≥ 2.17",
  },
  {
    suffix: "linux-x64-musl",
    triple: "x86_64-unknown-linux-musl",
    zig: "x86_64-unknown-linux-musl",
    os: "linux",
    cpu: "x64",
    libc: "musl",
    artifact: "libpi_session_native.so",
    abi: "musl (dynamically linked)",
    rustflags: ["-C", "target-feature=-crt-static"],
  },
  {
    suffix: "linux-arm64-musl",
    triple: "aarch64-unknown-linux-musl",
    zig: "aarch64-unknown-linux-musl",
    os: "linux",
    cpu: "arm64",
    libc: "musl",
    artifact: "libpi_session_native.so",
    abi: "musl (dynamically linked)",
    rustflags: ["-C", "target-feature=-crt-static"],
  },
  {
    suffix: "darwin-x64",
    triple: "x86_64-apple-darwin",
    zig: "x86_64-apple-darwin",
    os: "darwin",
    cpu: "x64",
    artifact: "libpi_session_native.dylib",
    abi: "macOS ≥ 10.13, libSystem",
    env: { MACOSX_DEPLOYMENT_TARGET: "10.13" },
    rustflags: ["-C", "link-arg=-Wl,-install_name,@rpath/pi-session-native.node", "-C", "link-arg=-Wl,-S"],
  },
  {
    suffix: "darwin-arm64",
    triple: "aarch64-apple-darwin",
    zig: "aarch64-apple-darwin",
    os: "darwin",
    cpu: "arm64",
    artifact: "libpi_session_native.dylib",
    abi: "macOS ≥ 11, libSystem",
    env: { MACOSX_DEPLOYMENT_TARGET: "11.0" },
    rustflags: ["-C", "link-arg=-Wl,-install_name,@rpath/pi-session-native.node", "-C", "link-arg=-Wl,-S"],
  },
  {
    suffix: "win32-x64-gnu",
    triple: "x86_64-pc-windows-gnu",
    zig: "x86_64-pc-windows-gnu",
    os: "win32",
    cpu: "x64",
    artifact: "pi_session_native.dll",
    abi: "GNU (MinGW-w64) over the Universal CRT",
  },
  {
    suffix: "win32-arm64-gnullvm",
    triple: "aarch64-pc-windows-gnullvm",
    zig: "aarch64-pc-windows-gnullvm",
    os: "win32",
    cpu: "arm64",
    artifact: "pi_session_native.dll",
    abi: "GNU with LLVM's runtime over the Universal CRT",
  },
];

const BINARY_NAME = "pi-session-native";

/** The row for a suffix or a Rust triple; throws naming the known ones. */
function platform(name) {
  const row = PLATFORMS.find((p) => p.suffix === name || p.triple === name);
  if (!row) throw new Error(`unknown platform ${name}; known: ${PLATFORMS.map((p) => p.suffix).join(", ")}`);
  return row;
}

function binaryFile(row) {
  return `${BINARY_NAME}.${row.suffix}.node`;
}

module.exports = { PLATFORMS, BINARY_NAME, platform, binaryFile };
