import type { AgentRegistry } from "../agents/registry.ts";
import type { SessionDrivers } from "../drivers/index.ts";
import { AgError } from "../shared/errors.ts";
import type { LiveSession } from "./live/session.ts";

export interface StartFailureDeps {
  agents: Pick<AgentRegistry, "notInstalled">;
  drivers: Pick<SessionDrivers, "of">;
}

/**
 * A new session whose agent exited before it took its first prompt: AGENT_UNAVAILABLE saying so
 * at once — its exit status, its last lines of output (the dead pane, or a headless agent's
 * stderr) and, when its program is not found, how to install it — instead of a delivery that
 * waits for an input box that will never come.
 */
export async function notStarted(deps: StartFailureDeps, session: LiveSession): Promise<AgError> {
  const rec = session.record();
  const words = await deps.drivers.of(rec).lastWords(session);
  const status = words.status === null ? "" : ` with status ${words.status}`;
  const output = words.output.length
    ? `; its last output:\n${words.output.map((line) => `  ${line}`).join("\n")}`
    : "; its terminal shows no output of it";
  const hint = deps.agents.notInstalled(rec.agent, { agentCommand: rec.agentCommand, path: rec.env?.PATH });
  return new AgError(
    "AGENT_UNAVAILABLE",
    `the agent of session ${rec.id} (${rec.agent}) exited${status} before it took its first prompt${output}${hint ? `\n${hint}` : ""}`,
  );
}
