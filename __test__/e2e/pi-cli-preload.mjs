// Preloaded into every pi process of the CLI end-to-end test (NODE_OPTIONS=--import=...):
//   - any attempt to reach the network (a TCP/TLS connection, a DNS lookup) is appended to the
//     file named by PI_CLI_NET_LOG and then fails, so the test can assert that no run tried;
//     Unix-socket and pipe connections are local and pass;
//   - at exit, the files of this package that the process loaded through require (its lib/,
//     index.js, the .node addon; not this test's own files) are appended to PI_CLI_LOADED_LOG,
//     so the test can tell a run on the native store from one that never touched it.
import dns from "node:dns";
import fs from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const log = process.env.PI_CLI_NET_LOG;
const loadedLog = process.env.PI_CLI_LOADED_LOG;
const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(import.meta.url);

if (loadedLog) {
  process.on("exit", () => {
    const ours = Object.keys(require.cache)
      .filter((file) => file.startsWith(PACKAGE_ROOT + path.sep))
      .map((file) => path.relative(PACKAGE_ROOT, file))
      .filter((rel) => !rel.startsWith(`node_modules${path.sep}`) && !rel.startsWith(`__test__${path.sep}`))
      .sort();
    fs.appendFileSync(loadedLog, `${JSON.stringify({ pid: process.pid, argv: process.argv.slice(1, 2), ours })}\n`);
  });
}

function record(kind, target) {
  if (log) fs.appendFileSync(log, `${JSON.stringify({ kind, target: String(target), pid: process.pid })}\n`);
}

function refused(what) {
  const error = new Error(`pi-cli test: network access refused (${what})`);
  error.code = "ECONNREFUSED";
  return error;
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const local = (typeof first === "object" && first !== null && first.path !== undefined) || typeof first === "string";
  if (local) return connect.apply(this, args);
  const target = typeof first === "object" && first !== null ? `${first.host ?? "localhost"}:${first.port}` : `${args[1] ?? "localhost"}:${first}`;
  record("connect", target);
  process.nextTick(() => this.destroy(refused(`connect ${target}`)));
  return this;
};

const lookup = dns.lookup;
dns.lookup = function guardedLookup(host, options, callback) {
  const cb = typeof options === "function" ? options : callback;
  if (host === "localhost" || net.isIP(host)) return lookup.call(this, host, options, callback);
  record("lookup", host);
  process.nextTick(() => cb(refused(`lookup ${host}`)));
  return {};
};
const promiseLookup = dns.promises.lookup;
dns.promises.lookup = async function guardedPromiseLookup(host, options) {
  if (host === "localhost" || net.isIP(host)) return promiseLookup.call(this, host, options);
  record("lookup", host);
  throw refused(`lookup ${host}`);
};
