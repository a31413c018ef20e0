import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * An agent that cannot start, through ag's real runtime (real tmux on a private socket, SQLite
 * file, HTTP on port 0): a create with a prompt whose agent exits before taking it answers at
 * once, AGENT_UNAVAILABLE, with the exit status, the agent's last output and, when its program is
 * not found, how to install it — on both drivers. Before, a terminal agent that had exited was
 * waited for until the prompt's ready timeout (50 s) and then reported as "0 attempts".
 */
const workDir = tempDir("ag-start-failure-work-");
/** Well above what an answer at once takes, well below the delivery's ready timeout. */
const HANG_GUARD_MS = 5_000;

type Runtime = Awaited<ReturnType<typeof startTestRuntime>>;
let ag: Runtime;

beforeAll(async () => {
  ag = await startTestRuntime({ SVC_IDLE_TIMEOUT_MS: "0" });
}, 30_000);
afterAll(async () => {
  await ag.drain(100);
  ag.close();
});

/** POST /v1/sessions with a prompt, and how long the answer took. */
async function create(body: Json): Promise<{ status: number; body: Json; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${ag.url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ag.token()}` },
    body: JSON.stringify({ workDir, prompt: "hello", reuse: false, ...body }),
  });
  return { status: response.status, body: await response.json(), ms: performance.now() - started };
}

const sessions = async () => (await (await fetch(`${ag.url}/v1/sessions`)).json()) as Json[];

describe("a terminal agent (tmux) that exits before its first prompt", () => {
  test("exit 127 with a message: the create fails at once with the status and the pane's last line", async () => {
    const failed = await create({
      name: "exits-127",
      // It lingers a second before it exits: tmux 3.3 closes a pane's terminal when its process
      // exits, and output it had not read by then is lost (docs/sessions.md), as a loaded CI run
      // once showed. What is under test is ag reporting what the dead pane shows.
      agentCommand: "sh -c 'echo first line; echo \"agent-cli: command not found\" >&2; sleep 1; exit 127'",
    });
    expect([failed.status, failed.body.code]).toEqual([503, "AGENT_UNAVAILABLE"]);
    expect(failed.body.error).toContain("exited with status 127 before it took its first prompt");
    expect(failed.body.error).toContain("agent-cli: command not found");
    expect(failed.body.error).not.toContain("Pane is dead");
    expect(failed.ms).toBeLessThan(HANG_GUARD_MS);
    // Recorded as what it was: a session whose agent crashed.
    const session = (await sessions()).find((s) => s.name === "exits-127")!;
    expect(session).toMatchObject({ status: "crashed", endReason: "agent exited with status 127" });
    expect(failed.body.error).toContain(session.id);
  }, 30_000);

  test("an agentCommand that does not exist: the status tmux gives, no output, and what is missing", async () => {
    const failed = await create({ agentCommand: "/nonexistent/ag-test-agent --flag" });
    expect([failed.status, failed.body.code]).toEqual([503, "AGENT_UNAVAILABLE"]);
    expect(failed.body.error).toMatch(
      /exited with status \d+ before it took its first prompt; its terminal shows no output of it/,
    );
    expect(failed.body.error).toContain(
      "/nonexistent/ag-test-agent (the session's agentCommand) is not found",
    );
    expect(failed.ms).toBeLessThan(HANG_GUARD_MS);
  }, 30_000);

  test("the agent's CLI not on its PATH: the install hint", async () => {
    const failed = await create({ agent: "opencode", env: { PATH: "/nonexistent-bin" } });
    expect([failed.status, failed.body.code]).toEqual([503, "AGENT_UNAVAILABLE"]);
    expect(failed.body.error).toContain("before it took its first prompt");
    expect(failed.body.error).toContain(
      "the agent CLI not found (opencode); install it: npm install -g opencode-ai",
    );
    expect(failed.ms).toBeLessThan(HANG_GUARD_MS);
  }, 30_000);
});

describe("a headless agent (acp) that exits before its first prompt", () => {
  test("exit 127 during initialize: the create fails at once with the status and its stderr", async () => {
    const failed = await create({
      agent: "gemini",
      driver: "acp",
      agentCommand: "sh -c 'echo \"acp-agent: cannot start\" >&2; exit 127'",
    });
    expect([failed.status, failed.body.code]).toEqual([503, "AGENT_UNAVAILABLE"]);
    expect(failed.body.error).toContain("status 127");
    expect(failed.body.error).toContain("acp-agent: cannot start");
    expect(failed.ms).toBeLessThan(HANG_GUARD_MS);
  }, 30_000);

  test("a command that does not exist: what is missing", async () => {
    const failed = await create({
      agent: "gemini",
      driver: "acp",
      agentCommand: "/nonexistent/ag-acp-agent",
    });
    expect([failed.status, failed.body.code]).toEqual([503, "AGENT_UNAVAILABLE"]);
    expect(failed.body.error).toContain(
      "/nonexistent/ag-acp-agent (the session's agentCommand) is not found",
    );
    expect(failed.ms).toBeLessThan(HANG_GUARD_MS);
  }, 30_000);
});
