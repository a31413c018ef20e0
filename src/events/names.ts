import { type Static, type TProperties, Type } from "@sinclair/typebox";

/**
 * The event catalog: every event name ag publishes, with the TypeBox schema of its `meta`
 * (CONTRACT §5: SPEC's SSE names and its channel names, one internal model).
 *
 * The bus type-checks each publish against it, SSE and the channels read events typed by it, the
 * configuration's event filters are checked against its names, and docs/events.md's payload
 * reference is generated from it (scripts/events-doc.ts). A browser bundle (the dashboard)
 * imports this module as it is: it imports nothing but TypeBox, and an architecture test keeps it
 * so. The few shapes that both events and the REST API carry (a session's status, its pending
 * prompt, a verification result) are defined here for that reason; their domains re-export them.
 */

/** A union of string literals with its precise type ("a" | "b"). */
function oneOf<const T extends readonly string[]>(values: T, description?: string) {
  return Type.Unsafe<T[number]>(
    Type.Union(
      values.map((v) => Type.Literal(v)),
      description === undefined ? {} : { description },
    ),
  );
}

// --- Shapes events share with the REST API ------------------------------------------------------

export const LIVE_STATES = ["working", "idle", "permission_prompt", "asking", "stalled"] as const;
export const TERMINAL_STATES = ["killed", "completed", "crashed"] as const;
export const SESSION_STATES = [...LIVE_STATES, ...TERMINAL_STATES] as const;
export const SessionStatus = oneOf(SESSION_STATES);
export type SessionStatus = Static<typeof SessionStatus>;

// The dialog a session waits on, as every agent adapter names it (src/agents/vocabulary.ts
// re-exports it: agents/ sits above events/).
export const QuestionOption = Type.Object({
  index: Type.Integer({ minimum: 1, description: "the option's number in the dialog (answer with it)" }),
  label: Type.String(),
  description: Type.Optional(Type.String()),
  optionId: Type.Optional(
    Type.String({ description: "an ACP session's permission: the agent's own id of the option" }),
  ),
});

export const PendingPermission = Type.Object({
  id: Type.String(),
  kind: Type.Union([
    Type.Literal("tool"),
    Type.Literal("plan"),
    Type.Literal("trust"),
    Type.Literal("question"),
  ]),
  tool: Type.Optional(Type.String()),
  detail: Type.String(),
  /**
   * Which of the agent's own dialogs a `trust` prompt is: its answer keys differ per dialog, and
   * `detail` is prose for people. Named by the agent adapter.
   */
  dialog: Type.Optional(
    Type.String({
      description: "the agent's dialog, for kind trust: folder-trust, api-key, bypass-permissions",
    }),
  ),
  question: Type.Optional(Type.String({ description: "kind question: what the agent asks" })),
  plan: Type.Optional(
    Type.String({
      description: "kind plan: the plan in full, as the agent hands it in (up to 20000 characters)",
    }),
  ),
  options: Type.Optional(
    Type.Array(QuestionOption, {
      description:
        "kind question, and a tool permission of an ACP session: the agent's options, answered by number",
    }),
  ),
  toolInput: Type.Optional(
    Type.Unknown({ description: "an ACP session's tool permission: the tool call as the agent sent it" }),
  ),
  multiSelect: Type.Optional(
    Type.Boolean({ description: "kind question: more than one option may be picked" }),
  ),
  questions: Type.Optional(
    Type.Integer({
      minimum: 2,
      description: "kind question: how many questions the dialog asks, when more than one",
    }),
  ),
});
export type PendingPermission = Static<typeof PendingPermission>;

export const STEP_NAMES = ["tsc", "build", "test"] as const;
export type StepName = (typeof STEP_NAMES)[number];

