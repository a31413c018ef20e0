import { afterAll } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";

const sockets: string[] = [];

afterAll(() => {
  for (const socket of sockets.splice(0)) killTmuxServer(socket);
});

/** A unique private tmux socket name, whose server is killed and socket removed after the file. */
export function privateSocket(): string {
  const name = `ag-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  sockets.push(name);
  return name;
}

export function killTmuxServer(socket: string): void {
  Bun.spawnSync(["tmux", "-L", socket, "kill-server"], { stderr: "ignore", stdout: "ignore" });
  // kill-server leaves the socket file behind.
  const dir = process.env.TMUX_TMPDIR || "/tmp";
  rmSync(join(dir, `tmux-${process.getuid?.() ?? 0}`, socket), { force: true });
}

export function tmux(socket: string, ...args: string[]): { exitCode: number; stdout: string } {
  const result = Bun.spawnSync(["tmux", "-L", socket, "-f", "/dev/null", ...args], { stderr: "pipe" });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout.toString() };
}
