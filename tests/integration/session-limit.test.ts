import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { callApi, startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The session limit (SVC_MAX_SESSIONS) through ag's real runtime (SQLite file, real tmux on a
 * private socket, HTTP on port 0), with creates sent at once over real HTTP. Admission by memory
 * is off (SVC_MEMORY_RESERVE_MB=0), so the limit alone decides. The agents are
 * `sh -c 'sleep 600'`: a window that stays, with nothing to wait for. A create counts from its
 * check on, not from the moment its record is written (after a git lookup and the agent's
 * version), so the creates in flight cannot all pass the same count.
 */
const SLEEPER = "sh -c 'sleep 600'";
const workDir = tempDir("ag-session-limit-work-");

for (const limit of [1, 3]) {
  describe(`maxSessions = ${limit}`, () => {
    let ag: Awaited<ReturnType<typeof startTestRuntime>>;
    beforeAll(async () => {
      ag = await startTestRuntime({
        SVC_MAX_SESSIONS: String(limit),
        SVC_MEMORY_RESERVE_MB: "0",
        SVC_IDLE_TIMEOUT_MS: "0",
      });
    }, 30_000);
    afterAll(async () => {
      await endAll();
      await ag.drain(100);
      ag.close();
    });

    const api = (method: string, path: string, body?: unknown) => callApi<Json>(ag, method, path, body);
    const running = async () => (await api("GET", "/v1/sessions?status=running")).body as Json[];
    async function endAll() {
      for (const s of await running()) expect((await api("DELETE", `/v1/sessions/${s.id}`)).status).toBe(200);
    }

    for (const count of [4, 20]) {
      test(`${count} creates at once: exactly ${limit} admitted, the rest 429 SESSION_LIMIT_REACHED`, async () => {
        const answers = await Promise.all(
          Array.from({ length: count }, (_, i) =>
            api("POST", "/v1/sessions", { name: `racer-${i}`, workDir, agentCommand: SLEEPER, reuse: false }),
          ),
        );
        const admitted = answers.filter((a) => a.status === 201);
        const refused = answers.filter((a) => a.status !== 201);
        expect(admitted).toHaveLength(limit);
        for (const r of refused)
          expect([r.status, r.body.code, r.body.error]).toEqual([
            429,
            "SESSION_LIMIT_REACHED",
            `the limit of ${limit} concurrent sessions is reached`,
          ]);
        expect((await running()).map((s) => s.id).sort()).toEqual(admitted.map((a) => a.body.id).sort());
        // Once they end, the slots are free again: the count is of what runs, not of what ran.
        await endAll();
        const again = await api("POST", "/v1/sessions", { workDir, agentCommand: SLEEPER, reuse: false });
        expect(again.status).toBe(201);
        await endAll();
      }, 60_000);
    }

    test("a batch over the limit: the items beyond it fail with the code, the others start", async () => {
      const batch = await api("POST", "/v1/sessions/batch", {
        sessions: Array.from({ length: limit + 2 }, (_, i) => ({
          name: `batch-${i}`,
          workDir,
          agentCommand: SLEEPER,
          reuse: false,
        })),
      });
      expect(batch.status).toBe(200);
      expect(batch.body.created).toHaveLength(limit);
      expect((batch.body.failed as Json[]).map((f) => f.code)).toEqual([
        "SESSION_LIMIT_REACHED",
        "SESSION_LIMIT_REACHED",
      ]);
      expect(await running()).toHaveLength(limit);
      await endAll();
    }, 60_000);
  });
}
