import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { Health } from "../../src/health/service.ts";
import { AgError } from "../../src/shared/errors.ts";
import { instanceFile } from "../../src/store/instance.ts";
import { startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * The real tmux, except that the health probe's `list-sessions` answers after `seconds`: makes
 * GET /v1/health a slow, real, in-flight request.
 */
function slowTmux(seconds: number): string {
  const path = join(tempDir(), "tmux");
  const real = Bun.which("tmux");
  writeFileSync(
    path,
    `#!/bin/sh\ncase "$*" in *list-sessions*) sleep ${seconds};; esac\nexec ${real} "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

async function startError(run: () => Promise<unknown>): Promise<AgError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgError);
    return error as AgError;
  }
  throw new Error("expected start-up to fail");
}

describe("the runtime over real HTTP", () => {
  test("serves health with a live tmux probe, records where it listens", async () => {
    const runtime = await startTestRuntime();
    try {
      const response = await fetch(`${runtime.url}/v1/health`);
      expect(response.status).toBe(200);
      const health = await response.json();
      expect(Value.Check(Health, health)).toBe(true);
      expect(health.tmux).toEqual({ healthy: true, error: null });
      const info = JSON.parse(await Bun.file(instanceFile(runtime.stateDir)).text());
      expect(info).toMatchObject({ pid: process.pid, port: runtime.server.port, baseUrl: runtime.url });
    } finally {
      await runtime.drain(100);
      runtime.close();
    }
    expect(existsSync(instanceFile(runtime.stateDir))).toBe(false);
  });

  test("a body declared over 2 MiB gets a 413 envelope", async () => {
    const runtime = await startTestRuntime();
    try {
      const response = await fetch(`${runtime.url}/v1/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: "x".repeat(3 * 1024 * 1024) }),
      });
      expect(response.status).toBe(413);
      expect((await response.json()).code).toBe("PAYLOAD_TOO_LARGE");
    } finally {
      await runtime.drain(100);
      runtime.close();
    }
  });

  test("a second ag on the same state directory fails with a clear message", async () => {
    const first = await startTestRuntime();
    try {
      const error = await startError(() => startTestRuntime({ SVC_STATE_DIR: first.stateDir }));
      expect(error.code).toBe("STATE_DIR_LOCKED");
      expect(error.message).toContain(first.stateDir);
      expect(error.message).toContain(`port ${first.server.port}`);
    } finally {
      await first.drain(100);
      first.close();
    }
  });

  test("a second ag on the same port fails with a clear message and leaves its state directory free", async () => {
    const first = await startTestRuntime();
    const otherState = join(tempDir(), "state");
    try {
      const error = await startError(() =>
        startTestRuntime({ SVC_STATE_DIR: otherState, SVC_PORT: String(first.server.port) }),
      );
      expect(error.code).toBe("PORT_IN_USE");
      expect(error.message).toContain(`port ${first.server.port}`);
      expect(existsSync(instanceFile(otherState))).toBe(false);
    } finally {
      await first.drain(100);
      first.close();
    }
  });
});

describe("what start-up says about where ag listens (real listener, port 0)", () => {
  const notes = (logs: string[]) =>
    logs
      .map((l) => JSON.parse(l) as { level: string; msg: string })
      .filter((r) => r.msg.includes("listens on"));

  test("127.0.0.1: nothing beyond the listening URL, which answers", async () => {
    const runtime = await startTestRuntime({ SVC_HOST: "127.0.0.1" });
    try {
      expect(runtime.url).toBe(`http://127.0.0.1:${runtime.server.port}`);
      expect(notes(runtime.logs)).toEqual([]);
      expect((await fetch(`${runtime.url}/v1/health`)).status).toBe(200);
    } finally {
      await runtime.drain(100);
      runtime.close();
    }
  });

  test("0.0.0.0 without a token: an info line names all interfaces, the very URL that answers here and the file of the token ag generated, never the token", async () => {
    const runtime = await startTestRuntime({ SVC_HOST: "0.0.0.0" });
    try {
      const port = runtime.server.port;
      const file = join(runtime.stateDir, "auth-token");
      expect(runtime.url).toBe(`http://127.0.0.1:${port}`);
      const [line, ...more] = notes(runtime.logs);
      expect(more).toEqual([]);
      expect(line!.level).toBe("info");
      expect(line!.msg).toStartWith(
        `ag listens on all interfaces (0.0.0.0, port ${port}): ${runtime.url} from this machine`,
      );
      expect(line!.msg).toContain(`every request needs the token ag generated in ${file}`);
      expect(line!.msg).not.toContain("http://0.0.0.0");
      expect(runtime.logs.join("\n")).not.toContain(runtime.token());
      expect((await fetch(`${runtime.url}/v1/health`)).status).toBe(200);
      expect((await fetch(`${runtime.url}/v1/sessions`)).status).toBe(401);
    } finally {
      await runtime.drain(100);
      runtime.close();
    }
  });

  test("0.0.0.0 with SVC_ALLOW_UNAUTHENTICATED_NETWORK: the loud warning names the setting, all interfaces and the URL that answers here", async () => {
    const runtime = await startTestRuntime({ SVC_HOST: "0.0.0.0", SVC_ALLOW_UNAUTHENTICATED_NETWORK: "1" });
    try {
      const port = runtime.server.port;
      const [warning, ...more] = notes(runtime.logs);
      expect(more).toEqual([]);
      expect(warning!.level).toBe("warn");
      expect(warning!.msg).toStartWith(
        `!!! ag listens on all interfaces (0.0.0.0, port ${port}) WITHOUT authentication (SVC_ALLOW_UNAUTHENTICATED_NETWORK / allowUnauthenticatedNetwork is on)`,
      );
      expect(warning!.msg).toContain(`use ${runtime.url}.`);
      expect((await fetch(`${runtime.url}/v1/sessions`)).status).toBe(200);
    } finally {
      await runtime.drain(100);
      runtime.close();
    }
  });

  test("0.0.0.0 with a token: an info line, no warning", async () => {
    const runtime = await startTestRuntime({ SVC_HOST: "0.0.0.0", SVC_AUTH_TOKEN: "t0ken-for-the-banner" });
    try {
      const [line, ...more] = notes(runtime.logs);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ level: "info" });
      expect(line!.msg).toContain(`${runtime.url} from this machine`);
    } finally {
      await runtime.drain(100);
      runtime.close();
    }
  });
});

