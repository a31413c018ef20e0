import type { PermissionMode } from "../agents/vocabulary.ts";
import type { AcpDriver, DriverSink, HeadlessSpec } from "../drivers/acp/index.ts";
import { AgError } from "../shared/errors.ts";
import { sessionDir } from "./lifecycle.ts";
import type { LiveSession } from "./live/session.ts";
import type { SessionRecord } from "./repo.ts";

/**
 * The seam between the session logic and its driver for sessions without a terminal (`acp`):
 * the state fusion, events, transcript cursor and API are the same; what the agent does arrives
 * as observations from the driver instead of hooks and screens.
 */

/** A session with no terminal: refused by what only a terminal can do. */
export function isHeadless(rec: Pick<SessionRecord, "driver">): boolean {
  return rec.driver === "acp";
}

export function assertTerminal(rec: Pick<SessionRecord, "id" | "driver">, what: string): void {
  if (isHeadless(rec))
    throw new AgError(
      "NOT_A_TERMINAL_SESSION",
      `session ${rec.id} runs headless (driver ${rec.driver}): it has no terminal for ${what}`,
    );
}

/** The driver's `acp` or AGENT_UNAVAILABLE when ag runs without one. */
export function acpOf(driver: AcpDriver | undefined): AcpDriver {
  if (!driver) throw new AgError("AGENT_UNAVAILABLE", "the acp driver is not available in this ag");
  return driver;
}

/** How the driver speaks to a live session. */
export function sinkOf(session: LiveSession): DriverSink {
  return {
    observe: (observation) => session.observe(observation, "acp"),
    attachTranscript: (path, history) => session.attachTranscript(path, history),
    catchUp: () => session.transcript.catchUp(),
  };
}

/** What the driver needs to run a session's agent: its adapter's ACP entry, prepared. */
export async function headlessSpec(
  session: LiveSession,
  stateDir: string,
): Promise<{ spec: HeadlessSpec; warnings: string[] }> {
  const rec = session.record();
  const entry = session.agent.acp;
  if (!entry) throw new AgError("DRIVER_UNSUPPORTED", `agent ${session.agent.name} has no ACP entry point`);
  const dir = sessionDir(stateDir, rec.id);
  const plan = await entry.prepare({
    sessionId: rec.id,
    workDir: rec.workDir,
    permissionMode: rec.permissionMode,
    agentCommand: rec.agentCommand,
    sessionDir: dir,
    hookUrl: "",
    hookSecret: rec.hookSecret,
    env: rec.env ?? {},
  });
  return {
    spec: {
      id: rec.id,
      workDir: rec.workDir,
      agent: session.agent,
      command: plan.command,
      env: plan.env,
      sessionDir: dir,
      mode: entry.modes?.[rec.permissionMode as PermissionMode] ?? null,
    },
    warnings: plan.warnings,
  };
}

/**
 * After a restart: an ACP child died with the ag that ran it. The conversation is reopened with
 * `session/load` where the agent can (ag's transcript continues), else the session ends crashed
 * with reason driver_restart.
 */
export async function reopenHeadless(session: LiveSession, driver: AcpDriver | undefined, stateDir: string) {
  const status = session.status().status;
  const midTurn = status !== "idle";
  let reopened = false;
  try {
    if (driver) {
      const { spec } = await headlessSpec(session, stateDir);
      reopened = await driver.reopen(spec, sinkOf(session), midTurn);
    }
  } catch {
    reopened = false;
  }
  if (!reopened) session.observe({ kind: "driver-lost" }, "ag");
  return reopened;
}
