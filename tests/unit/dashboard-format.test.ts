import { describe, expect, test } from "bun:test";
import { formatCpu, formatMemory } from "../../public/src/format.ts";
import { nextStep } from "../../public/src/next-step.ts";
import type { Session } from "../../public/src/types.ts";
import { readable } from "../../public/src/views/Transcript.tsx";

const MB = 1024 * 1024;

describe("an agent's figures in the session list", () => {
  test("memory in MB up to a GB, then in GB with one decimal; a dash when not measured", () => {
    expect([0.4 * MB, 3 * MB, 312.6 * MB, 1023 * MB, 1024 * MB, 1434 * MB].map(formatMemory)).toEqual([
      "0 MB",
      "3 MB",
      "313 MB",
      "1023 MB",
      "1.0 GB",
      "1.4 GB",
    ]);
    expect(formatMemory(undefined)).toBe("–");
  });

  test("CPU as a share of one core: a decimal below 10 %, whole above (past 100 % on several cores)", () => {
    expect([0, 0.04, 4.26, 37.4, 180].map(formatCpu)).toEqual(["0%", "0.0%", "4.3%", "37%", "180%"]);
    expect([null, undefined].map(formatCpu)).toEqual(["–", "–"]);
  });
});

describe("what the session page says to do next", () => {
  const at = Date.parse("2026-01-01T00:10:00Z");
  const session = (status: Session["status"], driver: Session["driver"] = "tmux") => ({
    status,
    driver,
    lastActivityAt: "2026-01-01T00:08:30Z",
    pendingPermission: null,
  });

  test("in the console's own terms (its box and buttons), never an API route", () => {
    const said = [
      nextStep(session("idle"), at),
      nextStep(session("working"), at),
      nextStep(session("stalled"), at),
      nextStep(session("permission_prompt"), at),
      nextStep(session("crashed"), at),
      nextStep(session("completed"), at),
      nextStep(session("killed", "acp"), at),
    ];
    expect(said).toEqual([
      "Ready for a prompt: type it in the box below.",
      "Working: follow it in the transcript below; Interrupt stops the turn.",
      "No agent activity for 1m 30s: send a nudge in the box below, Interrupt, or Kill.",
      "The agent waits for you: answer in the terminal below (Take control), or Interrupt.",
      "The agent ended unexpectedly. Resume continues its conversation, or read what it did in the transcript.",
      "The session has ended. Resume continues its conversation, or read what it did in the transcript.",
      // A headless session has no Resume (nor a terminal).
      "The session has ended. Its transcript below shows what it did.",
    ]);
    for (const line of said) expect(line).not.toMatch(/\/v1\/|POST|GET|DELETE/);
  });
});

test("the transcript shows conversation: no bookkeeping entries, no empty ones", () => {
  const entries = [
    { kind: "prompt", text: "hi" },
    { kind: "text", text: "hello" },
    { kind: "system", text: "" },
    { kind: "system", text: "turn took 3 s" },
    { kind: "other", text: "  \n" },
    { kind: "text", text: "" },
    { kind: "tool_use", text: "" },
    { kind: "tool_result", text: "" },
  ] as const;
  expect(entries.filter(readable).map((e) => e.kind)).toEqual(["prompt", "text", "tool_use", "tool_result"]);
});
