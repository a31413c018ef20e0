import type * as acp from "@agentclientprotocol/sdk";
import type { ToolCategory } from "../../agents/agent.ts";
import type { TenantPolicy } from "../../auth/tenants.ts";
import type { DiagnosticsSink } from "../../diagnostics/index.ts";
import type { AcpDriver, DriverSink, HeadlessSpec, PermissionChoice } from "../../drivers/acp/index.ts";
import { AgError, isAgError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/log.ts";
import { reclaim, type TenantUsers } from "../../shared/run-as.ts";
import type { McpAccess } from "../deps.ts";
import type { Exits } from "../exits.ts";
import { launchDir, sessionDir } from "../lifecycle.ts";
import type { LiveSessions } from "../live/registry.ts";
import type { LiveSession } from "../live/session.ts";
import { policyRefusal } from "../policy.ts";
import type { SessionRecord } from "../repo.ts";
import { assertTerminal, lastLines, type SessionDriver } from "./driver.ts";

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
  live: Pick<LiveSessions, "follow">;
  /** Agents on their way out: what they started outside their process group is ended with them. */
  exits: Pick<Exits, "ending">;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
  /** The OS user a tenant's agents run as (runAs); none: ag's own. */
  owners?: TenantUsers;
  /** Which folders a tenant's agents may run in: a reopen after a restart is a launch too. */
  tenants?: Pick<TenantPolicy, "launchDir">;
  settings: { stateDir: string };
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
  const sinkOf = (session: LiveSession): DriverSink => ({
    observe: (observation) => session.observe(observation, "acp"),
    attachTranscript: (path, history) => session.attachTranscript(path, history),
    catchUp: () => session.transcript.catchUp(),
    refusal: (call) =>
      policyRefusal(session.record().permissions, {
        name: call.title ?? call.kind ?? "tool",
        category: TOOL_CATEGORIES[call.kind ?? "other"] ?? "other",
      }),
  });

  /**
   * What the driver needs to run a session's agent in `workDir` (the launch's resolved and checked
   * folder): its adapter's ACP entry, prepared.
   */
  async function specOf(
    session: LiveSession,
    workDir: string,
  ): Promise<{ spec: HeadlessSpec; warnings: string[] }> {
    const rec = session.record();
    const entry = session.agent.acp;
    if (!entry) throw new AgError("DRIVER_UNSUPPORTED", `agent ${session.agent.name} has no ACP entry point`);
    const dir = sessionDir(deps.settings.stateDir, rec.id);
    const runAs = deps.owners?.(rec.tenantId) ?? null;
    if (runAs) reclaim(runAs, dir);
    const plan = await entry.prepare({
      sessionId: rec.id,
      workDir,
      permissionMode: rec.permissionMode,
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
    const spec = {
      id: rec.id,
      workDir,
      agent: session.agent,
      sessionDir: dir,
      command,
      env,
      runAs,
    };
    return { spec: { ...spec, approveAll, mode, mcpServers: mcpServers(rec, dir) }, warnings };
  }

  /** ag's own MCP server over stdio, for a session that offers it (a fresh key at each launch). */
  function mcpServers(rec: SessionRecord, dir: string): acp.McpServer[] {
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
   * After a restart: an ACP child died with the ag that ran it. The conversation is reopened with
   * `session/load` where the agent can (ag's transcript continues), else the session ends crashed
   * with reason driver_restart.
   */
  async function reopen(session: LiveSession): Promise<boolean> {
    const midTurn = session.status().status !== "idle";
    // The conversation ag kept is readable from the first answer ag gives, however long the
    // agent takes to come back: the session reads its stored status meanwhile (idle, most
    // often), and a reader must not find it empty. Started before any await: the cursor then
    // waits for this first read instead of finding no transcript.
    const kept = session.record().transcriptPath;
    const history = kept ? session.attachTranscript(kept, true) : Promise.resolve();
    let workDir: string;
    try {
      workDir = launchDir(deps.tenants, session.record());
    } catch (error) {
      // Its folder now leads outside its tenant's (or is gone): the agent is not started again.
      await history.catch(() => {});
      session.observe({ kind: "launch-failed", error: `not reopened: ${(error as Error).message}` }, "ag");
      return false;
    }
    let reopened = false;
    try {
      if (deps.acp)
        reopened = await deps.acp.reopen((await specOf(session, workDir)).spec, sinkOf(session), midTurn);
    } catch {
      reopened = false;
    }
    await history.catch(() => {});
    if (!reopened) session.observe({ kind: "driver-lost" }, "ag");
    return reopened;
  }

  const choose = async (session: LiveSession, choice: PermissionChoice) => acp().answer(session.id, choice);

  return {
    name: "acp",

    async launch(session, spec, failed) {
      try {
        const { spec: headless, warnings } = await specOf(session, spec.record.workDir);
        spec.warnings.push(...warnings);
        await acp().launch(headless, sinkOf(session));
      } catch (error) {
        deps.diagnostics?.record("acp.launch", `session ${session.id}: ${(error as Error).message}`);
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
      await deps.exits.ending(session.id, pid);
      await acp().stop(session.id);
    },

    /** Headless sessions have no window: each is reopened (once) by the ACP runtime. */
    async start(records) {
      await Promise.all(
        records.map(async (record) => {
          const reopened = await reopen(deps.live.follow(record, "adopt"));
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
  };
}
