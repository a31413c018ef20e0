import type { EventInput, EventSession } from "../../src/events/bus.ts";
import type { EventName, EventPayload, PendingPermission, StatusMeta } from "../../src/events/names.ts";

/** A Bash prompt, as the status events of a session waiting for an answer carry it. */
export const BASH_PROMPT: PendingPermission = {
  id: "perm-1",
  kind: "tool",
  tool: "Bash",
  detail: "npm test",
};

const working: StatusMeta = { status: "working", previous: "idle", pendingPermission: null, source: "hook" };
const idle: StatusMeta = { status: "idle", previous: "working", pendingPermission: null, source: "hook" };
const prompt: StatusMeta = {
  status: "permission_prompt",
  previous: "working",
  pendingPermission: BASH_PROMPT,
  source: "hook",
};
const stalled: StatusMeta = {
  status: "stalled",
  previous: "working",
  pendingPermission: null,
  source: "timer",
};
const message = { uuid: "u-1", timestamp: "2026-01-01T00:00:00.000Z", sidechain: false };

/**
 * One payload of every event of the catalog, as ag publishes it (TypeScript keeps the list
 * complete; a test checks each against its schema).
 */
export const SAMPLE_PAYLOADS: { [N in EventName]: EventPayload<N> } = {
  "session.created": {
    ...working,
    previous: "working",
    source: "ag",
    permissionMode: "default",
    agentCommand: null,
  },
  "session.working": working,
  "session.idle": idle,
  "session.stalled": stalled,
  "session.killed": { ...idle, status: "killed", previous: "idle", source: "ag" },
  "session.ended": { ...idle, status: "killed", previous: "idle", source: "ag", reason: "killed" },
  "session.turn_ended": { ...idle, reason: "completed" },
  "permission.requested": prompt,
  "consensus.completed": {
    consensusId: "8d0c2f8e-5a1b-4c39-9a57-0f3c2b1d4e6a",
    sessionId: "3f2c1b4a-1111-4c39-9a57-0f3c2b1d4e6a",
    status: "completed",
    verdict: "approve",
    agreement: 0.6667,
    reviewers: 3,
    counted: 3,
    approve: 2,
    reject: 1,
    criteria: [{ criterion: "the tests pass", verdict: "pass" }],
    costUsd: 0.0123,
    record: "/v1/consensus/8d0c2f8e-5a1b-4c39-9a57-0f3c2b1d4e6a",
  },
  verification: {
    ok: true,
    steps: [
      {
        name: "tsc",
        command: "npx tsc --noEmit",
        ok: true,
        skipped: false,
        exitCode: 0,
        durationMs: 812,
        output: "",
      },
    ],
    totalDurationMs: 812,
    summary: "Verification passed: tsc ✅ (812ms)",
    criticalOnly: true,
    trigger: "api",
  },
  "message.user": message,
  "message.assistant": message,
  "message.thinking": message,
  "message.tool_use": { ...message, tool: "Bash", toolUseId: "toolu_1", input: { command: "npm test" } },
  "message.tool_result": { ...message, toolUseId: "toolu_1", isError: false },
  "status.idle": idle,
  "status.working": working,
  "status.permission": prompt,
  "status.question": {
    ...prompt,
    status: "asking",
    pendingPermission: {
      id: "perm-2",
      kind: "question",
      detail: "Which color?",
      question: "Which color?",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    },
  },
  "status.plan": { ...prompt, pendingPermission: { id: "perm-3", kind: "plan", detail: "1. Fix the bug" } },
  "status.stall": stalled,
  "status.dead": { ...working, status: "crashed", previous: "working", source: "tmux" },
  "status.stopped": { ...idle, status: "completed", previous: "idle", source: "ag", reason: "idle_timeout" },
  "status.error": { ...idle, source: "transcript" },
  "status.rate_limited": { ...idle, source: "transcript" },
  "status.permission_timeout": { pendingPermission: BASH_PROMPT },
  "status.recovered": { ...working, previous: "stalled" },
  "swarm.teammate_spawned": { parentId: "0b5e55ed-0000-4000-8000-00000000000a" },
  "swarm.teammate_finished": { parentId: "0b5e55ed-0000-4000-8000-00000000000a", reason: "normal" },
  "budget.warning": { budget: "session", usd: 1, spentUsd: 0.85, share: 0.85, state: "warning" },
  "budget.reached": { budget: "session", usd: 1, spentUsd: 1.02, share: 1.02, state: "reached" },
  "budget.raised": { budget: "session", usd: 2, spentUsd: 1.02, share: 0.51, state: "ok" },
  "session.handoff": {
    from: "0b5e55ed-0000-4000-8000-00000000000a",
    to: "0b5e55ed-0000-4000-8000-00000000000b",
    agent: "codex",
    trigger: "manual",
  },
  "session.hibernated": { afterMs: 1_800_000, idleMs: 1_800_412 },
  "session.woke": { by: "prompt", wakeMs: 2_140 },
};

/** An event to publish: the sample payload of `name`, with the given fields (meta included). */
export function sampleInput<N extends EventName>(
  name: N,
  fields: { session?: EventSession; detail?: string; meta?: Partial<EventPayload<N>> } = {},
): EventInput<N> {
  const { meta, ...rest } = fields;
  return {
    event: name,
    detail: "",
    ...rest,
    meta: { ...SAMPLE_PAYLOADS[name], ...meta },
  } as EventInput<N>;
}
