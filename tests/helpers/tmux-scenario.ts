import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentWorld } from "./agent-world.ts";
import { pagedIds } from "./cursor.ts";
import { until } from "./until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * One scenario of a terminal session (driver tmux) on a real agent CLI, written once and run per
 * agent (tests/e2e/codex.test.ts, gemini.test.ts, opencode.test.ts): a session created with a
 * prompt delivers it once, ends idle, /read has the reply; long prompts arrive whole; a shell
 * command's dialog approved runs it, one refused runs nothing; a file write's dialog answered;
 * a question answered by its option; an interrupt ends a running turn; the transcript pages by
 * cursor; tokens are counted and priced; a readonly profile refuses a command with no dialog.
 * Under the loads a file names (`loads`): on an idle machine, on a world whose cores are
 * saturated by busy loops, or on one world with only the dialog turns run again saturated. What
 * only one agent does is its own file's (`more`, on the same session), and the hooks below add an
 * agent's own assertions to a step.
 */
/** Busy loops on `cores` cores for at most `maxMs` (tests/helpers/load.ts `saturateCores`). */
export type Busy = (cores: number, maxMs: number) => { stop(): Promise<void> };

/**
 * `"idle"`: the whole scenario on an idle machine. `{world: busy}`: the whole scenario on a world
 * of its own with both cores saturated by `busy`. `{turns: busy}`: the scenario on one idle world,
 * its dialog turns again with both cores saturated. A file that passes busy loops (imports
 * tests/helpers/load.ts) runs alone in npm test (scripts/e2e-plan.ts): a file whose idle run is
 * long keeps it in a file of its own, run beside others (opencode.test.ts, opencode-load.test.ts).
 */
export type ScenarioLoad = "idle" | { world: Busy } | { turns: Busy };

export interface TmuxAgentScenario {
  /** The agent's id (GET /v1/agents). */
  agent: string;
  /** Its name in the tests' titles ("Codex", "Gemini CLI", "OpenCode"). */
  name: string;
  /** Starts the world: the file names the agent it drives (`startAgentWorld({}, {agents: [...]})`). */
  start(): Promise<AgentWorld>;
  /** The loads it runs under, each once (ScenarioLoad). */
  loads: ScenarioLoad[];
  /** How long one turn may take (default 60 s). */
  turnMs?: number;
  /** After the first turn: the create's body and /read's. */
  created?(t: TmuxScenarioSession, body: Json, read: Json): void | Promise<void>;
  /** Prompts that must arrive whole, each as one message (a 30-line one at least). */
  longPrompts: string[];
  /** The tool a shell command's dialog names. */
  commandTool: string;
  /** After a refused command, the session idle again. */
  rejected?(t: TmuxScenarioSession): void | Promise<void>;
  /** How the file write's dialog ("edit file", hello.txt) is answered. */
  edit: "approve" | "reject";
  /** The file write's pending permission. */
  editPermission?(t: TmuxScenarioSession, pending: Json): void;
  /** Given: the agent asks questions; after the answer (option 2, "Blue"), where it shows. */
  answered?(t: TmuxScenarioSession): void | Promise<void>;
  /** After the interrupted turn (`prompt`), the session idle again. */
  interrupted?(t: TmuxScenarioSession, prompt: string): void | Promise<void>;
  /** The whole transcript, after its paging is checked. */
  transcript?(t: TmuxScenarioSession, messages: Json[]): void;
  /** The session's token usage, after input and output are checked. */
  tokens?(usage: Json): void;
  /** After a readonly profile refused `command`. */
  refused?(t: TmuxScenarioSession, command: string): void | Promise<void>;
  /** The agent's own tests, after the scenario's, on its world and session. */
  more?(t: TmuxScenarioSession, loaded: boolean): void;
}

export interface TmuxScenarioSession {
  world(): AgentWorld;
  /** The scenario's session (created by its first test). */
  id(): string;
  send(text: string, session?: string): Promise<Json>;
  /** Waits for a status; on a timeout, the pane says why. */
  reach(status: string, timeoutMs?: number, session?: string): Promise<Json>;
  /** A page of the transcript cursor (its query). */
  cursor(query: string, session?: string): Promise<Json>;
  /** The statuses a session goes through until it is idle after working (answering dialogs so). */
  untilIdle(session: string, answer?: (status: Json) => Promise<void>): Promise<Set<string>>;
  /** A session of its own in `permissionMode`, whose first turn is `prompt`, killed once idle. */
  turnIn(
    permissionMode: string,
    prompt: string,
    answer?: (status: Json) => Promise<void>,
  ): Promise<{ seen: Set<string>; output: string }>;
}

export function tmuxAgentScenario(s: TmuxAgentScenario): void {
  for (const load of s.loads) {
    if (load === "idle") describe(`${s.name} on an idle machine`, () => scenario(s, false, null));
    else if ("world" in load)
      describe(`${s.name} with both cores saturated`, () => scenario(s, true, load.world));
    else describe(`a ${s.name} session`, () => scenario(s, null, load.turns));
  }
}

