import { statSync } from "node:fs";
import { principalOf } from "../auth/principal.ts";
import type { Session } from "../sessions/index.ts";
import { AgError, isAgError } from "../shared/errors.ts";
import { type Forwarding, forward, hostOffline } from "./forward.ts";
import type { Mirror } from "./mirror.ts";
import type { HostRow } from "./store.ts";
import { relayTerminal, type SocketOffers } from "./terminal.ts";
import { headroomOf } from "./view.ts";

/**
 * What a request meets before its route's handler (server/app.ts `intercept`): a route on
 * another host's session is forwarded to that host (reading one session's summary excepted:
 * every host answers that itself), and a create with `host` is placed.
 */

export interface RouteCall {
  request: Request;
  route: string;
  params: Record<string, string | undefined>;
  body: unknown;
}

export type Interceptor = (call: RouteCall) => Promise<Response | undefined>;

const SESSION_ROUTE = "/v1/sessions/:id";
const TERMINAL_ROUTE = "/v1/sessions/:id/terminal";
const CREATE_ROUTE = "/v1/sessions";
/** Routes whose answer is a session the owner just made. */
const MAKING_ROUTES: ReadonlySet<string> = new Set([CREATE_ROUTE, "/v1/sessions/:id/fork"]);

type CreateBody = { host?: string; workDir?: string } & Record<string, unknown>;

/** Outside a fleet a create may say `auto` (it is this host) and nothing else. */
export const outsideFleet: Interceptor = async ({ request, route, body }) => {
  if (route !== CREATE_ROUTE || request.method !== "POST") return undefined;
  const wanted = (body as CreateBody | undefined)?.host;
  if (wanted === undefined) return undefined;
  if (wanted !== "auto")
    throw new AgError(
      "VALIDATION_ERROR",
      `host "${wanted}": this ag is not in a fleet (fleet.databaseUrl is not set; docs/fleet.md)`,
    );
  delete (body as CreateBody).host;
  return undefined;
};

export function createInterceptor(deps: {
  self: string;
  mirror: Mirror;
  /** Whether this host has the session (it answers for it itself). */
  isLocal(id: string): boolean;
  /** Whether a folder exists here (placement on this host). */
  hasDir?(path: string): boolean;
  /** The WebSocket upgrades the listener offers (another host's terminal is relayed). */
  sockets?: SocketOffers;
}): Interceptor {
  const hasDir = deps.hasDir ?? isDirectory;

  function ownerOf(id: string): HostRow | null {
    if (deps.isLocal(id)) return null;
    const found = deps.mirror.session(id);
    if (!found || found.host === deps.self) return null;
    return deps.mirror.host(found.host) ?? unknownHost(found.host);
  }

  /** A session made elsewhere at this host's request is known here before its notification. */
  async function made(call: RouteCall, host: HostRow, answer: Response): Promise<Response> {
    if (MAKING_ROUTES.has(call.route) && answer.ok) {
      const body = (await answer
        .clone()
        .json()
        .catch(() => null)) as (Session & Record<string, unknown>) | null;
      if (body?.id) {
        const { reused: _r, promptDelivery: _p, warnings: _w, forkedFrom: _f, ...session } = body;
        deps.mirror.learn(session as Session, host.name);
      }
    }
    return answer;
  }

  async function place(call: RouteCall): Promise<Response | undefined> {
    const body = call.body as CreateBody;
    const wanted = body.host;
    if (wanted === undefined) return undefined;
    delete body.host;
    if (wanted === deps.self) return undefined;
    const how: Forwarding = { request: call.request, body, caller: principalOf(call.request) };
    if (wanted !== "auto") {
      const host = deps.mirror.host(wanted);
      if (!host)
        throw new AgError("VALIDATION_ERROR", `host "${wanted}" is not in the fleet (GET /v1/fleet)`);
      return made(call, host, await forward(deps.self, host, how));
    }
    return placeAuto(call, body, how);
  }

  /** The live hosts by headroom, most first; the first that has the workDir takes the create. */
  async function placeAuto(
    call: RouteCall,
    body: CreateBody,
    how: Forwarding,
  ): Promise<Response | undefined> {
    const live = deps.mirror
      .hosts()
      .filter((h) => h.online || h.name === deps.self)
      .sort((a, b) => (headroomOf(b) ?? -Infinity) - (headroomOf(a) ?? -Infinity));
    for (const host of live) {
      if (host.name === deps.self) {
        if (body.workDir === undefined || hasDir(body.workDir)) return undefined;
        continue;
      }
      const answer = await forward(deps.self, host, how).catch((error) => {
        if (isAgError(error) && error.code === "HOST_OFFLINE") return null;
        throw error;
      });
      if (answer && !(await lacksWorkDir(answer))) return made(call, host, answer);
    }
    throw new AgError(
      "INVALID_WORKDIR",
      `no live host of the fleet has the workDir ${body.workDir ?? "(none given)"} (host: auto)`,
    );
  }

  return async (call) => {
    if (call.route === CREATE_ROUTE && call.request.method === "POST") return place(call);
    if (!call.route.startsWith(SESSION_ROUTE)) return undefined;
    const id = call.params.id;
    if (id === undefined) return undefined;
    const owner = ownerOf(id);
    if (!owner) return undefined;
    // One session's summary: every host answers it from the fleet database, owner online or not.
    if (call.route === SESSION_ROUTE && call.request.method === "GET") return undefined;
    if (!owner.online) throw hostOffline(owner);
    if (call.route === TERMINAL_ROUTE && deps.sockets && isUpgrade(call.request))
      return relayTerminal(call.request, deps.sockets, deps.self, owner, principalOf(call.request));
    const answer = await forward(deps.self, owner, {
      request: call.request,
      body: call.body,
      caller: principalOf(call.request),
    });
    return made(call, owner, answer);
  };
}

/** A host that answered 400 INVALID_WORKDIR: the next one is tried. */
async function lacksWorkDir(answer: Response): Promise<boolean> {
  if (answer.status !== 400) return false;
  const body = (await answer
    .clone()
    .json()
    .catch(() => null)) as { code?: string } | null;
  return body?.code === "INVALID_WORKDIR";
}

function unknownHost(name: string): HostRow {
  return {
    name,
    url: "",
    secret: "",
    startedAt: new Date(0).toISOString(),
    heartbeatAt: "never",
    leaseUntil: new Date(0).toISOString(),
    online: false,
    availableMb: null,
    reserveMb: 0,
    running: 0,
  };
}

function isUpgrade(request: Request): boolean {
  return request.method === "GET" && request.headers.get("upgrade")?.toLowerCase() === "websocket";
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
