// Loads the compiled Rust addon and exports its binding object.
//
// Where the binary is looked for, first match wins:
//   1. $PI_SESSION_NATIVE_PATH, if set (and nothing else then): a path to a .node file.
//   2. ./pi-session-native.<platform>.node next to this file: a local `npm run build`.
//   3. The platform package pi-session-native-<platform>, installed by npm as an optional
//      dependency of this package.
// <platform> follows napi-rs naming, e.g. linux-x64-gnu, linux-arm64-musl, darwin-arm64,
// win32-x64-gnu (the published Windows binaries have the GNU ABI: see scripts/platforms.js, the
// table this file agrees with). A build in a Windows checkout with Rust's default MSVC toolchain
// is named win32-<arch>-msvc and is looked for next to this file too. If nothing loads, the error
// names the platform, the package to install and why each candidate failed.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const { isMusl, platformSuffix } = require("./lib/native-platform.js");

const BINARY_NAME = "pi-session-native";

function describePlatform(suffix) {
  let libc = "";
  if (process.platform === "linux") libc = suffix && suffix.endsWith("-musl") ? " (musl)" : " (glibc)";
  return `${process.platform}/${process.arch}${libc}`;
}

function firstLine(error) {
  const message = error && error.message ? String(error.message) : String(error);
  return message.split("\n")[0];
}

function loadBinding() {
  const forced = process.env.PI_SESSION_NATIVE_PATH;
  if (forced) {
    const file = path.resolve(forced);
    try {
      return require(file);
    } catch (error) {
      throw new Error(
        `pi-session-native: could not load the native binary named by PI_SESSION_NATIVE_PATH (${file}): ` +
          firstLine(error),
        { cause: error },
      );
    }
  }

  const suffix = platformSuffix(process.platform, process.arch, process.platform === "linux" && isMusl());
  if (suffix === null) {
    throw new Error(
      `pi-session-native: no native binary is published for ${describePlatform(null)}. ` +
        "Supported: linux x64/arm64 (glibc and musl), darwin x64/arm64, win32 x64/arm64. " +
        "You can build one from a source checkout with `npm run build` (needs Rust), " +
        "or point PI_SESSION_NATIVE_PATH at a .node file.",
    );
  }

  const packageName = `${BINARY_NAME}-${suffix}`;
  const local = (name) => path.join(__dirname, `${BINARY_NAME}.${name}.node`);
  const candidates = [local(suffix), packageName];
  if (process.platform === "win32") candidates.splice(1, 0, local(`win32-${process.arch}-msvc`));
  const failures = [];
  for (const candidate of candidates) {
    try {
      return require(candidate);
    } catch (error) {
      failures.push({ candidate, error });
    }
  }

  const details = failures.map(({ candidate, error }) => `  - ${candidate}: ${firstLine(error)}`).join("\n");
  let version = "";
  try {
    version = `@${require("./package.json").version}`;
  } catch {
    // Version is only a hint in the message.
  }
  const error = new Error(
    `pi-session-native: could not load the native binary for ${describePlatform(suffix)}.\n` +
      `Install the platform package: npm install ${packageName}${version}\n` +
      "It is an optional dependency of pi-session-native, left out when optional dependencies are " +
      "omitted (--omit=optional) or the lockfile was created on another platform. In a source " +
      "checkout, `npm run build` (needs Rust) builds the binary next to this file instead.\n" +
      `Tried:\n${details}`,
    { cause: failures.map((failure) => failure.error) },
  );
  throw error;
}

module.exports = loadBinding();
