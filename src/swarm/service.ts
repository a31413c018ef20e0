import type { AgentRegistry } from "../agents/registry.ts";
import type { SessionService } from "../sessions/index.ts";
import type { Tmux } from "../tmux/tmux.ts";
import { listProcesses, type SystemProcess } from "./processes.ts";
import { agentProcesses, type Swarm, sessionTree } from "./swarm.ts";

export interface SwarmService {
  snapshot(): Promise<Swarm>;
}

/** `GET /v1/swarm`: ag's sessions as a tree, and every agent CLI process on the system. */
export function createSwarmService(deps: {
  sessions: Pick<SessionService, "list" | "stats">;
  tmux: Pick<Tmux, "listPanes">;
  agents: Pick<AgentRegistry, "all">;
  processes?: () => Promise<SystemProcess[]>;
}): SwarmService {
  const scan = deps.processes ?? (() => listProcesses());
  return {
    async snapshot() {
      const sessions = deps.sessions.list();
      const [panes, processes] = await Promise.all([deps.tmux.listPanes().catch(() => []), scan()]);
      const agents = agentProcesses(processes, panes, deps.agents.all());
      const stats = deps.sessions.stats();
      const managed = agents.filter((p) => p.managed).length;
      return {
        sessions: sessionTree(sessions),
        processes: agents,
        summary: {
          sessions: stats.total,
          active: stats.active,
          byStatus: stats.byStatus,
          processes: agents.length,
          managed,
          unmanaged: agents.length - managed,
        },
      };
    },
  };
}
