import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startAgentWorld } from "./agent-world.ts";
import type { ScenarioLoad, TmuxAgentScenario } from "./tmux-scenario.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * OpenCode's terminal scenario (tests/helpers/tmux-scenario.ts) under `loads`, with OpenCode's own
 * tests (resume, fork, permission modes) after it on the idle run: tests/e2e/opencode.test.ts runs
 * it on an idle machine (beside other files), opencode-load.test.ts with both cores saturated
 * (alone, scripts/e2e-plan.ts).
 */
export function opencodeScenario(loads: ScenarioLoad[]): TmuxAgentScenario {
  return {
    agent: "opencode",
    name: "OpenCode",
    start: () => startAgentWorld({}, { agents: ["opencode"] }),
    loads,
    async created(t, _body, read) {
      expect(read.tokenUsage.input).toBeGreaterThan(0);
      expect(read.tokenUsage.output).toBeGreaterThan(0);
      expect(
        (await t.world().api<Json>("GET", `/v1/sessions/${t.id()}`)).body.tokenUsage.input,
      ).toBeGreaterThan(0);
    },
    longPrompts: [Array.from({ length: 30 }, (_, i) => `line ${i + 1}: ${"·".repeat(i)}`).join("\n")],
    commandTool: "bash",
    // Refused, so that plan mode's "writes nothing" below has no hello.txt of before.
    edit: "reject",
    async answered(t) {
      const results = await t.cursor("limit=200");
      const texts = (results.messages as Json[]).filter((m) => m.kind === "tool_result").map((m) => m.text);
      expect(texts.some((text: string) => text.includes('="Blue"'))).toBe(true);
    },
    interrupted(t, prompt) {
      const last = t.world().mock.requests().at(-1)!;
      expect([last.prompt, last.status]).toEqual([prompt, "aborted"]);
    },
    more(t, loaded) {
      if (loaded) return;
      const world = () => t.world();
      const lastMain = () =>
        world()
          .mock.requests()
          .filter((r) => r.kind === "main")
          .at(-1)!;

      test("kill ends it; resume brings the same OpenCode conversation back", async () => {
        const id = t.id();
        const killed = await world().api<Json>("DELETE", `/v1/sessions/${id}`);
        expect(killed.body.status).toBe("killed");
        const resumed = await world().api<Json>("POST", `/v1/sessions/${id}/resume`);
        expect(resumed.status).toBe(200);
        await t.reach("idle");
        expect(await t.send("say hello again")).toEqual({ delivered: true, attempts: 1 });
        await t.reach("idle");
        expect(lastMain().history?.[0]).toBe("say hello");
        expect(lastMain().prompt).toBe("say hello again");
      }, 120_000);

      test("fork: a new session continues a copy of the conversation", async () => {
        const id = t.id();
        await world().api("DELETE", `/v1/sessions/${id}`);
        const forked = await world().api<Json>("POST", `/v1/sessions/${id}/fork`);
        expect(forked.status).toBe(201);
        const fork = forked.body.id as string;
        expect(fork).not.toBe(id);
        await t.reach("idle", undefined, fork);
        expect(await t.send("say hello from the fork", fork)).toEqual({ delivered: true, attempts: 1 });
        await t.reach("idle", undefined, fork);
        expect(lastMain().history).toContain("say hello again");
        expect(lastMain().prompt).toBe("say hello from the fork");
        const read = await world().api<Json>("GET", `/v1/sessions/${fork}/read`);
        expect(read.body.output).toContain("Hello from the mock model!");
        // Its conversation begins with the parent's (as history), then goes its own way.
        const users = await t.cursor("role=user&limit=200", fork);
        const prompts = (users.messages as Json[]).filter((m) => m.kind === "prompt").map((m) => m.text);
        expect(prompts[0]).toBe("say hello");
        expect(prompts.slice(-2)).toEqual(["say hello again", "say hello from the fork"]);
        expect((await world().api<Json>("DELETE", `/v1/sessions/${fork}`)).body.status).toBe("killed");
      }, 120_000);

      test("bypassPermissions: a command runs without asking", async () => {
        const { seen } = await t.turnIn("bypassPermissions", "run cmd: touch bypassed.txt");
        expect(seen.has("permission_prompt")).toBe(false);
        expect(existsSync(join(world().workDir, "bypassed.txt"))).toBe(true);
      }, 90_000);

      test("plan: its read-only agent writes nothing, without asking", async () => {
        const { seen } = await t.turnIn("plan", "edit file");
        expect(seen.has("permission_prompt")).toBe(false);
        expect(existsSync(join(world().workDir, "hello.txt"))).toBe(false);
      }, 90_000);

      test("a mode OpenCode has no equivalent of is refused before anything starts", async () => {
        const refused = await world().api<Json>("POST", "/v1/sessions", {
          agent: "opencode",
          workDir: world().workDir,
          permissionMode: "dontAsk",
        });
        expect(refused.status).toBe(400);
      });
    },
  };
}
