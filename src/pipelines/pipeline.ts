import { type Static, Type } from "@sinclair/typebox";
import { AgentId, Driver } from "../sessions/index.ts";
import { literalUnion } from "../shared/schema.ts";

export const PIPELINE_STATUSES = ["pending", "running", "completed", "failed", "cancelled"] as const;
export const STAGE_STATUSES = ["pending", "running", "completed", "failed", "cancelled"] as const;
export type PipelineStatus = (typeof PIPELINE_STATUSES)[number];

export const Stage = Type.Object({
  index: Type.Integer(),
  name: Type.String(),
  prompt: Type.String(),
  agent: Type.Optional(
    Type.String({ description: "the agent CLI the stage runs; absent = the default agent" }),
  ),
  driver: Type.Optional(Driver),
  status: literalUnion(STAGE_STATUSES),
  sessionId: Type.Union([Type.String(), Type.Null()]),
  startedAt: Type.Union([Type.String(), Type.Null()]),
  finishedAt: Type.Union([Type.String(), Type.Null()]),
  output: Type.Union([Type.String(), Type.Null()], { description: "the stage's last assistant text" }),
  error: Type.Optional(Type.String()),
});
export type Stage = Static<typeof Stage>;

/** CONTRACT §7. */
export const Pipeline = Type.Object({
  id: Type.String(),
  name: Type.String(),
  workDir: Type.String(),
  status: literalUnion(PIPELINE_STATUSES),
  stages: Type.Array(Stage),
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
});
export type Pipeline = Static<typeof Pipeline>;

export const StageInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    prompt: Type.String({ minLength: 1 }),
    agent: Type.Optional(AgentId),
    driver: Type.Optional(Driver),
  },
  { additionalProperties: false },
);

export const CreatePipelineInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    workDir: Type.String({ minLength: 1, description: "absolute path of an existing directory" }),
    stages: Type.Array(StageInput, {
      minItems: 1,
      maxItems: 20,
      description: "run in order, each in a fresh session",
    }),
  },
  { additionalProperties: false },
);
export type CreatePipelineInput = Static<typeof CreatePipelineInput>;

/**
 * The REST body: CreatePipelineInput with `workDir` optional in the schema only, so that SPEC's
 * own example body (which has none) is answered by PipelineService.create with a 400 naming the
 * fix, not a bare "Expected required property". A pipeline has no default directory.
 */
export const CreatePipelineBody = Type.Object(
  {
    ...CreatePipelineInput.properties,
    workDir: Type.Optional(
      Type.String({
        minLength: 1,
        description: "absolute path of an existing directory; required (there is no default)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreatePipelineBody = Static<typeof CreatePipelineBody>;

/** CONTRACT §7: a stage's prompt carries the previous stage's output under this heading. */
export function stagePrompt(prompt: string, previousOutput: string | null): string {
  if (previousOutput === null) return prompt;
  return `[Previous stage output]\n${previousOutput}\n\n${prompt}`;
}
