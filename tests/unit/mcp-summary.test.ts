import { describe, expect, test } from "bun:test";
import { NO_TOKENS } from "../../src/agents/vocabulary.ts";
import type { Consensus, Reviewer } from "../../src/consensus/consensus.ts";
import { describeConsensus } from "../../src/mcp/consensus-summary.ts";
import { describeSession, describeSessions, summarize } from "../../src/mcp/summary.ts";
import { hintsFor } from "../../src/sessions/insight.ts";

const base = { id: "s1", name: "app-s1", workDir: "/w", pendingPermission: null };

describe("the summary an agent reads before the JSON", () => {
  test("a permission prompt names the tool, the detail and approve_permission/reject_permission", () => {
    const text = describeSession({
      ...base,
      status: "permission_prompt",
      pendingPermission: { id: "p1", kind: "tool", tool: "Edit", detail: "/w/notes.txt" },
    });
    expect(text).toBe(
      'Session "app-s1" (s1) is permission_prompt. It waits for permission for Edit: /w/notes.txt. Next: call approve_permission or reject_permission (sessionId "s1").',
    );
  });

  test("a question lists its options and names answer_question with their range", () => {
    const text = describeSession({
      ...base,
      status: "asking",
      pendingPermission: {
        id: "q1",
        kind: "question",
        detail: "Pick a color",
        question: "Which color?",
        options: [
          { index: 1, label: "Red" },
          { index: 2, label: "Blue" },
        ],
      },
    });
    expect(text).toContain('It waits for a question: "Which color?" (options: 1. Red, 2. Blue).');
    expect(text).toContain('Next: call answer_question (sessionId "s1") with option 1–2 or text of your own');
  });

  test.each([
    ["idle", "Next: call send_message"],
    ["working", "Next: wait, then call get_status"],
    ["stalled", "interrupt_session"],
    ["killed", "Next: get_transcript"],
    ["crashed", "create_session"],
  ])("%s says what to call next, never a REST route", (status, next) => {
    const text = describeSession({ ...base, status });
    expect(text).toStartWith(`Session "app-s1" (s1) is ${status}.`);
    expect(text).toContain(next);
    expect(text).not.toContain("/v1/");
  });

  test("a reused session says so", () => {
    expect(describeSession({ ...base, status: "working", reused: true })).toStartWith(
      'Session "app-s1" (s1) (an idle session reused) is working.',
    );
  });

  test("lists, deliveries, batches and health are summarized; other bodies are not", () => {
    expect(describeSessions([])).toBe("No sessions. Next: call create_session to start one.");
    expect(summarize({}, [{ ...base, status: "idle" }])).toStartWith(
      '1 session:\n- Session "app-s1" (s1) is idle.',
    );
    expect(summarize({ sessionId: "s1" }, { delivered: true, attempts: 1 })).toStartWith(
      'Delivered to session s1 (attempt 1). Next: call get_status (sessionId "s1")',
    );
    expect(summarize({}, { created: [{ ...base, status: "idle" }], failed: [] })).toStartWith(
      "1 created, 0 failed.\n- Session",
    );
    expect(
      summarize(
        { sessionId: "s1" },
        { id: "s1", status: "idle", alive: true, hints: ["ready for a prompt: call send_message"] },
      ),
    ).toBe("Session s1 is idle. ready for a prompt: call send_message");
    expect(summarize({ key: "a/b" }, { key: "a/b", value: "v" })).toBeNull();
    expect(summarize({ sessionId: "s1" }, { id: "s1", content: "❯" })).toBeNull();
  });
});

describe("hints for MCP readers name tools", () => {
  test.each([
    ["permission_prompt", "approve_permission or reject_permission"],
    ["asking", "answer_question"],
    ["stalled", "interrupt_session"],
    ["idle", "send_message"],
    ["working", "get_status"],
    ["crashed", "get_transcript"],
    ["killed", "get_transcript"],
  ] as const)("%s → %s", (status, toolName) => {
    const hints = hintsFor({ id: "s1", status, pendingPermission: null }, 5000, "mcp").join(" ");
    expect(hints).toContain(toolName);
    expect(hints).not.toContain("/v1/");
  });
});

