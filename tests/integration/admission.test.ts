import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { callApi, startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Admission by memory through ag's real runtime (SQLite file, real tmux on a private socket, HTTP
 * on port 0) with the host's reading injected: 1600 MB available against a 1000 MB reserve leaves
 * room for exactly one more agent (512 MB expected before any was measured). The agents are
 * `sh -c 'sleep 600'`: they never show a prompt box, so each launch holds its room until its
 * session ends, and the host's reading never moves, as with agents that have not grown yet.
 */
const MB = 1024 * 1024;
const SLEEPER = "sh -c 'sleep 600'";
const workDir = tempDir("ag-admission-work-");

type Runtime = Awaited<ReturnType<typeof startTestRuntime>>;
let ag: Runtime;

beforeAll(async () => {
  ag = await startTestRuntime(
    { SVC_MEMORY_RESERVE_MB: "1000", SVC_IDLE_TIMEOUT_MS: "0" },
    { hostMemory: async () => 1600 * MB },
  );
}, 30_000);
afterAll(async () => {
  for (const s of (await api("GET", "/v1/sessions?status=running")).body as Json[])
    await api("DELETE", `/v1/sessions/${s.id}`);
  await ag.drain(100);
  ag.close();
});

async function api(method: string, path: string, body?: unknown) {
  const answer = await callApi<Json>(ag, method, path, body);
  return { ...answer, retryAfter: answer.headers.get("retry-after") };
}

const running = async () => (await api("GET", "/v1/sessions?status=running")).body as Json[];
const admission = async () => (await api("GET", "/v1/admission")).body;

/** `count` creates sent at once; the one admitted, and the refusals. */
async function createAtOnce(count: number) {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      api("POST", "/v1/sessions", { name: `racer-${i}`, workDir, agentCommand: SLEEPER, reuse: false }),
    ),
  );
  return {
    admitted: answers.filter((a) => a.status === 201),
    refused: answers.filter((a) => a.status !== 201),
  };
}

/** Ends a session and waits until its launch no longer holds room. */
async function end(id: string): Promise<void> {
  expect((await api("DELETE", `/v1/sessions/${id}`)).status).toBe(200);
  await until(async () => (await admission()).starting.length === 0, 10_000);
}

describe("concurrent creates against a reserve that fits one", () => {
  for (const count of [4, 20]) {
    test(`${count} at once: exactly one is admitted, the others are refused 503 HOST_MEMORY_LOW`, async () => {
      const { admitted, refused } = await createAtOnce(count);
      expect(admitted).toHaveLength(1);
      expect(refused).toHaveLength(count - 1);
      for (const r of refused) {
        expect([r.status, r.body.code, r.retryAfter]).toEqual([503, "HOST_MEMORY_LOW", "30"]);
        expect(r.body.error).toContain("held for an agent still starting");
      }
      const id = admitted[0]!.body.id as string;
      expect((await running()).map((s) => s.id)).toEqual([id]);
      // The launch holds what its agent is expected to take, less the little `sleep` takes.
      const { starting } = await admission();
      expect(starting).toHaveLength(1);
      expect(starting[0]).toMatchObject({ agent: "claude", sessionId: id });
      expect(starting[0].heldMb).toBeGreaterThan(400);
      await end(id);
    }, 60_000);
  }
});

test("the queue never overshoots either: a batch's second item waits until the first's room is back", async () => {
  let answered = false;
  const batch = api("POST", "/v1/sessions/batch", {
    sessions: ["queued-a", "queued-b"].map((name) => ({
      name,
      workDir,
      agentCommand: SLEEPER,
      reuse: false,
    })),
  }).finally(() => {
    answered = true;
  });
  await until(async () => (await admission()).waiting.length === 1 && (await running()).length === 1, 10_000);
  // A direct create finds no room either: the first item's launch holds it.
  const refused = await api("POST", "/v1/sessions", { workDir, agentCommand: SLEEPER, reuse: false });
  expect([refused.status, refused.body.code]).toEqual([503, "HOST_MEMORY_LOW"]);
  expect(answered).toBe(false);
  const [first] = await running();
  expect((await api("DELETE", `/v1/sessions/${first!.id}`)).status).toBe(200);
  const done = await batch;
  expect([done.status, done.body.failed]).toEqual([200, []]);
  expect((done.body.created as Json[]).map((s) => s.name).sort()).toEqual(["queued-a", "queued-b"]);
  const now = await running();
  expect(now.map((s) => s.name)).toEqual([first!.name === "queued-a" ? "queued-b" : "queued-a"]);
  await end(now[0]!.id);
}, 60_000);

test("a launch that fails gives its room back at once", async () => {
  const failed = await api("POST", "/v1/sessions", {
    agent: "gemini",
    driver: "acp",
    workDir,
    agentCommand: "/nonexistent/ag-test-agent",
    reuse: false,
  });
  expect([failed.status, failed.body.code]).toEqual([503, "AGENT_UNAVAILABLE"]);
  expect((await admission()).starting).toEqual([]);
  const { admitted } = await createAtOnce(2);
  expect(admitted).toHaveLength(1);
  await end(admitted[0]!.body.id);
}, 60_000);
