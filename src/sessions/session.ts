import { type Static, Type } from "@sinclair/typebox";
import { DRIVER_NAMES, TokenCounts } from "../agents/vocabulary.ts";
import { PermissionMode } from "../config/schema.ts";
import { PendingPermission, SESSION_STATES, SessionStatus, TERMINAL_STATES } from "../events/names.ts";
import { literalUnion } from "../shared/schema.ts";

// The states and the pending prompt are also what events carry: the event catalog defines them.
export {
  LIVE_STATES,
  PendingPermission,
  QuestionOption,
  SESSION_STATES,
  SessionStatus,
  TERMINAL_STATES,
} from "../events/names.ts";

/** `running` is the CLI's word for any live state. */
export const SessionStatusFilter = literalUnion([...SESSION_STATES, "running"] as const);
export type SessionStatusFilter = Static<typeof SessionStatusFilter>;

export function isTerminal(status: SessionStatus): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(status);
}

export const TokenUsage = TokenCounts;

export const PERMISSION_PROFILES = ["readonly", "standard", "full"] as const;
export type PermissionProfile = (typeof PERMISSION_PROFILES)[number];

/**
 * What ag itself forbids a session, enforced in the agent's pre-tool hook (deny). `true` means
 * "no objection from ag": the agent's own permission flow still applies (it may still ask).
 */
export const PermissionPolicy = Type.Object({
  profile: Type.Union([literalUnion(PERMISSION_PROFILES), Type.Literal("custom")]),
  allowRead: Type.Boolean(),
  allowWrite: Type.Boolean(),
  allowBash: Type.Boolean(),
});
export type PermissionPolicy = Static<typeof PermissionPolicy>;

export const PolicyInput = Type.Object(
  { allowRead: Type.Boolean(), allowWrite: Type.Boolean(), allowBash: Type.Boolean() },
  { additionalProperties: false },
);
export const ProfileInput = Type.Object(
  { profile: literalUnion(PERMISSION_PROFILES) },
  { additionalProperties: false },
);

/** An agent id: GET /v1/agents lists them; an unknown one is UNKNOWN_AGENT. */
export const AgentId = Type.String({
  pattern: "^[a-z][a-z0-9-]{0,31}$",
  description: "the agent CLI to run (GET /v1/agents); default the server's default agent (claude)",
});
/**
 * The model the agent runs, in the agent's own words (`opus`, `claude-sonnet-4-5`, `gpt-5-codex`,
 * `gemini-2.5-pro`, OpenCode's `provider/model`): passed to the agent as it takes one, never
 * checked against a list (the agent's provider knows its models; an unknown one fails the turn
 * with the agent's own error). No spaces, and no leading `-`: it is one argument of a launch line.
 */
export const ModelName = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: "^[A-Za-z0-9][A-Za-z0-9._:/@\\[\\]+-]*$",
  description:
    "the model the agent runs, as that agent names models (Claude Code --model, Codex -m, Gemini CLI -m, OpenCode provider/model); default the agent's own",
});
export const Driver = literalUnion(DRIVER_NAMES, {
  description:
    "tmux: the agent's terminal UI in a tmux window (default); acp: headless over the Agent Client Protocol",
});

/** What a session may spend (docs/budgets.md): a cap in US dollars, optionally in tokens. */
export const BUDGET_STATES = ["ok", "warning", "reached"] as const;
export const SessionBudget = Type.Object({
  usd: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
    description: "the session's own cap in US dollars (null: none of its own)",
  }),
  tokens: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: "the session's own cap in tokens, input and output together (null: none)",
  }),
  spentUsd: Type.Number({ description: "what it spent, priced by ag's price table" }),
  spentTokens: Type.Integer({ description: "input and output tokens it spent" }),
  state: literalUnion(BUDGET_STATES, {
    description:
      "ok; warning: past the warning share of a budget; reached: a budget that applies to it is spent, prompts are refused (BUDGET_REACHED) until it is raised",
  }),
  reachedBy: Type.Union([Type.String(), Type.Null()], {
    description: "the budget that paused it: session, tenant:<id>:day|month, server:day|month",
  }),
  interruptAtCap: Type.Boolean({ description: "a turn past the cap is interrupted at once, not let finish" }),
  heldPrompt: Type.Boolean({
    description: "a refused prompt waits to be delivered once when the budget is raised",
  }),
  unpriced: Type.Array(Type.String(), {
    description: "models with no price of their own: priced by budgets.defaultPrice",
  }),
});
export type SessionBudget = Static<typeof SessionBudget>;

