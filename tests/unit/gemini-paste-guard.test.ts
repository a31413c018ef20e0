import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readScreen } from "../../src/agents/gemini/screen.ts";
import { DEFAULT_DELIVERY, type DeliveryPort, deliverPrompt } from "../../src/drivers/tmux/delivery.ts";

/**
 * Gemini CLI 0.61.0 turns an Enter into a newline while its paste guard is on (a 40 ms timer and
 * the re-render it causes, both late on a starved machine). A large paste shows "Press Ctrl+O to
 * expand pasted text" for 3 s, from a timer set after the guard's: delivery must press Enter only
 * once that hint is gone (issue 38: `attempts: 2` under load).
 */
const pane = (name: string) =>
  readFileSync(join(import.meta.dir, "../fixtures/agents/gemini/0.61.0/panes", `${name}.txt`), "utf8");

const idle = pane("idle-end");
/** Captured just after a 30-line paste: the placeholder in the box, the hint above the composer. */
const pasted = pane("pasted-30-lines");
/** The same frame once the hint's 3 s are over (the hint's line blank, as the CLI clears it). */
const hintGone = pasted.replace(/^ Press Ctrl\+O to expand pasted text.*$/m, "");
const HINT_MS = 3_000;

/**
 * The CLI as frames on a virtual clock: Enter submits only once the hint is gone; before, it is
 * the guard's newline (the text stays in the box, no confirmation).
 */
function geminiAfterPaste() {
  let now = 0;
  let pastedAt: number | null = null;
  let submitted = false;
  const enters: Array<{ at: number; guarded: boolean }> = [];
  const frame = () => {
    if (pastedAt === null || submitted) return idle;
    return now - pastedAt < HINT_MS ? pasted : hintGone;
  };
  const port: DeliveryPort = {
    readInput: async () => readScreen(frame()).input,
    enterGuarded: async () => readScreen(frame()).enterGuarded === true,
    async paste() {
      pastedAt = now;
    },
    async pressEnter() {
      const guarded = frame() === pasted;
      enters.push({ at: now, guarded });
      if (!guarded) submitted = true;
    },
    clearInput: async () => {},
    async screenChangeOrTimeout(ms) {
      now += ms;
    },
    expectSubmit: () => ({
      confirmed: async (ms) => {
        now += submitted ? 0 : ms;
        return submitted;
      },
      cancel() {},
    }),
    now: () => now,
    ended: () => false,
  };
  return { port, enters, pastedAt: () => pastedAt };
}

describe("a prompt pasted into the Gemini CLI", () => {
  test("the screen reading says Enter is guarded while the paste hint shows, and only then", () => {
    expect(readScreen(pasted)).toMatchObject({ input: "[Pasted Text: 30 lines]", enterGuarded: true });
    expect(readScreen(hintGone).input).toBe("[Pasted Text: 30 lines]");
    expect(readScreen(hintGone).enterGuarded).toBeUndefined();
    expect(readScreen(idle).enterGuarded).toBeUndefined();
  });

  test("the first Enter waits for the hint to go, and submits: one attempt", async () => {
    const cli = geminiAfterPaste();
    const text = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n");
    expect(await deliverPrompt(cli.port, text, DEFAULT_DELIVERY)).toEqual({ delivered: true, attempts: 1 });
    expect(cli.enters).toHaveLength(1);
    expect(cli.enters[0]!.guarded).toBe(false);
    // No later than one settle wait after the hint went.
    expect(cli.enters[0]!.at - cli.pastedAt()!).toBeLessThanOrEqual(HINT_MS + 2 * DEFAULT_DELIVERY.settleMs);
  });
});
