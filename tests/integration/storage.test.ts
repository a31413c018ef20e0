import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ag, cliEnv } from "../helpers/cli.ts";
import { callApi, startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { mountSmallDisk, type SmallDisk } from "../helpers/tmpfs.ts";
import { privateSocket, tmux } from "../helpers/tmux.ts";
import { until } from "../helpers/until.ts";

/**
 * Storage faults with the real runtime: the state directory on a 2 MiB tmpfs filled to 100 %,
 * the state database removed under a running ag, and what a restart finds then. Real tmux on a
 * private socket; a small shell program is each session's agent.
 */

type Json = Record<string, unknown> & { code?: string; status?: string };

const running: TestRuntime[] = [];
const disks: SmallDisk[] = [];

afterEach(async () => {
  for (const runtime of running.splice(0)) await stop(runtime);
  for (const disk of disks.splice(0)) disk.unmount();
});

async function stop(runtime: TestRuntime): Promise<void> {
  await runtime.drain(100);
  runtime.close();
}

async function start(env: Record<string, string>): Promise<TestRuntime> {
  const runtime = await startTestRuntime({ SVC_RATE_LIMIT_PER_MIN: "0", ...env });
  running.push(runtime);
  return runtime;
}

const api = (runtime: TestRuntime, method: string, path: string, body?: unknown) =>
  callApi<Json>(runtime, method, path, body);

function agentScript(): string {
  const path = join(tempDir(), "agent.sh");
  writeFileSync(
    path,
    ["#!/bin/sh", "printf 'agent ready\\n'", "while IFS= read -r line; do :; done"].join("\n"),
  );
  chmodSync(path, 0o755);
  return path;
}

/** A session running the script, its screen drawn. */
async function session(runtime: TestRuntime): Promise<string> {
  const created = await api(runtime, "POST", "/v1/sessions", {
    workDir: tempDir(),
    agentCommand: agentScript(),
    name: `store-${crypto.randomUUID().slice(0, 8)}`,
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await until(
    async () =>
      String((await api(runtime, "GET", `/v1/sessions/${id}/pane`)).body.content).includes("agent ready"),
    10_000,
  );
  return id;
}

/** The panes of ag's tmux server tagged with `id`. */
function panesTagged(socket: string, id: string): string[] {
  const listed = tmux(socket, "list-panes", "-a", "-F", "#{pane_id} #{@svc_session_id}");
  return listed.stdout
    .split("\n")
    .filter((line) => line.endsWith(` ${id}`))
    .map((line) => line.split(" ")[0]!);
}

async function health(runtime: TestRuntime): Promise<Json & { storage: Json }> {
  return (await api(runtime, "GET", "/v1/health")).body as Json & { storage: Json };
}

describe("the state directory full (2 MiB tmpfs filled to 100 %)", () => {
  test("writes answer 507 STORAGE_FULL, health is degraded, a kill leaves the session running and recorded; freeing space heals it", async () => {
    const disk = mountSmallDisk("2m");
    disks.push(disk);
    const socket = privateSocket();
    const runtime = await start({ SVC_STATE_DIR: join(disk.dir, "state"), SVC_TMUX_SOCKET: socket });
    const id = await session(runtime);
    expect((await health(runtime)).storage).toMatchObject({ healthy: true, code: null });

    disk.fill();
    const killed = await api(runtime, "DELETE", `/v1/sessions/${id}`);
    expect(killed.status).toBe(507);
    expect(killed.body).toMatchObject({ code: "STORAGE_FULL", statusCode: 507 });
    expect(killed.body.error).toContain("SQLITE_FULL");
    const template = await api(runtime, "POST", "/v1/templates", { name: "t", workDir: tempDir() });
    expect([template.status, template.body.code]).toEqual([507, "STORAGE_FULL"]);
    const key = await api(runtime, "POST", "/v1/auth/keys", { name: "k", scopes: ["sessions:read"] });
    expect([key.status, key.body.code]).toEqual([507, "STORAGE_FULL"]);

    // Nothing half-happened: the session runs, is recorded as running, its window is there.
    const after = await api(runtime, "GET", `/v1/sessions/${id}`);
    expect(after.body.status).not.toBe("killed");
    expect(after.body.endedAt).toBeNull();
    expect(panesTagged(socket, id)).toHaveLength(1);
    expect(String((await api(runtime, "GET", `/v1/sessions/${id}/pane`)).body.content)).toContain(
      "agent ready",
    );
    const degraded = await health(runtime);
    expect(degraded.status).toBe("degraded");
    expect(degraded.storage).toMatchObject({ healthy: false, code: "STORAGE_FULL" });
    const audit = (await api(runtime, "GET", "/v1/audit")).body as unknown as Array<{ action: string }>;
    expect(audit.filter((r) => r.action === "session.kill" || r.action === "key.create")).toEqual([]);
    // Still nothing done while the disk stays full.
    expect((await api(runtime, "DELETE", `/v1/sessions/${id}`)).status).toBe(507);
    expect(panesTagged(socket, id)).toHaveLength(1);

    disk.free();
    const healed = await health(runtime);
    expect([healed.status, healed.storage.healthy]).toEqual(["ok", true]);
    const killedNow = await api(runtime, "DELETE", `/v1/sessions/${id}`);
    expect([killedNow.status, killedNow.body.status]).toEqual([200, "killed"]);
    await until(() => panesTagged(socket, id).length === 0, 5000);
    const recorded = (await api(runtime, "GET", "/v1/audit")).body as unknown as Array<Json>;
    expect(recorded[0]).toMatchObject({ action: "session.kill", target: id, outcome: "success" });
  }, 30_000);

  test("ag does not start on a full state directory: STORAGE_FULL, saying so", async () => {
    const disk = mountSmallDisk("2m");
    disks.push(disk);
    const stateDir = join(disk.dir, "state");
    // Once with room (the database exists), then again on the full disk.
    await start({ SVC_STATE_DIR: stateDir });
    await stop(running.pop()!);
    disk.fill();
    const refused = await startTestRuntime({ SVC_STATE_DIR: stateDir }).then(
      (runtime) => {
        running.push(runtime);
        return null;
      },
      (error: { code?: string; message: string }) => error,
    );
    expect(refused?.code).toBe("STORAGE_FULL");
    expect(refused?.message).toContain(stateDir);
    expect(refused?.message).toContain("cannot start");
  });
});

describe("the state database removed while ag runs", () => {
  test("writes are refused with STORAGE_REPLACED and health says so; after a restart the agent left running is reported and can be ended", async () => {
    const socket = privateSocket();
    const stateDir = join(tempDir("ag-home-"), ".svc");
    const first = await start({ SVC_STATE_DIR: stateDir, SVC_TMUX_SOCKET: socket });
    const id = await session(first);

    rmSync(join(stateDir, "state.db"));
    // Noticed by the watch on the state directory, without a write.
    await until(async () => (await health(first)).storage.code === "STORAGE_REPLACED", 5000);
    expect((await health(first)).status).toBe("degraded");
    const template = await api(first, "POST", "/v1/templates", { name: "t", workDir: tempDir() });
    expect([template.status, template.body.code]).toEqual([503, "STORAGE_REPLACED"]);
    expect(template.body.error).toContain("removed or replaced");
    const killed = await api(first, "DELETE", `/v1/sessions/${id}`);
    expect([killed.status, killed.body.code]).toEqual([503, "STORAGE_REPLACED"]);
    expect(panesTagged(socket, id)).toHaveLength(1);
    await stop(running.pop()!);

    const second = await start({ SVC_STATE_DIR: stateDir, SVC_TMUX_SOCKET: socket });
    expect((await api(second, "GET", "/v1/sessions")).body).toEqual([] as never);
    const untracked = await api(second, "GET", "/v1/untracked");
    expect(untracked.status).toBe(200);
    expect(untracked.body.agents).toEqual([
      expect.objectContaining({ sessionId: id, driver: "tmux", dead: false, pid: expect.any(Number) }),
    ]);
    await until(() => second.logs.some((line) => line.includes("without a record") && line.includes(id)));
    expect((await api(second, "DELETE", "/v1/untracked/no-such-id")).body.code).toBe("NOT_FOUND");
    // `ag doctor` names it, and ends it when asked.
    const port = String(second.server.port);
    // The CLI on this machine, with the server's state folder: it finds ag's token there.
    const env = { ...cliEnv(), SVC_STATE_DIR: stateDir };
    const doctor = await ag(["doctor", "--json", "--port", port], undefined, env);
    const untrackedCheck = (out: string) =>
      (JSON.parse(out) as { checks: Array<{ name: string; status: string; detail: string }> }).checks.find(
        (c) => c.name === "untracked agents",
      );
    expect(untrackedCheck(doctor.stdout)).toMatchObject({
      status: "warn",
      detail: expect.stringContaining(id),
    });
    const ended = await ag(["doctor", "--json", "--end-untracked", "--port", port], undefined, env);
    expect(untrackedCheck(ended.stdout)).toEqual({ name: "untracked agents", status: "ok", detail: "none" });
    expect(panesTagged(socket, id)).toEqual([]);
    expect((await api(second, "GET", "/v1/untracked")).body.agents).toEqual([]);
    const audit = (await api(second, "GET", "/v1/audit")).body as unknown as Array<Json>;
    expect(audit[0]).toMatchObject({ action: "session.untracked.end", target: id, outcome: "success" });
  }, 30_000);

  test("after a restart the agent left running is adopted: a record from its pane, followed, ended like any session", async () => {
    const socket = privateSocket();
    const stateDir = join(tempDir("ag-home-"), ".svc");
    const first = await start({ SVC_STATE_DIR: stateDir, SVC_TMUX_SOCKET: socket });
    const id = await session(first);
    const { workDir } = (await api(first, "GET", `/v1/sessions/${id}`)).body as { workDir: string };
    rmSync(join(stateDir, "state.db"));
    await until(async () => (await health(first)).storage.code === "STORAGE_REPLACED", 5000);
    await stop(running.pop()!);

    const second = await start({ SVC_STATE_DIR: stateDir, SVC_TMUX_SOCKET: socket });
    const adopt = (body?: unknown, target = id) => api(second, "POST", `/v1/untracked/${target}/adopt`, body);
    // The script is no agent CLI ag knows: ag says what runs there and how to go on.
    const unknown = await adopt();
    expect([unknown.status, unknown.body.code]).toEqual([409, "CONFLICT"]);
    expect(unknown.body.error).toContain("agent.sh");
    expect(unknown.body.error).toContain('{"agent": …}');
    expect((await adopt({ agent: "no-such-agent" })).body.code).toBe("UNKNOWN_AGENT");
    expect((await adopt({ workdir: "/" })).body.code).toBe("VALIDATION_ERROR");
    expect((await adopt({}, "no-such-id")).body.code).toBe("NOT_FOUND");
    expect((await api(second, "GET", "/v1/sessions")).body).toEqual([] as never);

    // Named, it is adopted: workDir from the agent's working directory, in its own pane. Twice at
    // once: one adoption, the other refused.
    const [adopted, twice] = await Promise.all([
      adopt({ agent: "claude", name: "found-again" }),
      adopt({ agent: "claude", name: "found-again" }),
    ]);
    expect(adopted.status).toBe(201);
    expect([twice.status, twice.body.code]).toEqual([409, "CONFLICT"]);
    const pane = panesTagged(socket, id)[0];
    expect(adopted.body.session).toMatchObject({
      id,
      name: "found-again",
      agent: "claude",
      workDir,
      driver: "tmux",
    });
    // Its command line (ag's launch of it) says its permission mode; its hook secret is in its folder.
    expect(adopted.body.warnings).toEqual([]);
    expect((await api(second, "GET", "/v1/untracked")).body.agents).toEqual([]);
    expect(((await api(second, "GET", "/v1/sessions")).body as unknown as Json[]).map((s) => s.id)).toEqual([
      id,
    ]);
    expect(String((await api(second, "GET", `/v1/sessions/${id}/pane`)).body.content)).toContain(
      "agent ready",
    );
    expect([(await adopt()).status, (await adopt()).body.code]).toEqual([409, "CONFLICT"]);
    const audit = (await api(second, "GET", "/v1/audit")).body as unknown as Array<Json>;
    expect(
      audit.find((a) => a.action === "session.untracked.adopt" && a.outcome === "success"),
    ).toMatchObject({
      target: id,
      outcome: "success",
    });
    // Followed like any session: a kill closes its window.
    expect((await api(second, "DELETE", `/v1/sessions/${id}`)).status).toBe(200);
    await until(() => panesTagged(socket, id).length === 0, 5000);
    expect(pane).toMatch(/^%\d+$/);
  }, 30_000);
});