export const VerificationStep = Type.Object({
  name: oneOf(STEP_NAMES),
  command: Type.String({ description: "the command as run in the session's workDir" }),
  ok: Type.Boolean({ description: "true when it passed or was skipped" }),
  skipped: Type.Boolean(),
  reason: Type.Optional(Type.String({ description: "why it was skipped, timed out or could not run" })),
  exitCode: Type.Union([Type.Integer(), Type.Null()], {
    description: "null when skipped, or when the process ended by a signal (timeout)",
  }),
  durationMs: Type.Integer({ minimum: 0 }),
  output: Type.String({ description: "the last 4000 characters of stdout and stderr together" }),
});
export type VerificationStep = Static<typeof VerificationStep>;

const VERIFICATION_RESULT = {
  ok: Type.Boolean({ description: "every step passed or was skipped, and package.json was there" }),
  steps: Type.Array(VerificationStep, { description: "tsc, build and test, in that order" }),
  totalDurationMs: Type.Integer({ minimum: 0, description: "ms, from the start to the last step's end" }),
  summary: Type.String({ description: "e.g. Verification passed: tsc ✅, build ✅, test ✅ (812ms)" }),
};
export const VerificationResult = Type.Object(VERIFICATION_RESULT);
export type VerificationResult = Static<typeof VerificationResult>;

// --- The parts payloads are made of -------------------------------------------------------------

/** Who told ag what changed a session's state. */
export const STATUS_SOURCES = ["hook", "transcript", "screen", "tmux", "timer", "ag", "acp"] as const;
export type StatusSource = (typeof STATUS_SOURCES)[number];
/** Why a session ended (`session.ended`'s reason). */
export const END_REASONS = ["normal", "failed", "killed", "idle_timeout"] as const;
export type EndReason = (typeof END_REASONS)[number];
/** What wakes a hibernated session (`session.woke`'s by). */
export const WAKERS = ["prompt", "answer", "fork", "terminal", "api"] as const;
export type Waker = (typeof WAKERS)[number];
/** How a turn a prompt started ended. */
export const TURN_ENDS = ["completed", "failed", "interrupted"] as const;
export type TurnEnd = (typeof TURN_ENDS)[number];

/** Every change of a session's state carries these (the status writer publishes them). */
const STATUS = {
  status: oneOf(SESSION_STATES, "the state now"),
  previous: oneOf(SESSION_STATES, "the state before"),
  pendingPermission: Type.Union([PendingPermission, Type.Null()], {
    description: "the prompt waiting for an answer, if any",
  }),
  source: oneOf(
    STATUS_SOURCES,
    "who said so: the agent's hook, its transcript, its screen, tmux, a timer, ag",
  ),
};
export const StatusMeta = Type.Object(STATUS);
export type StatusMeta = Static<typeof StatusMeta>;

/** How a session came to be launched (`session.created`, besides its state). */
export const SessionLaunch = Type.Object({
  permissionMode: Type.String({ description: "the agent's permission mode" }),
  agentCommand: Type.Union([Type.String(), Type.Null()], {
    description: "the command that runs the agent (null: the agent's default)",
  }),
  forkedFrom: Type.Optional(Type.String({ description: "a fork: the session it was forked from" })),
  parentId: Type.Optional(Type.String({ description: "a teammate: the session that spawned it" })),
  resumed: Type.Optional(Type.Literal(true, { description: "an ended session's conversation resumed" })),
});
export type SessionLaunch = Static<typeof SessionLaunch>;

/** A transcript entry as an event (`message.*`). */
const MESSAGE = {
  uuid: Type.Union([Type.String(), Type.Null()], { description: "the transcript entry's id" }),
  timestamp: Type.Union([Type.String(), Type.Null()], { description: "when the agent wrote it" }),
  sidechain: Type.Boolean({ description: "written by a sub-agent" }),
};

