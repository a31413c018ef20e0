import { afterEach, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CATCH_UP_MS, CONFIRM_MS } from "../../src/sessions/live/status.ts";
import { createManualClock, type ManualClock } from "../fakes/clock.ts";
import { killApp, type TestApp, testApp } from "../helpers/app.ts";
import { CLAUDE_TURN, jsonlText } from "../helpers/claude-turn.ts";
import { hook, pane, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

/**
 * ag killed (-9) while a Claude Code session's turn runs, and started again: the session is
 * re-adopted, its transcript read as history, its screen read and (its stored state being
 * nobody's current evidence) made the judge. A consensus reviewer re-adopted so went idle 2.56 s
 * after the restart: the adoption's first frame read idle, confirmed CONFIRM_MS later, the end's
 * events held TURN_TEXT_WAIT_MS for a transcript end that was not there. Its reply came seconds
 * later (its twin, briefed with it, ended 4.5 s after it), so its `/read` waited out its 3 s for
 * the turn's end and gave "". Which frame read idle is not known (no pane was kept); the
 * transcript, read as history, said the turn was open all along.
 */

const { prompt: PROMPT, begun: BEGUN, ended: ENDED, reply: REPLY } = CLAUDE_TURN;
const text = jsonlText;

const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await killApp(app);
});

/** A session working on PROMPT (its transcript holds `lines`), ag killed, then started again. */
async function restartedMidTurn(clock: ManualClock, lines: string[]) {
  const before = testApp({ clock });
  apps.push(before);
  simulateAgents(before);
  const created = await before.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
  const id = ((await created.json()) as { id: string }).id;
  await until(() => before.repo.get(id)?.status === "idle");
  const paneId = before.repo.get(id)!.paneId!;
  const transcript = join(tempDir(), `${id}.jsonl`);
  writeFileSync(transcript, text(BEGUN));
  before.tmux.setScreen(paneId, pane("04-working"));
  await hook(before, id, "UserPromptSubmit", { prompt: PROMPT, transcript_path: transcript });
  await until(
    () => before.repo.get(id)?.status === "working" && before.repo.get(id)?.transcriptPath !== null,
  );
  await killApp(before);
  if (lines.length > BEGUN.length) appendFileSync(transcript, text(lines.slice(BEGUN.length)));
  // What ag's first look after the restart reads: the input box, no spinner.
  before.tmux.setScreen(paneId, pane("02-idle-after-reply"));
  const after = testApp({ clock, restartOf: before });
  apps.push(after);
  await until(() => after.live.get(id)?.transcript.summary().lastUserMessage === PROMPT);
  return { app: after, id, paneId, transcript };
}

/** Moves the clock on in steps, letting the screen reads it asks for run. */
async function advance(clock: ManualClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    clock.advance(Math.min(100, ms - done));
    await Bun.sleep(2);
  }
}

test("re-adopted mid-turn: an idle-looking screen does not end the turn its transcript shows open; /read then gives its reply", async () => {
  const clock = createManualClock();
  const { app, id, paneId, transcript } = await restartedMidTurn(clock, BEGUN);
  // Past the screen's confirmation (twice over), short of its catch-up: still working.
  await advance(clock, 3 * CONFIRM_MS);
  expect(CATCH_UP_MS).toBeGreaterThan(3 * CONFIRM_MS);
  expect(app.repo.get(id)!.status).toBe("working");
  expect(app.events.filter((e) => e.event === "session.turn_ended")).toEqual([]);
  // The prompt of the turn is the one the agent last confirmed, as if its hook had come to this ag.
  expect(app.live.get(id)!.lastPrompt()).toBe(PROMPT);

  // The model answers: the reply and the turn's end are written, and the Stop hook comes.
  appendFileSync(transcript, text(ENDED));
  app.tmux.setScreen(paneId, pane("02-idle-after-reply"));
  await hook(app, id, "Stop", { transcript_path: transcript });
  await until(() => app.events.some((e) => e.event === "session.turn_ended" && e.session?.id === id));
  const read = await app.sessions.read(id);
  expect(read).toMatchObject({ status: "idle", output: REPLY });
  expect(app.events.filter((e) => e.event === "session.turn_ended")).toHaveLength(1);
});

test("re-adopted after its turn ended while ag was down (its Stop hook lost): the screen still ends it", async () => {
  const clock = createManualClock();
  const { app, id } = await restartedMidTurn(clock, [...BEGUN, ...ENDED]);
  expect(app.live.get(id)!.transcript.turnEnded()).toBe(true);
  for (const deadline = Date.now() + 5_000; app.repo.get(id)!.status === "working" && Date.now() < deadline; )
    await advance(clock, CONFIRM_MS);
  await until(() => app.events.some((e) => e.event === "session.turn_ended" && e.session?.id === id));
  expect(await app.sessions.read(id)).toMatchObject({ status: "idle", output: REPLY });
});
