import { readFileSync } from "node:fs";
import { readProcStat } from "../../src/store/instance.ts";

/**
 * A process killed with SIGKILL whose parent never reaps it: a shell starts `command` in the
 * background and then execs `sleep`, which never waits for children. Resolves once /proc shows
 * the killed process in state `Z`. `cleanup` ends the parent, after which init reaps the zombie.
 */
export async function spawnZombie(
  command: string[] = ["sleep", "300"],
  env?: Record<string, string>,
): Promise<{ pid: number; parent: ReturnType<typeof Bun.spawn>; cleanup(): void }> {
  const parent = Bun.spawn(["sh", "-c", '"$@" >/dev/null 2>&1 & echo $!; exec sleep 300', "sh", ...command], {
    stdout: "pipe",
    stderr: "ignore",
    env,
  });
  const reader = (parent.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the zombie's parent exited early");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const pid = Number(text.trim());
  // Only once the shell has become `sleep` is nobody left to reap the child.
  for (let i = 0; i < 200 && readProcComm(parent.pid) !== "sleep"; i++) await Bun.sleep(10);
  return { pid, parent, cleanup: () => parent.kill("SIGKILL") };
}

/** Kills `pid` with SIGKILL and waits until /proc shows it as a zombie. */
export async function killToZombie(pid: number): Promise<void> {
  process.kill(pid, "SIGKILL");
  for (let i = 0; i < 100; i++) {
    if (readProcStat(pid)?.state === "Z") return;
    await Bun.sleep(10);
  }
  throw new Error(`pid ${pid} did not become a zombie`);
}

function readProcComm(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}
