import { existsSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { AgError } from "../../shared/errors.ts";
import type { AcpEntry, LaunchPlan, LaunchRequest } from "../agent.ts";
import { splitCommand } from "../launch-files.ts";
import type { PermissionMode } from "../vocabulary.ts";
import { type ClaudeEnvironment, claudeDataDir } from "./launch.ts";
import { claudeTurnUsage } from "./turn-usage.ts";

/**
 * Claude Code headless, through Zed's ACP adapter (`@zed-industries/claude-code-acp` 0.16.2,
 * Apache-2.0): its `claude-code-acp` program speaks ACP on stdin/stdout and runs Claude Code
 * through the Claude Agent SDK, pointed at our own `claude` (CLAUDE_CODE_EXECUTABLE) so that the
 * terminal and the headless sessions run the same Claude Code. Without a `claude` on PATH the SDK
 * runs the cli.js it bundles (2.1.44). Claude Code in SDK mode asks for no folder trust, no
 * onboarding and no API-key approval, so nothing is written before the launch; its conversation
 * goes where the terminal's does (CLAUDE_CONFIG_DIR or ~/.claude), which is where `session/load`
 * finds it again.
 */

export const ADAPTER_PROGRAM = "claude-code-acp";
export const ADAPTER_PACKAGE = "@zed-industries/claude-code-acp";

/**
 * The adapter's session modes are Claude Code's permission modes; it starts every session in
 * `default` and takes the others over `session/set_mode` (0.16.2 has no `auto`).
 */
const MODES: Partial<Record<PermissionMode, string>> = {
  default: "default",
  acceptEdits: "acceptEdits",
  plan: "plan",
  dontAsk: "dontAsk",
  bypassPermissions: "bypassPermissions",
};

/**
 * The adapter's program: on PATH (npm's bin), else the package installed beside ag's own program
 * (a checkout's node_modules, where the compiled binary or `bun src/main.ts` runs from).
 */
function adapterProgram(path: string, selfCommand: readonly string[]): string | null {
  const onPath = Bun.which(ADAPTER_PROGRAM, { PATH: path });
  if (onPath) return onPath;
  let dir: string;
  try {
    dir = dirname(realpathSync(selfCommand.at(-1) ?? ""));
  } catch {
    return null;
  }
  for (let up = 0; up < 6; up++, dir = dirname(dir)) {
    const bin = join(dir, "node_modules", ".bin", ADAPTER_PROGRAM);
    if (existsSync(bin)) return bin;
    if (dirname(dir) === dir) break;
  }
  return null;
}

async function prepareClaudeAcp(request: LaunchRequest, env: ClaudeEnvironment): Promise<LaunchPlan> {
  if (!MODES[request.permissionMode as PermissionMode])
    throw new AgError("UNSUPPORTED_BY_AGENT", `Claude Code over ACP has no ${request.permissionMode} mode`);
  const path = request.env.PATH ?? process.env.PATH ?? "";
  const warnings: string[] = [];
  let command: string[];
  if (request.agentCommand) command = splitCommand(request.agentCommand);
  else {
    const program = adapterProgram(path, env.selfCommand);
    if (!program)
      throw new AgError(
        "AGENT_UNAVAILABLE",
        `${ADAPTER_PROGRAM} is not installed: npm install -g ${ADAPTER_PACKAGE}@0.16.2 (or give the session an agentCommand)`,
      );
    command = [program];
  }
  const agentEnv: Record<string, string> = { ...request.env, SVC_SESSION_ID: request.sessionId };
  if (!request.env.CLAUDE_CODE_EXECUTABLE && !process.env.CLAUDE_CODE_EXECUTABLE) {
    const claude = Bun.which("claude", { PATH: path });
    if (claude) agentEnv.CLAUDE_CODE_EXECUTABLE = claude;
    else
      warnings.push("claude is not on PATH: the ACP adapter runs the Claude Code its SDK bundles (2.1.44)");
  }
  if (env.dataDir) agentEnv.CLAUDE_CONFIG_DIR = env.dataDir;
  // The adapter offers bypassPermissions to root only when told it runs in a sandbox.
  if (request.permissionMode === "bypassPermissions" && env.isRoot) agentEnv.IS_SANDBOX = "1";
  return { command, env: agentEnv, warnings };
}

/**
 * Claude Code 2.1.197 ends a turn whose tool call was refused (the adapter's deny interrupts the
 * turn) with an `error_during_execution` result, which the adapter (written for 2.1.44, whose
 * result is a success there) answers as an internal error naming this diagnostic. Claude Code
 * records the turn as interrupted ("[Request interrupted by user for tool use]"): so does ag.
 */
const REFUSED_TOOL_END = /\[ede_diagnostic\] result_type=user\b/;

export function claudeAcp(env: ClaudeEnvironment): AcpEntry {
  return {
    prepare: (request) => prepareClaudeAcp(request, env),
    modes: MODES,
    // The adapter (0.16.2) sets a model of its own at session/new (its list's first, or the one
    // its settings name); `session/set_model` then hands Claude Code the session's model as named.
    protocolModel: true,
    // The adapter (0.16.2) reports no tokens: Claude Code's own transcript has them.
    usage: (_response, turn) => claudeTurnUsage(claudeDataDir(env), turn),
    promptError: (message) => (REFUSED_TOOL_END.test(message) ? "cancelled" : null),
  };
}
