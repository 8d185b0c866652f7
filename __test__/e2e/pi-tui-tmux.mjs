// Drives a full-screen program in a detached tmux pane: start it, type, press keys, read the
// screen (capture-pane), wait until the screen says something. Used by __test__/pi-tui.test.mjs
// and bench/pi.mjs to run the interactive pi TUI.
//
// Each pane gets its own tmux server (`tmux -L <unique socket>`), so nothing is shared with the
// user's tmux or with other tests, and kill() ends that server and the program in it. The
// program runs under `sh -c`, which prints "[pane exited: <code>]" when it ends, so a crash
// shows on the screen instead of closing the pane.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** Why tmux cannot be used here, or null when it can. */
export function tmuxMissing() {
  const r = spawnSync("tmux", ["-V"], { encoding: "utf8" });
  if (r.error) return `tmux is not installed (${r.error.code ?? r.error.message})`;
  if (r.status !== 0) return `tmux -V failed: ${(r.stderr || "").trim()}`;
  return null;
}

const shellQuote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
const sleepBuffer = new Int32Array(new SharedArrayBuffer(4));
/** Blocks this thread for `ms` (the program under test runs in another process). */
export function sleepSync(ms) {
  Atomics.wait(sleepBuffer, 0, 0, ms);
}

/** Child pids of `pid`, read from /proc (Linux); [] elsewhere. */
function childrenOf(pid) {
  const out = [];
  let names;
  try {
    names = fs.readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid ...: comm may contain spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {}
  }
  return out;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let serial = 0;

export class TmuxPane {
  /** @param {string} label part of the socket name, for a human looking at `ls /tmp/tmux-*` */
  constructor(label = "pane") {
    this.socket = `pi-tui-${process.pid}-${++serial}-${label.replace(/[^a-z0-9-]/gi, "")}-${Math.random().toString(36).slice(2, 8)}`;
    this.panePid = null;
    this.started = false;
    this.env = process.env;
  }

  tmux(args, { check = true } = {}) {
    const r = spawnSync("tmux", ["-L", this.socket, "-f", "/dev/null", ...args], { encoding: "utf8", env: this.env });
    if (check && (r.error || r.status !== 0)) {
      throw new Error(`tmux ${args[0]} failed: ${r.error?.message ?? ""}${r.stderr ?? ""}`.trim());
    }
    return r;
  }

  /**
   * Starts `argv` in a new detached session of `width` × `height` cells in `cwd`, with exactly
   * `env` as its environment (the tmux server is started with it, so the pane inherits it).
   */
  start({ argv, cwd, env, width = 160, height = 45 }) {
    this.env = { ...env };
    delete this.env.TMUX;
    delete this.env.TMUX_PANE;
    const command = `${argv.map(shellQuote).join(" ")}; echo "[pane exited: $?]"; sleep 3600`;
    this.tmux(["new-session", "-d", "-s", "main", "-x", String(width), "-y", String(height), "-c", cwd, command]);
    this.started = true;
    this.panePid = Number(this.tmux(["display-message", "-p", "-t", "main", "#{pane_pid}"]).stdout.trim()) || null;
  }

  /** The visible screen as plain text (no colours), lines without trailing blanks. */
  capture() {
    const r = this.tmux(["capture-pane", "-p", "-t", "main"], { check: false });
    if (r.status !== 0) return `[capture failed: ${(r.stderr || "").trim()}]`;
    return r.stdout.replace(/[ \t]+$/gm, "");
  }

  /** Types `text` literally (no key names). */
  type(text) {
    this.tmux(["send-keys", "-t", "main", "-l", text]);
  }

  /** Presses keys by tmux name: "Enter", "Escape", "Tab", "Up", "C-c", … */
  keys(...names) {
    this.tmux(["send-keys", "-t", "main", ...names]);
  }

  /**
   * Polls the screen every `intervalMs` until `predicate(screen)` is truthy; returns
   * { screen, ms } (ms since the call). Throws after `timeoutMs`, with the last screen.
   */
  waitFor(predicate, { timeoutMs = 30_000, intervalMs = 20, what = "the expected screen" } = {}) {
    const t0 = performance.now();
    let screen = "";
    for (;;) {
      screen = this.capture();
      const ms = performance.now() - t0;
      if (predicate(screen)) return { screen, ms };
      if (ms > timeoutMs) {
        throw new Error(`timed out after ${Math.round(ms)} ms waiting for ${what}; the screen was:\n${screen.replace(/\n{3,}/g, "\n\n")}`);
      }
      if (/\[pane exited: \d+\]/.test(screen)) {
        throw new Error(`the program exited while waiting for ${what}; the screen was:\n${screen.replace(/\n{3,}/g, "\n\n")}`);
      }
      sleepSync(intervalMs);
    }
  }

  /** Ends the tmux server and whatever still runs in the pane (by pid: the pane's shell and its children). */
  kill() {
    if (!this.started) return;
    this.started = false;
    const pids = [];
    if (this.panePid) {
      const stack = [this.panePid];
      while (stack.length) {
        const pid = stack.pop();
        pids.push(pid);
        stack.push(...childrenOf(pid));
      }
    }
    this.tmux(["kill-server"], { check: false });
    const deadline = Date.now() + 3000;
    while (pids.some(alive) && Date.now() < deadline) sleepSync(20);
    for (const pid of pids.filter(alive)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    const uid = typeof process.getuid === "function" ? process.getuid() : 0;
    try {
      fs.rmSync(path.join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${uid}`, this.socket), { force: true });
    } catch {}
  }
}
