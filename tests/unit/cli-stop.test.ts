import { expect, test } from "bun:test";
import { stopNotes } from "../../src/cli/commands/stop.ts";

test("ag stop tells where each running session's agent goes: tmux windows keep running, headless agents end and are reopened", () => {
  expect(stopNotes({ tmux: 0, acp: 0 })).toEqual([]);
  expect(stopNotes({ tmux: 2, acp: 0 })).toEqual([
    "2 agent sessions keep running in tmux; the next start (ag, or ag run) picks them up",
  ]);
  const both = stopNotes({ tmux: 1, acp: 2 });
  expect(both[0]).toBe("1 agent session keeps running in tmux; the next start (ag, or ag run) picks it up");
  expect(both[1]).toStartWith("2 headless sessions (driver acp): their agents were ended with the server;");
  expect(both[1]).toContain("the next start reopens their conversations");
  // Headless sessions are never counted among those that keep running in tmux.
  expect(stopNotes({ tmux: 0, acp: 1 })).toEqual([
    expect.stringContaining("1 headless session (driver acp): its agent was ended with the server"),
  ]);
});