/** The session a handoff links: the one it handed its task to, or took it from. */
export const HandoffLinks = Type.Object({
  handedOffTo: Type.Union([Type.String(), Type.Null()]),
  handedOffFrom: Type.Union([Type.String(), Type.Null()]),
});
/** The longest a session's own hibernation time may be (30 days). */
const MAX_HIBERNATE_AFTER_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * A session's (or a template's) own hibernation setting (docs/hibernation.md): `false` pins it
 * (its agent is never ended for being idle); `{afterMs}` hibernates it after that long idle.
 */
export const HibernateSetting = Type.Union(
  [
    Type.Literal(false),
    Type.Object(
      { afterMs: Type.Integer({ minimum: 1000, maximum: MAX_HIBERNATE_AFTER_MS }) },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      "false: never hibernate this session; {afterMs}: hibernate it after that long idle; absent: the server's hibernateAfterMs",
  },
);
export type HibernateSetting = Static<typeof HibernateSetting>;

/** The stored form (hibernate_after_ms) as the API shows it: null is the server's setting. */
export function hibernateSetting(afterMs: number | null): HibernateSetting | null {
  if (afterMs === null) return null;
  return afterMs === 0 ? false : { afterMs };
}

/** A request's setting as stored (hibernate_after_ms): null, the server's; 0, never. */
export function storedHibernation(setting: HibernateSetting | undefined): number | null {
  if (setting === undefined) return null;
  return setting === false ? 0 : setting.afterMs;
}

/** The session object every route returns (CONTRACT §2). It never carries a secret. */
export const Session = Type.Object({
  id: Type.String({ format: "uuid" }),
  name: Type.String(),
  workDir: Type.String(),
  agent: Type.String({
    description: "the agent CLI it runs: claude, codex, gemini, opencode (GET /v1/agents)",
  }),
  driver: Driver,
  status: SessionStatus,
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
  lastActivityAt: Type.String({ format: "date-time" }),
  agentCommand: Type.Union([Type.String(), Type.Null()]),
  agentVersion: Type.Union([Type.String(), Type.Null()], {
    description:
      "the version of the agent CLI its launch ran, read at the launch (null when it could not be told: another program, no answer in time)",
  }),
  verified: Type.Union([Type.Boolean(), Type.Null()], {
    description:
      "whether agentVersion is one the agent's adapter is verified on (GET /v1/agents verifiedVersions); an unverified one runs all the same; null when the version is unknown",
  }),
  permissionMode: PermissionMode,
  model: Type.Union([Type.String(), Type.Null()], {
    description: "the model asked for at creation (null: the agent's own default)",
  }),
  stallThresholdMs: Type.Integer(),
  parentId: Type.Union([Type.String(), Type.Null()]),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  tokenUsage: TokenUsage,
  pendingPermission: Type.Union([PendingPermission, Type.Null()]),
  permissions: Type.Union([PermissionPolicy, Type.Null()]),
  baseCommit: Type.Union([Type.String(), Type.Null()], {
    description: "the git commit its workDir was at when it was launched (null outside a git repository)",
  }),
  managedBy: Type.Union([Type.String(), Type.Null()], {
    description:
      "the pipeline or consensus review that runs it (pipeline:<id>, consensus:<id>); such a session is never reused by another create",
  }),
  hibernated: Type.Boolean({
    description:
      "its agent was ended for being idle (status idle): the next prompt, answer, fork or terminal wakes it (docs/hibernation.md)",
  }),
  hibernate: Type.Union([HibernateSetting, Type.Null()], {
    description: "its own hibernation setting; null: the server's hibernateAfterMs",
  }),
  endedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "null while it runs",
  }),
  endReason: Type.Union([Type.String(), Type.Null()], {
    description:
      "why it ended, as ag recorded it: killed, idle_timeout, driver_restart (an ACP agent ag could not reopen after a restart), agent exited…; null while it runs",
  }),
  budget: Type.Optional(
    Type.Union([SessionBudget, Type.Null()], {
      description: "what it may spend and spent (docs/budgets.md)",
    }),
  ),
  handedOffTo: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: "the session it handed its task to" }),
  ),
  handedOffFrom: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: "the session that handed it its task" }),
  ),
  host: Type.Optional(
    Type.String({ description: "in a fleet (docs/fleet.md): the host that runs it; absent outside a fleet" }),
  ),
  hostOnline: Type.Optional(
    Type.Boolean({
      description: "in a fleet: whether its host holds its lease (false: the session is as last known)",
    }),
  ),
});
export type Session = Static<typeof Session>;

