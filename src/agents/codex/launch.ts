import { AgError } from "../../shared/errors.ts";
import type { AgentEnvironment, LaunchPlan, LaunchRequest } from "../agent.ts";
import { forwarderCommand, modelFlag, splitCommand, writeHookSecret } from "../launch-files.ts";
import type { PermissionMode } from "../vocabulary.ts";
import { HOOK_EVENTS, hookOverrides, tomlString } from "./hooks.ts";
import { isThreadOpen, threadIdOf } from "./threads.ts";

/**
 * Codex CLI's launch line. Everything ag needs is passed per session on the command line, so the
 * user's own Codex home (config, login, history) is used as it is and never written:
 * - `--no-daemon`: else the TUI is only a client of a shared background daemon that outlives it
 *   (and keeps working on a turn after the window is gone);
 * - `--dangerously-bypass-hook-trust`: ag's hooks change with every launch, so they would ask to
 *   be reviewed at every start (documented for automation);
 * - `-c hooks.<Event>=[…]`: the hooks (`ag hook`, the forwarder), `-c projects={…}`: the folder
 *   trusted when ag pre-accepts it;
 * - the permission flags of the session's mode (PERMISSION_FLAGS).
 */

/**
 * ag's neutral modes as Codex's sandbox and approval policy. Codex asks before what its sandbox
 * forbids (an edit outside the writable folders, a command the model wants to run unsandboxed):
 * - default: read-only sandbox, asks: every edit and every command that writes asks first;
 * - acceptEdits: Codex's own default: edits in the workDir go through, commands run sandboxed
 *   there and ask to go beyond it;
 * - plan: read-only, never asks: nothing can be changed;
 * - dontAsk: workspace-write, never asks: what would ask is refused and the model told so;
 * - bypassPermissions: no sandbox, no approvals;
 * - auto: approvals go to Codex's automatic reviewer (another request to the model).
 */
export const PERMISSION_FLAGS: Record<PermissionMode, readonly string[]> = {
  default: ["--sandbox", "read-only", "--ask-for-approval", "on-request"],
  acceptEdits: ["--sandbox", "workspace-write", "--ask-for-approval", "on-request"],
  plan: ["--sandbox", "read-only", "--ask-for-approval", "never"],
  dontAsk: ["--sandbox", "workspace-write", "--ask-for-approval", "never"],
  bypassPermissions: ["--dangerously-bypass-approvals-and-sandbox"],
  auto: ["--approve-for-me"],
};

export const CODEX_MODES = Object.keys(PERMISSION_FLAGS) as PermissionMode[];

export async function prepareCodexLaunch(request: LaunchRequest, env: AgentEnvironment): Promise<LaunchPlan> {
  const flags = PERMISSION_FLAGS[request.permissionMode as PermissionMode];
  if (!flags) throw new AgError("VALIDATION_ERROR", `Codex has no permission mode ${request.permissionMode}`);
  const secretFile = writeHookSecret(request.sessionDir, request.hookSecret);
  // In auto mode the reviewer answers the approvals: their hook would raise dialogs nobody sees.
  const events =
    request.permissionMode === "auto" ? HOOK_EVENTS.filter((e) => e !== "PermissionRequest") : HOOK_EVENTS;
  const hooks = hookOverrides(
    (event) => forwarderCommand(env.selfCommand, request.hookUrl, event, secretFile),
    events,
  );
  const trust = env.trustWorkdir
    ? ["-c", `projects={${tomlString(request.workDir)}={trust_level="trusted"}}`]
    : [];
  const warnings = env.trustWorkdir
    ? []
    : ["folder trust is not pre-accepted: the trust dialog is a permission prompt of kind trust"];
  const base = request.agentCommand ? splitCommand(request.agentCommand) : ["codex"];
  const command = [
    ...base,
    "--no-daemon",
    "--dangerously-bypass-hook-trust",
    ...flags,
    ...modelFlag(request.model),
    ...hooks,
    ...trust,
    ...(await conversation(request)),
  ];
  return { command, env: { ...request.env, SVC_SESSION_ID: request.sessionId }, warnings };
}

/**
 * `resume <thread>` or `fork <thread>`: Codex names its threads, the rollout file says which.
 * Never a resume of a thread another Codex is writing (the user's own TUI, daemon or IDE): ag
 * would be its second writer.
 */
async function conversation(request: LaunchRequest): Promise<string[]> {
  if (!request.resume) return [];
  const path = request.resume.transcriptPath;
  const thread = path ? await threadIdOf(path) : null;
  if (!thread)
    throw new AgError(
      "CONFLICT",
      `no Codex conversation is known for session ${request.resume.conversationId}`,
    );
  // A fork writes a thread of its own; a resume would be a second writer on one still open.
  if (!request.resume.fork && path && (await isThreadOpen(path, thread)))
    throw new AgError(
      "CONFLICT",
      `Codex conversation ${thread} is open in another Codex, which must close it first (one writer per thread); fork it instead`,
    );
  return [request.resume.fork ? "fork" : "resume", thread];
}
