import { expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { END_SETTLE_MS } from "../../src/sessions/actions.ts";
import { testApp } from "../helpers/app.ts";
import { CLAUDE_TURN, jsonlText } from "../helpers/claude-turn.ts";
import { hook, pane, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

/**
 * A session killed right after its turn ended: the agent tells the end (its Stop hook) before it
 * has written the turn's last lines, so a kill at once cut the reply from its transcript (a loaded
 * CI run: Claude Code's answer never reached the file, and search never found it). Ending an idle
 * session now waits, bounded, for its transcript to hold that turn's end.
 */

const { prompt: PROMPT, begun: BEGUN, ended: ENDED, reply: REPLY } = CLAUDE_TURN;
const text = jsonlText;

/** A session whose turn the Stop hook ended while its transcript still holds only the prompt. */
async function endedBeforeWritten() {
  const app = testApp();
  simulateAgents(app);
  const created = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
  const id = ((await created.json()) as { id: string }).id;
  await until(() => app.repo.get(id)?.status === "idle");
  const paneId = app.repo.get(id)!.paneId!;
  const transcript = join(tempDir(), `${id}.jsonl`);
  writeFileSync(transcript, text(BEGUN));
  app.tmux.setScreen(paneId, pane("04-working"));
  await hook(app, id, "UserPromptSubmit", { prompt: PROMPT, transcript_path: transcript });
  await until(() => app.repo.get(id)?.status === "working" && app.live.get(id)?.lastPrompt() === PROMPT);
  app.tmux.setScreen(paneId, pane("02-idle-after-reply"));
  await hook(app, id, "Stop", { transcript_path: transcript });
  await until(() => app.repo.get(id)?.status === "idle");
  return { app, id, transcript };
}

test("killed right after its turn ended: the kill waits for the turn's last lines, which are kept", async () => {
  const { app, id, transcript } = await endedBeforeWritten();
  // What ag had read of the transcript when it closed the agent's window.
  let atKill: { turnEnded: boolean; reply: string | null } | null = null;
  const live = app.live.get(id)!;
  const killWindow = app.tmux.killWindow.bind(app.tmux);
  app.tmux.killWindow = async (windowId) => {
    atKill ??= {
      turnEnded: live.transcript.turnEnded(),
      reply: live.transcript.summary().lastAssistantMessage,
    };
    return killWindow(windowId);
  };
  const killing = app.request("DELETE", `/v1/sessions/${id}`);
  await Bun.sleep(300);
  expect([app.repo.get(id)!.status, atKill]).toEqual(["idle", null]);
  appendFileSync(transcript, text(ENDED));
  expect((await killing).status).toBe(200);
  expect(app.repo.get(id)!.status).toBe("killed");
  expect(atKill!).toEqual({ turnEnded: true, reply: REPLY });
});

test("killed right after its turn ended, its last lines never written: the kill goes on after a bounded wait", async () => {
  const { app, id } = await endedBeforeWritten();
  const started = performance.now();
  expect((await app.request("DELETE", `/v1/sessions/${id}`)).status).toBe(200);
  expect(app.repo.get(id)!.status).toBe("killed");
  const took = performance.now() - started;
  expect(took).toBeGreaterThanOrEqual(END_SETTLE_MS - 50);
  expect(took).toBeLessThan(END_SETTLE_MS + 7_000);
});

test("killed mid-turn or with its turn's end on file: no wait", async () => {
  const { app, id, transcript } = await endedBeforeWritten();
  appendFileSync(transcript, text(ENDED));
  await until(() => app.live.get(id)!.transcript.turnEnded());
  const started = performance.now();
  expect((await app.request("DELETE", `/v1/sessions/${id}`)).status).toBe(200);
  expect(performance.now() - started).toBeLessThan(END_SETTLE_MS);

  const working = await endedBeforeWritten();
  const paneId = working.app.repo.get(working.id)!.paneId!;
  working.app.tmux.setScreen(paneId, pane("04-working"));
  await hook(working.app, working.id, "UserPromptSubmit", {
    prompt: "and again",
    transcript_path: working.transcript,
  });
  await until(() => working.app.repo.get(working.id)?.status === "working");
  const cut = performance.now();
  expect((await working.app.request("DELETE", `/v1/sessions/${working.id}`)).status).toBe(200);
  expect(performance.now() - cut).toBeLessThan(END_SETTLE_MS);
});
