import { type Static, Type } from "@sinclair/typebox";
import type { SessionRepo } from "../sessions/index.ts";
import type { StorageHealth } from "../store/guard.ts";
import type { TmuxProbe } from "../tmux/probe.ts";

/**
 * SPEC's Health shape. `status` is "ok", or "degraded" when tmux does not answer or the state
 * store does not take writes (full, unwritable, its file removed or replaced).
 */
export const Health = Type.Object({
  status: Type.Union([Type.Literal("ok"), Type.Literal("degraded")]),
  version: Type.String(),
  platform: Type.String(),
  uptime: Type.Number({ description: "seconds since the server started" }),
  sessions: Type.Object({ active: Type.Integer(), total: Type.Integer() }),
  tmux: Type.Object({ healthy: Type.Boolean(), error: Type.Union([Type.String(), Type.Null()]) }),
  storage: Type.Object(
    {
      healthy: Type.Boolean(),
      error: Type.Union([Type.String(), Type.Null()], { description: "why writes are refused" }),
      code: Type.Union(
        [
          Type.Literal("STORAGE_FULL"),
          Type.Literal("STORAGE_UNAVAILABLE"),
          Type.Literal("STORAGE_REPLACED"),
          Type.Null(),
        ],
        { description: "the code a write is refused with while this lasts" },
      ),
    },
    { description: "the state database: does it take writes now (heals by itself once space is freed)" },
  ),
  memory: Type.Union(
    [
      Type.Object({
        availableMb: Type.Integer({
          description: "what the host can still give (MemAvailable, or less under ag's cgroup limit)",
        }),
        reserveMb: Type.Integer({ description: "kept free for the rest of the machine (memoryReserveMb)" }),
        agentsRssMb: Type.Integer({
          description: "resident memory of every running session's agent, together",
        }),
      }),
      Type.Null(),
    ],
    { description: "null where the kernel does not say (no /proc)" },
  ),
  timestamp: Type.String({ format: "date-time" }),
  fleet: Type.Optional(
    Type.Object(
      {
        host: Type.String({ description: "this host's name in the fleet" }),
        connected: Type.Boolean({ description: "the fleet database answers" }),
        error: Type.Union([Type.String(), Type.Null()]),
      },
      {
        description:
          "in a fleet (docs/fleet.md): while the database is away the host serves its own sessions and catches up later",
      },
    ),
  ),
  auth: Type.Union([Type.Literal("token"), Type.Literal("local")], {
    description:
      "token: every other request needs a credential (the dashboard asks for it before it sends one); " +
      "local: the owner's tool on loopback (docs/auth.md)",
  }),
});
export type Health = Static<typeof Health>;

/** Health as the service knows it; the server adds how it is to be called (`auth`). */
export interface HealthService {
  check(): Promise<Omit<Health, "auth">>;
}

export function createHealthService(deps: {
  version: string;
  startedAt: number;
  tmux: TmuxProbe;
  sessions: Pick<SessionRepo, "stats">;
  /** The state store's watch; absent: always healthy (a test's in-memory database). */
  storage?: { check(): Pick<StorageHealth, "healthy" | "error" | "code"> };
  /** The host's memory and what the agents use (bytes); absent: memory is null. */
  memory?: { reserveMb: number; available(): Promise<number | null>; agentsRss(): Promise<number> };
  /** In a fleet: whether its database answers (src/fleet). */
  fleet?: { health(): NonNullable<Health["fleet"]> };
  now?: () => number;
}): HealthService {
  const now = deps.now ?? Date.now;
  const MB = 1024 * 1024;
  async function memoryNow(): Promise<Health["memory"]> {
    if (!deps.memory) return null;
    const [available, agents] = await Promise.all([
      deps.memory.available().catch(() => null),
      deps.memory.agentsRss().catch(() => 0),
    ]);
    if (available === null) return null;
    return {
      availableMb: Math.floor(available / MB),
      reserveMb: deps.memory.reserveMb,
      agentsRssMb: Math.round(agents / MB),
    };
  }
  return {
    async check() {
      const [tmux, memory] = await Promise.all([deps.tmux.check(), memoryNow()]);
      const stored = deps.storage?.check() ?? { healthy: true, error: null, code: null };
      const storage = { healthy: stored.healthy, error: stored.error, code: stored.code };
      const { active, total } = deps.sessions.stats();
      const at = now();
      return {
        status: tmux.healthy && storage.healthy ? "ok" : "degraded",
        version: deps.version,
        platform: process.platform,
        uptime: Math.round((at - deps.startedAt) / 10) / 100,
        sessions: { active, total },
        tmux,
        storage,
        memory,
        timestamp: new Date(at).toISOString(),
        ...(deps.fleet ? { fleet: deps.fleet.health() } : {}),
      };
    },
  };
}