describe("a consensus review's summary", () => {
  const reviewer = (index: number, fields: Partial<Reviewer> = {}): Reviewer => ({
    index,
    agent: "claude",
    sessionId: `r${index}`,
    status: "done",
    verdict: "approve",
    criteria: [
      { criterion: "tests pass", pass: true, note: "green" },
      { criterion: "docs updated", pass: true, note: "README" },
    ],
    restated: false,
    answer: "…",
    tokens: { ...NO_TOKENS },
    costUsd: 0.01,
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T00:01:00.000Z",
    ...fields,
  });
  const review = (fields: Partial<Consensus>): Consensus => ({
    id: "c1",
    sessionId: "s1",
    criteria: ["tests pass", "docs updated"],
    status: "completed",
    reviewers: [reviewer(1), reviewer(2)],
    verdict: "approve",
    agreement: 1,
    counted: 2,
    criteriaVerdicts: [],
    change: null,
    tokens: { ...NO_TOKENS },
    costUsd: 0.02,
    requestedBy: "master",
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:01:00.000Z",
    finishedAt: "2026-01-01T00:01:00.000Z",
    ...fields,
  });

  test("approve: the outcome and agreement, a line per criterion and per reviewer, nothing to do next", () => {
    const text = summarize(
      {},
      review({
        criteriaVerdicts: [
          { criterion: "tests pass", verdict: "pass", pass: 2, fail: 0, agreement: 1 },
          { criterion: "docs updated", verdict: "pass", pass: 2, fail: 0, agreement: 1 },
        ],
      }),
    );
    expect(text).toBe(
      [
        "Consensus review c1 of session s1: approve: 2 of 2 reviewers agree (agreement 100%).",
        "Criteria:",
        '- 1. "tests pass": pass (2 pass, 0 fail)',
        '- 2. "docs updated": pass (2 pass, 0 fail)',
        "Reviewers:",
        "- Reviewer 1: approve",
        "- Reviewer 2: approve",
        "Cost: $0.02 (estimate).",
      ].join("\n"),
    );
  });

  test("reject names the failed criteria's notes and send_message; failed names the reviewers' errors", () => {
    const failing = reviewer(2, {
      verdict: "reject",
      restated: true,
      criteria: [
        { criterion: "tests pass", pass: true, note: "green" },
        { criterion: "docs updated", pass: false, note: "README not updated" },
      ],
    });
    const rejected = describeConsensus(
      review({
        verdict: "reject",
        agreement: 1,
        counted: 1,
        reviewers: [
          reviewer(1, { status: "timed_out", verdict: null, error: "no answer within 600000 ms" }),
          failing,
        ],
      }),
    );
    expect(rejected).toStartWith(
      "Consensus review c1 of session s1: reject: 1 of 1 reviewers agree, 1 not counted (unreadable, timed out or failed) (agreement 100%).",
    );
    expect(rejected).toContain("- Reviewer 1: timed_out — no answer within 600000 ms");
    expect(rejected).toContain("- Reviewer 2: reject (asked to restate) — FAIL 2: README not updated");
    expect(rejected).toEndWith(
      'Next: call send_message (sessionId "s1") with the failed criteria and the reviewers\' notes, then start_consensus (sessionId "s1") again.',
    );

    const failed = describeConsensus(
      review({
        status: "failed",
        verdict: null,
        agreement: null,
        counted: 0,
        error: "no reviewer's answer could be read",
        reviewers: [reviewer(1, { status: "unparsable", verdict: null, error: "no VERDICT line" })],
      }),
    );
    expect(failed).toStartWith(
      "Consensus review c1 of session s1 failed: no reviewer's answer could be read.",
    );
    expect(failed).toContain("- Reviewer 1: unparsable — no VERDICT line");
    expect(failed).toContain("start_consensus");
  });

  test("running: how many reviewers finished, each one's state, and get_consensus again", () => {
    const text = describeConsensus(
      review({
        status: "running",
        verdict: null,
        agreement: null,
        counted: 0,
        finishedAt: null,
        reviewers: [
          reviewer(1),
          reviewer(2, { status: "reviewing", verdict: null, criteria: [], finishedAt: null }),
        ],
      }),
    );
    expect(text).toBe(
      [
        "Consensus review c1 of session s1 is running: 1 of 2 reviewers finished, 2 criteria.",
        "Reviewers:",
        "- Reviewer 1: approve",
        "- Reviewer 2: reviewing",
        'Next: call get_consensus (consensusId "c1") again later: a review lasts as long as its slowest reviewer.',
      ].join("\n"),
    );
    expect(text).not.toContain("/v1/");
  });
});
