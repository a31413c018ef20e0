import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEventBus } from "../../src/events/bus.ts";
import { listen } from "../../src/server/listen.ts";
import { eventRoutes } from "../../src/server/routes/events.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { type TestApp, testApp } from "../helpers/app.ts";
import { startTestRuntime } from "../helpers/runtime.ts";
import { hook, pane, simulateAgents } from "../helpers/simulated-agent.ts";
import { type SseMessage, type SseReader, sseReader } from "../helpers/sse.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

/**
 * A turn's last assistant message comes before its `session.turn_ended` on the event stream
 * (docs/events.md), whichever way the turn's end is learned: a hook that comes before the agent
 * has written the turn's last lines (Claude Code, terminal), or the end of an ACP prompt.
 */

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** An SSE client of `GET /v1/events` over real HTTP. */
async function events(baseUrl: string): Promise<SseReader> {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/v1/events`, { signal: abort.signal });
  closers.push(async () => abort.abort());
  const reader = sseReader(response.body!);
  expect(await reader.take(1)).toEqual([{ comment: "connected" }]);
  return reader;
}

/** The session's events from the stream until `count` more of its turns have ended. */
async function turnsOf(reader: SseReader, sessionId: string, count: number): Promise<SseMessage[]> {
  const seen: SseMessage[] = [];
  const ended = () => seen.filter((m) => m.event === "session.turn_ended").length;
  while (ended() < count) {
    const [message] = await reader.take(1, 20_000);
    const session = message?.data?.session as { id?: string } | undefined;
    if (session?.id === sessionId) seen.push(message!);
  }
  return seen;
}

/** The assistant messages of each turn, cut at each `session.turn_ended` (the last: after it). */
function repliesByTurn(seen: SseMessage[]): string[][] {
  const turns: string[][] = [[]];
  for (const event of seen) {
    if (event.event === "session.turn_ended") turns.push([]);
    else if (event.event === "message.assistant") turns.at(-1)!.push(String(event.data?.detail));
  }
  return turns;
}

describe("a terminal session whose Stop hook comes before the turn's last lines (Claude Code)", () => {
  /**
   * The first turn of a recorded Claude Code transcript (its prompt, reply, Stop hook and
   * turn_duration), dated now: lines from before a session's launch are its history.
   */
  const turnNow = (from: number, to: number) => {
    const now = new Date().toISOString();
    const lines = readFileSync(join(import.meta.dir, "../fixtures/transcripts/sample.jsonl"), "utf8").split(
      "\n",
    );
    return lines
      .slice(from, to)
      .map((line) => `${line.replace(/"timestamp":"[^"]+"/g, `"timestamp":"${now}"`)}\n`)
      .join("");
  };

  test("message.assistant precedes session.turn_ended", async () => {
    const bus = createEventBus();
    let app: TestApp | undefined;
    const routes = eventRoutes({
      bus,
      sessions: { get: (id) => app!.sessions.get(id), sees: (owner, id) => app!.sessions.sees(owner, id) },
      clock: systemClock,
      settings: { idleMs: 60_000, clientTimeoutMs: 60_000 },
    });
    app = testApp({ bus, plugins: [routes] });
    simulateAgents(app);
    const server = await listen(app, { host: "127.0.0.1", port: 0, maxBodyBytes: 1 << 20 });
    closers.push(() => server.stop(100));
    const reader = await events(`http://127.0.0.1:${server.port}`);

    const created = await app.request("POST", "/v1/sessions", {
      body: { workDir: tempDir(), prompt: "say hello" },
    });
    const { id } = (await created.json()) as { id: string };
    await until(() => app!.repo.get(id)?.status === "working");
    const transcript = join(tempDir("ag-order-transcript-"), `${id}.jsonl`);
    writeFileSync(transcript, turnNow(0, 4)); // up to the prompt
    await hook(app, id, "Notification", { transcript_path: transcript, message: "working" });
    // The prompt's line was written (and read) long before the turn ends.
    await until(() => app!.live.get(id)?.transcript.summary().lastUserMessage === "say hello");

    // Claude Code calls its Stop hook, then flushes the turn's lines (the hook's own among them).
    app.tmux.setScreen(app.repo.get(id)!.paneId!, pane("01-idle-startup"));
    expect((await hook(app, id, "Stop", {})).status).toBe(200);
    appendFileSync(transcript, turnNow(4, 10)); // the reply, the hook's record, turn_duration

    const seen = await turnsOf(reader, id, 1);
    expect(repliesByTurn(seen)).toEqual([["Hello from the mock model! 👋"], []]);

    expect(app.repo.get(id)?.status).toBe("idle");
  }, 30_000);
});

describe("a headless session on the fake ACP agent", () => {
  const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");

  test("every turn's message.assistant precedes its session.turn_ended", async () => {
    const ag = await startTestRuntime({}, { home: tempDir("ag-order-home-") });
    closers.push(async () => {
      await ag.drain(100);
      ag.close();
    });
    const reader = await events(ag.url);
    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${ag.url}${path}`, {
        method,
        headers: { "content-type": "application/json", authorization: `Bearer ${ag.token()}` },
        body: JSON.stringify(body),
      });
      return (await response.json()) as Record<string, unknown>;
    };

    const prompts = ["say hello", "recall", "anything at all"];
    const created = await api("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      workDir: tempDir("ag-order-work-"),
      agentCommand: [process.execPath, FAKE, "--state", tempDir("ag-order-fake-")].join(" "),
      prompt: prompts[0],
    });
    const id = created.id as string;
    expect(created.promptDelivery).toMatchObject({ delivered: true });
    const seen = await turnsOf(reader, id, 1);
    for (const prompt of prompts.slice(1)) {
      expect(await api("POST", `/v1/sessions/${id}/send`, { text: prompt })).toMatchObject({
        delivered: true,
      });
      seen.push(...(await turnsOf(reader, id, 1)));
    }
    // Each turn holds its own reply before its end, and nothing comes after the last one.
    expect(repliesByTurn(seen)).toEqual([
      ["Hello from the fake agent!"],
      ["I remember: say hello"],
      ["You said: anything at all"],
      [],
    ]);
  }, 60_000);
});
