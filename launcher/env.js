"use strict";
// pi-native's environment variables (PI_NATIVE_*), each read in this one place at the moment of
// use, so that a test or a program that sets one later sees it followed.

/** The environment variables, each read in this one place (at the moment of use). */
const env = {
  agent: () => process.env.PI_NATIVE_AGENT || "",
  strict: () => isOn(process.env.PI_NATIVE_STRICT),
  disabled: () => isOn(process.env.PI_NATIVE_DISABLE),
  anyVersion: () => isOn(process.env.PI_NATIVE_ANY_VERSION),
  trace: () => process.env.PI_NATIVE_TRACE || "",
};

function isOn(value) {
  return value !== undefined && value !== "" && value !== "0" && value.toLowerCase() !== "false";
}

module.exports = { env };
