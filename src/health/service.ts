import { type Static, Type } from "@sinclair/typebox";
import type { SessionRepo } from "../sessions/index.ts";
import type { TmuxProbe } from "../tmux/probe.ts";

/** SPEC's Health shape. `status` is "ok", or "degraded" when tmux does not answer. */
export const Health = Type.Object({
  status: Type.Union([Type.Literal("ok"), Type.Literal("degraded")]),
  version: Type.String(),
  platform: Type.String(),
  uptime: Type.Number({ description: "seconds since the server started" }),
  sessions: Type.Object({ active: Type.Integer(), total: Type.Integer() }),
  tmux: Type.Object({ healthy: Type.Boolean(), error: Type.Union([Type.String(), Type.Null()]) }),
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
});
export type Health = Static<typeof Health>;

export interface HealthService {
  check(): Promise<Health>;
}

export function createHealthService(deps: {
  version: string;
  startedAt: number;
  tmux: TmuxProbe;
  sessions: Pick<SessionRepo, "stats">;
  /** The host's memory and what the agents use (bytes); absent: memory is null. */
  memory?: { reserveMb: number; available(): Promise<number | null>; agentsRss(): Promise<number> };
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
      const { active, total } = deps.sessions.stats();
      const at = now();
      return {
        status: tmux.healthy ? "ok" : "degraded",
        version: deps.version,
        platform: process.platform,
        uptime: Math.round((at - deps.startedAt) / 10) / 100,
        sessions: { active, total },
        tmux,
        memory,
        timestamp: new Date(at).toISOString(),
      };
    },
  };
}
