import { afterAll, beforeAll, expect, test } from "bun:test";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { type SseReader, sseReader } from "../helpers/sse.ts";

// biome-ignore lint/suspicious/noExplicitAny: events are inspected field by field
type Json = Record<string, any>;

/**
 * A turn's last assistant message precedes its `session.turn_ended` on SSE with the REAL Claude
 * Code (compiled ag, the mock model): Claude Code calls its Stop hook before it has flushed the
 * turn's last transcript lines, and ag used to tell the turn's end 120–150 ms before its reply.
 */
let world: AgentWorld;
let events: SseReader;

beforeAll(async () => {
  world = await startAgentWorld();
  events = sseReader((await fetch(`${world.ag.url}/v1/events`)).body!);
}, 90_000);
afterAll(async () => {
  await events?.cancel().catch(() => {});
  await world?.stop();
});

/** The session's events until its next turn has ended. */
async function nextTurn(id: string): Promise<Json[]> {
  const seen: Json[] = [];
  for (;;) {
    for (const message of await events.take(1, 60_000)) {
      const event = message.data as Json | undefined;
      if (event?.session?.id !== id) continue;
      seen.push(event);
      if (event.event === "session.turn_ended") return seen;
    }
  }
}

test("every turn's message.assistant comes before its session.turn_ended", async () => {
  const created = await world.api<Json>("POST", "/v1/sessions", {
    workDir: world.workDir,
    prompt: "say hello",
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const turns = [await nextTurn(id)];
  for (const text of ["long answer", "what is two plus two"]) {
    await world.waitFor(id, "idle", 60_000);
    expect((await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text })).body).toMatchObject({
      delivered: true,
    });
    turns.push(await nextTurn(id));
  }
  // Each turn's reply (as its transcript has it, in the end) was told within the turn.
  const replies = turns.map((turn) =>
    turn.filter((e) => e.event === "message.assistant").map((e) => e.detail),
  );
  expect(replies.map((texts) => texts.length > 0)).toEqual([true, true, true]);
  expect(replies[0]).toContain("Hello from the mock model! 👋");
  const page = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=200&role=assistant`);
  const written = (page.body.messages as Json[]).filter((m) => m.kind === "text").length;
  expect(replies.flat()).toHaveLength(written);
}, 240_000);
