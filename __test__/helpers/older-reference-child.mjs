// Child of helpers/older-reference.mjs, run by Node 22: answers list()/listAll() of the reference
// module (argv[2]) over IPC. Each request carries the cwd, HOME and PI_CODING_AGENT_DIR to use;
// the first message says which Node this is and whether its readline ends lines at U+2028/U+2029.
import readline from "node:readline";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";

import { decode, encode } from "./older-reference-codec.mjs";

// A file URL: a bare Windows path (C:\...) is not a specifier import() takes.
const reference = await import(pathToFileURL(process.argv[2]).href);

async function splits() {
  const rl = readline.createInterface({ input: Readable.from(["a\u2028b\u2029c\n"]), crlfDelay: Infinity });
  const lines = [];
  for await (const line of rl) lines.push(line);
  return lines.length !== 1;
}

function setEnv(name, value) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

process.on("message", async ({ id, method, args: given, cwd, env }) => {
  try {
    if (method !== "list" && method !== "listAll") throw new Error(`older-reference-child: not a listing: ${method}`);
    process.chdir(cwd);
    for (const [name, value] of Object.entries(decode(env))) setEnv(name, value);
    process.send({ id, ok: encode(await reference.SessionManager[method](...decode(given))) });
  } catch (error) {
    process.send({ id, threw: { name: error?.name ?? "Error", message: error instanceof Error ? error.message : String(error) } });
  }
});
process.on("disconnect", () => process.exit(0));
process.send({ id: 0, ok: { version: process.version, splits: await splits() } });
