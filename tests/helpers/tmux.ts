import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestProgram } from "../contract/tmux.contract.ts";
import { atRunEndStop } from "./cleanup.ts";
import { isAlive } from "./stream.ts";

/** A unique private tmux socket name, whose server is killed and socket removed after the file. */
export function privateSocket(): string {
  const name = `ag-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  atRunEndStop(() => endTmuxServer(name));
  return name;
}

export function killTmuxServer(socket: string): void {
  Bun.spawnSync(["tmux", "-L", socket, "kill-server"], { stderr: "ignore", stdout: "ignore" });
  // kill-server leaves the socket file behind.
  const dir = process.env.TMUX_TMPDIR || "/tmp";
  rmSync(join(dir, `tmux-${process.getuid?.() ?? 0}`, socket), { force: true });
}

/**
 * Kills a server that ran real agents and waits (bounded) until the programs of its panes have
 * exited: an agent writes into its HOME on the way out (Claude Code recreates
 * ~/.claude/plugins/marketplaces), and would recreate a HOME removed before it is gone.
 */
export async function endTmuxServer(socket: string): Promise<void> {
  const listed = tmux(socket, "list-panes", "-a", "-F", "#{pane_pid}");
  const pids = listed.exitCode === 0 ? listed.stdout.split("\n").filter(Boolean).map(Number) : [];
  killTmuxServer(socket);
  const deadline = Date.now() + 5_000;
  while (pids.some(isRunning) && Date.now() < deadline) await Bun.sleep(50);
}

/** Alive and not a zombie (one nobody has reaped yet has exited all the same). */
function isRunning(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

export function tmux(socket: string, ...args: string[]): { exitCode: number; stdout: string } {
  const result = Bun.spawnSync(["tmux", "-L", socket, "-f", "/dev/null", ...args], { stderr: "pipe" });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout.toString() };
}

/**
 * The contract's test program (tests/contract/tmux.contract.ts) as a shell script in `dir`:
 * reads its terminal raw with bracketed paste on, records every byte to `in`, prints whatever
 * is appended to `out`, and exits with the status written to the `exit` FIFO.
 */
export function shellProgram(dir: string): TestProgram {
  const script = [
    'd="$1"',
    "stty raw -echo opost",
    "printf '\\033[?2004h'",
    // A background job's stdin would be /dev/null: hand it the terminal explicitly.
    "exec 3<&0",
    'cat <&3 >"$d/in" & c=$!',
    'tail -n +1 -f "$d/out" & t=$!',
    ': >"$d/ready"',
    'read s <"$d/exit"',
    // Children holding the terminal would keep the pane from being reported dead.
    "kill $c $t 2>/dev/null",
    'exit "$s"',
  ].join("\n");
  writeFileSync(join(dir, "out"), "");
  Bun.spawnSync(["mkfifo", join(dir, "exit")]);
  return {
    command: ["sh", "-c", script, "test-program", dir],
    async ready() {
      const deadline = performance.now() + 5000;
      while (!existsSync(join(dir, "ready"))) {
        if (performance.now() > deadline) throw new Error("test program did not start");
        await Bun.sleep(10);
      }
    },
    async say(_paneId, text) {
      appendFileSync(join(dir, "out"), text);
    },
    async exit(_paneId, status) {
      // Opening a FIFO blocks until the reader is there: let a child wait, not the test.
      await Bun.spawn(["sh", "-c", 'echo "$1" > "$2"', "sh", String(status), join(dir, "exit")]).exited;
    },
    async received() {
      return existsSync(join(dir, "in")) ? readFileSync(join(dir, "in"), "utf8") : "";
    },
  };
}