/** A budget event's meta: which budget, its cap and spend, and the session's budget state now. */
const BudgetMeta = Type.Object({
  budget: Type.String({ description: "session, tenant:<id>:day|month, server:day|month" }),
  usd: Type.Union([Type.Number(), Type.Null()], { description: "the cap, in US dollars (null: cleared)" }),
  spentUsd: Type.Number({ description: "what was spent against it" }),
  share: Type.Number({ description: "spent / cap (0 without a cap)" }),
  state: oneOf(["ok", "warning", "reached"] as const, "the session's budget state now"),
  url: Type.Optional(Type.String({ description: "the session's budget card in the console" })),
});

const statusWith = <T extends TProperties>(extra: T) => Type.Object({ ...STATUS, ...extra });
const message = <T extends TProperties>(extra: T) => Type.Object({ ...MESSAGE, ...extra });

/** name → schema of `meta`, in the order SSE and the docs list them. */
export const EVENT_PAYLOADS = {
  "session.created": statusWith(SessionLaunch.properties),
  "session.working": StatusMeta,
  "session.idle": StatusMeta,
  "session.stalled": StatusMeta,
  "session.killed": StatusMeta,
  "session.ended": statusWith({ reason: oneOf(END_REASONS, "why it ended") }),
  "session.turn_ended": statusWith({ reason: oneOf(TURN_ENDS, "how the turn ended") }),
  "session.hibernated": Type.Object({
    afterMs: Type.Integer({ description: "the idle time after which it hibernates (ms)" }),
    idleMs: Type.Integer({ description: "how long it had been idle when its agent was ended (ms)" }),
  }),
  "session.woke": Type.Object({
    by: oneOf(WAKERS, "what woke it"),
    wakeMs: Type.Integer({ description: "from the wake-up asked to its agent started again (ms)" }),
  }),
  "permission.requested": StatusMeta,
  "consensus.completed": Type.Object({
    consensusId: Type.String({ description: "the review (GET /v1/consensus/:id)" }),
    sessionId: Type.String({ description: "the session whose work was reviewed" }),
    status: oneOf(["completed", "failed"] as const, "failed: no reviewer's answer could be read"),
    verdict: Type.Union([oneOf(["approve", "reject", "split"] as const), Type.Null()], {
      description: "the majority of the read answers; split on a tie",
    }),
    agreement: Type.Union([Type.Number(), Type.Null()], {
      description: "share of the counted reviewers agreeing with the verdict",
    }),
    reviewers: Type.Integer({ description: "reviewers asked" }),
    counted: Type.Integer({ description: "reviewers whose answer was read" }),
    approve: Type.Integer(),
    reject: Type.Integer(),
    criteria: Type.Array(
      Type.Object({ criterion: Type.String(), verdict: oneOf(["pass", "fail", "split"] as const) }),
    ),
    costUsd: Type.Number({ description: "the reviewers' cost, summed (estimate)" }),
    record: Type.String({ description: "the record's path in the API" }),
    url: Type.Optional(Type.String({ description: "the review's page in the dashboard" })),
  }),
  verification: Type.Object({
    ...VERIFICATION_RESULT,
    criticalOnly: Type.Boolean({ description: "the test step was skipped on purpose" }),
    trigger: oneOf(["api", "auto"] as const, "asked for (API, MCP, CLI) or autoVerifyOnStop"),
  }),
  "message.user": message({}),
  "message.assistant": message({}),
  "message.thinking": message({}),
  "message.tool_use": message({
    tool: Type.String({ description: "the tool's name" }),
    toolUseId: Type.String({ description: "the tool use's id (its message.tool_result names it)" }),
    input: Type.Unknown({ description: "the tool's input (every string clipped to 2000 characters)" }),
  }),
  "message.tool_result": message({
    toolUseId: Type.String({ description: "the tool use it answers" }),
    isError: Type.Boolean({ description: "the tool failed" }),
  }),
  "status.idle": StatusMeta,
  "status.working": StatusMeta,
  "status.permission": StatusMeta,
  "status.question": StatusMeta,
  "status.plan": StatusMeta,
  "status.stall": StatusMeta,
  "status.dead": StatusMeta,
  "status.stopped": statusWith({ reason: Type.Literal("idle_timeout") }),
  "status.error": StatusMeta,
  "status.rate_limited": StatusMeta,
  "status.permission_timeout": Type.Object({
    pendingPermission: Type.Object(PendingPermission.properties, {
      description: "the prompt still unanswered",
    }),
  }),
  "status.recovered": StatusMeta,
  "budget.warning": BudgetMeta,
  "budget.reached": BudgetMeta,
  "budget.raised": BudgetMeta,
  "session.handoff": Type.Object({
    from: Type.String({ description: "the session that handed its task off" }),
    to: Type.String({ description: "the new session, of another agent, in the same folder" }),
    agent: Type.String({ description: "the new session's agent" }),
    trigger: oneOf(["manual", "rate_limit", "usage_limit", "budget"] as const, "why it was handed off"),
  }),
  "swarm.teammate_spawned": Type.Object({
    parentId: Type.String({ description: "the session that spawned the teammate" }),
  }),
  "swarm.teammate_finished": Type.Object({
    parentId: Type.String({ description: "the session that spawned the teammate" }),
    reason: oneOf(END_REASONS, "why the teammate ended"),
  }),
} as const;

