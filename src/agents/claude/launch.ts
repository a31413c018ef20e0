import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import type { AgentEnvironment, LaunchPlan, LaunchRequest } from "../agent.ts";
import {
  forwarderCommand,
  launchTag,
  modelFlag,
  splitCommand,
  writeHookSecret,
  writePrivate,
} from "../launch-files.ts";
import { HOOK_SECRET_HEADER } from "../vocabulary.ts";
import { hookSettings } from "./hooks.ts";

/** `dataDir` (AGENT_DATA_DIR) is passed to the agent as CLAUDE_CONFIG_DIR; null = ~/.claude. */
export type ClaudeEnvironment = AgentEnvironment;

/** Where Claude Code keeps its global config (.claude.json) and its transcripts. */
export function claudeConfigFile(env: Pick<ClaudeEnvironment, "home" | "dataDir">): string {
  return env.dataDir ? join(env.dataDir, ".claude.json") : join(env.home, ".claude.json");
}

export function claudeDataDir(env: Pick<ClaudeEnvironment, "home" | "dataDir">): string {
  return env.dataDir ?? join(env.home, ".claude");
}

export async function prepareClaudeLaunch(
  request: LaunchRequest,
  env: ClaudeEnvironment,
): Promise<LaunchPlan> {
  const warnings: string[] = [];
  // Files per launch: Claude Code reloads a settings file that changes, so a resumed session's
  // new secret written over the old file would reach the ended agent still shutting down.
  const secretFile = writeHookSecret(request.sessionDir, request.hookSecret);
  const settingsFile = join(request.sessionDir, `settings-${launchTag(request.hookSecret)}.json`);
  const settings = {
    hooks: hookSettings({
      hookUrl: request.hookUrl,
      secretHeader: HOOK_SECRET_HEADER,
      secret: request.hookSecret,
      forwarderCommand: (event) => forwarderCommand(env.selfCommand, request.hookUrl, event, secretFile),
    }),
    ...(request.permissionMode === "bypassPermissions" ? { skipDangerousModePermissionPrompt: true } : {}),
  };
  writePrivate(settingsFile, JSON.stringify(settings, null, 2));

  if (env.trustWorkdir) await trustFolderLocked(claudeConfigFile(env), request.workDir);
  else
    warnings.push("folder trust is not pre-accepted: the trust dialog is a permission prompt of kind trust");

  const base = request.agentCommand ? splitCommand(request.agentCommand) : ["claude"];
  const conversation = request.resume
    ? [
        "--resume",
        request.resume.conversationId,
        ...(request.resume.fork ? ["--fork-session", "--session-id", request.sessionId] : []),
      ]
    : ["--session-id", request.sessionId];
  const command = [
    ...base,
    ...conversation,
    ...modelFlag(request.model),
    "--permission-mode",
    request.permissionMode,
    "--settings",
    settingsFile,
  ];

  const agentEnv: Record<string, string> = { ...request.env, SVC_SESSION_ID: request.sessionId };
  if (env.dataDir) agentEnv.CLAUDE_CONFIG_DIR = env.dataDir;
  // Claude Code refuses bypass mode as root unless told it runs in a sandbox.
  if (request.permissionMode === "bypassPermissions" && env.isRoot) agentEnv.IS_SANDBOX = "1";
  return { command, env: agentEnv, warnings };
}

/** How long ag waits for Claude Code's config lock (its holders keep it for one write: ms). */
const CONFIG_LOCK_WAIT_MS = 500;
const CONFIG_LOCK_RETRY_MS = 10;

/**
 * trustFolder under Claude Code's own config lock. Claude Code re-reads ~/.claude.json and
 * writes it back while holding `<file>.lock` (proper-lockfile: a directory made with mkdir); an
 * entry ag renames into place between that read and that write is lost, and the new agent then
 * shows the trust dialog. Holding the same lock keeps ag's write out of those windows. Claude
 * Code also writes without the lock when it cannot take it, so this narrows the race without
 * closing it (the session answers a trust dialog that shows anyway). A lock still held after the
 * wait is written through, as before: a stale lock must not stop a launch.
 */
export async function trustFolderLocked(configFile: string, workDir: string): Promise<void> {
  const config = readConfig(configFile);
  if (config === null || isTrusted(config, workDir)) return;
  mkdirSync(dirname(configFile), { recursive: true });
  const lock = `${configFile}.lock`;
  let held = false;
  for (let waited = 0; !held; waited += CONFIG_LOCK_RETRY_MS) {
    try {
      mkdirSync(lock);
      held = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || waited >= CONFIG_LOCK_WAIT_MS) break;
      await Bun.sleep(CONFIG_LOCK_RETRY_MS);
    }
  }
  try {
    trustFolder(configFile, workDir);
  } finally {
    if (held) rmSync(lock, { recursive: true, force: true });
  }
}

type ClaudeConfig = { projects?: Record<string, { hasTrustDialogAccepted?: boolean }> };

/** The config as it is now ({} when there is none); null when it cannot be read. */
function readConfig(configFile: string): ClaudeConfig | null {
  if (!existsSync(configFile)) return {};
  try {
    return JSON.parse(readFileSync(configFile, "utf8"));
  } catch {
    return null;
  }
}

/** Trust is inherited by subdirectories. */
function isTrusted(config: ClaudeConfig, workDir: string): boolean {
  return Object.entries(config.projects ?? {}).some(
    ([dir, project]) =>
      project?.hasTrustDialogAccepted &&
      (workDir === dir || workDir.startsWith(dir.endsWith(sep) ? dir : dir + sep)),
  );
}

/**
 * Marks `workDir` trusted in Claude Code's own config, unless it or a parent already is (trust
 * is inherited by subdirectories). Written to a temp file and renamed, so the agent never reads
 * half a file; other keys are kept as they are.
 */
export function trustFolder(configFile: string, workDir: string): void {
  const config = readConfig(configFile);
  // Never overwrite a config we cannot read: the trust dialog will show instead.
  if (config === null || isTrusted(config, workDir)) return;
  const projects = config.projects ?? {};
  projects[workDir] = { ...projects[workDir], hasTrustDialogAccepted: true };
  mkdirSync(dirname(configFile), { recursive: true });
  const temp = `${configFile}.ag-${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify({ ...config, projects }, null, 2), { mode: 0o600 });
  renameSync(temp, configFile);
}
