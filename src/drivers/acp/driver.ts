import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentAdapter, AgentObservation } from "../../agents/agent.ts";
import type { DiagnosticsSink } from "../../diagnostics/index.ts";
import { sessionEnvironment } from "../../shared/environment.ts";
import { AgError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/log.ts";
import { asUser, handOver, type RunAs } from "../../shared/run-as.ts";
import { type AcpConnection, openAcpConnection } from "./connection.ts";
import { readState, reap, STATE_FILE, stampOf, writeState } from "./orphans.ts";
import { createRecorder, type Recorder, type ToolCallSeen } from "./recorder.ts";
import { modelOf, protocolUsage } from "./usage.ts";

/**
 * The headless session driver: each session's agent is an ACP child process of ag. What the
 * agent streams becomes observations for the session's state (source `acp`) and entries of the
 * transcript ag keeps (`<sessionDir>/acp-transcript.jsonl`); permission requests wait for the
 * session's approve / reject / answer.
 */

/** What the driver tells the session it runs. */
export interface DriverSink {
  observe(observation: AgentObservation): void;
  /** Follow ag's transcript of the session (history: lines already there are the past). */
  attachTranscript(path: string, history: boolean): Promise<void>;
  /** The transcript grew: read it now. */
  catchUp(): Promise<void>;
  /** Why the session's permission policy refuses this tool call (answered at once), or null. */
  refusal(call: acp.ToolCall | acp.ToolCallUpdate): string | null;
}

export interface HeadlessSpec {
  id: string;
  workDir: string;
  agent: AgentAdapter;
  /** The agent's command and environment (its adapter's ACP entry). */
  command: string[];
  env: Record<string, string>;
  sessionDir: string;
  /** The OS user the agent runs as (its tenant's runAs); null: as ag. */
  runAs?: RunAs | null;
  /** ag answers every permission request with its allow option (the entry's `approveAll`). */
  approveAll?: boolean;
  /** The agent's ACP session mode for the session's permission mode (`session/set_mode`), if any. */
  mode: string | null;
  /**
   * The session's model, for an agent that takes it over the protocol (`session/set_model`, the
   * entry's `protocolModel`); null or absent: none to set (the agent's default, or its command line).
   */
  model?: string | null;
  /** MCP servers offered to the agent (`session/new`, `session/load`). */
  mcpServers?: acp.McpServer[];
}

/** A reopen's outcome: the agent is back, or the whole cause it is not (failure, stderr's tail). */
export type Reopened = { reopened: true } | { reopened: false; cause: string };

/** An answer to the pending permission: approve (allow once), reject, or one of its options. */
export type PermissionChoice = { approve: boolean } | { option: number };

export interface AcpDriver {
  /** Starts the agent and its ACP session; resolves when a prompt can be sent. */
  launch(spec: HeadlessSpec, sink: DriverSink): Promise<{ pid: number }>;
  /**
   * After a restart: ends what still runs of the session's earlier agent (reap), then reopens the
   * conversation with `session/load` when the agent can; else says why not (the caller ends the
   * session). `wasMidTurn`: the turn ag lost is ended as interrupted. `note`: what ag's transcript
   * says of the reopen (default: after a restart; a hibernated session's wake-up says so).
   */
  reopen(spec: HeadlessSpec, sink: DriverSink, wasMidTurn: boolean, note?: string): Promise<Reopened>;
  /** Ends what still runs of a session's agent an earlier ag started (orphans.ts); true if any. */
  reap(id: string, sessionDir: string): Promise<boolean>;
  /** Sends a prompt; resolves once the agent has it (the turn runs on). Waits for a reopen under way. */
  prompt(id: string, text: string): Promise<void>;
  /** The pending permission's options as ag shows them. */
  answer(id: string, choice: PermissionChoice): void;
  interrupt(id: string): Promise<void>;
  stop(id: string): Promise<void>;
  pid(id: string): number | null;
  /** How a session's agent that exited on its own ended: its status and last stderr lines. */
  exitOf(id: string): { status: number | null; stderr: string } | null;
  /** Ends every child (ag stops: ACP children cannot outlive it). */
  closeAll(): Promise<void>;
}

interface Pending {
  request: acp.RequestPermissionRequest;
  resolve(response: acp.RequestPermissionResponse): void;
}

interface Running {
  spec: HeadlessSpec;
  sink: DriverSink;
  conn: AcpConnection;
  sessionId: string;
  /** ag's transcript of the session. */
  log: Recorder;
  /** A `session/prompt` in flight. */
  turn: Promise<void> | null;
  turns: number;
  /** When the latest `session/prompt` was sent (epoch ms). */
  turnStartedAt: number;
  permissions: Pending[];
  stopping: boolean;
  /** Replaying history (session/load): nothing is written or observed. */
  loading: boolean;
  /** The session's model, as its config options name it (for the protocol's usage). */
  model: string | null;
  /** When the agent last sent an update (epoch ms): a replay after session/load is over once it is quiet. */
  lastUpdateAt: number;
}

export const TRANSCRIPT_FILE = "acp-transcript.jsonl";
/** What ag's transcript says of a conversation reopened after a restart. */
const RESTART_NOTE = "ag restarted: the conversation was reopened (session/load)";

/** The updates that are a turn's content (not the session's settings: modes, commands, options). */
const TURN_CONTENT: ReadonlySet<string> = new Set([
  "user_message_chunk",
  "agent_message_chunk",
  "agent_thought_chunk",
  "tool_call",
  "tool_call_update",
  "plan",
]);
/** How many agents' exits are kept for their sessions' clients to be told (up to 16 KB each). */
const EXITS_KEPT = 100;
/** A failure's cause as ag keeps it (log, diagnostics, end reason): its message, then stderr's tail. */
const CAUSE_MAX = 16 * 1024;
/**
 * After `session/load` answers, the history an agent replays after its answer (Gemini CLI 0.61.0
 * streams it without waiting) is over once no update came for REPLAY_QUIET_MS (at most
 * REPLAY_MAX_MS): only then does a prompt go, so no replayed line is taken for its reply.
 */
const REPLAY_QUIET_MS = 500;
const REPLAY_MAX_MS = 10_000;
/** The longest ag waits for an agent to be able to load a conversation (AcpEntry.prepareLoad). */
const LOADABLE_MAX_MS = 61_000;

/**
 * The whole cause of a failure, bounded to CAUSE_MAX: the error's message (its first 4 KB), then
 * the tail of the agent's stderr that it does not already hold.
 */
function causeOf(what: string, error: unknown, stderr: string): string {
  // A JSON-RPC error's message is often generic ("Internal error"): what it says is in its data.
  const data = (error as { data?: unknown } | null)?.data;
  const detail = data === undefined || data === null ? "" : ` (${JSON.stringify(data)})`;
  const said = `${error instanceof Error ? error.message : String(error ?? "")}${detail}`;
  const message = (said ? `${what}: ${said}` : what).slice(0, 4 * 1024);
  const tail = stderr.trim();
  if (!tail || message.includes(tail.slice(-200))) return message;
  return `${message}\nthe agent's stderr (last lines):\n${tail.slice(-(CAUSE_MAX - message.length - 40))}`;
}

export function createAcpDriver(deps: {
  /** The environment every child starts from (shared/environment.ts, declared); the adapter's entries go over it. */
  baseEnv: Record<string, string>;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
}): AcpDriver {
  const running = new Map<string, Running>();
  /** Agents that exited on their own, by session (the latest EXITS_KEPT). */
  const exits = new Map<string, { status: number | null; stderr: string }>();
  /** Sessions whose agent is being reopened: a prompt sent meanwhile waits for it. */
  const reopening = new Map<string, Promise<Reopened>>();
  const now = () => new Date().toISOString();

  function get(id: string): Running {
    const run = running.get(id);
    if (!run) throw new AgError("SESSION_NOT_FOUND", `no running ACP session ${id}`);
    return run;
  }

  /** A tool call seen: the first time, the session hears that a tool started. */
  function toolSeen(run: Running, call: ToolCallSeen): void {
    if (!run.log.tool(call)) return;
    const tool = run.log.kindOf(call.toolCallId);
    run.sink.observe({ kind: "tool", phase: "started", tool, toolUseId: call.toolCallId });
  }

  function onUpdate(run: Running, update: acp.SessionUpdate): void {
    run.lastUpdateAt = Date.now();
    if (run.loading) return;
    // What a turn says comes while its session/prompt is in flight (the protocol's agent sends a
    // turn's updates before its answer). Outside one it is history replayed by session/load that
    // arrived after the load's answer (Gemini CLI 0.61.0 does so when it finds the conversation):
    // written again it glued the whole past onto the next reply.
    if (run.turn === null && TURN_CONTENT.has(update.sessionUpdate)) return;
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
        run.log.text("assistant", update.content);
        break;
      case "agent_thought_chunk":
        run.log.text("thinking", update.content);
        break;
      case "tool_call":
        toolSeen(run, update);
        break;
      case "tool_call_update": {
        toolSeen(run, update);
        if (update.status === "completed" || update.status === "failed") {
          run.log.toolResult(update);
          const tool = run.log.kindOf(update.toolCallId);
          run.sink.observe({ kind: "tool", phase: "finished", tool, toolUseId: update.toolCallId });
        }
        break;
      }
      case "config_option_update":
        run.model = modelOf(update.configOptions) ?? run.model;
        break;
      case "plan":
        run.log.plan(update.entries);
        break;
      default:
        break;
    }
    run.sink.observe({ kind: "activity" });
  }

  /** The front of the queue becomes the session's pending permission. */
  function raise(run: Running): void {
    const next = run.permissions[0];
    if (!next) return;
    const call = next.request.toolCall;
    toolSeen(run, call);
    run.log.flush();
    run.sink.observe({
      kind: "permission",
      request: {
        kind: "tool",
        // A permission request may leave out what the call's own updates said (its kind).
        tool: run.log.kindOf(call.toolCallId),
        detail: call.title ?? call.toolCallId,
        toolInput: call,
        options: next.request.options.map((o, i) => ({
          index: i + 1,
          label: o.name,
          description: o.kind,
          optionId: o.optionId,
        })),
      },
    });
  }

  function permission(run: Running, request: acp.RequestPermissionRequest, signal: AbortSignal) {
    // A permission request may leave out the call's kind: what its own updates said is known.
    const known = run.log.kindOf(request.toolCall.toolCallId) as acp.ToolKind;
    const refusal = run.sink.refusal({ ...request.toolCall, kind: request.toolCall.kind ?? known });
    if (refusal) {
      // ag's policy only ever denies: the agent hears its own reject option, the user nothing.
      deps.logger.info(
        `ACP session ${run.spec.id}: refused ${request.toolCall.title ?? "a tool"}: ${refusal}`,
      );
      const reject = request.options.find((o) => o.kind === "reject_once" || o.kind === "reject_always");
      return Promise.resolve<acp.RequestPermissionResponse>({
        outcome: reject ? { outcome: "selected", optionId: reject.optionId } : { outcome: "cancelled" },
      });
    }
    // What ag's policy lets through, an agent run with bypassPermissions has allowed at once.
    const allow = run.spec.approveAll ? request.options.find((o) => o.kind === "allow_once") : undefined;
    if (allow) {
      toolSeen(run, request.toolCall);
      return Promise.resolve({ outcome: { outcome: "selected" as const, optionId: allow.optionId } });
    }
    return new Promise<acp.RequestPermissionResponse>((resolve) => {
      const pending: Pending = { request, resolve };
      run.permissions.push(pending);
      signal.addEventListener("abort", () => settle(run, pending, { outcome: { outcome: "cancelled" } }));
      if (run.permissions.length === 1) raise(run);
    });
  }

  function settle(run: Running, pending: Pending, response: acp.RequestPermissionResponse): void {
    const at = run.permissions.indexOf(pending);
    if (at < 0) return;
    run.permissions.splice(at, 1);
    pending.resolve(response);
    if (at === 0) raise(run);
  }

  function onExit(run: Running, status: number | null): void {
    if (running.get(run.spec.id) !== run) return;
    running.delete(run.spec.id);
    for (const pending of [...run.permissions]) settle(run, pending, { outcome: { outcome: "cancelled" } });
    if (run.stopping) return;
    const stderr = run.conn.stderrTail();
    exits.delete(run.spec.id);
    exits.set(run.spec.id, { status, stderr });
    if (exits.size > EXITS_KEPT) exits.delete(exits.keys().next().value!);
    const cause = causeOf(`the agent exited (status ${status ?? "signal"})`, "", stderr);
    deps.diagnostics?.record("acp.exit", `session ${run.spec.id}: ${cause}`);
    deps.logger.warn(`ACP session ${run.spec.id}: ${cause}`);
    run.sink.observe({ kind: "exited", status: status === 0 ? 0 : (status ?? -1) });
  }

  async function start(spec: HeadlessSpec, sink: DriverSink): Promise<Running> {
    mkdirSync(spec.sessionDir, { recursive: true, mode: 0o700 });
    const runAs = spec.runAs ?? null;
    // The launch's files are the agent's user's; ag's record of the session stays ag's alone.
    if (runAs) handOver(runAs, spec.sessionDir, [TRANSCRIPT_FILE, STATE_FILE]);
    let run: Running | null = null;
    // Recorded the moment it exists: an ag killed from now on leaves a child the next start can end.
    const onSpawn = (pid: number) => {
      const child = stampOf(pid);
      if (child) writeState(spec.sessionDir, { child });
    };
    const conn = await openAcpConnection(
      {
        ...asUser(runAs, spec.command, sessionEnvironment(deps.baseEnv, spec.env)),
        cwd: spec.workDir,
        onSpawn,
      },
      {
        update: (n) => run && onUpdate(run, n.update),
        permission: (request, signal) =>
          run ? permission(run, request, signal) : Promise.resolve({ outcome: { outcome: "cancelled" } }),
      },
    );
    run = {
      spec,
      sink,
      conn,
      sessionId: "",
      log: createRecorder(join(spec.sessionDir, TRANSCRIPT_FILE)),
      turn: null,
      turns: 0,
      turnStartedAt: 0,
      permissions: [],
      stopping: false,
      loading: false,
      model: null,
      lastUpdateAt: Date.now(),
    };
    return run;
  }

  function follow(run: Running): void {
    running.set(run.spec.id, run);
    exits.delete(run.spec.id);
    void run.conn.exited.then((status) => onExit(run, status));
  }

  /** The session's permission mode, where the agent takes it over the protocol. */
  async function applyMode(run: Running, modes: acp.SessionModeState | null | undefined): Promise<void> {
    const mode = run.spec.mode;
    if (!mode || modes?.currentModeId === mode) return;
    if (modes && !modes.availableModes.some((m) => m.id === mode))
      throw new Error(
        `the agent has no mode ${mode} (it has ${modes.availableModes.map((m) => m.id).join(", ")})`,
      );
    await run.conn.setMode({ sessionId: run.sessionId, modeId: mode });
  }

  /** The session's model, where the agent takes it over the protocol. */
  async function applyModel(run: Running): Promise<void> {
    const model = run.spec.model;
    if (!model) return;
    await run.conn.setModel({ sessionId: run.sessionId, modelId: model });
    run.model = model;
  }

  /** A prompt's error that the agent's entry reads as its way of ending a turn, as a response. */
  function errorAsResponse(run: Running, error: unknown): acp.PromptResponse | null {
    const stopReason = run.spec.agent.acp?.promptError?.((error as Error)?.message ?? "");
    return stopReason ? { stopReason } : null;
  }

  async function endTurn(run: Running, response: acp.PromptResponse | null, error?: unknown): Promise<void> {
    run.log.flush();
    const turn = { sessionId: run.sessionId, workDir: run.spec.workDir, startedAt: run.turnStartedAt };
    const own = response
      ? await Promise.resolve(run.spec.agent.acp?.usage?.(response, turn)).catch(() => null)
      : null;
    const usage = own ?? (response ? protocolUsage(response, run.model) : null);
    if (usage) run.log.write({ type: "usage", at: now(), id: randomUUID(), turn: run.turns, ...usage });
    run.log.write({ type: "turn_end", at: now(), stopReason: response?.stopReason ?? "error" });
    await run.sink.catchUp();
    if (response) run.sink.observe({ kind: "turn-ended", interrupted: response.stopReason === "cancelled" });
    else if (running.get(run.spec.id) === run)
      run.sink.observe({
        kind: "turn-failed",
        error: (error as Error)?.message ?? "prompt failed",
        rateLimited: false,
      });
  }

  /** A session's agent that an earlier ag started and that still runs is ended (orphans.ts). */
  async function reapOrphan(id: string, sessionDir: string): Promise<boolean> {
    const { child } = readState(sessionDir);
    if (!child || !(await reap(child))) return false;
    const note = `an agent an earlier ag started (pid ${child.pid}) still ran: ended with its process group`;
    deps.diagnostics?.record("acp.reaped", `session ${id}: ${note}`);
    deps.logger.warn(`ACP session ${id}: ${note}`);
    return true;
  }

  /** Until the agent has gone quiet after session/load: a replay that follows its answer is over. */
  async function replayOver(run: Running): Promise<void> {
    for (const deadline = Date.now() + REPLAY_MAX_MS; Date.now() < deadline; ) {
      const quietFor = Date.now() - run.lastUpdateAt;
      if (quietFor >= REPLAY_QUIET_MS) return;
      await Bun.sleep(REPLAY_QUIET_MS - quietFor);
    }
  }

  /** Until the agent can be sent `session/load` for its conversation (AcpEntry.prepareLoad). */
  async function untilLoadable(spec: HeadlessSpec, sessionId: string): Promise<void> {
    const at = (await spec.agent.acp?.prepareLoad?.(sessionId, Date.now()).catch(() => 0)) ?? 0;
    const wait = Math.min(at - Date.now(), LOADABLE_MAX_MS);
    if (wait <= 0) return;
    deps.logger.info(`ACP session ${spec.id}: its agent can load the conversation in ${wait} ms: waiting`);
    await Bun.sleep(wait);
  }

  /** After a restart: `session/load` when the agent can (AcpDriver.reopen). */
  async function reopen(
    spec: HeadlessSpec,
    sink: DriverSink,
    wasMidTurn: boolean,
    note = RESTART_NOTE,
  ): Promise<Reopened> {
    await reapOrphan(spec.id, spec.sessionDir);
    const { sessionId } = readState(spec.sessionDir);
    if (!sessionId) return { reopened: false, cause: "no ACP session was recorded for it" };
    await untilLoadable(spec, sessionId);
    let run: Running;
    try {
      run = await start(spec, sink);
    } catch (error) {
      return { reopened: false, cause: causeOf("the agent did not start", error, "") };
    }
    if (!run.conn.capabilities.loadSession) {
      await run.conn.close();
      return { reopened: false, cause: "the agent cannot reopen a conversation (no loadSession)" };
    }
    run.loading = true;
    run.sessionId = sessionId;
    try {
      const loaded = await run.conn.loadSession({
        sessionId,
        cwd: spec.workDir,
        mcpServers: spec.mcpServers ?? [],
      });
      run.model = modelOf(loaded.configOptions);
      await applyMode(run, loaded.modes);
      await applyModel(run);
      run.lastUpdateAt = Date.now();
      await replayOver(run);
    } catch (error) {
      const cause = causeOf("session/load failed", error, run.conn.stderrTail());
      await run.conn.close();
      return { reopened: false, cause };
    }
    run.loading = false;
    follow(run);
    await sink.attachTranscript(run.log.path, true);
    run.log.write({
      type: "reopened",
      at: now(),
      text: note,
    });
    if (wasMidTurn) run.log.write({ type: "turn_end", at: now(), stopReason: "cancelled" });
    await sink.catchUp();
    sink.observe({ kind: "turn-ended", interrupted: wasMidTurn });
    return { reopened: true };
  }

  const driver: AcpDriver = {
    async launch(spec, sink) {
      const run = await start(spec, sink);
      try {
        const created = await run.conn.newSession({ cwd: spec.workDir, mcpServers: spec.mcpServers ?? [] });
        run.sessionId = created.sessionId;
        run.model = modelOf(created.configOptions);
        await applyMode(run, created.modes);
        await applyModel(run);
      } catch (error) {
        await run.conn.close();
        throw new Error(causeOf("session/new failed", error, run.conn.stderrTail()));
      }
      writeState(spec.sessionDir, { sessionId: run.sessionId });
      writeFileSync(run.log.path, "", { flag: "a" });
      follow(run);
      await sink.attachTranscript(run.log.path, false);
      return { pid: run.conn.pid };
    },

    reopen(spec, sink, wasMidTurn, note) {
      // The session reads its stored status while its agent comes back: a prompt sent in that
      // time is the agent's once it is back, not refused for want of a running agent.
      const done = reopen(spec, sink, wasMidTurn, note).finally(() => reopening.delete(spec.id));
      reopening.set(spec.id, done);
      return done;
    },

    async prompt(id, text) {
      await reopening.get(id)?.catch(() => false);
      const run = get(id);
      if (run.turn) throw new AgError("SESSION_BUSY", `session ${id} runs a turn: interrupt it first`);
      run.turns++;
      run.turnStartedAt = Date.now();
      run.log.write({ type: "user", at: now(), text });
      // Each prompt is its own (the same text twice is two prompts).
      run.sink.observe({ kind: "prompt-submitted", text, promptId: `${run.sessionId}:${run.turns}` });
      const request = run.conn.prompt({
        sessionId: run.sessionId,
        prompt: [{ type: "text", text }],
      });
      run.turn = request.then(
        (response) => endTurn(run, response),
        (error) => endTurn(run, errorAsResponse(run, error), error),
      );
      void run.turn.finally(() => {
        run.turn = null;
      });
      void run.sink.catchUp();
    },

    answer(id, choice) {
      const run = get(id);
      const pending = run.permissions[0];
      if (!pending) throw new AgError("NO_PENDING_PERMISSION", `session ${id} has no pending permission`);
      const options = pending.request.options;
      let option: acp.PermissionOption | undefined;
      if ("option" in choice) {
        option = options[choice.option - 1];
        if (!option)
          throw new AgError(
            "VALIDATION_ERROR",
            `option ${choice.option} is not one of the ${options.length} options`,
          );
      } else {
        const kinds = choice.approve ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
        option = kinds.map((k) => options.find((o) => o.kind === k)).find(Boolean);
      }
      const call = pending.request.toolCall;
      settle(
        run,
        pending,
        option
          ? { outcome: { outcome: "selected", optionId: option.optionId } }
          : { outcome: { outcome: "cancelled" } },
      );
      // Answered: the turn goes on (the prompt's response ends it, whatever the answer was).
      if (run.permissions.length === 0)
        run.sink.observe({
          kind: "tool",
          phase: "started",
          tool: run.log.kindOf(call.toolCallId),
          toolUseId: call.toolCallId,
        });
    },

    async interrupt(id) {
      const run = get(id);
      for (const pending of [...run.permissions]) settle(run, pending, { outcome: { outcome: "cancelled" } });
      await run.conn.cancel(run.sessionId);
    },

    async stop(id) {
      const run = running.get(id);
      if (!run) return;
      run.stopping = true;
      running.delete(id);
      for (const pending of [...run.permissions]) settle(run, pending, { outcome: { outcome: "cancelled" } });
      run.log.flush();
      await run.conn.close();
    },

    reap: reapOrphan,

    pid: (id) => running.get(id)?.conn.pid ?? null,
    exitOf: (id) => exits.get(id) ?? null,

    async closeAll() {
      await Promise.all([...running.keys()].map((id) => driver.stop(id)));
    },
  };
  return driver;
}
