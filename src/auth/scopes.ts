import { literalUnion } from "../shared/schema.ts";

/**
 * CONTRACT §4's scopes. `admin` covers the server's own machinery (keys, audit, diagnostics,
 * channels, dead letters), not the sessions; `*` is everything.
 */
export const SCOPES = [
  "sessions:read",
  "sessions:write",
  "memory:read",
  "memory:write",
  "templates:read",
  "templates:write",
  "pipelines:read",
  "pipelines:write",
  "admin",
  "*",
] as const;

export type Scope = (typeof SCOPES)[number];

export const ScopeSchema = literalUnion(SCOPES, { description: "a scope of CONTRACT §4" });

/** What a caller may do: every scope (the master token, no-auth local use) or the listed ones. */
export type Grant = "all" | ReadonlySet<Scope>;

export function grants(grant: Grant, needed: Scope): boolean {
  return grant === "all" || grant.has("*") || grant.has(needed);
}
