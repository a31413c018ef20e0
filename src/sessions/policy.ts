import type { ToolCategory } from "../agents/agent.ts";
import type { PermissionPolicy, PermissionProfile } from "./session.ts";

/**
 * CONTRACT §2's profiles. "Bash asks" (standard) means ag does not refuse it and the agent's
 * own permission prompt decides, as for "full": ag's policies only ever deny.
 */
export const PROFILES: Record<PermissionProfile, Omit<PermissionPolicy, "profile">> = {
  readonly: { allowRead: true, allowWrite: false, allowBash: false },
  standard: { allowRead: true, allowWrite: true, allowBash: true },
  full: { allowRead: true, allowWrite: true, allowBash: true },
};

/**
 * Why the session's policy refuses a tool, or null when it does not. ag never allows anything on
 * the agent's behalf: a tool the policy lets through is for the agent's own rules to decide.
 */
export function policyRefusal(
  policy: PermissionPolicy | null,
  tool: { name: string; category: ToolCategory },
): string | null {
  if (!policy || tool.category === "other") return null;
  const allowed = { read: policy.allowRead, write: policy.allowWrite, bash: policy.allowBash }[tool.category];
  if (allowed) return null;
  return `ag's ${policy.profile} permission policy for this session does not allow ${tool.category} tools (${tool.name})`;
}
