import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { AgError } from "../../src/shared/errors.ts";
import { instanceFile } from "../../src/store/instance.ts";
import { callApi, startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

/**
 * The composition root as one disposable stack (src/runtime.ts): each resource registers its
 * disposer when it is made, and a stop and a failed start unwind the same stack. Real runtime:
 * SQLite file, real tmux on a private socket, HTTP on 127.0.0.1.
 */
const MB = 1024 * 1024;
/** An agent that never shows a prompt box: its launch holds its room until it ends. */
const SLEEPER = "sh -c 'sleep 600'";

test("a normal stop closes the host guard: a create waiting for memory is told ag is stopping", async () => {
  // 1600 MB available against a 1000 MB reserve: room for one agent; a batch's second item waits.
  const ag = await startTestRuntime(
    { SVC_MEMORY_RESERVE_MB: "1000", SVC_IDLE_TIMEOUT_MS: "0" },
    { hostMemory: async () => 1600 * MB },
  );
  const workDir = tempDir("ag-disposal-work-");
  const batch = ag.sessions.createBatch(
    ["held", "queued"].map((name) => ({ name, workDir, agentCommand: SLEEPER, reuse: false })),
  );
  const count = async (path: string, field?: string) => {
    const body = (await callApi(ag, "GET", path)).body;
    return ((field ? body[field] : body) as unknown[]).length;
  };
  // One runs (its window goes with the test's tmux server), the other waits for its room.
  await until(
    async () =>
      (await count("/v1/admission", "waiting")) === 1 && (await count("/v1/sessions?status=running")) === 1,
    10_000,
  );
  await ag.drain(100);
  ag.close();
  // Before the stack, a stop left the host's queue open: this create waited out its own timeout.
  const outcome = await Promise.race([batch, Bun.sleep(5_000).then(() => "still waiting" as const)]);
  expect(outcome).not.toBe("still waiting");
  if (outcome === "still waiting") return;
  // (The one that ran may be cut short by the stop too: only the waiting one is the point.)
  expect(outcome.failed).toContainEqual(
    expect.objectContaining({ index: 1, code: "HOST_MEMORY_LOW", error: "ag is stopping" }),
  );
}, 30_000);

test("a start that fails late (its port is taken) disposes all it made: the state folder is free again", async () => {
  const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
  const stateDir = join(tempDir("ag-disposal-home-"), ".svc");
  try {
    const failed = await startTestRuntime({ SVC_PORT: String(taken.port), SVC_STATE_DIR: stateDir }).then(
      () => null,
      (error: unknown) => error,
    );
    // The bind, the last thing made: everything else was made before it.
    expect(failed).toBeInstanceOf(AgError);
    expect((failed as AgError).code).toBe("PORT_IN_USE");
    // The instance lock is released and the database closed: a new ag starts on the same folder.
    expect(existsSync(instanceFile(stateDir))).toBe(false);
    const again = await startTestRuntime({ SVC_STATE_DIR: stateDir });
    try {
      expect((await fetch(`${again.url}/v1/health`)).status).toBe(200);
    } finally {
      await again.drain(100);
      again.close();
    }
  } finally {
    taken.stop(true);
  }
}, 30_000);
