import { expect } from "bun:test";
import type { HttpApp } from "../../src/server/app.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/** The master token of the access-control tests' apps. */
export const MASTER = "master-token-for-tests";

/**
 * One request through an app's own handler, as `ip`, with a bearer token and a JSON body when
 * given. An event stream is not read (its body is cancelled): only its status and headers count.
 */
export async function call(
  app: Pick<HttpApp, "handle">,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; ip?: string } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await app.handle(
    new Request(`http://localhost:9100${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }),
    { ip: options.ip ?? "127.0.0.1" },
  );
  const text = response.headers.get("content-type")?.includes("event-stream") ? null : await response.text();
  if (text === null) await response.body?.cancel();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}

/** Creates an API key (201 expected) and answers its creation, `key` included. */
export async function newKey(app: Pick<HttpApp, "handle">, body: Json, token = MASTER): Promise<Json> {
  const created = await call(app, "POST", "/v1/auth/keys", { token, body });
  expect(created.status).toBe(201);
  return created.body;
}
