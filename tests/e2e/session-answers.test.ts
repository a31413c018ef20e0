import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compareVersions } from "../../src/agents/versions.ts";
import { claudeVersion } from "../helpers/agent-home.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { saturateCores } from "../helpers/load.ts";
import { type SseReader, sseReader } from "../helpers/sse.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * What independent clients found wrong with states, answers and deliveries, each on the REAL
 * agent CLI through the compiled binary: a question answered by REST; API errors told once;
 * shell and slash commands and tabs confirmed as delivered; a killed teammate's end on SSE.
 * Twice: on an idle machine, and with both cores saturated by busy loops. In each, one world;
 * the tests run in order on one session where they can.
 */
for (const loaded of [false, true]) {
  describe(loaded ? "with both cores saturated" : "on an idle machine", () => {
    let world: AgentWorld;
    let load: { stop(): Promise<void> } | null = null;
    let events: SseReader;
    let id: string;
    const seen: Json[] = [];

    beforeAll(async () => {
      // API errors surface at once (the CLI retries 10 times with growing back-off otherwise).
      world = await startAgentWorld({ CLAUDE_CODE_MAX_RETRIES: "0" });
      if (loaded) load = saturateCores(2, 600_000);
      events = sseReader((await fetch(`${world.ag.url}/v1/events`)).body!);
      const created = await world.api<Json>("POST", "/v1/sessions", { workDir: world.workDir });
      id = created.body.id;
      await world.waitFor(id, "idle", 60_000);
    }, 90_000);
    afterAll(async () => {
      await load?.stop();
      await events?.cancel().catch(() => {});
      await world?.stop();
    });

    async function drain(): Promise<Json[]> {
      for (const message of await events.available()) if (message.data) seen.push(message.data);
      return seen;
    }
    const count = async (event: string, session = id) =>
      (await drain()).filter((e) => e.event === event && e.session?.id === session).length;

    async function send(text: string): Promise<Json> {
      return (await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text })).body;
    }

    /** The transcript's texts of one kind, now. */
    async function texts(kind: string): Promise<string[]> {
      const page = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=200`);
      return (page.body.messages as Json[]).filter((m) => m.kind === kind).map((m) => m.text as string);
    }

    /** The transcript's texts of one kind, waiting (briefly) for one that matches. */
    async function transcript(kind: string, wanted: (text: string) => boolean): Promise<string[]> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const found = await texts(kind);
        if (found.some(wanted) || Date.now() > deadline) return found;
        await Bun.sleep(100);
      }
    }

    describe("a question", () => {
      test("shows its question and options; /send of a number answers it with that option", async () => {
        expect(await send("ask me")).toEqual({ delivered: true, attempts: 1 });
        const asking = await world.waitFor(id, "asking");
        expect(asking.pendingPermission).toMatchObject({
          kind: "question",
          question: "Which color should the button be?",
          options: [
            { index: 1, label: "Red" },
            { index: 2, label: "Blue" },
          ],
        });
        expect(await send("2")).toEqual({ delivered: true, attempts: 1, answered: true });
        await world.waitFor(id, "idle");
        const results = await transcript("tool_result", (t) => t.includes('"Blue"'));
        expect(results.some((t) => t.includes('="Blue"'))).toBe(true);
      }, 60_000);

      test("POST /answer with text of one's own: the agent gets those words", async () => {
        await send("ask me");
        const asking = await world.waitFor(id, "asking");
        const answered = await world.api<Json>("POST", `/v1/sessions/${id}/answer`, {
          text: "Green please",
          permissionId: (asking.pendingPermission as Json).id,
        });
        expect(answered.status).toBe(200);
        await world.waitFor(id, "idle");
        const results = await transcript("tool_result", (t) => t.includes("Green please"));
        expect(results.some((t) => t.includes('="Green please"'))).toBe(true);
      }, 60_000);
    });

    describe("a dialog of several questions", () => {
      test("each question, then the review, is asked and answered in turn", async () => {
        world.mock.addRules([
          {
            name: "ask two",
            match: "ask two",
            steps: [
              {
                tool: {
                  name: "AskUserQuestion",
                  input: {
                    questions: [
                      {
                        question: "Which color should the button be?",
                        header: "Color",
                        multiSelect: false,
                        options: [
                          { label: "Red", description: "A bold red button" },
                          { label: "Blue", description: "A calm blue button" },
                        ],
                      },
                      {
                        question: "Which size should the button be?",
                        header: "Size",
                        multiSelect: false,
                        options: [
                          { label: "Small", description: "Compact" },
                          { label: "Large", description: "Prominent" },
                        ],
                      },
                    ],
                  },
                },
              },
              { text: "Answers: {{tool_result}}" },
            ],
          },
        ]);
        expect(await send("ask two")).toEqual({ delivered: true, attempts: 1 });
        const first = await world.waitFor(id, "asking");
        expect(first.pendingPermission).toMatchObject({
          question: "Which color should the button be?",
          questions: 2,
        });
        const answer = (option: number) => world.api<Json>("POST", `/v1/sessions/${id}/answer`, { option });
        const asked = async (question: string) => {
          const deadline = Date.now() + 15_000;
          for (;;) {
            const session = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body;
            if (session.status === "asking" && session.pendingPermission?.question === question)
              return session;
            if (Date.now() > deadline)
              throw new Error(`never asked "${question}": ${JSON.stringify(session)}`);
            await Bun.sleep(100);
          }
        };
        expect((await answer(2)).status).toBe(200);
        const second = await asked("Which size should the button be?");
        expect(second.pendingPermission.options.map((o: Json) => o.label)).toEqual(["Small", "Large"]);
        expect((await answer(2)).status).toBe(200);
        // The review step's own question: 2.1.328 reworded it.
        const atLeast328 = compareVersions(claudeVersion(), "2.1.328") >= 0;
        const review = await asked(atLeast328 ? "Review your answers" : "Ready to submit your answers?");
        expect(review.pendingPermission.options.map((o: Json) => o.label)).toEqual([
          "Submit answers",
          "Cancel",
        ]);
        expect((await answer(1)).status).toBe(200);
        await world.waitFor(id, "idle");
        const results = await transcript("tool_result", (t) => t.includes('="Large"'));
        expect(results.some((t) => t.includes('="Blue"') && t.includes('="Large"'))).toBe(true);
      }, 90_000);
    });

    describe("API errors", () => {
      test("one error turn is one status.error, however often the screen still shows it", async () => {
        const before = await count("status.error");
        expect((await send("server error")).delivered).toBe(true);
        await world.waitFor(id, "idle");
        // The next prompt's paste and Enter redraw the screen under the old error many times.
        expect(await send("say hello")).toEqual({ delivered: true, attempts: 1 });
        await world.waitFor(id, "idle");
        await Bun.sleep(500);
        expect((await count("status.error")) - before).toBe(1);
      }, 60_000);

      test("one rate-limited turn is one status.rate_limited", async () => {
        const before = await count("status.rate_limited");
        expect((await send("rate limit")).delivered).toBe(true);
        await world.waitFor(id, "idle");
        expect((await send("say hello")).delivered).toBe(true);
        await world.waitFor(id, "idle");
        await Bun.sleep(500);
        expect((await count("status.rate_limited")) - before).toBe(1);
      }, 60_000);
    });

    describe("input the agent records its own way", () => {
      test("a shell command (no submit hook) is delivered, runs once, and counts as activity", async () => {
        const before = Date.parse((await world.api<Json>("GET", `/v1/sessions/${id}`)).body.lastActivityAt);
        await Bun.sleep(1_200);
        const replies = (await texts("text")).length;
        expect(await send("!touch bang.txt")).toEqual({ delivered: true, attempts: 1 });
        // The agent runs it, then (respondToBashCommands) the model answers it: wait for that.
        const answered = await transcript("text", (t) => t.includes("<bash-stdout>"));
        expect(answered.length).toBeGreaterThan(replies);
        expect(existsSync(join(world.workDir, "bang.txt"))).toBe(true);
        const inputs = await transcript("prompt", (t) => t === "!touch bang.txt");
        expect(inputs.filter((t) => t === "!touch bang.txt")).toHaveLength(1);
        await world.waitFor(id, "idle");
        const after = Date.parse((await world.api<Json>("GET", `/v1/sessions/${id}`)).body.lastActivityAt);
        expect(after).toBeGreaterThan(before + 1_000);
      }, 60_000);

      test("a message with tabs is confirmed, and arrives whole as one turn", async () => {
        const prompts = world.prompts().length;
        expect(await send("col1\tcol2\nx\ty")).toEqual({ delivered: true, attempts: 1 });
        await world.waitFor(id, "idle");
        // The agent turns each tab into four spaces.
        expect(world.prompts().slice(prompts)).toEqual(["col1    col2\nx    y"]);
      }, 60_000);

      test("a built-in slash command (no hook, a dialog) is delivered; after /clear hooks still reach the session", async () => {
        // The first Enter may only accept the command's completion: delivered, in one or two.
        expect(await send("/help")).toMatchObject({ delivered: true });
        expect((await world.api("POST", `/v1/sessions/${id}/escape`)).status).toBe(200);
        await world.waitFor(id, "idle");
        // /clear gives the agent a new conversation id: its hooks are still this session's.
        expect(await send("/clear")).toMatchObject({ delivered: true });
        expect(await send("what comes after clear")).toEqual({ delivered: true, attempts: 1 });
        await world.waitFor(id, "idle");
        expect(world.prompts().at(-1)).toBe("what comes after clear");
        const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
        expect(read.body.output).toContain("Mock reply to: what comes after clear");
      }, 60_000);
    });

    describe("teammates", () => {
      test("the end of a killed teammate reaches SSE, in order, before its parent hears of it", async () => {
        const workDir = join(world.workDir, "team");
        mkdirSync(workDir);
        writeFileSync(join(workDir, "README"), "team\n");
        const spawned = await world.api<Json>("POST", `/v1/sessions/${id}/spawn`, { prompt: "say hello" });
        expect(spawned.status).toBe(201);
        const child = spawned.body.id as string;
        await world.waitFor(child, "idle");
        expect((await world.api("DELETE", `/v1/sessions/${child}`)).status).toBe(200);
        const deadline = Date.now() + 5_000;
        while ((await count("swarm.teammate_finished", child)) === 0 && Date.now() < deadline)
          await Bun.sleep(50);
        const order = (await drain())
          .filter((e) => e.session?.id === child)
          .map((e) => e.event)
          .filter((e) => ["session.killed", "session.ended", "swarm.teammate_finished"].includes(e));
        expect(order).toEqual(["session.killed", "session.ended", "swarm.teammate_finished"]);
      }, 60_000);
    });
  });
}