describe("draining", () => {
  test("a request in flight completes; new connections are refused", async () => {
    const runtime = await startTestRuntime({}, { tmuxBinary: slowTmux(1) });
    const inFlight = fetch(`${runtime.url}/v1/health`);
    await Bun.sleep(150);
    expect(runtime.server.inFlight()).toBe(1);
    const started = performance.now();
    const drained = runtime.drain(5000);
    await Bun.sleep(50);
    await expect(fetch(`${runtime.url}/v1/health`)).rejects.toThrow();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(await drained).toBe(true);
    expect(performance.now() - started).toBeLessThan(3000);
    runtime.close();
  });

  test("past the grace period the remaining connections are closed", async () => {
    const runtime = await startTestRuntime({}, { tmuxBinary: slowTmux(3) });
    const inFlight = fetch(`${runtime.url}/v1/health`).then(
      (r) => r.status,
      () => "closed",
    );
    await Bun.sleep(150);
    const started = performance.now();
    expect(await runtime.drain(200)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(await inFlight).toBe("closed");
    runtime.close();
  });
});

describe("state that outlives a restart", () => {
  test("memory in its own persistPath file, templates and the audit chain in state.db", async () => {
    const home = tempDir("ag-home-");
    const persistPath = join(home, "memory", "bridge.db");
    const configFile = { memoryBridge: { persistPath } };
    const first = await startTestRuntime({}, { home, configFile });
    // The token ag generated, as the CLI sends it; the second start reuses it.
    const auth = { "content-type": "application/json", authorization: `Bearer ${first.token()}` };
    try {
      const stored = await fetch(`${first.url}/v1/memory`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ key: "project/style", value: "tabs" }),
      });
      expect(stored.status).toBe(201);
      const template = await fetch(`${first.url}/v1/templates`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "kept", workDir: home }),
      });
      expect(template.status).toBe(201);
    } finally {
      await first.drain(100);
      first.close();
    }
    expect(existsSync(persistPath)).toBe(true);
    const second = await startTestRuntime({}, { home, configFile });
    try {
      const entry = await (await fetch(`${second.url}/v1/memory/project/style`)).json();
      expect(entry).toMatchObject({ key: "project/style", value: "tabs" });
      const templates = await (await fetch(`${second.url}/v1/templates`)).json();
      expect(templates.map((t: { name: string }) => t.name)).toEqual(["kept"]);
      const audit = await (await fetch(`${second.url}/v1/audit`)).json();
      expect(audit[0]).toMatchObject({ action: "template.create", actor: "local", ip: "127.0.0.1" });
      expect(await (await fetch(`${second.url}/v1/audit/verify`)).json()).toEqual({
        ok: true,
        checked: 1,
        brokenAt: null,
      });
      // The memory lives in its own file, not in state.db.
      const { Database } = await import("bun:sqlite");
      const state = new Database(join(second.stateDir, "state.db"), { readonly: true });
      expect(state.query("SELECT count(*) AS n FROM memory").get()).toEqual({ n: 0 });
      state.close();
    } finally {
      await second.drain(100);
      second.close();
    }
  });
});
