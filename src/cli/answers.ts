import type { PendingPermission, Session } from "../sessions/index.ts";
import { AgError } from "../shared/errors.ts";
import type { ApiClient } from "./client.ts";
import { sessionPath } from "./resolve.ts";
import { pendingSummary } from "./views.ts";

/**
 * Answering what a session waits for: a permission (approve, reject) or a question (an option
 * by number, or words of one's own). `ag approve`, `ag reject`, `ag answer` and `ag run`'s
 * prompt all go through here, so they refuse the same mistakes the same way.
 *
 * The pending prompt's id goes with the answer when it is known: if the agent has moved on to
 * another prompt since, the server refuses (PERMISSION_MISMATCH) rather than approve the wrong one.
 */

export type Decision = "approve" | "reject";
/** What an answer needs to know of the session: whom to address, and the prompt it saw. */
export type SessionRef = Pick<Session, "id" | "name" | "status" | "pendingPermission">;
export type QuestionAnswer = { option: number } | { text: string };

export async function decide(client: ApiClient, session: SessionRef, decision: Decision): Promise<Session> {
  const pending = session.pendingPermission;
  if (decision === "approve" && pending?.kind === "question") {
    throw new AgError(
      "USAGE_ERROR",
      `${session.name} asks a question, it does not ask for permission: ag answer ${handle(session)} <number> (${pendingSummary(pending)})`,
    );
  }
  return client.send<Session>(
    "POST",
    sessionPath(session.id, decision),
    pending ? { permissionId: pending.id } : {},
  );
}

export async function answerQuestion(
  client: ApiClient,
  session: SessionRef,
  answer: QuestionAnswer,
): Promise<Session> {
  const pending = session.pendingPermission;
  if (pending && pending.kind !== "question") {
    throw new AgError(
      "USAGE_ERROR",
      `${session.name} waits for a permission, not an answer: ag approve ${handle(session)} or ag reject ${handle(session)} (${pendingSummary(pending)})`,
    );
  }
  if (
    "option" in answer &&
    pending?.options?.length &&
    !pending.options.some((o) => o.index === answer.option)
  ) {
    const options = pending.options.map((o) => `${o.index}. ${o.label}`).join(" · ");
    throw new AgError("USAGE_ERROR", `${session.name} has no option ${answer.option}: ${options}`);
  }
  return client.send<Session>("POST", sessionPath(session.id, "answer"), {
    ...answer,
    ...(pending ? { permissionId: pending.id } : {}),
  });
}

/** What an answer did, in a line: `approved Bash: ls in work-1a2b3c4d (now working)`. */
export function answeredLine(verb: string, before: SessionRef, after: SessionRef): string {
  const what = before.pendingPermission ? ` ${pendingSummary(before.pendingPermission)} in` : "";
  const moved =
    after.status !== before.status || after.pendingPermission?.id !== before.pendingPermission?.id;
  return `${verb}${what} ${after.name}${moved ? ` (now ${after.status})` : ""}`;
}

/** The option a question's answer picked, for the line that confirms it. */
export function optionLabel(pending: PendingPermission | null, option: number): string {
  const label = pending?.options?.find((o) => o.index === option)?.label;
  return label ? `${option}. ${label}` : String(option);
}

/** How a person names a session in a hint: the short id `ag list` shows. */
export function handle(session: { id: string }): string {
  return session.id.slice(0, 8);
}
