import { expect, test } from "bun:test";
import { createAcpTranscriptReader } from "../../src/drivers/acp/transcript.ts";

const line = (entry: Record<string, unknown>) => JSON.stringify({ at: "2026-11-24T10:00:00.000Z", ...entry });
const tokens = (input: number, output: number) => ({ input, output, cacheRead: 0, cacheCreation: 0 });

test("an ACP transcript's usage lines each count once, under ids never reused across a reopen", () => {
  const reader = createAcpTranscriptReader();
  const ids = [
    line({ type: "user", text: "one" }),
    line({ type: "usage", id: "u-1", turn: 1, model: "m", tokens: tokens(10, 2) }),
    line({ type: "reopened", text: "reopened" }),
    line({ type: "user", text: "two" }),
    // The reopened run numbers its turns from 1 again.
    line({ type: "usage", id: "u-2", turn: 1, model: "m", tokens: tokens(5, 1) }),
  ].flatMap((l) => {
    const usage = reader.add(l).usage;
    return usage ? [usage.messageId] : [];
  });
  expect(new Set(ids).size).toBe(2);
  expect(reader.tokens()).toEqual(tokens(15, 3));
  expect(reader.tokensByModel()).toEqual({ m: tokens(15, 3) });
  expect(reader.summary()).toMatchObject({ turns: 2, messages: { user: 2, assistant: 0, system: 1 } });
});

test("a usage line's id is the line's own: the same from any reader (the ledger reads in batches), never another line's", () => {
  const written = [
    line({ type: "usage", id: "u-1", turn: 1, model: "m", tokens: tokens(10, 2) }),
    // Written before usage lines had ids: told apart by when and which turn.
    JSON.stringify({
      type: "usage",
      at: "2026-11-24T10:00:01.000Z",
      turn: 1,
      model: "m",
      tokens: tokens(1, 1),
    }),
    JSON.stringify({
      type: "usage",
      at: "2026-11-24T10:00:02.000Z",
      turn: 1,
      model: "m",
      tokens: tokens(1, 1),
    }),
  ];
  const idsOf = (lines: string[]) => lines.map((l) => createAcpTranscriptReader().add(l).usage?.messageId);
  const once = idsOf(written);
  expect(idsOf(written)).toEqual(once);
  expect(new Set(once).size).toBe(3);
  // A second batch read by a fresh reader does not reuse the first batch's ids.
  expect(idsOf(written.slice(1))).toEqual(once.slice(1));
});
