import { join } from "node:path";
import { AgError } from "../../shared/errors.ts";
import type { AcpEntry, AgentEnvironment, LaunchPlan, LaunchRequest } from "../agent.ts";
import { launchTag, modelFlag, splitCommand } from "../launch-files.ts";
import type { PermissionMode, TokenCounts } from "../vocabulary.ts";
import { prepareGeminiHome } from "./home.ts";
import { APPROVAL_MODES, geminiDir } from "./launch.ts";

/**
 * Gemini CLI headless: `gemini --acp` (0.61.0; `--experimental-acp` is its deprecated name).
 * Its own home per launch as for the terminal (session retention off, so its clean-up never
 * deletes the files `session/load` reopens), no hooks: the protocol says everything.
 */
async function prepareGeminiAcp(request: LaunchRequest, env: AgentEnvironment): Promise<LaunchPlan> {
  const mode = APPROVAL_MODES[request.permissionMode as PermissionMode];
  if (!mode) throw new AgError("UNSUPPORTED_BY_AGENT", `Gemini CLI has no ${request.permissionMode} mode`);
  const home = prepareGeminiHome({
    userDir: geminiDir(env),
    root: join(request.sessionDir, `gemini-acp-${launchTag(request.hookSecret)}`),
    settings: { general: { sessionRetention: { enabled: false } } },
  });
  const base = request.agentCommand ? splitCommand(request.agentCommand) : ["gemini"];
  return {
    command: [...base, "--acp", ...modelFlag(request.model), "--approval-mode", mode],
    env: {
      ...request.env,
      SVC_SESSION_ID: request.sessionId,
      GEMINI_CLI_HOME: home.root,
      GEMINI_CLI_NO_RELAUNCH: "true",
      ...(env.trustWorkdir ? { GEMINI_CLI_TRUST_WORKSPACE: "true" } : {}),
    },
    warnings: home.warnings,
  };
}

interface Quota {
  token_count?: { input_tokens?: number; output_tokens?: number };
  model_usage?: Array<{ model?: string }>;
}

/** 0.61.0 reports a turn's tokens in the prompt response's `_meta.quota` (not ACP's usage). */
function geminiUsage(response: { _meta?: Record<string, unknown> | null }) {
  const quota = response._meta?.quota as Quota | undefined;
  const count = quota?.token_count;
  if (!count) return null;
  const tokens: TokenCounts = {
    input: count.input_tokens ?? 0,
    output: count.output_tokens ?? 0,
    cacheRead: 0,
    cacheCreation: 0,
  };
  return { model: quota?.model_usage?.[0]?.model ?? null, tokens };
}

export function geminiAcp(env: AgentEnvironment): AcpEntry {
  return { prepare: (request) => prepareGeminiAcp(request, env), usage: geminiUsage };
}