export type EventName = keyof typeof EVENT_PAYLOADS;
/** Every name of the catalog, in its order. */
export const EVENT_NAMES: readonly EventName[] = Object.keys(EVENT_PAYLOADS) as EventName[];
/** The `meta` an event of this name carries. */
export type EventPayload<N extends EventName> = Static<(typeof EVENT_PAYLOADS)[N]>;

/** The events a change of a session's state publishes: their meta is StatusMeta, and maybe more. */
export type StatusEventName = {
  [N in EventName]: EventPayload<N> extends StatusMeta ? N : never;
}[EventName];
/** What a status event carries besides StatusMeta (`session.ended`'s reason …). */
export type StatusExtra<N extends StatusEventName> = Omit<EventPayload<N>, keyof StatusMeta>;
export const STATUS_EVENT_NAMES = EVENT_NAMES.filter((name) =>
  Object.keys(STATUS).every((key) => key in EVENT_PAYLOADS[name].properties),
) as StatusEventName[];

/** The session an event is about. */
export interface EventSession {
  id: string;
  name: string;
  workDir: string;
}

/**
 * An event as SSE `data` and webhook bodies carry it: `{event, timestamp, session?, detail, meta}`
 * (the bus numbers it too; SSE sends that number as the message id). A union over the names:
 * checking `event` narrows `meta` to that event's payload.
 */
export type EventData<N extends EventName = EventName> = N extends EventName
  ? { event: N; timestamp: string; session?: EventSession; detail: string; meta: EventPayload<N> }
  : never;

/** The transcript's entries as events. */
export type MessageEventName = Extract<EventName, `message.${string}`>;

/** A name of the catalog, as a schema (a union of the names' literals). */
export const EventNameSchema = oneOf(EVENT_NAMES, "an event name of the catalog (docs/events.md)");

export function isEventName(value: unknown): value is EventName {
  return typeof value === "string" && Object.hasOwn(EVENT_PAYLOADS, value);
}
/**
 * Events that ask a person to act for the session to go on: a prompt or a question to answer, a
 * prompt left unanswered, a stall, a failed turn, a dead agent. Their notifications carry the
 * session's dashboard link (CONTRACT §10).
 */
export const NEEDS_HUMAN_EVENTS = [
  "permission.requested",
  "status.permission",
  "status.plan",
  "status.question",
  "status.permission_timeout",
  "session.stalled",
  "status.stall",
  "status.error",
  "status.rate_limited",
  "status.dead",
  "budget.warning",
  "budget.reached",
] as const satisfies readonly EventName[];

export function needsHuman(name: EventName): boolean {
  return (NEEDS_HUMAN_EVENTS as readonly EventName[]).includes(name);
}
