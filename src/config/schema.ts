import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { PERMISSION_MODES } from "../agents/vocabulary.ts";
import { type EventName, EventNameSchema } from "../events/names.ts";
import { LOG_LEVELS } from "../shared/log.ts";
import { literalUnion } from "../shared/schema.ts";

export { LOG_LEVELS, PERMISSION_MODES };

/**
 * Every setting of ag, in one table: its config-file key, its environment variable, its schema
 * and its default. load.ts reads the sources; nothing else knows where a value came from.
 */

const Milliseconds = Type.Integer({ minimum: 0 });
const NonEmpty = Type.String({ minLength: 1 });
/** A screenshot allow entry: `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address. */
const ALLOW_ENTRY =
  "^(?:\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9._-]+)(?::(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3}))?$|^[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$";

/**
 * How far a session's own key (offerMcp) may create sessions: this deep below a session nobody
 * created, this many running at once per session. docs/auth.md, "Session keys".
 */
export const SESSION_KEY_LIMITS = { maxDepth: 3, maxChildren: 8 } as const;

export const PermissionMode = literalUnion(PERMISSION_MODES);
export type PermissionMode = (typeof PERMISSION_MODES)[number];
export const LogLevel = literalUnion(LOG_LEVELS);
export type LogLevel = (typeof LOG_LEVELS)[number];

export const WebhookTarget = Type.Object(
  {
    url: Type.String({ pattern: "^https?://" }),
    events: Type.Optional(Type.Array(EventNameSchema)),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    secret: Type.Optional(Type.String()),
    redactContent: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type WebhookTarget = Static<typeof WebhookTarget>;

export const TenantWorkdir = Type.Object(
  {
    root: NonEmpty,
    allowedPaths: Type.Optional(Type.Array(Type.String())),
    /**
     * The OS user every agent of the tenant (and every command ag runs in its folders for its
     * sessions) runs as; checked at start (shared/run-as.ts, docs/security.md).
     */
    runAs: Type.Optional(
      Type.String({ minLength: 1, maxLength: 32, pattern: "^[A-Za-z_][A-Za-z0-9_.-]*\\$?$" }),
    ),
  },
  { additionalProperties: false },
);

/** A price per million tokens (the shape of a `pricing` entry). */
const PriceSetting = Type.Object(
  {
    input: Type.Number({ minimum: 0 }),
    output: Type.Number({ minimum: 0 }),
    cacheRead: Type.Optional(Type.Number({ minimum: 0 })),
    cacheCreation: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);
const Usd = Type.Union([Type.Number({ minimum: 0 }), Type.Null()]);

/** Budgets beyond a session's own (docs/budgets.md). */
export const BudgetSettings = Type.Object(
  {
    warnAt: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.8 }),
    interruptAtCap: Type.Boolean({ default: false }),
    dayUsd: Type.Optional(Usd),
    monthUsd: Type.Optional(Usd),
    tenants: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object(
          { dayUsd: Type.Optional(Usd), monthUsd: Type.Optional(Usd) },
          { additionalProperties: false },
        ),
      ),
    ),
    defaultPrice: Type.Optional(PriceSetting),
  },
  { additionalProperties: false },
);
export type BudgetSettings = Static<typeof BudgetSettings>;
/** The priciest model of the built-in tables: an unknown model is never cheaper than a known one. */
export const DEFAULT_UNKNOWN_PRICE = { input: 15, output: 75 } as const;
export const DEFAULT_BUDGETS: BudgetSettings = {
  warnAt: 0.8,
  interruptAtCap: false,
  dayUsd: null,
  monthUsd: null,
  tenants: {},
  defaultPrice: { ...DEFAULT_UNKNOWN_PRICE },
};

export const HANDOFF_TRIGGERS = ["rate_limit", "usage_limit", "budget"] as const;
export type HandoffTrigger = (typeof HANDOFF_TRIGGERS)[number];
/** When a session hands its task to another agent by itself (config or template). */
export const HandoffPolicy = Type.Object(
  {
    on: Type.Array(literalUnion(HANDOFF_TRIGGERS), { maxItems: 3 }),
    to: Type.Array(Type.String({ pattern: "^[a-z][a-z0-9-]{0,31}$" }), {
      maxItems: 8,
      description: "agents to hand off to, the first that is not the session's own",
    }),
    afterMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 24 * 60 * 60 * 1000,
        description: "how long a rate limit lasts first",
      }),
    ),
  },
  { additionalProperties: false },
);
export type HandoffPolicy = Static<typeof HandoffPolicy>;

