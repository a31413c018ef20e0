import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createStrayReaper } from "../../src/host/index.ts";
import { until } from "../helpers/until.ts";

const alive = (pid: number) => {
  try {
    // A zombie (exited, not yet reaped by its parent) is gone for our purpose.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

/** A killed session's leftovers (host/strays.ts), on real processes. */
describe("the stray reaper", () => {
  test("marks a tree, and once its root is gone ends what outlived it, even in a session of its own", async () => {
    // A shell that starts a command under setsid (as Claude Code runs Bash), then waits.
    const shell = Bun.spawn(["bash", "-c", "setsid sleep 311 & echo $!; wait"], { stdout: "pipe" });
    const reader = shell.stdout.getReader();
    const { value } = await reader.read();
    const stray = Number(new TextDecoder().decode(value).trim());
    const reaper = createStrayReaper({ graceMs: 200 });
    let marks: Awaited<ReturnType<typeof reaper.mark>> = [];
    await until(() => alive(stray));
    for (let i = 0; i < 50 && !marks.some((m) => m.pid === stray); i++) {
      marks = await reaper.mark(shell.pid);
      await Bun.sleep(20);
    }
    expect(marks.map((m) => m.pid)).toEqual(expect.arrayContaining([shell.pid, stray]));
    shell.kill("SIGKILL"); // the agent dies; its command does not
    await shell.exited;
    expect(alive(stray)).toBe(true);
    expect(await reaper.end(marks)).toBe(1);
    await until(() => !alive(stray), 3000);
    expect(await reaper.end(marks)).toBe(0); // nothing left: nothing signalled
  });

  test("a pid now held by another process (another start time) is never signalled", async () => {
    const other = Bun.spawn(["sleep", "312"]);
    const signalled: number[] = [];
    const reaper = createStrayReaper({ graceMs: 10, kill: (pid) => void signalled.push(pid) });
    const [mark] = await reaper.mark(other.pid);
    expect(mark?.pid).toBe(other.pid);
    expect(await reaper.end([{ pid: other.pid, startTicks: mark!.startTicks - 1 }])).toBe(0);
    expect(signalled).toEqual([]);
    expect(await reaper.end([mark!])).toBe(1);
    expect(signalled).toEqual([other.pid, other.pid]); // SIGTERM, then SIGKILL (the fake kill ends nothing)
    other.kill();
    await other.exited;
  });
});
