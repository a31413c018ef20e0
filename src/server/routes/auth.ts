import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { ApiKey, CreatedKey, KeyCreateInput, SseToken } from "../../auth/key.ts";
import type { KeyStore } from "../../auth/keys.ts";
import { type Principal, principalOf } from "../../auth/principal.ts";
import { grants } from "../../auth/scopes.ts";
import type { SseTokenStore } from "../../auth/sse-tokens.ts";
import { AgError } from "../../shared/errors.ts";
import { IdParams } from "./params.ts";

/**
 * Keys are managed by the master token or an `admin` key (the scope table says so). An admin key
 * cannot mint scopes it lacks itself nor a key that outlives it (`holderExpiresAt`), and one bound
 * to a tenant manages only that tenant's keys: holding a key never grants more than the key.
 */
function assertMayGrant(holder: Principal, input: KeyCreateInput, holderExpiresAt: string | null): void {
  const missing = input.scopes.filter((scope) => !grants(holder.scopes, scope));
  if (missing.length) {
    throw new AgError("FORBIDDEN", `a key cannot grant scopes it does not hold: ${missing.join(", ")}`);
  }
  if (holder.tenantId !== null && (input.tenantId ?? null) !== holder.tenantId) {
    throw new AgError("FORBIDDEN", `this key may only create keys for tenant ${holder.tenantId}`);
  }
  const expiry = input.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(input.expiresAt);
  if (holderExpiresAt !== null && !(expiry <= Date.parse(holderExpiresAt))) {
    throw new AgError(
      "FORBIDDEN",
      `a key cannot create a key that outlives it: expiresAt must be at most ${holderExpiresAt}`,
    );
  }
}

const visibleTo = (holder: Principal) => (key: ApiKey) =>
  holder.tenantId === null || key.tenantId === holder.tenantId;

export function authRoutes(deps: { keys: KeyStore; sseTokens: SseTokenStore }) {
  return new Elysia({ name: "routes/auth" })
    .post(
      "/v1/auth/keys",
      ({ body, request, set }) => {
        const holder = principalOf(request);
        const holderKey = holder.keyId === null ? null : deps.keys.active(holder.keyId);
        assertMayGrant(holder, body, holderKey?.expiresAt ?? null);
        const { key, secret } = deps.keys.create(body);
        set.status = 201;
        return { ...key, key: secret };
      },
      {
        body: KeyCreateInput,
        response: { 201: CreatedKey },
        detail: {
          summary: "Create an API key; `key` is shown only in this answer (stored hashed)",
          tags: ["auth"],
        },
      },
    )
    .get("/v1/auth/keys", ({ request }) => deps.keys.list().filter(visibleTo(principalOf(request))), {
      response: Type.Array(ApiKey),
      detail: { summary: "List API keys (never their secrets)", tags: ["auth"] },
    })
    .delete(
      "/v1/auth/keys/:id",
      ({ params, request }) => {
        const key = deps.keys.list().find((k) => k.id === params.id);
        if (!key || !visibleTo(principalOf(request))(key)) {
          throw new AgError("KEY_NOT_FOUND", `no API key ${params.id}`);
        }
        deps.keys.delete(key.id);
        return key;
      },
      {
        params: IdParams,
        response: ApiKey,
        detail: { summary: "Revoke an API key at once (its SSE tokens die with it)", tags: ["auth"] },
      },
    )
    .post(
      "/v1/auth/sse-token",
      ({ request, set }) => {
        const { token, expiresAt, ttlMs } = deps.sseTokens.issue(principalOf(request));
        set.status = 201;
        return {
          token,
          expiresAt: new Date(expiresAt).toISOString(),
          expiresInSeconds: Math.round(ttlMs / 1000),
        };
      },
      {
        response: { 201: SseToken },
        detail: {
          summary:
            "A single-use token for ?token= on the event streams and the live terminal, valid 60 s, with this key's scopes",
          tags: ["auth"],
        },
      },
    );
}