/** In a fleet: a host's name, or `auto` (the live host with the most memory headroom that has the workDir). */
export const HostChoice = Type.String({
  minLength: 1,
  maxLength: 63,
  pattern: "^[A-Za-z0-9][A-Za-z0-9._-]*$",
  description:
    "in a fleet (docs/fleet.md): the host to run it on, or `auto`: the live host with the most memory headroom that has the workDir",
});

/** CONTRACT §2: name ≤ 128 characters; prompt ≤ 256 KiB (checked in bytes by the route). */
export const SessionName = Type.String({
  minLength: 1,
  maxLength: 128,
  description: "defaults to <workDir's folder>-<first 8 characters of the id>",
});

/** CONTRACT §10: reuse is never a surprise. */
export const Reuse = Type.Boolean({
  description:
    "false: always start a new session. true (default): an idle session in the same workDir (same agentCommand / permissionMode / model when given) takes the prompt instead (200, reused: true), but never one with another name than the `name` given",
});
export const MAX_PROMPT_BYTES = 256 * 1024;

/** Extra environment variables of the agent process: names as the shell knows them. */
export const AgentEnv = Type.Record(
  Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }),
  Type.String({ maxLength: 32 * 1024, pattern: "^[^\\u0000]*$" }),
  {
    maxProperties: 100,
    additionalProperties: false,
    description: "environment variables of the agent process",
  },
);
export const MemoryKeys = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
  maxItems: 100,
  description: "memory entries prepended to the prompt as [Memory context]",
});
export const StallThreshold = Type.Integer({
  minimum: 1,
  maximum: 24 * 60 * 60 * 1000,
  description: "no agent activity this long while working means stalled",
});

/** A session's budget as asked for: at create, by template, or POST /v1/sessions/:id/budget. */
export const BudgetInput = Type.Object(
  {
    usd: Type.Union([Type.Number({ minimum: 0, maximum: 1_000_000 }), Type.Null()], {
      description: "cap in US dollars; null clears it",
    }),
    tokens: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 }), Type.Null()], {
        description: "cap in tokens; null clears it",
      }),
    ),
    interruptAtCap: Type.Optional(
      Type.Boolean({
        description:
          "interrupt the turn at once when it passes the cap, instead of letting it finish (default: the server's budgets.interruptAtCap)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type BudgetInput = Static<typeof BudgetInput>;

export const CreateSessionInput = Type.Object(
  {
    name: Type.Optional(SessionName),
    workDir: Type.Optional(
      Type.String({
        minLength: 1,
        description: "absolute path of an existing directory; required unless templateId supplies it",
      }),
    ),
    prompt: Type.Optional(Type.String()),
    memoryKeys: Type.Optional(MemoryKeys),
    agent: Type.Optional(AgentId),
    driver: Type.Optional(Driver),
    offerMcp: Type.Optional(
      Type.Boolean({
        description:
          "driver acp: offer the agent ag's own MCP server (`ag mcp`: sessions, pipelines, memory), with an API key of the session's own, deleted when it ends",
      }),
    ),
    permissionMode: Type.Optional(PermissionMode),
    model: Type.Optional(ModelName),
    agentCommand: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    env: Type.Optional(AgentEnv),
    stallThresholdMs: Type.Optional(StallThreshold),
    templateId: Type.Optional(
      Type.String({ minLength: 1, description: "apply this template; fields given here override it" }),
    ),
    reuse: Type.Optional(Reuse),
    budget: Type.Optional(BudgetInput),
    hibernate: Type.Optional(HibernateSetting),
    host: Type.Optional(HostChoice),
  },
  { additionalProperties: false },
);
export type CreateSessionInput = Static<typeof CreateSessionInput>;

export const SendInput = Type.Object(
  { text: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);
export const PermissionAnswer = Type.Object(
  { permissionId: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

/** POST /answer: one of the question's options, or an answer of one's own (exactly one of them). */
export const QuestionAnswerInput = Type.Object(
  {
    option: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 99, description: "the number of one of the options" }),
    ),
    text: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4096, description: "an answer of one's own" }),
    ),
    permissionId: Type.Optional(Type.String({ description: "the pending question's id, to be sure" })),
  },
  { additionalProperties: false },
);
export type QuestionAnswer = { option: number } | { text: string };

