import { type Static, type TObject, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import { AgentInfo } from "../agents/index.ts";
import { CheckpointDiff, CheckpointList, REWIND_WHATS, RewindResult } from "../checkpoints/checkpoint.ts";
import { Consensus, StartConsensusInput } from "../consensus/consensus.ts";
import { HandoffAnswer, HandoffBody } from "../handoff/handoff.ts";
import { Health } from "../health/service.ts";
import { MemoryDeleted, MemoryEntry, MemoryInput, MemoryKey } from "../memory/entry.ts";
import { CreatePipelineInput, Pipeline } from "../pipelines/pipeline.ts";
import { ContinuedSession, SearchContinueInput, SearchQuery, SearchResult } from "../search/index.ts";
import {
  BatchCreated,
  BatchCreateInput,
  BudgetInput,
  CreatedSession,
  CreateSessionInput,
  Delivery,
  hintsFor,
  Pane,
  QuestionAnswerInput,
  SendInput,
  Session,
  SessionBudget,
  SessionHealth,
  SessionLatency,
  SessionListQuery,
  SessionMetrics,
  SessionSummary,
} from "../sessions/index.ts";
import { Swarm } from "../swarm/index.ts";
import { TranscriptCursorPage } from "../transcript/cursor.ts";

/**
 * The one table of MCP tools: `ag mcp` serves it, `GET /v1/tools` lists it and docs/mcp.md's
 * table is generated from it (scripts/mcp-docs.ts). Each input is built from the TypeBox schema
 * the matching REST route validates with, and each output is the schema that route answers with,
 * so a tool can never accept what the route refuses, nor answer what the route would not. A tool
 * is thin: it maps its arguments onto one REST call of the running server.
 */

/** What a tool needs of the server: the CLI's API client fits. Errors are thrown as AgError. */
export interface ToolApi {
  get<T>(path: string): Promise<T>;
  send<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/** MCP's tool annotations: what a call does to its world (ag's sessions, nothing beyond them). */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** Every tool acts on ag alone, never on an open world (the web, other services). */
  openWorldHint: false;
}

/** The REST call a tool makes: for the docs, and to name the tool where a message names the route. */
export interface RestCall {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** The route; its `:id` (`:key`) stands for the tool's first argument (sessionId, consensusId, key). */
  path: string;
  /** How the arguments map onto it, where that is not plain. */
  note?: string;
}

export interface ToolDefinition<S extends TObject = TObject> {
  name: string;
  /** A human-readable name (MCP `title`, and `annotations.title`). */
  title: string;
  description: string;
  input: S;
  /** The schema of a successful call's `structuredContent`: the REST route's own response schema. */
  output: TObject;
  hints: ToolHints;
  rest: RestCall;
  call(api: ToolApi, args: Static<S>): Promise<unknown>;
  /** The structured content of a REST body that is not an object (a list, under its name). */
  structure?(result: unknown): Record<string, unknown>;
  /** The text an agent reads, when JSON is not the clearest form (a screen is better as text). */
  render?(result: unknown): string;
}

const Annotations = Type.Object({
  title: Type.String(),
  readOnlyHint: Type.Boolean({ description: "it changes nothing" }),
  destructiveHint: Type.Boolean({ description: "it may end, discard or overwrite something" }),
  idempotentHint: Type.Boolean({ description: "calling it again with the same arguments adds no effect" }),
  openWorldHint: Type.Boolean({ description: "false: it acts on ag alone" }),
});

/** A tool as clients see it (MCP `tools/list`, `GET /v1/tools`). */
export const ToolInfo = Type.Object({
  name: Type.String(),
  title: Type.String(),
  description: Type.String(),
  inputSchema: Type.Record(Type.String(), Type.Unknown(), { description: "JSON Schema of the arguments" }),
  outputSchema: Type.Record(Type.String(), Type.Unknown(), {
    description: "JSON Schema of a successful call's structuredContent",
  }),
  annotations: Annotations,
});
export type ToolInfo = Static<typeof ToolInfo>;

/** Looks, changes nothing: calling it again answers the same (or newer) facts. */
const READS: ToolHints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** Changes something: `destructive` when it may end, discard or overwrite, `idempotent` when again adds nothing. */
function acts(options: { destructive: boolean; idempotent: boolean }): ToolHints {
  return {
    readOnlyHint: false,
    destructiveHint: options.destructive,
    idempotentHint: options.idempotent,
    openWorldHint: false,
  };
}
const ADDS = acts({ destructive: false, idempotent: false });

/** A REST body that is a list, as MCP's structured content (an object): `{<key>: [...]}`. */
function listOf(key: string, item: TSchema): Pick<ToolDefinition, "output" | "structure"> {
  return {
    output: Type.Object({ [key]: Type.Array(item) }, { additionalProperties: false }),
    structure: (result) => ({ [key]: result }),
  };
}

const strict = { additionalProperties: false } as const;
const SessionId = Type.String({ minLength: 1, description: "the session's id" });
const SessionRef = Type.Object({ sessionId: SessionId }, strict);
const None = Type.Object({}, strict);

/**
 * `create_session` and each `batch_create_sessions` item: SPEC's workDir, name?, prompt?, and
 * reuse?, agent? (CONTRACT §10), driver?, permissionMode? and model? so an agent can ask for a
 * session of its own, of any agent CLI, in a terminal or headless, in a mode and on a model (a
 * session key's mode stays within its creator's: docs/auth.md).
 */
const NewSession = Type.Composite(
  [
    Type.Required(Type.Pick(CreateSessionInput, ["workDir"])),
    Type.Pick(CreateSessionInput, ["name", "prompt", "reuse", "agent", "driver", "permissionMode", "model"]),
  ],
  strict,
);
/** `create_session` alone may name a fleet's host (docs/fleet.md); a batch runs where it is asked. */
const NewSessionOnHost = Type.Composite([NewSession, Type.Pick(CreateSessionInput, ["host"])], strict);
const batchLimits = BatchCreateInput.properties.sessions;
const NewSessions = Type.Object(
  {
    sessions: Type.Array(NewSession, { minItems: batchLimits.minItems, maxItems: batchLimits.maxItems }),
  },
  strict,
);

/** SPEC names a pipeline's stages `steps` in MCP (CONTRACT §7: same shape as REST `stages`). */
const { stages, ...pipelineFields } = CreatePipelineInput.properties;
const NewPipeline = Type.Object({ ...pipelineFields, steps: stages }, strict);

/** A command typed after a prefix: the same rules as a message's text. */
function commandInput(description: string) {
  return Type.Object(
    { sessionId: SessionId, command: Type.String({ ...SendInput.properties.text, description }) },
    strict,
  );
}

function sessionWith<P extends TProperties>(properties: P) {
  return Type.Object({ sessionId: SessionId, ...properties }, strict);
}

const path = (sessionId: string, rest = "") => `/v1/sessions/${encodeURIComponent(sessionId)}${rest}`;
const send = (api: ToolApi, sessionId: string, text: string) =>
  api.send("POST", path(sessionId, "/send"), { text });
const SEND: RestCall = { method: "POST", path: "/v1/sessions/:id/send" };

/** A tool with its argument type inferred from its schema. */
function tool<S extends TObject>(definition: ToolDefinition<S>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

/** A tool that posts its arguments but the session's id as the body of `POST /v1/sessions/:id<rest>`. */
function sessionPostTool(
  definition: Pick<ToolDefinition, "name" | "title" | "description" | "output" | "hints"> & {
    input: TProperties;
    rest: string;
    note?: string;
  },
): ToolDefinition {
  const { input, rest, note, ...shown } = definition;
  return tool({
    ...shown,
    input: sessionWith(input),
    rest: { method: "POST", path: `/v1/sessions/:id${rest}`, ...(note ? { note } : {}) },
    // The schema holds sessionId a string; the other properties' types are the caller's.
    call: (api, { sessionId, ...body }) => api.send("POST", path(sessionId as string, rest), body),
  });
}

/** A tool that asks one thing of one session: `GET|POST|DELETE /v1/sessions/:id<rest>`. */
function sessionTool(
  definition: Pick<ToolDefinition, "name" | "title" | "description" | "output" | "hints" | "render"> & {
    method: RestCall["method"];
    rest?: string;
    note?: string;
  },
): ToolDefinition {
  const { method, rest = "", note, ...shown } = definition;
  return tool({
    ...shown,
    input: SessionRef,
    rest: { method, path: `/v1/sessions/:id${rest}`, ...(note ? { note } : {}) },
    call: (api, { sessionId }) =>
      method === "GET" ? api.get(path(sessionId, rest)) : api.send(method, path(sessionId, rest)),
  });
}

function query(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== undefined) params.set(key, value);
  const text = params.toString();
  return text ? `?${text}` : "";
}

const consensusPath = (id: string) => `/v1/consensus/${encodeURIComponent(id)}`;
const ConsensusRef = Type.Object(
  { consensusId: Type.String({ minLength: 1, description: "the review's id (start_consensus answers it)" }) },
  strict,
);

const memoryPath = (key: string) => `/v1/memory/${key.split("/").map(encodeURIComponent).join("/")}`;

/** Answering a dialog: ag presses keys; again, it would answer whatever the agent asks next. */
const ANSWERS = { output: Session, hints: ADDS } as const;

export const TOOLS: readonly ToolDefinition[] = [
  tool({
    name: "list_sessions",
    title: "List sessions",
    description:
      "List sessions, newest first; filter by status (a state, or running), a workDir substring and, in a fleet, a host",
    input: SessionListQuery,
    ...listOf("sessions", Session),
    hints: READS,
    rest: { method: "GET", path: "/v1/sessions", note: "with `?status&workDir&host`" },
    call: (api, args) =>
      api.get(`/v1/sessions${query({ status: args.status, workDir: args.workDir, host: args.host })}`),
  }),
  sessionTool({
    name: "get_status",
    title: "Get a session's status",
    description: "One session: its status, pending permission, token usage",
    method: "GET",
    output: Session,
    hints: READS,
  }),
  tool({
    name: "create_session",
    title: "Create a session",
    description:
      "Start an agent session in workDir and deliver the prompt; answers once the prompt is confirmed. An idle session there may take the prompt instead (reused: true) unless reuse is false, and never one of another name than the name given. In a fleet, host names the host to run it on, or auto",
    input: NewSessionOnHost,
    output: CreatedSession,
    hints: ADDS,
    rest: { method: "POST", path: "/v1/sessions" },
    call: (api, args) => api.send("POST", "/v1/sessions", args),
  }),
  sessionTool({
    name: "kill_session",
    title: "Kill a session",
    description: "Kill the session: its window closes",
    method: "DELETE",
    output: Session,
    // Killed once, a second kill finds no session to end.
    hints: acts({ destructive: true, idempotent: true }),
  }),
  sessionTool({
    name: "escape_session",
    title: "Press Escape",
    description: "Press Escape in the session",
    method: "POST",
    rest: "/escape",
    output: Session,
    // Escape cancels what the agent does or dismisses its dialog; twice opens other menus.
    hints: acts({ destructive: true, idempotent: false }),
  }),
  sessionTool({
    name: "interrupt_session",
    title: "Interrupt the turn",
    description: "Interrupt the agent's turn (Ctrl+C)",
    method: "POST",
    rest: "/interrupt",
    output: Session,
    hints: acts({ destructive: true, idempotent: false }),
  }),
  tool({
    name: "send_message",
    title: "Send a message",
    description: "Type a message into the session as one prompt; answers {delivered, attempts}",
    input: sessionWith(SendInput.properties),
    output: Delivery,
    hints: ADDS,
    rest: { ...SEND, note: "with `{text}`" },
    call: (api, { sessionId, text }) => send(api, sessionId, text),
  }),
  tool({
    name: "send_bash",
    title: "Run a shell command",
    description: "Run a shell command through the agent's bash mode (sent as `!command`)",
    input: commandInput("the shell command; ag prefixes it with !"),
    output: Delivery,
    // Any shell command: it may delete as well as create.
    hints: acts({ destructive: true, idempotent: false }),
    rest: { ...SEND, note: 'with `{text: "!" + command}` (the agent\'s bash mode)' },
    call: (api, { sessionId, command }) => send(api, sessionId, `!${command}`),
  }),
  tool({
    name: "send_command",
    title: "Send a slash command",
    description: "Send a slash command to the agent (prefixed with / unless it has one)",
    input: commandInput("the slash command, with or without its leading /"),
    output: Delivery,
    // /clear, /compact and their kin discard the conversation or part of it.
    hints: acts({ destructive: true, idempotent: false }),
    rest: { ...SEND, note: 'with `{text: "/" + command}`, no second `/` when it has one' },
    call: (api, { sessionId, command }) =>
      send(api, sessionId, command.startsWith("/") ? command : `/${command}`),
  }),
  sessionTool({
    name: "get_transcript",
    title: "Read the transcript",
    description: "The newest 50 transcript entries (prompts, replies, tool calls and results), oldest first",
    method: "GET",
    rest: "/transcript/cursor",
    output: TranscriptCursorPage,
    hints: READS,
  }),
  sessionTool({
    name: "capture_pane",
    title: "Capture the screen",
    description: "The session's terminal screen as text",
    method: "GET",
    rest: "/pane",
    note: "(the text is the screen itself)",
    output: Pane,
    hints: READS,
    render: (result) => (result as { content: string }).content,
  }),
  sessionTool({
    name: "get_session_metrics",
    title: "Get a session's metrics",
    description: "Tokens, cost, turns, tool calls, deliveries, time per state",
    method: "GET",
    rest: "/metrics",
    output: SessionMetrics,
    hints: READS,
  }),
  sessionTool({
    name: "get_session_summary",
    title: "Summarize a session",
    description: "The conversation condensed: counts, tools, files touched, last messages, tokens",
    method: "GET",
    rest: "/summary",
    output: SessionSummary,
    hints: READS,
  }),
  sessionTool({
    name: "list_checkpoints",
    title: "List a session's checkpoints",
    description: "Per turn: its prompt, time, the files it changed in the session's folder and lines +/-",
    method: "GET",
    rest: "/checkpoints",
    output: CheckpointList,
    hints: READS,
  }),
  tool({
    name: "get_turn_diff",
    title: "Get a turn's diff",
    description: "What one turn changed in the session's folder, as a unified diff",
    input: sessionWith({ turn: Type.Integer({ minimum: 1, description: "the turn, from 1" }) }),
    output: CheckpointDiff,
    hints: READS,
    rest: { method: "GET", path: "/v1/sessions/:id/checkpoints/:turn/diff" },
    call: (api, { sessionId, turn }) => api.get(path(sessionId, `/checkpoints/${turn}/diff`)),
  }),
  tool({
    name: "rewind_session",
    title: "Rewind a session",
    description:
      "Put the session's folder (code), its conversation (a new session forked at the turn) or both back as turn n left it (0: before the first); undo: true takes back the last code rewind. Refused while the agent works",
    input: sessionWith({
      turn: Type.Optional(
        Type.Integer({ minimum: 0, description: "n: as turn n left it; 0: before the first" }),
      ),
      what: Type.Optional(
        Type.Union(
          REWIND_WHATS.map((w) => Type.Literal(w)),
          { description: "code (default), conversation or both" },
        ),
      ),
      undo: Type.Optional(Type.Literal(true, { description: "take back the last code rewind (no turn)" })),
    }),
    output: RewindResult,
    hints: acts({ destructive: true, idempotent: false }),
    rest: { method: "POST", path: "/v1/sessions/:id/rewind", note: "with `{turn, what}` or `{undo: true}`" },
    call: (api, { sessionId, turn, what, undo }) =>
      api.send("POST", path(sessionId, "/rewind"), undo ? { undo } : { turn, ...(what ? { what } : {}) }),
  }),
  sessionTool({
    name: "get_session_latency",
    title: "Get a session's latencies",
    description: "Delivery and state-detection latencies (recent samples)",
    method: "GET",
    rest: "/latency",
    output: SessionLatency,
    hints: READS,
  }),
  tool({
    name: "get_session_health",
    title: "Check a session's health",
    description:
      "Is the session's agent alive, how long idle, and hints naming the tool to call next (approve_permission, answer_question, send_message…)",
    input: SessionRef,
    // The route's answer with its hints for an MCP reader: the same shape.
    output: SessionHealth,
    hints: READS,
    rest: {
      method: "GET",
      path: "/v1/sessions/:id/health",
      note: "and `GET /v1/sessions/:id` (the hints name MCP tools, not routes)",
    },
    call: async (api, { sessionId }) => {
      const [health, session] = await Promise.all([
        api.get<{ idleMs: number; hints: string[] }>(path(sessionId, "/health")),
        api.get<Parameters<typeof hintsFor>[0]>(path(sessionId)),
      ]);
      // REST's hints name routes; an MCP client is told the tools instead.
      return { ...health, hints: hintsFor(session, health.idleMs, "mcp") };
    },
  }),
  tool({
    name: "server_health",
    title: "Check the server",
    description: "Server health: version, uptime, session counts, tmux",
    input: None,
    output: Health,
    hints: READS,
    rest: { method: "GET", path: "/v1/health" },
    call: (api) => api.get("/v1/health"),
  }),
  sessionTool({
    name: "approve_permission",
    title: "Approve the permission",
    description: "Allow the session's pending permission prompt once",
    method: "POST",
    rest: "/approve",
    note: "(allow once)",
    ...ANSWERS,
    // What it allows may be anything the agent asked for: a write, a delete, a command.
    hints: acts({ destructive: true, idempotent: false }),
  }),
  sessionTool({
    name: "reject_permission",
    title: "Reject the permission",
    description: "Reject the session's pending permission prompt",
    method: "POST",
    rest: "/reject",
    note: "(on a question: dismisses it)",
    ...ANSWERS,
  }),
  sessionPostTool({
    name: "answer_question",
    title: "Answer the question",
    description:
      "Answer the question the agent asks (status asking): `option` is the number of one of pendingPermission.options, or give `text` of your own",
    input: {
      option: QuestionAnswerInput.properties.option,
      text: QuestionAnswerInput.properties.text,
    },
    ...ANSWERS,
    rest: "/answer",
    note: "with `{option}` or `{text}` (`approve_permission` on a question is an error that names this tool)",
  }),
  tool({
    name: "batch_create_sessions",
    title: "Create sessions",
    description:
      "Create up to 50 sessions; partial success: {created, failed: [{index, error, code, statusCode}]}",
    input: NewSessions,
    output: BatchCreated,
    hints: ADDS,
    rest: { method: "POST", path: "/v1/sessions/batch" },
    call: (api, args) => api.send("POST", "/v1/sessions/batch", args),
  }),
  tool({
    name: "list_pipelines",
    title: "List pipelines",
    description: "Pipelines, newest first, with the state of each stage",
    input: None,
    ...listOf("pipelines", Pipeline),
    hints: READS,
    rest: { method: "GET", path: "/v1/pipelines" },
    call: (api) => api.get("/v1/pipelines"),
  }),
  tool({
    name: "create_pipeline",
    title: "Start a pipeline",
    description:
      "Start a pipeline: its steps run in order, each in a fresh session in workDir, each given the previous step's output",
    input: NewPipeline,
    output: Pipeline,
    hints: ADDS,
    rest: { method: "POST", path: "/v1/pipelines", note: "with `steps` as `stages`" },
    call: (api, { steps, ...rest }) => api.send("POST", "/v1/pipelines", { ...rest, stages: steps }),
  }),
  sessionPostTool({
    name: "start_consensus",
    title: "Start a consensus review",
    description:
      "Start a consensus review of the session's work: 1–7 independent read-only reviewers (default 3) each judge every criterion PASS or FAIL and give a verdict; the majority decides. Answers at once with the review (status running): follow it with get_consensus",
    input: StartConsensusInput.properties,
    output: Consensus,
    hints: ADDS,
    rest: "/consensus",
    note: "(answers at once, `status: running`)",
  }),
  tool({
    name: "get_consensus",
    title: "Get a consensus review",
    description:
      "A consensus review: running, completed or failed; the verdict (approve, reject, split) and agreement, each criterion's verdict, each reviewer's answer and notes",
    input: ConsensusRef,
    output: Consensus,
    hints: READS,
    rest: { method: "GET", path: "/v1/consensus/:id" },
    call: (api, { consensusId }) => api.get(consensusPath(consensusId)),
  }),
  tool({
    name: "list_agents",
    title: "List agent CLIs",
    description:
      "The agent CLIs ag can run (claude, codex, gemini, opencode…): installed or not, version, capabilities; create_session's agent names one",
    input: None,
    ...listOf("agents", AgentInfo),
    hints: READS,
    rest: { method: "GET", path: "/v1/agents" },
    call: (api) => api.get("/v1/agents"),
  }),
  tool({
    name: "get_swarm",
    title: "See the swarm",
    description: "Sessions as a tree by parent, and every agent CLI process found on the system",
    input: None,
    output: Swarm,
    hints: READS,
    rest: { method: "GET", path: "/v1/swarm" },
    call: (api) => api.get("/v1/swarm"),
  }),
  tool({
    name: "state_set",
    title: "Store a memory entry",
    description: "Store a shared memory entry (key as namespace/key), optionally with a TTL",
    input: Type.Pick(MemoryInput, ["key", "value", "ttlSeconds"]),
    output: MemoryEntry,
    // It replaces the key's value; the same value again changes nothing.
    hints: acts({ destructive: true, idempotent: true }),
    rest: { method: "POST", path: "/v1/memory" },
    call: (api, args) => api.send("POST", "/v1/memory", args),
  }),
  tool({
    name: "state_get",
    title: "Read a memory entry",
    description: "Read a shared memory entry",
    input: Type.Object({ key: MemoryKey }, strict),
    output: MemoryEntry,
    hints: READS,
    rest: { method: "GET", path: "/v1/memory/:key" },
    call: (api, { key }) => api.get(memoryPath(key)),
  }),
  tool({
    name: "state_delete",
    title: "Delete a memory entry",
    description: "Delete a shared memory entry",
    input: Type.Object({ key: MemoryKey }, strict),
    output: MemoryDeleted,
    hints: acts({ destructive: true, idempotent: true }),
    rest: { method: "DELETE", path: "/v1/memory/:key" },
    call: (api, { key }) => api.send("DELETE", memoryPath(key)),
  }),
  sessionPostTool({
    name: "set_budget",
    title: "Raise or clear a session's budget",
    description:
      "Set the session's budget in US dollars (null clears it); a session paused at its budget takes prompts again and gets the prompt it refused, once",
    input: { usd: BudgetInput.properties.usd, tokens: BudgetInput.properties.tokens },
    output: SessionBudget,
    hints: acts({ destructive: false, idempotent: true }),
    rest: "/budget",
    note: "with `{usd, tokens?}`",
  }),
  sessionPostTool({
    name: "handoff_session",
    title: "Hand the task to another agent",
    description:
      "Start a session of another agent in the same folder whose first prompt is a brief of this one (task, digest, last turns, files changed, what it waits on, your note); both sessions link each other",
    input: HandoffBody.properties,
    output: HandoffAnswer,
    hints: ADDS,
    rest: "/handoff",
    note: "with `{agent, driver?, note?}`",
  }),
  tool({
    name: "search_sessions",
    title: "Search every conversation",
    description:
      'Turns of every session (live, ended; an admin also sees the agents\' own imported history) matching q, best first, with redacted snippets. q: words (all must match), "a phrase", pre* (prefix), OR. Each hit names its session and message (get_transcript pages it); continue_from_hit picks it up',
    input: Type.Omit(SearchQuery, ["limit"]),
    output: SearchResult,
    hints: READS,
    rest: { method: "GET", path: "/v1/search", note: "the arguments as its query" },
    call: (api, args) => api.get(`/v1/search${query(args as Record<string, string | undefined>)}`),
  }),
  tool({
    name: "continue_from_hit",
    title: "Pick up from a search hit",
    description:
      "Resume the hit's ended session (fork: a new session on a copy), or continue an external conversation as a new session of its agent (always a fork: the user's file is never written)",
    input: SearchContinueInput,
    output: ContinuedSession,
    hints: ADDS,
    rest: { method: "POST", path: "/v1/search/continue" },
    call: (api, args) => api.send("POST", "/v1/search/continue", args),
  }),
];

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

export function findTool(name: string): ToolDefinition | undefined {
  return BY_NAME.get(name);
}

/** A TypeBox schema is JSON Schema plus symbol keys; a JSON round trip leaves the JSON Schema. */
export function jsonSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema));
}

export function toolInfos(): ToolInfo[] {
  return TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: jsonSchema(t.input),
    outputSchema: jsonSchema(t.output),
    annotations: { title: t.title, ...t.hints },
  }));
}

/** A successful call's structured content: the REST body, or a list under its name. */
export function structuredResult(tool: ToolDefinition, result: unknown): Record<string, unknown> {
  return tool.structure ? tool.structure(result) : (result as Record<string, unknown>);
}
