import type * as acp from "@agentclientprotocol/sdk";
import type { PendingPermission } from "../sessions/index.ts";
import type { AgApi } from "./port.ts";
import { toolKind } from "./transcript.ts";

/**
 * A prompt a session waits on (ag's pendingPermission) as ACP's `session/request_permission`,
 * and the option the editor picks back as ag's answer. An ACP session's permission and a
 * question carry the agent's own options (answered by number); a terminal agent's permission, a
 * plan or a trust dialog has two: allow once, reject.
 */

const APPROVE = "ag-approve";
const REJECT = "ag-reject";
const KINDS: readonly acp.PermissionOptionKind[] = [
  "allow_once",
  "allow_always",
  "reject_once",
  "reject_always",
];

/** An option's ACP kind: an ACP agent's own (ag keeps it as the description), else allow. */
function kindOf(option: NonNullable<PendingPermission["options"]>[number]): acp.PermissionOptionKind {
  const kind = KINDS.find((k) => k === option.description);
  return kind ?? "allow_once";
}

/** The tool call the permission is about: the agent's own id when its request named one. */
function toolCallOf(pending: PendingPermission): acp.ToolCallUpdate {
  const input = pending.toolInput as { toolCallId?: unknown; rawInput?: unknown } | undefined;
  const toolCallId = typeof input?.toolCallId === "string" ? input.toolCallId : `ag-permission-${pending.id}`;
  const title = pending.kind === "question" ? (pending.question ?? pending.detail) : pending.detail;
  return {
    toolCallId,
    title,
    kind:
      pending.kind === "tool" ? toolKind(pending.tool) : pending.kind === "plan" ? "switch_mode" : "other",
    status: "pending",
    ...(pending.plan
      ? { content: [{ type: "content", content: { type: "text", text: pending.plan } }] }
      : {}),
    ...(input?.rawInput !== undefined ? { rawInput: input.rawInput } : {}),
  };
}

export function permissionRequest(
  sessionId: string,
  pending: PendingPermission,
): acp.RequestPermissionRequest {
  const options: acp.PermissionOption[] = pending.options?.length
    ? pending.options.map((o) => ({ optionId: String(o.index), name: o.label, kind: kindOf(o) }))
    : [
        {
          optionId: APPROVE,
          name: pending.kind === "plan" ? "Approve the plan" : "Allow",
          kind: "allow_once",
        },
        { optionId: REJECT, name: "Reject", kind: "reject_once" },
      ];
  return { sessionId, toolCall: toolCallOf(pending), options };
}

/** The editor's pick, told to ag for this very prompt (`permissionId`: never another's). */
export async function answerPermission(
  api: AgApi,
  agSessionId: string,
  pending: PendingPermission,
  optionId: string,
): Promise<void> {
  const base = `/v1/sessions/${agSessionId}`;
  const permissionId = pending.id;
  if (optionId === APPROVE) await api.send("POST", `${base}/approve`, { permissionId });
  else if (optionId === REJECT) await api.send("POST", `${base}/reject`, { permissionId });
  else await api.send("POST", `${base}/answer`, { option: Number(optionId), permissionId });
}
