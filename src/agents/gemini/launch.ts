import { join } from "node:path";
import { AgError } from "../../shared/errors.ts";
import type { AgentEnvironment, LaunchPlan, LaunchRequest } from "../agent.ts";
import { forwarderCommand, launchTag, modelFlag, splitCommand, writeHookSecret } from "../launch-files.ts";
import type { PermissionMode } from "../vocabulary.ts";
import { findTranscript, forkTranscript } from "./files.ts";
import { prepareGeminiHome } from "./home.ts";
import { hookSettings } from "./hooks.ts";

/** ag's neutral permission modes → `--approval-mode` (the CLI has no dontAsk or auto). */
export const APPROVAL_MODES: Partial<Record<PermissionMode, string>> = {
  default: "default",
  acceptEdits: "auto_edit",
  bypassPermissions: "yolo",
  plan: "plan",
};

/** The user's own .gemini folder (ag's HOME's: the agent inherits ag's environment). */
export function geminiDir(env: Pick<AgentEnvironment, "home">): string {
  return join(env.home, ".gemini");
}

/**
 * ag's settings for a session: its hooks (through `ag hook`: the CLI runs commands only), hook
 * progress kept off the status line ag reads, and session retention off — its clean-up at
 * start-up deletes other sessions' files (a resumed session's among them, 0.61.0).
 */
function agSettings(hook: (event: string) => string): Record<string, unknown> {
  return {
    hooks: hookSettings(hook),
    hooksConfig: { enabled: true, notifications: false },
    general: { sessionRetention: { enabled: false } },
  };
}

export async function prepareGeminiLaunch(
  request: LaunchRequest,
  env: AgentEnvironment,
): Promise<LaunchPlan> {
  const mode = APPROVAL_MODES[request.permissionMode as PermissionMode];
  if (!mode) throw new AgError("UNSUPPORTED_BY_AGENT", `Gemini CLI has no ${request.permissionMode} mode`);
  const secretFile = writeHookSecret(request.sessionDir, request.hookSecret);
  const launch = launchTag(request.hookSecret);
  const forward = (event: string) => forwarderCommand(env.selfCommand, request.hookUrl, event, secretFile);
  const home = prepareGeminiHome({
    userDir: geminiDir(env),
    root: join(request.sessionDir, `gemini-${launch}`),
    settings: agSettings(forward),
  });
  const warnings = [...home.warnings];
  if (!env.trustWorkdir)
    warnings.push("folder trust is not pre-accepted: the trust dialog is a permission prompt of kind trust");
  const base = request.agentCommand ? splitCommand(request.agentCommand) : ["gemini"];
  const command = [
    ...base,
    ...(await conversation(request, env)),
    ...modelFlag(request.model),
    "--approval-mode",
    mode,
  ];
  const agentEnv: Record<string, string> = {
    ...request.env,
    SVC_SESSION_ID: request.sessionId,
    GEMINI_CLI_HOME: home.root,
    // The CLI relaunches itself as a child node process by default, and that launcher ignores
    // SIGHUP: a closed window left both running, for good. Run as one process, which a closed
    // window ends (and ~130 MB less).
    GEMINI_CLI_NO_RELAUNCH: "true",
    // Trusts the workspace of this run only, writing nothing (trustedFolders.json stays as it is).
    ...(env.trustWorkdir ? { GEMINI_CLI_TRUST_WORKSPACE: "true" } : {}),
  };
  return { command, env: agentEnv, warnings };
}

/** A new conversation under ag's session id; a resume by it; a fork as a copy under the new id. */
async function conversation(request: LaunchRequest, env: AgentEnvironment): Promise<string[]> {
  if (!request.resume) return ["--session-id", request.sessionId];
  if (!request.resume.fork) return ["--resume", request.resume.conversationId];
  const parent = await findTranscript(geminiDir(env), request.resume.conversationId);
  if (!parent) throw new AgError("CONFLICT", `no Gemini session file of ${request.resume.conversationId}`);
  forkTranscript(parent, request.sessionId, new Date());
  return ["--resume", request.sessionId];
}
