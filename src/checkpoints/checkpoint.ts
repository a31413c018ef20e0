import { type Static, Type } from "@sinclair/typebox";
import { literalUnion } from "../shared/schema.ts";

/** The shapes of checkpoints as the API, the CLI and MCP show them (docs/checkpoints.md). */

export const CheckpointFile = Type.Object({
  path: Type.String({ description: "the file's path in the session's folder" }),
  status: Type.Union([Type.Literal("added"), Type.Literal("modified"), Type.Literal("deleted")]),
  added: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: "lines added; null: binary",
  }),
  removed: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: "lines removed; null: binary",
  }),
});
export type CheckpointFile = Static<typeof CheckpointFile>;

export const Checkpoint = Type.Object({
  turn: Type.Integer({ minimum: 1, description: "the turn's number in the session, from 1" }),
  prompt: Type.Union([Type.String(), Type.Null()], {
    description: "the prompt ag delivered (null: a turn ag did not start)",
  }),
  startedAt: Type.String({ description: "when the checkpoint before the turn was taken" }),
  endedAt: Type.Union([Type.String(), Type.Null()], { description: "when the turn ended (null: under way)" }),
  files: Type.Array(CheckpointFile, { description: "what the turn changed (empty while under way)" }),
  added: Type.Integer({ minimum: 0, description: "lines added, all files together" }),
  removed: Type.Integer({ minimum: 0, description: "lines removed, all files together" }),
});
export type Checkpoint = Static<typeof Checkpoint>;

export const CheckpointList = Type.Object({
  sessionId: Type.String(),
  folder: Type.String({ description: "the folder checkpointed (the session's workDir)" }),
  shadow: Type.Boolean({
    description: "true: the folder is no git repository; checkpoints live in ag's state directory",
  }),
  checkpoints: Type.Array(Checkpoint, { description: "oldest first; retention may have pruned early ones" }),
  undo: Type.Union([Type.Object({ turn: Type.Integer({ minimum: 0 }), at: Type.String() }), Type.Null()], {
    description: "the last code rewind, which POST .../rewind {undo: true} takes back",
  }),
});
export type CheckpointList = Static<typeof CheckpointList>;

export const CheckpointDiff = Type.Object({
  turn: Type.Integer({ minimum: 1 }),
  files: Type.Array(CheckpointFile),
  patch: Type.String({
    description: "the unified diff of the turn (git diff), paths from the repository's top",
  }),
});
export type CheckpointDiff = Static<typeof CheckpointDiff>;

export const REWIND_WHATS = ["code", "conversation", "both"] as const;
export type RewindWhat = (typeof REWIND_WHATS)[number];

export const RewindInput = Type.Union([
  Type.Object(
    {
      turn: Type.Integer({
        minimum: 0,
        description: "n: as turn n left it; 0: as it was before the first turn",
      }),
      what: Type.Optional(
        literalUnion(REWIND_WHATS, {
          default: "code",
          description: "the folder (code), the agent's conversation, or both",
        }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { undo: Type.Literal(true, { description: "take back the last code rewind" }) },
    { additionalProperties: false },
  ),
]);
export type RewindInput = { turn: number; what?: RewindWhat } | { undo: true };

export const RewindResult = Type.Object({
  sessionId: Type.String(),
  turn: Type.Integer({
    minimum: 0,
    description: "the turn rewound to (an undo: the turn the rewind had gone to)",
  }),
  what: literalUnion([...REWIND_WHATS, "undo"] as const),
  code: Type.Union(
    [
      Type.Object({
        files: Type.Integer({ minimum: 0, description: "files written or removed" }),
        undoable: Type.Boolean({
          description: "the present before the rewind was kept: {undo: true} restores it",
        }),
      }),
      Type.Null(),
    ],
    { description: "what the folder's rewind did (null: the code was not asked for)" },
  ),
  conversation: Type.Union(
    [
      Type.Object({
        sessionId: Type.String({
          description: "the new session continuing the conversation as of that turn",
        }),
      }),
      Type.Null(),
    ],
    { description: "the conversation's rewind (null: not asked for)" },
  ),
});
export type RewindResult = Static<typeof RewindResult>;
