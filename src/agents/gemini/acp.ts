import { join } from "node:path";
import { AgError } from "../../shared/errors.ts";
import type { AcpEntry, AgentEnvironment, LaunchPlan, LaunchRequest } from "../agent.ts";
import { launchTag, modelFlag, splitCommand } from "../launch-files.ts";
import type { PermissionMode, TokenCounts } from "../vocabulary.ts";
import { findTranscript, nameBeforeMinute, namedMinute } from "./files.ts";
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

/**
 * 0.61.0's `session/load` starts a new recording of the loaded id before it looks for the
 * conversation, in a file named after the current UTC minute and the id's first 8 characters
 * (files.ts). Within the minute the conversation's own file is named after, that is the same
 * file: the new recording's `$set` of the messages (its context alone) is appended to the
 * conversation, which then reads as empty ("No previous sessions found for this project."), for
 * good. A minute later it is a file of its own, passed over as empty, and the conversation is
 * found. So a conversation's file named after this minute is named after the one before
 * (nameBeforeMinute) and the load goes at once; where it cannot be, the load waits for the
 * minute after the one the file is named after.
 */
async function prepareGeminiLoad(env: AgentEnvironment, sessionId: string, now: number): Promise<number> {
  const file = await findTranscript(geminiDir(env), sessionId).catch(() => null);
  const minute = file ? namedMinute(file) : null;
  if (file === null || minute === null || nameBeforeMinute(file, now)) return 0;
  return minute + 60_000;
}

export function geminiAcp(env: AgentEnvironment): AcpEntry {
  return {
    prepare: (request) => prepareGeminiAcp(request, env),
    usage: geminiUsage,
    prepareLoad: (sessionId, now) => prepareGeminiLoad(env, sessionId, now),
  };
}