/** Under `loaded` (null: the dialog turns twice, idle then loaded), saturated by `busy`. */
function scenario(s: TmuxAgentScenario, loaded: boolean | null, busy: Busy | null): void {
  const turnMs = s.turnMs ?? 60_000;
  let world: AgentWorld;
  let load: { stop(): Promise<void> } | null = null;
  let id = "";
  beforeAll(async () => {
    world = await s.start();
    if (loaded && busy) load = busy(2, 600_000);
  }, 60_000);
  afterAll(async () => {
    await load?.stop();
    await world?.stop();
  });

  const api = <T = Json>(method: string, path: string, body?: unknown) => world.api<T>(method, path, body);
  const status = async (session: string) => (await api(`GET`, `/v1/sessions/${session}`)).body;
  const t: TmuxScenarioSession = {
    world: () => world,
    id: () => id,
    send: async (text, session = id) => (await api("POST", `/v1/sessions/${session}/send`, { text })).body,
    async reach(wanted, timeoutMs = turnMs, session = id) {
      try {
        return (await world.waitFor(session, wanted, timeoutMs)) as Json;
      } catch (error) {
        const pane = await api("GET", `/v1/sessions/${session}/pane`);
        throw new Error(
          `${(error as Error).message}\n--- pane ---\n${pane.body.content ?? JSON.stringify(pane.body)}`,
        );
      }
    },
    cursor: async (query, session = id) =>
      (await api("GET", `/v1/sessions/${session}/transcript/cursor?${query}`)).body,
    async untilIdle(session, answer) {
      const seen = new Set<string>();
      for (const deadline = Date.now() + turnMs; ; ) {
        const now = await status(session);
        seen.add(now.status);
        if (now.status === "permission_prompt" && answer) await answer(now);
        if (now.status === "idle" && seen.has("working")) return seen;
        if (Date.now() > deadline) throw new Error(`${session} never idle again: ${[...seen]}`);
        await Bun.sleep(50);
      }
    },
    async turnIn(permissionMode, prompt, answer) {
      const created = await api("POST", "/v1/sessions", {
        agent: s.agent,
        workDir: world.workDir,
        permissionMode,
        prompt,
        reuse: false,
      });
      expect(created.body.promptDelivery).toEqual({ delivered: true, attempts: 1 });
      const seen = await t.untilIdle(created.body.id, answer);
      const read = (await api("GET", `/v1/sessions/${created.body.id}/read`)).body;
      await api("DELETE", `/v1/sessions/${created.body.id}`);
      return { seen, output: read.output as string };
    },
  };
  const { send, reach } = t;
  const workFile = (name: string) => join(world.workDir, name);
  const tags = loaded === null ? ["idle", "loaded"] : [loaded ? "loaded" : "idle"];

  test(`create {agent: ${s.agent}} with a prompt → delivered once → idle → /read has the reply`, async () => {
    const created = await api("POST", "/v1/sessions", {
      agent: s.agent,
      workDir: world.workDir,
      prompt: "say hello",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ agent: s.agent, promptDelivery: { delivered: true, attempts: 1 } });
    id = created.body.id;
    await until(() => world.prompts().length > 0, turnMs);
    await reach("idle");
    expect(world.prompts()).toEqual(["say hello"]);
    const read = (await api("GET", `/v1/sessions/${id}/read`)).body;
    expect(read.output).toContain("Hello from the mock model!");
    await s.created?.(t, created.body, read);
  }, 90_000);

  test("long prompts arrive whole, each as one message", async () => {
    for (const text of s.longPrompts) {
      const before = world.prompts().length;
      expect(await send(text)).toEqual({ delivered: true, attempts: 1 });
      // Delivered (on the screen) comes before the turn's start is told: idle is the turn's end
      // once the model has it.
      await until(() => world.prompts().length > before, turnMs);
      await reach("idle");
      expect(world.prompts().slice(before)).toEqual([text]);
    }
  }, 90_000);

  const turns = (tag: string) => {
    test("a shell command's dialog, approved: the command runs", async () => {
      const command = `touch approved-${tag}.txt`;
      expect(await send(`run cmd: ${command}`)).toEqual({ delivered: true, attempts: 1 });
      const waiting = await reach("permission_prompt");
      expect(waiting.pendingPermission).toMatchObject({ kind: "tool", tool: s.commandTool, detail: command });
      const approved = await api("POST", `/v1/sessions/${id}/approve`, {
        permissionId: waiting.pendingPermission.id,
      });
      expect(approved.status).toBe(200);
      await reach("idle");
      expect(existsSync(workFile(`approved-${tag}.txt`))).toBe(true);
    }, 90_000);

    test("a shell command's dialog, refused: nothing runs, the session is idle again", async () => {
      expect(await send(`run cmd: touch rejected-${tag}.txt`)).toEqual({ delivered: true, attempts: 1 });
      await reach("permission_prompt");
      expect((await api("POST", `/v1/sessions/${id}/reject`)).status).toBe(200);
      await reach("idle");
      expect(existsSync(workFile(`rejected-${tag}.txt`))).toBe(false);
      expect((await api("POST", `/v1/sessions/${id}/approve`)).body.code).toBe("NO_PENDING_PERMISSION");
      await s.rejected?.(t);
    }, 90_000);

    test(`a file write's dialog, ${s.edit === "approve" ? "approved: the file is written" : "refused: the file is not written"}`, async () => {
      expect(await send("edit file")).toEqual({ delivered: true, attempts: 1 });
      const waiting = await reach("permission_prompt");
      // (Not toMatchObject with expect.stringContaining: Bun's puts the matcher into the object.)
      expect(waiting.pendingPermission.kind).toBe("tool");
      expect(waiting.pendingPermission.detail).toContain("hello.txt");
      s.editPermission?.(t, waiting.pendingPermission);
      const answered = await api("POST", `/v1/sessions/${id}/${s.edit}`, {
        permissionId: waiting.pendingPermission.id,
      });
      expect(answered.status).toBe(200);
      await reach("idle");
      if (s.edit === "approve")
        expect(readFileSync(workFile("hello.txt"), "utf8")).toBe("hello from the mock\n");
      else expect(existsSync(workFile("hello.txt"))).toBe(false);
    }, 90_000);

    const answered = s.answered;
    if (answered)
      test("a question: its options are shown, an answer by number goes to the agent", async () => {
        expect(await send("ask me")).toEqual({ delivered: true, attempts: 1 });
        const asking = await reach("asking");
        expect(asking.pendingPermission).toMatchObject({
          kind: "question",
          question: "Which color should the button be?",
          options: [
            { index: 1, label: "Red" },
            { index: 2, label: "Blue" },
          ],
        });
        expect((await api("POST", `/v1/sessions/${id}/answer`, { option: 2 })).status).toBe(200);
        await reach("idle");
        await answered(t);
      }, 90_000);

    test("interrupt mid-turn: the turn stops, the session is idle again", async () => {
      const prompt = `slow 30 ${tag}`;
      expect(await send(prompt)).toEqual({ delivered: true, attempts: 1 });
      await reach("working");
      // Under way: the model has the turn's request, and its reply (streamed for 30 s) is on the screen.
      await until(() => world.prompts().includes(prompt), 20_000);
      await until(async () => {
        const screen: string = (await api("GET", `/v1/sessions/${id}/pane`)).body.content ?? "";
        const asked = screen.lastIndexOf(prompt);
        return asked >= 0 && screen.slice(asked).includes("This reply");
      }, 20_000);
      expect((await api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
      await reach("idle", 15_000);
      expect(world.mock.requests().findLast((r) => r.prompt === prompt)?.status).toBe("aborted");
      await s.interrupted?.(t, prompt);
    }, 90_000);
  };
  if (loaded === null) {
    for (const level of [false, true]) {
      describe(level ? "with both cores saturated" : "on an idle machine", () => {
        let loop: { stop(): Promise<void> } | null = null;
        beforeAll(() => {
          if (level && busy) loop = busy(2, 120_000);
        });
        afterAll(async () => {
          await loop?.stop();
        });
        turns(level ? "loaded" : "idle");
      });
    }
  } else turns(tags[0]!);

  test("the transcript cursor pages backwards without gaps or overlaps", async () => {
    const newest = await api("GET", `/v1/sessions/${id}/transcript/cursor?limit=3`);
    expect(newest.status).toBe(200);
    expect(newest.body.messages).toHaveLength(3);
    const older = await t.cursor(`limit=3&before_id=${newest.body.oldest_id}`);
    expect(older.newest_id).toBe(newest.body.oldest_id - 1);
    const all = (await t.cursor("limit=200")).messages as Json[];
    const ids = all.map((m) => m.id);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => ids[0] + i));
    expect(newest.body.newest_id).toBe(ids.at(-1));
    expect(await pagedIds(async (path) => (await api("GET", path)).body, id)).toEqual(ids);
    const prompts = ((await t.cursor("role=user&limit=200")).messages as Json[])
      .filter((m) => m.kind === "prompt")
      .map((m) => m.text);
    expect(prompts[0]).toBe("say hello");
    for (const tag of tags) expect(prompts).toContain(`run cmd: touch approved-${tag}.txt`);
    expect(prompts).toContain("edit file");
    s.transcript?.(t, all);
  });

  test("tokens are counted and priced", async () => {
    const session = await status(id);
    expect(session.tokenUsage.input).toBeGreaterThan(0);
    expect(session.tokenUsage.output).toBeGreaterThan(0);
    s.tokens?.(session.tokenUsage);
    const metrics = await api("GET", `/v1/sessions/${id}/metrics`);
    expect(metrics.body.estimatedCost.usd).toBeGreaterThan(0);
  });

  test("a readonly profile refuses a command before it runs: no dialog, nothing runs", async () => {
    await api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "readonly" });
    const command = `run cmd: touch denied-${tags.at(-1)}.txt`;
    expect(await send(command)).toEqual({ delivered: true, attempts: 1 });
    const seen = await t.untilIdle(id);
    expect(seen.has("permission_prompt")).toBe(false);
    expect(existsSync(workFile(`denied-${tags.at(-1)}.txt`))).toBe(false);
    await s.refused?.(t, command);
    await api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "full" });
  }, 90_000);

  s.more?.(t, loaded === true);
}
