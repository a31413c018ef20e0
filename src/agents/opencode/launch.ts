import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgError } from "../../shared/errors.ts";
import type { LaunchPlan, LaunchRequest } from "../agent.ts";
import { modelFlag, splitCommand, writeHookSecret } from "../launch-files.ts";
import { HOOK_SECRET_HEADER } from "../vocabulary.ts";
import { copyConversation, lastConversation } from "./conversation.ts";
import { forkConversation } from "./fork.ts";
import { OPENCODE_MODES, type OpenCodeMode } from "./modes.ts";
import pluginSource from "./plugin.js" with { type: "text" };

/**
 * Everything an OpenCode session needs is its own, in the session folder: OpenCode reads an
 * extra config dir (OPENCODE_CONFIG_DIR) after the user's, so the user's config, providers and
 * models stay as they are and ours adds only this session's permission rules, two keys and the
 * plugin that calls ag back.
 */

/** The conversation file ag's plugin writes in a session's folder. */
export const CONVERSATION_FILE = "conversation.jsonl";

/**
 * Keys of OpenCode's UI ag relies on. Ctrl+C clears the input (ag's key before it retypes a
 * prompt) but on an empty input it would quit OpenCode: quitting keeps only its leader key.
 * Interrupting takes two presses of its key within 5 s, which must reach OpenCode as two key
 * events: two Escapes in one write read as one Alt+Escape, two Ctrl+] do not.
 */
export const TUI_CONFIG = {
  keybinds: { app_exit: "<leader>q", input_clear: "ctrl+c", session_interrupt: "escape,ctrl+]" },
};

/**
 * OpenCode installs its plugin package (@opencode-ai/plugin, from the npm registry) into every
 * config dir whose node_modules is missing or whose lock file lacks it. The session's dir needs
 * nothing installed (the plugin imports node built-ins only): an empty node_modules and a lock
 * file that names the package keep OpenCode off the network.
 */
const INSTALLED_MARKER = { packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } } };

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The session's permission mode as OpenCode has it, or UNSUPPORTED_BY_AGENT. */
export function openCodeMode(permissionMode: string): OpenCodeMode {
  const mode = OPENCODE_MODES[permissionMode as keyof typeof OPENCODE_MODES];
  if (!mode) throw new AgError("UNSUPPORTED_BY_AGENT", `OpenCode has no ${permissionMode} mode`);
  return mode;
}

/**
 * The session's own config dir (OPENCODE_CONFIG_DIR) with its `opencode.json`, and nothing for
 * OpenCode to install into it. Both drivers' launches start here.
 */
export function writeSessionConfig(sessionDir: string, config: Record<string, unknown>): string {
  mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
  const configDir = join(sessionDir, "opencode");
  mkdirSync(join(configDir, "node_modules"), { recursive: true });
  writeFileSync(join(configDir, "opencode.json"), json(config));
  writeFileSync(join(configDir, "package-lock.json"), json(INSTALLED_MARKER));
  return configDir;
}

export async function prepareOpenCodeLaunch(request: LaunchRequest): Promise<LaunchPlan> {
  const mode = openCodeMode(request.permissionMode);
  const secretFile = writeHookSecret(request.sessionDir, request.hookSecret);
  const configDir = writeSessionConfig(request.sessionDir, { agent: mode.agents });
  const conversationFile = join(request.sessionDir, CONVERSATION_FILE);
  mkdirSync(join(configDir, "plugin"), { recursive: true });
  writeFileSync(join(configDir, "tui.json"), json(TUI_CONFIG));
  writeFileSync(join(configDir, "plugin", "ag.js"), pluginSource);
  writeFileSync(
    join(configDir, "ag.json"),
    json({ hookUrl: request.hookUrl, secretHeader: HOOK_SECRET_HEADER, secretFile, conversationFile }),
  );

  const base = request.agentCommand ? splitCommand(request.agentCommand) : ["opencode"];
  const conversation = request.resume ? await resumeFlags(request, base[0] ?? "opencode") : [];
  const flags = [
    ...(mode.approveAll ? ["--auto"] : []),
    ...(mode.agent ? ["--agent", mode.agent] : []),
    ...modelFlag(request.model),
  ];
  return {
    command: [...base, ...flags, ...conversation],
    env: { ...request.env, OPENCODE_CONFIG_DIR: configDir, SVC_SESSION_ID: request.sessionId },
    warnings: [],
  };
}

/**
 * `-s <id>` of the OpenCode conversation an ag session had: its conversation file names it (ag's
 * session ids are not OpenCode's). A resumed session's file is its own; a fork's parent's file is
 * where ag recorded it, and the UI starts in a copy made beforehand (fork.ts).
 */
async function resumeFlags(request: LaunchRequest, program: string): Promise<string[]> {
  const { conversationId, fork, transcriptPath } = request.resume!;
  const file = transcriptPath ?? (fork ? null : join(request.sessionDir, CONVERSATION_FILE));
  const id = file ? await lastConversation(file) : null;
  if (!id) throw new AgError("CONFLICT", `session ${conversationId} has no OpenCode conversation yet`);
  if (!fork || !file) return ["-s", id];
  const copy = await forkConversation({
    program,
    conversationId: id,
    workDir: request.workDir,
    env: request.env,
    runAs: request.runAs,
  });
  await copyConversation(file, join(request.sessionDir, CONVERSATION_FILE), copy);
  return ["-s", copy];
}
