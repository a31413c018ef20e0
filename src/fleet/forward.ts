import type { Principal } from "../auth/principal.ts";
import { AgError, describeError } from "../shared/errors.ts";
import { forwardToken } from "./credential.ts";
import type { HostRow } from "./store.ts";

/**
 * An action on another host's session, sent to its owner over its REST API: the same method,
 * path and body, the caller named in the credential (credential.ts), the owner's answer passed
 * back as it is (its status, its error envelope). A host whose lease expired is not asked.
 */

/** Request headers that go along (the rest are the forwarding host's business). */
const KEPT_REQUEST = ["content-type", "accept", "last-event-id"];
/** Answer headers that come back. */
const KEPT_ANSWER = ["content-type", "retry-after", "cache-control", "x-accel-buffering"];

export interface Forwarding {
  request: Request;
  /** The parsed body (the original stream is read by the time a route is known). */
  body: unknown;
  caller: Principal;
  /** The path to ask for, when it is not the request's own (a create placed elsewhere). */
  path?: string;
}

export function hostOffline(host: Pick<HostRow, "name" | "heartbeatAt">): AgError {
  return new AgError(
    "HOST_OFFLINE",
    `host ${host.name} is offline (its fleet lease expired; last heartbeat ${host.heartbeatAt}); its sessions are listed as last known`,
    { retryAfterSeconds: 5 },
  );
}

export async function forward(from: string, host: HostRow, how: Forwarding): Promise<Response> {
  if (!host.online) throw hostOffline(host);
  const url = new URL(how.request.url);
  const target = new URL(`${how.path ?? url.pathname}${url.search}`, host.url);
  const headers = new Headers();
  for (const name of KEPT_REQUEST) {
    const value = how.request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set("authorization", `Bearer ${forwardToken(host.secret, from, how.caller)}`);
  const hasBody = how.body !== undefined && how.body !== null && how.request.method !== "GET";
  if (hasBody) headers.set("content-type", "application/json");
  let answer: Response;
  try {
    answer = await fetch(target, {
      method: how.request.method,
      headers,
      body: hasBody ? JSON.stringify(how.body) : undefined,
      redirect: "manual",
      signal: how.request.signal,
    });
  } catch (error) {
    throw new AgError(
      "HOST_OFFLINE",
      `host ${host.name} did not answer at ${host.url}: ${describeError(error)}`,
      { retryAfterSeconds: 5, cause: error },
    );
  }
  const kept = new Headers();
  for (const name of KEPT_ANSWER) {
    const value = answer.headers.get(name);
    if (value !== null) kept.set(name, value);
  }
  kept.set("x-ag-fleet-host", host.name);
  return new Response(answer.body, { status: answer.status, headers: kept });
}
