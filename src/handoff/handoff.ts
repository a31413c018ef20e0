import { Type } from "@sinclair/typebox";
import { AgentId, CreatedSession, Driver, Session } from "../sessions/index.ts";

/** POST /v1/sessions/:id/handoff: the agent to hand the task to, its driver, a note for it. */
export const HandoffBody = Type.Object(
  {
    agent: AgentId,
    driver: Type.Optional(Driver),
    note: Type.Optional(
      Type.String({ minLength: 1, maxLength: 8192, description: "a word for the next agent" }),
    ),
  },
  { additionalProperties: false },
);

/** A handoff's answer: both sessions, linked, and the brief the new one got as its first prompt. */
export const HandoffAnswer = Type.Object({
  from: Session,
  to: CreatedSession,
  brief: Type.String({ description: "the new session's first prompt, as it was typed" }),
});
