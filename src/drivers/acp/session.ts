import type * as acp from "@agentclientprotocol/sdk";
import type { ToolCategory } from "../../agents/agent.ts";
import type { DiagnosticsSink } from "../../diagnostics/index.ts";
import { AgError, isAgError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/log.ts";
import { reclaim, type TenantUsers } from "../../shared/run-as.ts";
import { type AgentPlace, assertTerminal, lastLines, notATerminal, type SessionDriver } from "../driver.ts";
import type { DriverRecord, DriverSession, DriverSessions, McpAccess } from "../port.ts";
import type { AcpDriver, DriverSink, HeadlessSpec, PermissionChoice, Reopened } from "./index.ts";

/** What ag's transcript says of a hibernated session's conversation reopened. */
const WAKE_NOTE = "ag woke the hibernated session: the conversation was reopened (session/load)";

/** ACP's tool kinds, as ag's permission policy sorts tools. */
const TOOL_CATEGORIES: Record<string, ToolCategory> = {
  read: "read",
  search: "read",
  edit: "write",
  delete: "write",
  move: "write",
  execute: "bash",
};

export interface AcpSessionDriverDeps {
  /** The ACP runtime (children and their connections); absent: ACP sessions are refused. */
  acp?: AcpDriver;
  /** ag's own MCP server, for sessions that offer it to their agent. */
  mcp?: McpAccess;
  /** The port to the sessions domain (what an agent started outside its group ends with it). */
  sessions: Pick<DriverSessions, "follow" | "dir" | "launchDir" | "ending">;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
  /** The OS user a tenant's agents run as (runAs); none: ag's own. */
  owners?: TenantUsers;
}

/**
 * The headless driver's side of the seam: a session's agent is an ACP child of ag (see
 * drivers/acp). What the agent does arrives as protocol facts turned into observations (source
 * `acp`); a prompt is one `session/prompt`, an answer the permission request's RPC response.
 */
export function createAcpSessionDriver(deps: AcpSessionDriverDeps): SessionDriver {
  const acp = (): AcpDriver => {
    if (!deps.acp) throw new AgError("AGENT_UNAVAILABLE", "the acp driver is not available in this ag");
    return deps.acp;
  };

  /** How the driver speaks to a live session. */
  const sinkOf = (session: DriverSession): DriverSink => ({
    observe: (observation) => session.observe(observation, "acp"),
    attachTranscript: (path, history) => session.attachTranscript(path, history),
    catchUp: () => session.catchUpTranscript(),
    refusal: (call) =>
      session.refusal({
        name: call.title ?? call.kind ?? "tool",
        category: TOOL_CATEGORIES[call.kind ?? "other"] ?? "other",
      }),
  });

  /**
   * What the driver needs to run a session's agent in `workDir` (the launch's resolved and checked
   * folder): its adapter's ACP entry, prepared.
   */
  async function specOf(
    session: DriverSession,
    workDir: string,
  ): Promise<{ spec: HeadlessSpec; warnings: string[] }> {
    const rec = session.record();
    const entry = session.agent.acp;
    if (!entry) throw new AgError("DRIVER_UNSUPPORTED", `agent ${session.agent.name} has no ACP entry point`);
    const dir = deps.sessions.dir(rec.id);
    const runAs = deps.owners?.(rec.tenantId) ?? null;
    if (runAs) reclaim(runAs, dir);
    const plan = await entry.prepare({
      sessionId: rec.id,
      workDir,
      permissionMode: rec.permissionMode,
      model: rec.model,
      agentCommand: rec.agentCommand,
      sessionDir: dir,
      hookUrl: "",
      hookSecret: rec.hookSecret,
      env: rec.env ?? {},
      runAs,
    });
    const { command, env, warnings } = plan;
    const approveAll = plan.approveAll === true;
    const mode = entry.modes?.[rec.permissionMode] ?? null;
    const model = entry.protocolModel ? rec.model : null;
    const spec = {
      id: rec.id,
      workDir,
      agent: session.agent,
      sessionDir: dir,
      command,
      env,
      runAs,
    };
    return { spec: { ...spec, approveAll, mode, model, mcpServers: mcpServers(rec, dir) }, warnings };
  }

  /** ag's own MCP server over stdio, for a session that offers it (a fresh key at each launch). */
  function mcpServers(rec: DriverRecord, dir: string): acp.McpServer[] {
    if (!rec.offerMcp || !deps.mcp) return [];
    const { command, env } = deps.mcp.open(rec, dir);
    const [program = "", ...args] = command;
    return [
      {
        name: "ag",
        command: program,
        args,
        env: Object.entries(env).map(([name, value]) => ({ name, value })),
      },
    ];
  }

  /**
   * After a restart: the ACP child of the ag that ran it is gone (or ended now, if it outlived
   * it). The conversation is reopened with `session/load` where the agent can (ag's transcript
   * continues), else the session ends crashed with reason driver_restart, the whole cause in the
   * log, the diagnostics (`acp.reopen`) and its end's detail.
   */
  async function reopen(session: DriverSession): Promise<boolean> {
    const midTurn = session.status().status !== "idle";
    // The conversation ag kept is readable from the first answer ag gives, however long the
    // agent takes to come back: the session reads its stored status meanwhile (idle, most
    // often), and a reader must not find it empty. Started before any await: the cursor then
    // waits for this first read instead of finding no transcript.
    const kept = session.record().transcriptPath;
    const history = kept ? session.attachTranscript(kept, true) : Promise.resolve();
    let workDir: string;
    try {
      workDir = deps.sessions.launchDir(session.record());
    } catch (error) {
      // Its folder now leads outside its tenant's (or is gone): the agent is not started again,
      // and what still runs of the earlier one is ended.
      await deps.acp?.reap(session.id, deps.sessions.dir(session.id));
      await history.catch(() => {});
      session.observe({ kind: "launch-failed", error: `not reopened: ${(error as Error).message}` }, "ag");
      return false;
    }
    let outcome: Reopened = { reopened: false, cause: "the acp driver is not available in this ag" };
    try {
      if (deps.acp)
        outcome = await deps.acp.reopen((await specOf(session, workDir)).spec, sinkOf(session), midTurn);
    } catch (error) {
      outcome = { reopened: false, cause: (error as Error).message };
    }
    await history.catch(() => {});
    if (outcome.reopened) return true;
    deps.diagnostics?.record("acp.reopen", `session ${session.id}: ${outcome.cause}`);
    deps.logger.warn(`ACP session ${session.id}: not reopened: ${outcome.cause}`);
    session.observe({ kind: "driver-lost", cause: outcome.cause }, "ag");
    return false;
  }

  /**
   * Its own conversation continued (a hibernated session woken): the agent started again and the
   * conversation reopened with `session/load`, as after a restart; a failure is the launch's.
   */
  async function wake(headless: HeadlessSpec, session: DriverSession): Promise<void> {
    const outcome = await acp().reopen(headless, sinkOf(session), false, WAKE_NOTE);
    if (!outcome.reopened) throw new Error(outcome.cause);
  }

  const choose = async (session: DriverSession, choice: PermissionChoice) => acp().answer(session.id, choice);

  return {
    name: "acp",

    async launch(session, spec, failed) {
      try {
        const { spec: headless, warnings } = await specOf(session, spec.record.workDir);
        spec.warnings.push(...warnings);
        if (spec.resume && !spec.resume.fork) await wake(headless, session);
        else await acp().launch(headless, sinkOf(session));
      } catch (error) {
        deps.diagnostics?.record("acp.launch", `session ${session.id}: ${(error as Error).message}`);
        deps.logger.warn(`ACP session ${session.id}: not started: ${(error as Error).message}`);
        throw failed(error, "AGENT_UNAVAILABLE", "could not start the agent over ACP");
      }
    },

    launched(session) {
      // The ACP session exists: the agent waits for a prompt.
      session.observe({ kind: "turn-ended" }, "acp");
    },

    /** A prompt is a request: the agent has it once it is sent (no typing, no retries). */
    async deliver(session, text) {
      try {
        await acp().prompt(session.id, text);
        return { delivered: true, attempts: 1 };
      } catch (error) {
        if (isAgError(error) && error.code === "SESSION_BUSY") throw error;
        return { delivered: false, attempts: 1, reason: (error as Error).message };
      }
    },

    decide: (session, _pending, approve) => choose(session, { approve }),

    async answer(session, _pending, answer) {
      if (!("option" in answer))
        throw new AgError("VALIDATION_ERROR", "an ACP permission is answered with one of its options");
      await choose(session, { option: answer.option });
    },

    interrupt: (session) => acp().interrupt(session.id),

    async escape(session) {
      assertTerminal(session.record(), "keys");
    },

    async end(session, close) {
      // What the agent started outside its process group (a command under setsid) goes with it too.
      // Recorded first: a record the store refuses stops the kill with nothing done.
      const pid = acp().pid(session.id);
      close();
      await deps.sessions.ending(session.id, pid);
      await acp().stop(session.id);
    },

    /** Headless sessions have no window: each is reopened (once) by the ACP runtime. */
    async start(records) {
      await Promise.all(
        records.map(async (record) => {
          const reopened = await reopen(deps.sessions.follow(record, "adopt"));
          deps.logger.info(`ACP session ${record.id}: ${reopened ? "reopened" : "ended (driver_restart)"}`);
        }),
      );
    },

    async adopt(record) {
      throw new AgError(
        "CONFLICT",
        `session ${record.id} runs headless: ag no longer holds its agent's pipe, so it cannot be adopted; end it`,
      );
    },

    stop() {},

    async lastWords(session) {
      const exit = deps.acp?.exitOf(session.id);
      return exit ? { status: exit.status, output: lastLines(exit.stderr) } : { status: null, output: [] };
    },

    /** A headless agent is ag's own child: its pid, no pane. */
    async locate(records) {
      const places = new Map<string, AgentPlace>();
      for (const record of records) {
        const pid = deps.acp?.pid(record.id) ?? null;
        if (pid !== null) places.set(record.id, { pid, pane: null });
      }
      return places;
    },

    async capture(record) {
      throw notATerminal(record, "a pane");
    },

    async sendKeys(record) {
      throw notATerminal(record, "keys");
    },

    /** Every ACP entry ag has reopens a conversation with `session/load` (docs/agents.md). */
    resumes: (agent) => agent.acp !== undefined,
  };
}
