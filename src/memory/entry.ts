import { type Static, Type } from "@sinclair/typebox";
import { literalUnion } from "../shared/schema.ts";

/** SPEC's limits (CONTRACT §6): key 1–256 characters, value ≤ 100 KiB of UTF-8, TTL ≤ 30 days. */
export const MAX_KEY_CHARS = 256;
export const MAX_VALUE_BYTES = 100 * 1024;
export const MAX_TTL_SECONDS = 30 * 24 * 60 * 60;
export const MEMORY_SCOPES = ["project", "user", "team"] as const;

/** No control characters: a key is shown in prompts, logs and URLs. */
const KEY_PATTERN = "^[^\\u0000-\\u001f\\u007f]+$";

export const MemoryKey = Type.String({
  minLength: 1,
  maxLength: MAX_KEY_CHARS,
  pattern: KEY_PATTERN,
  description: "1–256 characters, no control characters; `namespace/name` recommended",
});

export const MemoryEntry = Type.Object({
  key: Type.String(),
  value: Type.String(),
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
  expiresAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
});
export type MemoryEntry = Static<typeof MemoryEntry>;

const Ttl = {
  ttlSeconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_TTL_SECONDS,
      description: "time to live in seconds (max 30 days); wins over ttlMs",
    }),
  ),
  ttlMs: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_TTL_SECONDS * 1000,
      description: "time to live in milliseconds, rounded up to seconds",
    }),
  ),
};

/** Characters first (cheap, in the schema); the UTF-8 byte limit is checked by the service. */
const Value = Type.String({ maxLength: MAX_VALUE_BYTES, description: "at most 100 KiB of UTF-8" });

export const MemoryInput = Type.Object(
  { key: MemoryKey, value: Value, ...Ttl },
  { additionalProperties: false },
);
export type MemoryInput = Static<typeof MemoryInput>;

/** A session memory's key is relative: it is stored as `session/<sessionId>/<key>`. */
export const SessionMemoryInput = MemoryInput;

export const MemoryListQuery = Type.Object({
  prefix: Type.Optional(Type.String({ maxLength: MAX_KEY_CHARS, description: "keys starting with this" })),
});

export const MemoryScopeQuery = Type.Object({
  scope: literalUnion(MEMORY_SCOPES, { description: "entries whose key starts with `<scope>/`" }),
});
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

export const MemoryDeleted = Type.Object({ key: Type.String(), deleted: Type.Literal(true) });
