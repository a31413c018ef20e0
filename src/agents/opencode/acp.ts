import type { AcpEntry, AcpLaunchPlan, LaunchRequest } from "../agent.ts";
import { splitCommand } from "../launch-files.ts";
import { openCodeMode, writeSessionConfig } from "./launch.ts";

/**
 * OpenCode headless: `opencode acp` (1.18.33). The session's own config dir as for the terminal
 * (its permission rules; the plan mode as its default agent and the session's model, since `acp`
 * takes neither `--agent` nor `--model`), without the plugin, keys or conversation file: the protocol says everything. Its conversations
 * are kept in OpenCode's own data dir, so `session/load` reopens them after ag restarts.
 * Tokens: ACP's own `usage` of each prompt response, which the driver reads.
 */
async function prepareOpenCodeAcp(request: LaunchRequest): Promise<AcpLaunchPlan> {
  const mode = openCodeMode(request.permissionMode);
  const configDir = writeSessionConfig(request.sessionDir, {
    agent: mode.agents,
    ...(mode.agent ? { default_agent: mode.agent } : {}),
    // `opencode acp` takes no --model: the session's config names it.
    ...(request.model ? { model: request.model } : {}),
  });
  const base = request.agentCommand ? splitCommand(request.agentCommand) : ["opencode"];
  return {
    command: [...base, "acp"],
    env: { ...request.env, OPENCODE_CONFIG_DIR: configDir, SVC_SESSION_ID: request.sessionId },
    warnings: [],
    // `opencode acp` has no --auto: the client answers, and ag is its client.
    approveAll: mode.approveAll === true,
  };
}

export const opencodeAcp: AcpEntry = { prepare: prepareOpenCodeAcp };
