import { type Static, Type } from "@sinclair/typebox";
import {
  createLineage,
  isConfined,
  LIVE_STATES,
  type Owner,
  type Session,
  type SessionListQuery,
  type SessionService,
} from "../sessions/index.ts";
import { AgError } from "../shared/errors.ts";
import type { Mirror } from "./mirror.ts";
import type { HostRow } from "./store.ts";

/**
 * The sessions as a fleet member answers for them: its own, as they are, and every other host's
 * as last published, each with its `host` and whether that host holds its lease (`hostOnline`).
 * Everything that is not a read of the list or of one session stays the local service's: actions
 * on another host's session are forwarded before they reach it (intercept.ts).
 */

export const FleetHost = Type.Object({
  name: Type.String(),
  url: Type.String({ description: "where the host's REST API answers (its SVC_BASE_URL)" }),
  online: Type.Boolean({ description: "its lease is current" }),
  self: Type.Boolean({ description: "the host that answers" }),
  startedAt: Type.String({ format: "date-time" }),
  heartbeatAt: Type.String({ format: "date-time" }),
  leaseUntil: Type.String({ format: "date-time" }),
  availableMb: Type.Union([Type.Integer(), Type.Null()]),
  reserveMb: Type.Integer(),
  headroomMb: Type.Union([Type.Integer(), Type.Null()], {
    description: "availableMb - reserveMb: what placement (host: auto) compares",
  }),
  running: Type.Integer({ description: "its sessions in a live state" }),
  sessions: Type.Integer({ description: "its sessions the fleet lists" }),
});

export const FleetView = Type.Object({
  host: Type.String({ description: "the host that answers" }),
  connected: Type.Boolean({ description: "whether it reaches the fleet database now" }),
  error: Type.Union([Type.String(), Type.Null()]),
  leaseMs: Type.Integer(),
  hosts: Type.Array(FleetHost),
});
export type FleetView = Static<typeof FleetView>;

export function headroomOf(host: Pick<HostRow, "availableMb" | "reserveMb">): number | null {
  return host.availableMb === null ? null : host.availableMb - host.reserveMb;
}

export function createFleetSessions(deps: {
  self: string;
  local: SessionService;
  mirror: Mirror;
  /** Whether this host has the session (it answers for it itself). */
  isLocal(id: string): boolean;
}): SessionService {
  const { self, local, mirror } = deps;
  const exists = deps.isLocal;
  const others = () => mirror.sessions().filter((r) => r.host !== self && !exists(r.session.id));
  const lineage = createLineage({
    get: (id) => (exists(id) ? local.get(id) : (mirror.session(id)?.session ?? null)),
    live: () => [],
  });
  const own = (s: Session): Session => ({ ...s, host: self, hostOnline: true });
  const theirs = (s: Session, host: string): Session => ({
    ...s,
    host,
    hostOnline: mirror.host(host)?.online ?? false,
  });
  function remote(id: string): Session | null {
    const found = mirror.session(id);
    return found && found.host !== self ? theirs(found.session, found.host) : null;
  }
  const matches = (query: SessionListQuery, owner: Owner | undefined) => (s: Session) =>
    (query.status === undefined ||
      (query.status === "running"
        ? (LIVE_STATES as readonly string[]).includes(s.status)
        : s.status === query.status)) &&
    (query.workDir === undefined || s.workDir.includes(query.workDir)) &&
    (!isConfined(owner) || lineage.visibleTo(owner)(s));

  return {
    ...local,
    list(query = {}, owner) {
      const { host, ...rest } = query;
      const local_ = host === undefined || host === self ? local.list(rest, owner).map(own) : [];
      const remote_ =
        host === self
          ? []
          : others()
              .filter((r) => host === undefined || r.host === host)
              .map((r) => theirs(r.session, r.host))
              .filter(matches(rest, owner));
      return [...local_, ...remote_].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    },
    get(id) {
      if (exists(id)) return own(local.get(id));
      const found = remote(id);
      if (!found) throw new AgError("SESSION_NOT_FOUND", `no session ${id}`);
      return found;
    },
    sees(owner, id) {
      if (exists(id)) return local.sees(owner, id);
      if (!isConfined(owner)) return true;
      return remote(id) !== null && lineage.sees(owner, id);
    },
  };
}
