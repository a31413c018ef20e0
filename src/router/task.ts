import { type Static, Type } from "@sinclair/typebox";

/** SPEC's model router: what a caller describes and what it is told to use. */

export const Tier = Type.Union([Type.Literal("fast"), Type.Literal("standard"), Type.Literal("power")]);
export type Tier = Static<typeof Tier>;

/** Caps on what a task may carry; an issue tracker's own limits fit well inside them. */
export const MAX_TITLE = 1024;
export const MAX_LABELS = 100;
export const MAX_LABEL = 128;
export const MAX_DESCRIPTION = 65_536;

export const RouteTaskInput = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: MAX_TITLE, description: "the task's title" }),
    labels: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_LABEL }), {
        maxItems: MAX_LABELS,
        default: [],
        description: "issue labels; each is matched on its own",
      }),
    ),
    description: Type.Optional(
      Type.String({ maxLength: MAX_DESCRIPTION, default: "", description: "the task's body" }),
    ),
  },
  { additionalProperties: false },
);
export type RouteTaskInput = Static<typeof RouteTaskInput>;

export const RouteResult = Type.Object({
  tier: Tier,
  model: Type.String({ description: "the configured model of that tier" }),
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  reasoning: Type.Array(Type.String(), {
    description: 'one entry per matched keyword, e.g. `power keyword: "security"`',
  }),
});
export type RouteResult = Static<typeof RouteResult>;

export const ScoreRange = Type.Object({
  min: Type.Integer({ description: "lowest score of the tier, inclusive" }),
  max: Type.Integer({ description: "highest score of the tier, inclusive" }),
});

export const ModelTiers = Type.Object({
  tiers: Type.Array(Type.Object({ tier: Tier, model: Type.String(), range: ScoreRange })),
});
export type ModelTiers = Static<typeof ModelTiers>;
