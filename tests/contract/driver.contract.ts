import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * What every session driver must do, as ag's API shows it, whichever driver runs the session
 * (tmux: an agent CLI in a terminal; acp: an agent over the Agent Client Protocol): a session
 * launched with a prompt delivers it once and its turn ends idle with the reply readable and in
 * the transcript; a permission the agent asks for waits as permission_prompt and, approved, the
 * tool runs; an interrupt ends a running turn, idle again; the session's health names its live
 * agent and pid; a kill ends it, its agent with it. Run on tmux with the real Claude Code and on
 * acp with the real OpenCode (tests/e2e/driver-contract.test.ts), and on acp with the fake ACP
 * agent (tests/integration/driver-contract.test.ts).
 */
export interface DriverUnderContract {
  /** Who: the describe's title. */
  name: string;
  driver: "tmux" | "acp";
  /** A request to the ag the sessions run in. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  /** The folder the sessions work in. */
  workDir: string;
  /** What POST /v1/sessions gets besides workDir and prompt: agent, driver, agentCommand… */
  session: Record<string, unknown>;
  /** A prompt whose reply contains `reply`. */
  hello: { prompt: string; reply: string };
  /** A prompt that makes the agent ask to create the file NAME in its workDir (a tool it must be allowed). */
  permission(name: string): string;
  /** A prompt whose turn goes on for seconds (until interrupted). */
  slow: string;
  /** The slow turn is under way (the model was asked, output streams): an interrupt means it. */
  underWay?(): Promise<boolean>;
  /** A turn's time limit. */
  turnMs: number;
}

export function driverContract(subject: DriverUnderContract): void {
  describe(`${subject.name}: the driver contract (${subject.driver})`, () => {
    let id = "";
    const { api, turnMs } = subject;
    const session = async () => (await api("GET", `/v1/sessions/${id}`)).body;
    const reach = async (status: string): Promise<Json> => {
      const deadline = Date.now() + turnMs;
      let last = await session();
      while (last.status !== status) {
        if (Date.now() > deadline)
          throw new Error(`session ${id}: wanted ${status}, still ${last.status} after ${turnMs} ms`);
        await Bun.sleep(50);
        last = await session();
      }
      return last;
    };
    const send = async (text: string) => (await api("POST", `/v1/sessions/${id}/send`, { text })).body;

    afterAll(async () => {
      if (id) await api("DELETE", `/v1/sessions/${id}`);
    });

    test(
      "launch with a prompt: delivered once, the turn ends idle, /read and the transcript have the reply",
      async () => {
        const created = await api("POST", "/v1/sessions", {
          ...subject.session,
          workDir: subject.workDir,
          prompt: subject.hello.prompt,
          reuse: false,
        });
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject({
          driver: subject.driver,
          promptDelivery: { delivered: true, attempts: 1 },
        });
        id = created.body.id;
        await reach("idle");
        expect((await api("GET", `/v1/sessions/${id}/read`)).body.output).toContain(subject.hello.reply);
        const transcript = (await api("GET", `/v1/sessions/${id}/transcript/cursor?limit=200`)).body
          .messages as Json[];
        const prompts = transcript.filter((m) => m.role === "user" && m.kind === "prompt").map((m) => m.text);
        expect(prompts).toEqual([subject.hello.prompt]);
        const replies = transcript.filter((m) => m.role === "assistant").map((m) => String(m.text ?? ""));
        expect(replies.join("\n")).toContain(subject.hello.reply);
      },
      3 * subject.turnMs,
    );

    test("health: alive, with the agent's pid", async () => {
      const health = (await api("GET", `/v1/sessions/${id}/health`)).body;
      expect(health).toMatchObject({ alive: true });
      expect(health.agentPid).toBeGreaterThan(1);
    });

    test(
      "a permission the agent asks for waits as permission_prompt; approved, the tool runs and the turn ends idle",
      async () => {
        const file = `contract-${subject.driver}.txt`;
        expect(await send(subject.permission(file))).toEqual({ delivered: true, attempts: 1 });
        const waiting = await reach("permission_prompt");
        expect(waiting.pendingPermission.id).toBeDefined();
        const approved = await api("POST", `/v1/sessions/${id}/approve`, {
          permissionId: waiting.pendingPermission.id,
        });
        expect(approved.status).toBe(200);
        await reach("idle");
        expect(existsSync(join(subject.workDir, file))).toBe(true);
      },
      2 * subject.turnMs,
    );

    test(
      "an interrupt ends a running turn: idle again, and the session answers the next prompt",
      async () => {
        expect(await send(subject.slow)).toEqual({ delivered: true, attempts: 1 });
        await reach("working");
        if (subject.underWay) await until(subject.underWay, turnMs);
        expect((await api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
        await reach("idle");
        expect(await send(subject.hello.prompt)).toEqual({ delivered: true, attempts: 1 });
        await reach("idle");
        expect((await api("GET", `/v1/sessions/${id}/read`)).body.output).toContain(subject.hello.reply);
      },
      3 * subject.turnMs,
    );

    test(
      "a kill ends the session and its agent: killed, health no longer alive",
      async () => {
        const pid = (await api("GET", `/v1/sessions/${id}/health`)).body.agentPid as number;
        const killed = await api("DELETE", `/v1/sessions/${id}`);
        expect([killed.status, killed.body.status]).toEqual([200, "killed"]);
        expect((await api("GET", `/v1/sessions/${id}/health`)).body.alive).toBe(false);
        await until(() => !processAlive(pid), 10_000);
        id = "";
      },
      subject.turnMs,
    );
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
