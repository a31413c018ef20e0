import { type Static, type TObject, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import { StartConsensusInput } from "../consensus/consensus.ts";
import { MemoryInput, MemoryKey } from "../memory/entry.ts";
import { CreatePipelineInput } from "../pipelines/pipeline.ts";
import {
  BatchCreateInput,
  CreateSessionInput,
  hintsFor,
  QuestionAnswerInput,
  SendInput,
  SessionListQuery,
} from "../sessions/index.ts";

/**
 * The one table of MCP tools: `ag mcp` serves it and `GET /v1/tools` lists it. Each input is built
 * from the TypeBox schema the matching REST route validates with, so a tool can never accept what
 * the route refuses (or the other way round). A tool is thin: it maps its arguments onto one REST
 * call of the running server.
 */

/** What a tool needs of the server: the CLI's API client fits. Errors are thrown as AgError. */
export interface ToolApi {
  get<T>(path: string): Promise<T>;
  send<T>(method: string, path: string, body?: unknown): Promise<T>;
}

export interface ToolDefinition<S extends TObject = TObject> {
  name: string;
  description: string;
  input: S;
  call(api: ToolApi, args: Static<S>): Promise<unknown>;
  /** The text an agent reads, when JSON is not the clearest form (a screen is better as text). */
  render?(result: unknown): string;
}

/** A tool as clients see it (MCP `tools/list`, `GET /v1/tools`). */
export const ToolInfo = Type.Object({
  name: Type.String(),
  description: Type.String(),
  inputSchema: Type.Record(Type.String(), Type.Unknown(), { description: "JSON Schema of the arguments" }),
});
export type ToolInfo = Static<typeof ToolInfo>;

const strict = { additionalProperties: false } as const;
const SessionId = Type.String({ minLength: 1, description: "the session's id" });
const SessionRef = Type.Object({ sessionId: SessionId }, strict);
const None = Type.Object({}, strict);

/**
 * `create_session` and each `batch_create_sessions` item: SPEC's workDir, name?, prompt?, and
 * reuse?, agent? (CONTRACT §10) and driver? so an agent can ask for a session of its own, of any
 * agent CLI, in a terminal or headless.
 */
const NewSession = Type.Composite(
  [
    Type.Required(Type.Pick(CreateSessionInput, ["workDir"])),
    Type.Pick(CreateSessionInput, ["name", "prompt", "reuse", "agent", "driver"]),
  ],
  strict,
);
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

/** A tool with its argument type inferred from its schema. */
function tool<S extends TObject>(definition: ToolDefinition<S>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

/** A tool that asks one thing of one session: `GET|POST|DELETE /v1/sessions/:id<rest>`. */
function sessionTool(name: string, description: string, method: string, rest = ""): ToolDefinition {
  return tool({
    name,
    description,
    input: SessionRef,
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

export const TOOLS: readonly ToolDefinition[] = [
  tool({
    name: "list_sessions",
    description:
      "List sessions, newest first; filter by status (a state, or running) and a workDir substring",
    input: SessionListQuery,
    call: (api, args) => api.get(`/v1/sessions${query({ status: args.status, workDir: args.workDir })}`),
  }),
  sessionTool("get_status", "One session: its status, pending permission, token usage", "GET"),
  tool({
    name: "create_session",
    description:
      "Start an agent session in workDir and deliver the prompt; answers once the prompt is confirmed. An idle session there may take the prompt instead (reused: true) unless reuse is false, and never one of another name than the name given",
    input: NewSession,
    call: (api, args) => api.send("POST", "/v1/sessions", args),
  }),
  sessionTool("kill_session", "Kill the session: its window closes", "DELETE"),
  sessionTool("escape_session", "Press Escape in the session", "POST", "/escape"),
  sessionTool("interrupt_session", "Interrupt the agent's turn (Ctrl+C)", "POST", "/interrupt"),
  tool({
    name: "send_message",
    description: "Type a message into the session as one prompt; answers {delivered, attempts}",
    input: sessionWith(SendInput.properties),
    call: (api, { sessionId, text }) => send(api, sessionId, text),
  }),
  tool({
    name: "send_bash",
    description: "Run a shell command through the agent's bash mode (sent as `!command`)",
    input: commandInput("the shell command; ag prefixes it with !"),
    call: (api, { sessionId, command }) => send(api, sessionId, `!${command}`),
  }),
  tool({
    name: "send_command",
    description: "Send a slash command to the agent (prefixed with / unless it has one)",
    input: commandInput("the slash command, with or without its leading /"),
    call: (api, { sessionId, command }) =>
      send(api, sessionId, command.startsWith("/") ? command : `/${command}`),
  }),
  sessionTool(
    "get_transcript",
    "The newest 50 transcript entries (prompts, replies, tool calls and results), oldest first",
    "GET",
    "/transcript/cursor",
  ),
  {
    ...sessionTool("capture_pane", "The session's terminal screen as text", "GET", "/pane"),
    render: (result) => (result as { content: string }).content,
  },
  sessionTool(
    "get_session_metrics",
    "Tokens, cost, turns, tool calls, deliveries, time per state",
    "GET",
    "/metrics",
  ),
  sessionTool(
    "get_session_summary",
    "The conversation condensed: counts, tools, files touched, last messages, tokens",
    "GET",
    "/summary",
  ),
  sessionTool(
    "get_session_latency",
    "Delivery and state-detection latencies (recent samples)",
    "GET",
    "/latency",
  ),
  tool({
    name: "get_session_health",
    description:
      "Is the session's agent alive, how long idle, and hints naming the tool to call next (approve_permission, answer_question, send_message…)",
    input: SessionRef,
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
    description: "Server health: version, uptime, session counts, tmux",
    input: None,
    call: (api) => api.get("/v1/health"),
  }),
  sessionTool("approve_permission", "Allow the session's pending permission prompt once", "POST", "/approve"),
  sessionTool("reject_permission", "Reject the session's pending permission prompt", "POST", "/reject"),
  tool({
    name: "answer_question",
    description:
      "Answer the question the agent asks (status asking): `option` is the number of one of pendingPermission.options, or give `text` of your own",
    input: sessionWith({
      option: QuestionAnswerInput.properties.option,
      text: QuestionAnswerInput.properties.text,
    }),
    call: (api, { sessionId, ...answer }) => api.send("POST", path(sessionId, "/answer"), answer),
  }),
  tool({
    name: "batch_create_sessions",
    description:
      "Create up to 50 sessions; partial success: {created, failed: [{index, error, code, statusCode}]}",
    input: NewSessions,
    call: (api, args) => api.send("POST", "/v1/sessions/batch", args),
  }),
  tool({
    name: "list_pipelines",
    description: "Pipelines, newest first, with the state of each stage",
    input: None,
    call: (api) => api.get("/v1/pipelines"),
  }),
  tool({
    name: "create_pipeline",
    description:
      "Start a pipeline: its steps run in order, each in a fresh session in workDir, each given the previous step's output",
    input: NewPipeline,
    call: (api, { steps, ...rest }) => api.send("POST", "/v1/pipelines", { ...rest, stages: steps }),
  }),
  tool({
    name: "start_consensus",
    description:
      "Start a consensus review of the session's work: 1–7 independent read-only reviewers (default 3) each judge every criterion PASS or FAIL and give a verdict; the majority decides. Answers at once with the review (status running): follow it with get_consensus",
    input: sessionWith(StartConsensusInput.properties),
    call: (api, { sessionId, ...input }) => api.send("POST", path(sessionId, "/consensus"), input),
  }),
  tool({
    name: "get_consensus",
    description:
      "A consensus review: running, completed or failed; the verdict (approve, reject, split) and agreement, each criterion's verdict, each reviewer's answer and notes",
    input: ConsensusRef,
    call: (api, { consensusId }) => api.get(consensusPath(consensusId)),
  }),
  tool({
    name: "list_agents",
    description:
      "The agent CLIs ag can run (claude, codex, gemini, opencode…): installed or not, version, capabilities; create_session's agent names one",
    input: None,
    call: (api) => api.get("/v1/agents"),
  }),
  tool({
    name: "get_swarm",
    description: "Sessions as a tree by parent, and every agent CLI process found on the system",
    input: None,
    call: (api) => api.get("/v1/swarm"),
  }),
  tool({
    name: "state_set",
    description: "Store a shared memory entry (key as namespace/key), optionally with a TTL",
    input: Type.Pick(MemoryInput, ["key", "value", "ttlSeconds"]),
    call: (api, args) => api.send("POST", "/v1/memory", args),
  }),
  tool({
    name: "state_get",
    description: "Read a shared memory entry",
    input: Type.Object({ key: MemoryKey }, strict),
    call: (api, { key }) => api.get(memoryPath(key)),
  }),
  tool({
    name: "state_delete",
    description: "Delete a shared memory entry",
    input: Type.Object({ key: MemoryKey }, strict),
    call: (api, { key }) => api.send("DELETE", memoryPath(key)),
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
  return TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: jsonSchema(t.input) }));
}