/** How an environment string becomes a value before the schema checks it. */
/** `list`: comma-separated values, trimmed, empty items dropped. */
export type EnvKind = "string" | "integer" | "number" | "boolean" | "json" | "webhooks" | "list";

export interface Setting {
  /** The config-file key (camelCase). */
  key: string;
  /** The environment variable, when the setting has one. */
  env?: string;
  /** Other spellings of it (SPEC names some variables twice); `env` wins when both are set. */
  envAliases?: string[];
  envKind?: EnvKind;
  schema: TSchema;
  /** The built-in default; undefined means "derived" (see load.ts) or "none". */
  default?: unknown;
  description: string;
  /** An object setting's fields that an environment variable each can set (`fleet.databaseUrl`). */
  envFields?: Record<string, { env: string; envKind: EnvKind }>;
}

const setting = (s: Setting): Setting => s;

export const SETTINGS = [
  setting({
    key: "port",
    env: "SVC_PORT",
    envKind: "integer",
    schema: Type.Integer({ minimum: 0, maximum: 65535 }),
    default: 9100,
    description: "HTTP port (0 picks a free port)",
  }),
  setting({
    key: "host",
    env: "SVC_HOST",
    envKind: "string",
    schema: NonEmpty,
    description: "Bind address; default 127.0.0.1, or 0.0.0.0 inside a detected container",
  }),
  setting({
    key: "baseUrl",
    env: "SVC_BASE_URL",
    envKind: "string",
    schema: Type.String({ pattern: "^https?://" }),
    description: "Preferred API origin for hooks and CLI clients; default http://127.0.0.1:<port>",
  }),
  setting({
    key: "authToken",
    env: "SVC_AUTH_TOKEN",
    envKind: "string",
    schema: Type.String(),
    default: "",
    description:
      "Bearer token every request needs; empty: ag generates one in <stateDir>/auth-token, required beyond loopback and, on loopback, by requests that change state without an Origin",
  }),
  setting({
    key: "allowUnauthenticatedNetwork",
    env: "SVC_ALLOW_UNAUTHENTICATED_NETWORK",
    envKind: "boolean",
    schema: Type.Boolean(),
    default: false,
    description:
      "INSECURE: with no token configured, serve beyond loopback without requiring ag's generated token (browsers on an allowed Host; state changes without an Origin still need it); warns at every start",
  }),
  setting({
    key: "stateDir",
    env: "SVC_STATE_DIR",
    envKind: "string",
    schema: NonEmpty,
    description: "State, audit logs and runtime metadata; default ~/.svc",
  }),
  setting({
    key: "logLevel",
    env: "SVC_LOG_LEVEL",
    envKind: "string",
    schema: LogLevel,
    default: "info",
    description: `Log verbosity: ${LOG_LEVELS.join(", ")}`,
  }),
  setting({
    key: "jsonLogs",
    env: "SVC_JSON_LOGS",
    envKind: "boolean",
    schema: Type.Boolean(),
    default: false,
    description: "One JSON object per log line (also --json-logs)",
  }),
  setting({
    key: "dashboardEnabled",
    env: "SVC_DASHBOARD_ENABLED",
    envKind: "boolean",
    schema: Type.Boolean(),
    default: true,
    description: "Serve the bundled dashboard at /dashboard/",
  }),
  setting({
    key: "dashboardUrl",
    env: "SVC_DASHBOARD_URL",
    envKind: "string",
    schema: Type.String({ pattern: "^https?://" }),
    description: "Dashboard URL; default http://localhost:<port>/dashboard",
  }),
  setting({
    key: "maxSessions",
    env: "SVC_MAX_SESSIONS",
    envKind: "integer",
    schema: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    default: null,
    description: "Max concurrent sessions; unset means unlimited",
  }),
  setting({
    key: "sessionKeyMaxDepth",
    env: "SVC_SESSION_KEY_MAX_DEPTH",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1, maximum: 64 }),
    default: SESSION_KEY_LIMITS.maxDepth,
    description:
      "How deep sessions created with session keys may nest below a session nobody created (past it a 403)",
  }),
  setting({
    key: "sessionKeyMaxChildren",
    env: "SVC_SESSION_KEY_MAX_CHILDREN",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1, maximum: 1000 }),
    default: SESSION_KEY_LIMITS.maxChildren,
    description: "Running sessions one session may have created with its key at once (past it a 429)",
  }),
  setting({
    key: "memoryReserveMb",
    env: "SVC_MEMORY_RESERVE_MB",
    envKind: "integer",
    schema: Type.Integer({ minimum: 0 }),
    default: 1024,
    description:
      "Memory (MB) kept free for the rest of the machine: a session starts only while one more agent fits above it; 0 turns the check off",
  }),
  setting({
    key: "idleTimeoutMs",
    env: "SVC_IDLE_TIMEOUT_MS",
    envKind: "integer",
    schema: Milliseconds,
    default: 600_000,
    description: "An idle session past this ends as completed; 0 disables",
  }),
  setting({
    key: "hibernateAfterMs",
    env: "SVC_HIBERNATE_AFTER_MS",
    envKind: "integer",
    schema: Milliseconds,
    default: 0,
    description:
      "An idle session's agent is ended past this (the session stays, idle and hibernated) and started again on its next prompt; 0 (default) turns it off, a session's or template's `hibernate` still applies (docs/hibernation.md)",
  }),
  setting({
    key: "stallThresholdMs",
    env: "SVC_STALL_THRESHOLD_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1 }),
    default: 120_000,
    description: "No agent activity this long while working means stalled",
  }),
  setting({
    key: "permissionTimeoutMs",
    env: "SVC_PERMISSION_TIMEOUT_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1 }),
    default: 300_000,
    description: "A permission prompt unanswered this long emits status.permission_timeout",
  }),
  setting({
    key: "permissionMode",
    env: "SVC_PERMISSION_MODE",
    envKind: "string",
    schema: PermissionMode,
    default: "default",
    description: `Default permission mode of new sessions: ${PERMISSION_MODES.join(", ")}`,
  }),
  setting({
    key: "defaultAgent",
    env: "SVC_DEFAULT_AGENT",
    envKind: "string",
    schema: Type.String({ pattern: "^[a-z][a-z0-9-]{0,31}$" }),
    default: "claude",
    description: "The agent CLI of sessions that name none (GET /v1/agents lists them)",
  }),
  setting({
    key: "muxSession",
    env: "SVC_MUX_SESSION",
    envKind: "string",
    schema: Type.String({ pattern: "^[A-Za-z0-9_-]+$" }),
    default: "svc",
    description: "tmux session that holds the agent windows",
  }),
  setting({
    key: "tmuxSocket",
    env: "SVC_TMUX_SOCKET",
    envKind: "string",
    schema: Type.String({ pattern: "^[A-Za-z0-9_.-]+$" }),
    default: "svc",
    description: "Name of ag's private tmux server socket (tmux -L); never the user's default server",
  }),
  setting({
    key: "agentDataDir",
    env: "AGENT_DATA_DIR",
    envKind: "string",
    schema: Type.Union([NonEmpty, Type.Null()]),
    default: null,
    description: "The default agent's data directory (SPEC's AGENT_DATA_DIR); default the CLI's own",
  }),
  setting({
    key: "trustWorkdir",
    env: "SVC_TRUST_WORKDIR",
    envKind: "boolean",
    schema: Type.Boolean(),
    default: true,
    description: "Pre-accept the agent's folder-trust dialog for each session's workDir",
  }),
  setting({
    key: "createWaitMs",
    env: "SVC_CREATE_WAIT_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1000 }),
    default: 60_000,
    description: "How long session creation waits for the prompt to be delivered and confirmed",
  }),
  setting({
    key: "sseIdleMs",
    env: "SVC_SSE_IDLE_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1 }),
    default: 120_000,
    description: "Write a :ping SSE comment after this much silence",
  }),
  setting({
    key: "sseClientTimeoutMs",
    env: "SVC_SSE_CLIENT_TIMEOUT_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1 }),
    default: 300_000,
    description: "Close an SSE connection after this long without an event",
  }),
  setting({
    key: "hookTimeoutMs",
    env: "SVC_HOOK_TIMEOUT_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1 }),
    default: 10_000,
    description: "Timeout of outgoing webhook/hook requests",
  }),
  setting({
    key: "shutdownGraceMs",
    env: "SVC_SHUTDOWN_GRACE_MS",
    envKind: "integer",
    schema: Milliseconds,
    default: 15_000,
    description: "Time to drain in-flight requests on SIGTERM/SIGINT",
  }),
  setting({
    key: "shutdownHardMs",
    env: "SVC_SHUTDOWN_HARD_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1 }),
    default: 20_000,
    description: "Hard cap of the whole shutdown; exit code 1 when exceeded",
  }),
  setting({
    key: "webhooks",
    env: "SVC_WEBHOOKS",
    envKind: "webhooks",
    schema: Type.Array(WebhookTarget),
    default: [],
    description:
      "Webhook targets: a JSON array of {url, events?, headers?, timeoutMs?, secret?, redactContent?}, or comma-separated URLs",
  }),
  setting({
    key: "modelFast",
    env: "MODEL_FAST",
    envKind: "string",
    schema: NonEmpty,
    default: "haiku",
    description: "Model of the fast tier (model router)",
  }),
  setting({
    key: "modelStandard",
    env: "MODEL_STANDARD",
    envKind: "string",
    schema: NonEmpty,
    default: "sonnet",
    description: "Model of the standard tier (model router)",
  }),
  setting({
    key: "modelPower",
    env: "MODEL_POWER",
    envKind: "string",
    schema: NonEmpty,
    default: "opus",
    description: "Model of the power tier (model router)",
  }),
  setting({
    key: "otelEnabled",
    env: "SVC_OTEL_ENABLED",
    envKind: "boolean",
    schema: Type.Boolean(),
    default: false,
    description: "Enable tracing",
  }),
  setting({
    key: "otelOtlpEndpoint",
    env: "SVC_OTEL_OTLP_ENDPOINT",
    envKind: "string",
    schema: Type.String({ pattern: "^https?://" }),
    default: "http://localhost:4318",
    description: "OTLP HTTP exporter endpoint",
  }),
  setting({
    key: "otelServiceName",
    env: "SVC_OTEL_SERVICE_NAME",
    envKind: "string",
    schema: NonEmpty,
    default: "svc",
    description: "Service name in trace data",
  }),
  setting({
    key: "otelSampleRate",
    env: "SVC_OTEL_SAMPLE_RATE",
    envKind: "number",
    schema: Type.Number({ minimum: 0, maximum: 1 }),
    default: 1.0,
    description: "Trace sample rate, 0.0 to 1.0",
  }),
  setting({
    key: "pricing",
    schema: Type.Record(
      Type.String({ minLength: 1 }),
      Type.Object(
        {
          input: Type.Number({ minimum: 0 }),
          output: Type.Number({ minimum: 0 }),
          cacheRead: Type.Optional(Type.Number({ minimum: 0 })),
          cacheCreation: Type.Optional(Type.Number({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
    default: {},
    description:
      'Price per million tokens by model-name fragment, e.g. {"opus": {input, output, cacheRead?, cacheCreation?}}; merged over the built-in table',
  }),
  setting({
    key: "chatVerbose",
    env: "SVC_CHAT_VERBOSE",
    envKind: "boolean",
    schema: Type.Boolean(),
    default: false,
    description: "Chat bot forwards thinking and tool use in full (truncated)",
  }),
  setting({
    key: "chromiumPath",
    env: "SVC_CHROMIUM_PATH",
    envKind: "string",
    schema: Type.Union([NonEmpty, Type.Null()]),
    default: null,
    description:
      "Chromium for screenshots; default the first of chromium, chromium-browser, google-chrome on PATH",
  }),
  setting({
    key: "screenshotAllowHosts",
    env: "SVC_SCREENSHOT_ALLOW_HOSTS",
    envKind: "list",
    schema: Type.Array(Type.String({ pattern: ALLOW_ENTRY })),
    default: [],
    description:
      "What screenshots may load besides the session's own loopback servers: host or host:port entries ([v6]:port), comma-separated",
  }),
  setting({
    key: "pipelineStageTimeoutMs",
    env: "SVC_PIPELINE_STAGE_TIMEOUT_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1000 }),
    default: 1_800_000,
    description: "A pipeline stage whose turn has not ended after this long fails the pipeline",
  }),
  setting({
    key: "consensusTimeoutMs",
    env: "SVC_CONSENSUS_TIMEOUT_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1000 }),
    default: 600_000,
    description:
      "A consensus reviewer that has not answered (restatement included) after this long is recorded as timed out",
  }),
  setting({
    key: "chatBotToken",
    env: "SVC_CHAT_BOT_TOKEN",
    envAliases: ["SVC_CHAT_TOKEN"],
    envKind: "string",
    schema: Type.String(),
    default: "",
    description: "Chat bot token; empty disables the chat channel",
  }),
  setting({
    key: "chatGroupId",
    env: "SVC_CHAT_GROUP_ID",
    envAliases: ["SVC_CHAT_GROUP"],
    envKind: "string",
    schema: Type.String(),
    default: "",
    description: "Group chat id the bot posts to (one forum topic per session)",
  }),
  setting({
    key: "chatAllowedUsers",
    env: "SVC_CHAT_ALLOWED_USERS",
    envKind: "list",
    schema: Type.Array(Type.String({ pattern: "^-?\\d+$" })),
    default: [],
    description:
      "User ids allowed to approve, reject and send from the chat (comma-separated); empty: notify only",
  }),
  setting({
    key: "chatApiBase",
    env: "SVC_CHAT_API_BASE",
    envKind: "string",
    schema: Type.String({ pattern: "^https?://" }),
    default: "https://api.telegram.org",
    description: "Origin of the chat bot HTTP API",
  }),
  setting({
    key: "teamchatWebhookUrl",
    env: "SVC_TEAMCHAT_WEBHOOK_URL",
    envKind: "string",
    schema: Type.Union([Type.String({ pattern: "^https?://" }), Type.Literal("")]),
    default: "",
    description: "Team-chat incoming-webhook URL; empty disables the team-chat channel",
  }),
  setting({
    key: "teamchatEvents",
    env: "SVC_TEAMCHAT_EVENTS",
    envKind: "json",
    schema: Type.Union([Type.Array(EventNameSchema), Type.Null()]),
    default: null,
    description: "Events sent to team chat (JSON array); default all",
  }),
  setting({
    key: "teamchatChannel",
    env: "SVC_TEAMCHAT_CHANNEL",
    envKind: "string",
    schema: Type.String(),
    default: "",
    description: "Team-chat channel override",
  }),
  setting({
    key: "teamchatTimeoutMs",
    env: "SVC_TEAMCHAT_TIMEOUT_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1 }),
    default: 5_000,
    description: "Team-chat request timeout",
  }),
  setting({
    key: "emailHost",
    env: "SVC_EMAIL_HOST",
    envKind: "string",
    schema: Type.String(),
    default: "",
    description: "SMTP host; empty disables the email channel",
  }),
  setting({
    key: "emailPort",
    env: "SVC_EMAIL_PORT",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1, maximum: 65535 }),
    default: 587,
    description: "SMTP port (465 means TLS from the start)",
  }),
  setting({
    key: "emailUser",
    env: "SVC_EMAIL_USER",
    envKind: "string",
    schema: Type.String(),
    default: "",
    description: "SMTP user (empty: no authentication)",
  }),
  setting({
    key: "emailPass",
    env: "SVC_EMAIL_PASS",
    envKind: "string",
    schema: Type.String(),
    default: "",
    description: "SMTP password",
  }),
  setting({
    key: "emailTo",
    env: "SVC_EMAIL_TO",
    envKind: "string",
    schema: Type.String(),
    default: "",
    description: "Recipient(s), comma-separated",
  }),
  setting({
    key: "emailFrom",
    env: "SVC_EMAIL_FROM",
    envKind: "string",
    schema: Type.String(),
    default: "",
    description: "Sender address; default the SMTP user",
  }),
  setting({
    key: "emailSecure",
    env: "SVC_EMAIL_SECURE",
    envKind: "boolean",
    schema: Type.Boolean(),
    default: false,
    description: "TLS from the start; always on for port 465",
  }),
  setting({
    key: "emailTimeoutMs",
    env: "SVC_EMAIL_TIMEOUT_MS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1 }),
    default: 10_000,
    description: "SMTP timeout",
  }),
  setting({
    key: "emailEvents",
    env: "SVC_EMAIL_EVENTS",
    envKind: "json",
    schema: Type.Array(EventNameSchema),
    default: [
      "status.stall",
      "status.dead",
      "status.error",
      "status.permission_timeout",
      "consensus.completed",
      "budget.reached",
      "session.handoff",
    ],
    description: "Events sent by email (JSON array)",
  }),
  setting({
    key: "memoryBridge",
    schema: Type.Object(
      {
        enabled: Type.Boolean({ default: true }),
        persistPath: Type.Union([NonEmpty, Type.Null()], { default: null }),
        reaperIntervalMs: Type.Integer({ minimum: 1000, default: 3_600_000 }),
      },
      { additionalProperties: false },
    ),
    default: { enabled: true, persistPath: null, reaperIntervalMs: 3_600_000 },
    description: "Memory bridge: {enabled, persistPath, reaperIntervalMs}",
  }),
  setting({
    key: "verificationProtocol",
    schema: Type.Object(
      { autoVerifyOnStop: Type.Boolean({ default: false }), criticalOnly: Type.Boolean({ default: false }) },
      { additionalProperties: false },
    ),
    default: { autoVerifyOnStop: false, criticalOnly: false },
    description: "Verification protocol: {autoVerifyOnStop, criticalOnly}",
  }),
  setting({
    key: "rateLimitPerMin",
    env: "SVC_RATE_LIMIT_PER_MIN",
    envKind: "integer",
    schema: Type.Integer({ minimum: 0 }),
    default: 600,
    description: "Requests per minute per API key (per address when anonymous); 0 turns it off",
  }),
  setting({
    key: "maxBodyDepth",
    env: "SVC_MAX_BODY_DEPTH",
    envKind: "integer",
    schema: Type.Integer({ minimum: 8, maximum: 1024 }),
    default: 64,
    description: "Deepest nesting of arrays and objects a request body may have (past it a 400)",
  }),
  setting({
    key: "maxBodyMembers",
    env: "SVC_MAX_BODY_MEMBERS",
    envKind: "integer",
    schema: Type.Integer({ minimum: 1000 }),
    default: 100_000,
    description: "Most array elements and object members a request body may have (past it a 400)",
  }),
  setting({
    key: "checkpoints",
    schema: Type.Object(
      {
        enabled: Type.Boolean({ default: true }),
        maxFileMb: Type.Number({ exclusiveMinimum: 0, default: 10 }),
        keepTurns: Type.Integer({ minimum: 0, default: 100 }),
        keepDays: Type.Integer({ minimum: 0, default: 30 }),
        keepWhenDeleted: Type.Boolean({ default: false }),
      },
      { additionalProperties: false },
    ),
    default: { enabled: true, maxFileMb: 10, keepTurns: 100, keepDays: 30, keepWhenDeleted: false },
    description:
      "A checkpoint of each session's folder at every turn (docs/checkpoints.md): {enabled, maxFileMb (larger files stay out), keepTurns, keepDays (0: no limit), keepWhenDeleted}",
  }),
  setting({
    key: "tenantWorkdirs",
    schema: Type.Record(Type.String(), TenantWorkdir),
    default: {},
    description: "Tenant id → {root, allowedPaths?, runAs?} (runAs: the OS user its agents run as)",
  }),
  setting({
    key: "budgets",
    schema: BudgetSettings,
    default: DEFAULT_BUDGETS,
    description:
      "Budgets (docs/budgets.md): {warnAt, interruptAtCap, dayUsd, monthUsd, tenants: {id: {dayUsd?, monthUsd?}}, defaultPrice}",
  }),
  setting({
    key: "handoff",
    schema: HandoffPolicy,
    default: { on: [], to: [], afterMs: 60_000 },
    description:
      "Automatic handoff (docs/budgets.md): {on: [rate_limit|usage_limit|budget], to: [agent…], afterMs}",
  }),
  setting({
    key: "searchImportHistory",
    env: "SVC_SEARCH_IMPORT_HISTORY",
    envKind: "boolean",
    schema: Type.Boolean(),
    default: false,
    description: "Index the agent CLIs' own history on this host (read only) at each start (docs/search.md)",
  }),
  setting({
    key: "fleet",
    schema: Type.Object(
      {
        databaseUrl: Type.String({ default: "" }),
        hostName: Type.String({ default: "", pattern: "^$|^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$" }),
        leaseMs: Type.Integer({ minimum: 500, maximum: 600_000, default: 15_000 }),
      },
      { additionalProperties: false },
    ),
    default: { databaseUrl: "", hostName: "", leaseMs: 15_000 },
    envFields: {
      databaseUrl: { env: "SVC_FLEET_DATABASE_URL", envKind: "string" },
      hostName: { env: "SVC_FLEET_HOST_NAME", envKind: "string" },
      leaseMs: { env: "SVC_FLEET_LEASE_MS", envKind: "integer" },
    },
    description:
      "A fleet on PostgreSQL (docs/fleet.md): {databaseUrl (empty: no fleet), hostName (default: the machine's), leaseMs}",
  }),
] as const satisfies readonly Setting[];

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  authToken: string;
  allowUnauthenticatedNetwork: boolean;
  stateDir: string;
  logLevel: LogLevel;
  jsonLogs: boolean;
  dashboardEnabled: boolean;
  dashboardUrl: string;
  maxSessions: number | null;
  sessionKeyMaxDepth: number;
  sessionKeyMaxChildren: number;
  memoryReserveMb: number;
  idleTimeoutMs: number;
  hibernateAfterMs: number;
  stallThresholdMs: number;
  permissionTimeoutMs: number;
  permissionMode: PermissionMode;
  defaultAgent: string;
  muxSession: string;
  tmuxSocket: string;
  agentDataDir: string | null;
  trustWorkdir: boolean;
  createWaitMs: number;
  sseIdleMs: number;
  sseClientTimeoutMs: number;
  hookTimeoutMs: number;
  shutdownGraceMs: number;
  shutdownHardMs: number;
  webhooks: WebhookTarget[];
  modelFast: string;
  modelStandard: string;
  modelPower: string;
  otelEnabled: boolean;
  otelOtlpEndpoint: string;
  otelServiceName: string;
  otelSampleRate: number;
  pricing: Record<string, { input: number; output: number; cacheRead?: number; cacheCreation?: number }>;
  chatVerbose: boolean;
  pipelineStageTimeoutMs: number;
  consensusTimeoutMs: number;
  chatBotToken: string;
  chatGroupId: string;
  chatAllowedUsers: string[];
  chatApiBase: string;
  teamchatWebhookUrl: string;
  teamchatEvents: EventName[] | null;
  teamchatChannel: string;
  teamchatTimeoutMs: number;
  emailHost: string;
  emailPort: number;
  emailUser: string;
  emailPass: string;
  emailTo: string;
  emailFrom: string;
  emailSecure: boolean;
  emailTimeoutMs: number;
  emailEvents: EventName[];
  chromiumPath: string | null;
  screenshotAllowHosts: string[];
  memoryBridge: { enabled: boolean; persistPath: string | null; reaperIntervalMs: number };
  verificationProtocol: { autoVerifyOnStop: boolean; criticalOnly: boolean };
  rateLimitPerMin: number;
  maxBodyDepth: number;
  maxBodyMembers: number;
  tenantWorkdirs: Record<string, { root: string; allowedPaths?: string[]; runAs?: string }>;
  searchImportHistory: boolean;
  budgets: BudgetSettings;
  handoff: HandoffPolicy;
  checkpoints: {
    enabled: boolean;
    maxFileMb: number;
    keepTurns: number;
    keepDays: number;
    keepWhenDeleted: boolean;
  };
  fleet: { databaseUrl: string; hostName: string; leaseMs: number };
  /** Not a setting: the HOME ag runs with (its agents inherit it). */
  homeDir: string;
  /**
   * Not a setting: authToken is the one ag generated into <stateDir>/auth-token because no token
   * was configured (src/config/auth-token.ts), not one a user chose.
   */
  authTokenGenerated: boolean;
}

export type ConfigKey = keyof Config;
