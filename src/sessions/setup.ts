import type { SessionServiceDeps } from "./deps.ts";
import { createSessionDrivers } from "./drivers/index.ts";
import { createExits } from "./exits.ts";
import { createHookReceiver, type HookReceiver } from "./feed/hooks.ts";
import { createSupervisor, type Supervisor } from "./feed/supervisor.ts";
import { DEFAULT_DELIVERY } from "./live/delivery.ts";
import { createLiveSessions, type LiveSessions } from "./live/registry.ts";
import { createSessionService, type SessionService } from "./service.ts";
import { createUntrackedAgents, type UntrackedAgents } from "./untracked.ts";

export interface Sessions {
  /** What clients do with sessions (the routes, MCP, CLI, pipelines, chat). */
  service: SessionService;
  /** The agents' hook callbacks (POST /v1/hooks/:agent/:event). */
  hooks: HookReceiver;
  /** At start, running sessions followed again by their drivers; ended ones pruned. */
  supervisor: Supervisor;
  /** The sessions followed now, each the one writer of its own state. */
  live: LiveSessions;
  /** Agents in ag's tmux windows that have no record (a lost state database): listed, ended, adopted. */
  untracked: UntrackedAgents;
}

/**
 * The sessions domain, put together: the live sessions (each the one writer of its status), fed
 * by hooks and their drivers (tmux, acp), driven by the service.
 */
export function createSessions(deps: SessionServiceDeps): Sessions {
  const live = createLiveSessions({
    ...deps,
    permissionTimeoutMs: deps.settings.permissionTimeoutMs,
    idleTimeoutMs: deps.settings.idleTimeoutMs ?? 0,
    onIdleTimeout: (id) => {
      void service
        .kill(id, "idle_timeout")
        .catch((error) => deps.logger.warn(`idle timeout of ${id}`, error));
    },
  });
  const exits = createExits(deps.clock, deps.strays, (detail) => deps.logger.info(detail));
  const drivers = createSessionDrivers({
    ...deps,
    live,
    exits,
    delivery: deps.settings.delivery ?? DEFAULT_DELIVERY,
  });
  const service = createSessionService(deps, { live, drivers, exits });
  // A key made for a session's agent (offerMcp) dies with the session.
  deps.bus.subscribe((event) => {
    if (event.session && (event.event === "session.ended" || event.event === "session.killed"))
      deps.mcp?.close(event.session.id);
  });
  return {
    service,
    live,
    hooks: createHookReceiver({ ...deps, live }),
    supervisor: createSupervisor({ ...deps, live, drivers }),
    untracked: createUntrackedAgents({ ...deps, drivers }),
  };
}