export const Delivery = Type.Object({
  delivered: Type.Boolean(),
  attempts: Type.Integer(),
  reason: Type.Optional(Type.String({ description: "why it was not delivered" })),
  answered: Type.Optional(
    Type.Boolean({ description: "the text answered the agent's question instead of being a prompt" }),
  ),
});

export const CreatedSession = Type.Composite([
  Session,
  Type.Object({
    reused: Type.Boolean(),
    promptDelivery: Type.Union([Delivery, Type.Null()]),
    warnings: Type.Optional(Type.Array(Type.String())),
  }),
]);

export const BatchCreateInput = Type.Object(
  {
    sessions: Type.Array(
      Type.Object(
        {
          name: Type.Optional(SessionName),
          workDir: Type.String({ minLength: 1 }),
          prompt: Type.Optional(Type.String()),
          agent: Type.Optional(AgentId),
          driver: Type.Optional(Driver),
          permissionMode: Type.Optional(PermissionMode),
          model: Type.Optional(ModelName),
          agentCommand: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
          reuse: Type.Optional(Reuse),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50 },
    ),
  },
  { additionalProperties: false },
);

export const BatchCreated = Type.Object({
  created: Type.Array(CreatedSession),
  failed: Type.Array(
    Type.Object({
      index: Type.Integer(),
      error: Type.String(),
      code: Type.String(),
      statusCode: Type.Integer(),
    }),
  ),
});

export const BatchKillInput = Type.Object(
  { ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 50 }) },
  { additionalProperties: false },
);
export const BatchKilled = Type.Object({
  killed: Type.Array(Type.String()),
  notFound: Type.Array(Type.String()),
});

export const SpawnInput = Type.Object(
  { prompt: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

export const ForkedSession = Type.Composite([CreatedSession, Type.Object({ forkedFrom: Type.String() })]);

export const ReadResult = Type.Object({
  id: Type.String(),
  status: SessionStatus,
  output: Type.String({ description: "the assistant text of the latest turn" }),
  tokenUsage: Type.Object({ input: Type.Integer(), output: Type.Integer() }),
});
export type ReadResult = Static<typeof ReadResult>;

/** The session's terminal screen as text. */
export const Pane = Type.Object({ id: Type.String(), content: Type.String() });

export const SessionListQuery = Type.Object({
  status: Type.Optional(SessionStatusFilter),
  workDir: Type.Optional(Type.String({ description: "substring of the session's workDir" })),
  host: Type.Optional(Type.String({ description: "in a fleet: only the sessions of this host" })),
});
export type SessionListQuery = Static<typeof SessionListQuery>;

export const SessionStats = Type.Object({
  total: Type.Integer(),
  active: Type.Integer({ description: "sessions in a live state" }),
  idle: Type.Integer(),
  stalled: Type.Integer(),
  byStatus: Type.Record(Type.String(), Type.Integer()),
});
export type SessionStats = Static<typeof SessionStats>;
