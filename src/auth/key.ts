import { type Static, Type } from "@sinclair/typebox";
import { ScopeSchema } from "./scopes.ts";

export const TenantId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: "^[A-Za-z0-9._-]+$",
  description: "the tenant whose workdir rules (tenantWorkdirs) and sessions the key is bound to",
});

export const KeyCreateInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    scopes: Type.Array(ScopeSchema, { minItems: 1, uniqueItems: true }),
    tenantId: Type.Optional(TenantId),
    expiresAt: Type.Optional(
      Type.String({ format: "date-time", description: "when the key stops working (ISO 8601)" }),
    ),
  },
  { additionalProperties: false },
);
export type KeyCreateInput = Static<typeof KeyCreateInput>;

/** A key as listed: never its secret, only the prefix that helps tell keys apart. */
export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: "the first characters of the key, to recognise it" }),
  scopes: Type.Array(ScopeSchema),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  sessionId: Type.Union([Type.String(), Type.Null()], {
    description:
      "a session's own key (offerMcp): it reaches only that session and the sessions it created (docs/auth.md)",
  }),
  createdAt: Type.String(),
  expiresAt: Type.Union([Type.String(), Type.Null()]),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
});
export type ApiKey = Static<typeof ApiKey>;

/** The answer to a create: the only time the key itself is shown. */
export const CreatedKey = Type.Composite([ApiKey, Type.Object({ key: Type.String() })]);

export const SseToken = Type.Object({
  token: Type.String({
    description: "pass as ?token= to GET /v1/events, /v1/sessions/:id/events or /v1/sessions/:id/terminal",
  }),
  expiresAt: Type.String(),
  expiresInSeconds: Type.Integer(),
});
