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
  now?: () => number;
}): HealthService {
  const now = deps.now ?? Date.now;
  return {
    async check() {
      const tmux = await deps.tmux.check();
      const { active, total } = deps.sessions.stats();
      const at = now();
      return {
        status: tmux.healthy ? "ok" : "degraded",
        version: deps.version,
        platform: process.platform,
        uptime: Math.round((at - deps.startedAt) / 10) / 100,
        sessions: { active, total },
        tmux,
        timestamp: new Date(at).toISOString(),
      };
    },
  };
}
