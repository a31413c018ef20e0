import type { PermissionMode } from "../vocabulary.ts";

/**
 * ag's permission modes as OpenCode (1.18) has them. OpenCode's own default allows every edit and
 * command, so "asks before edits and commands" is rules of ours, per agent: a top-level
 * `permission` would be merged after the plan agent's own rules and lift its ban on edits.
 * `plan` is OpenCode's read-only plan agent (edits denied but to its plan files), whose commands
 * are made to ask too; `bypassPermissions` is `--auto`, which approves whatever is not denied.
 * OpenCode has no mode that refuses what would ask (dontAsk) nor one where a model judges what
 * needs asking (auto): those are refused rather than approximated.
 */
export interface OpenCodeMode {
  /** Its command-line flags. */
  flags: string[];
  /** `agent.<name>.permission` rules of the session's own config. */
  agents: Record<string, { permission: Record<string, string> }>;
}

// Tab switches agents in OpenCode's UI: the other agent keeps asking too.
const ASKING = {
  build: { permission: { edit: "ask", bash: "ask" } },
  plan: { permission: { bash: "ask" } },
};

export const OPENCODE_MODES: Partial<Record<PermissionMode, OpenCodeMode>> = {
  default: { flags: [], agents: ASKING },
  acceptEdits: { flags: [], agents: { ...ASKING, build: { permission: { edit: "allow", bash: "ask" } } } },
  bypassPermissions: { flags: ["--auto"], agents: {} },
  plan: { flags: ["--agent", "plan"], agents: ASKING },
};

export const OPENCODE_PERMISSION_MODES = Object.keys(OPENCODE_MODES) as PermissionMode[];
