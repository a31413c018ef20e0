import type { PermissionMode } from "../vocabulary.ts";

/**
 * ag's permission modes as OpenCode (1.18) has them. OpenCode's own default allows every edit and
 * command, so "asks before edits and commands" is rules of ours, per agent: a top-level
 * `permission` would be merged after the plan agent's own rules and lift its ban on edits.
 * `plan` starts in OpenCode's read-only plan agent (edits denied but to its plan files), whose
 * commands are made to ask too; `bypassPermissions` approves whatever asks and nothing OpenCode's
 * rules deny (its TUI's `--auto`: an answer of the client's, not a rule). OpenCode has no mode
 * that refuses what would ask (dontAsk) nor one where a model judges what needs asking (auto):
 * those are refused rather than approximated.
 */
export interface OpenCodeMode {
  /** `agent.<name>.permission` rules of the session's own config. */
  agents: Record<string, { permission: Record<string, string> }>;
  /** The agent it starts in, when not its default (`build`). */
  agent?: "plan";
  /** Every permission request is approved by the client (the TUI's `--auto`; ag over ACP). */
  approveAll?: boolean;
}

// Tab switches agents in OpenCode's UI: the other agent keeps asking too.
const ASKING = {
  build: { permission: { edit: "ask", bash: "ask" } },
  plan: { permission: { bash: "ask" } },
};

export const OPENCODE_MODES: Partial<Record<PermissionMode, OpenCodeMode>> = {
  default: { agents: ASKING },
  acceptEdits: { agents: { ...ASKING, build: { permission: { edit: "allow", bash: "ask" } } } },
  bypassPermissions: { agents: {}, approveAll: true },
  plan: { agents: ASKING, agent: "plan" },
};

export const OPENCODE_PERMISSION_MODES = Object.keys(OPENCODE_MODES) as PermissionMode[];
