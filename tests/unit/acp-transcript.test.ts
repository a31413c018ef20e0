import { expect, test } from "bun:test";
import { createAcpTranscriptReader } from "../../src/drivers/acp/transcript.ts";

const line = (entry: Record<string, unknown>) => JSON.stringify({ at: "2026-11-24T10:00:00.000Z", ...entry });
const tokens = (input: number, output: number) => ({ input, output, cacheRead: 0, cacheCreation: 0 });

test("an ACP transcript's usage lines each count once, under ids never reused across a reopen", () => {
  const reader = createAcpTranscriptReader();
  const ids = [
    line({ type: "user", text: "one" }),
    line({ type: "usage", turn: 1, model: "m", tokens: tokens(10, 2) }),
    line({ type: "reopened", text: "reopened" }),
    line({ type: "user", text: "two" }),
    // The reopened run numbers its turns from 1 again.
    line({ type: "usage", turn: 1, model: "m", tokens: tokens(5, 1) }),
  ].flatMap((l) => {
    const usage = reader.add(l).usage;
    return usage ? [usage.messageId] : [];
  });
  expect(new Set(ids).size).toBe(2);
  expect(reader.tokens()).toEqual(tokens(15, 3));
  expect(reader.tokensByModel()).toEqual({ m: tokens(15, 3) });
  expect(reader.summary()).toMatchObject({ turns: 2, messages: { user: 2, assistant: 0, system: 1 } });
});
