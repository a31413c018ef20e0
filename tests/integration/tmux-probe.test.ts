import { describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTmuxProbe } from "../../src/tmux/probe.ts";
import { tempDir } from "../helpers/temp.ts";
import { privateSocket, tmux } from "../helpers/tmux.ts";

function fakeTmux(script: string): string {
  const path = join(tempDir(), "tmux");
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe("tmux probe against real tmux on a private socket", () => {
  test("no server yet: healthy (it starts with the first session)", async () => {
    const probe = createTmuxProbe({ socket: privateSocket() });
    expect(await probe.check()).toEqual({ healthy: true, error: null });
  });

  test("a running server: healthy", async () => {
    const socket = privateSocket();
    expect(tmux(socket, "new-session", "-d", "-s", "probe").exitCode).toBe(0);
    expect(tmux(socket, "list-sessions", "-F", "#{session_name}").stdout.trim()).toBe("probe");
    expect(await createTmuxProbe({ socket }).check()).toEqual({ healthy: true, error: null });
  });

  test("tmux missing: unhealthy, saying so", async () => {
    const probe = createTmuxProbe({ socket: privateSocket(), binary: join(tempDir(), "no-such-tmux") });
    const result = await probe.check();
    expect(result.healthy).toBe(false);
    expect(result.error).toContain("tmux not found");
  });

  test("a tmux that fails: unhealthy with its first line of stderr", async () => {
    const probe = createTmuxProbe({
      socket: privateSocket(),
      binary: fakeTmux('echo "server exited unexpectedly" >&2; exit 1'),
    });
    expect(await probe.check()).toEqual({ healthy: false, error: "server exited unexpectedly" });
  });

  test("a tmux that hangs: unhealthy after the timeout", async () => {
    const probe = createTmuxProbe({
      socket: privateSocket(),
      binary: fakeTmux("exec sleep 10"),
      timeoutMs: 200,
    });
    const started = performance.now();
    expect(await probe.check()).toEqual({ healthy: false, error: "tmux did not answer within 200 ms" });
    expect(performance.now() - started).toBeLessThan(5000);
  });

  test("a burst of checks shares one tmux run, and the result is cached briefly", async () => {
    const counter = join(tempDir(), "count");
    const probe = createTmuxProbe({
      socket: privateSocket(),
      binary: fakeTmux(`echo x >> ${counter}; exit 0`),
      cacheMs: 60_000,
    });
    await Promise.all([probe.check(), probe.check(), probe.check()]);
    await probe.check();
    expect((await Bun.file(counter).text()).trim().split("\n")).toHaveLength(1);
  });
});
