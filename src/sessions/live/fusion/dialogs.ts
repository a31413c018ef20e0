import type { PermissionRequest } from "../../../agents/agent.ts";

/**
 * Two readings of one dialog: the same kind and, for tools, details that can be the same thing
 * seen two ways (a hook's absolute path and the screen's file name; a command and its first line).
 */
export function sameDialog(a: PermissionRequest, b: PermissionRequest): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "trust") return a.dialog === b.dialog;
  if (a.kind === "plan") return true;
  // A dialog of several questions shows them one after another: each is asked anew.
  if (a.kind === "question") return compatible(a.question ?? a.detail, b.question ?? b.detail);
  return compatible(a.detail, b.detail);
}

/** The same text seen two ways: whole, cut short (a first line), or without its path. */
function compatible(a: string, b: string): boolean {
  const x = a.replace(/\s+/g, " ").trim();
  const y = b.replace(/\s+/g, " ").trim();
  if (!x || !y) return true;
  return x.startsWith(y) || y.startsWith(x) || x.endsWith(y) || y.endsWith(x);
}

/** A dialog in one line, for events and channels: the tool and its input, or the question and its options. */
export function describeDialog(request: PermissionRequest): string {
  if (request.kind === "question") {
    const options = request.options?.map((o) => `${o.index}. ${o.label}`).join(" · ");
    return options
      ? `${request.question ?? request.detail} — ${options}`
      : (request.question ?? request.detail);
  }
  if (request.kind === "tool") return request.tool ? `${request.tool}: ${request.detail}` : request.detail;
  return request.detail;
}
