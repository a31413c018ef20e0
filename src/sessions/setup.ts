import { createSessionDrivers } from "../drivers/index.ts";
import type { DriverSessions } from "../drivers/port.ts";
import { DEFAULT_DELIVERY } from "../drivers/tmux/delivery.ts";
import { createUntrackedAgents as createTerminalUntracked } from "../drivers/tmux/untracked.ts";
import type { SessionServiceDeps } from "./deps.ts";
import { createExits, type Exits } from "./exits.ts";
import { createHookReceiver, type HookReceiver } from "./feed/hooks.ts";
import { createSupervisor, type Supervisor } from "./feed/supervisor.ts";
import { createHibernation } from "./hibernation/hibernation.ts";
import { launchDir, sessionDir } from "./lifecycle.ts";
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
    // The drivers are made next, with the live sessions as their port: asked only once a session runs.
    drivers: { of: (record) => drivers.of(record) },
    onIdleTimeout: (id) => {
      void service
        .kill(id, "idle_timeout")
        .catch((error) => deps.logger.warn(`idle timeout of ${id}`, error));
    },
  });
  const exits = createExits(deps.clock, deps.strays, (detail) => deps.logger.info(detail));
  const drivers = createSessionDrivers({
    ...deps,
    sessions: driverPort(deps, live, exits),
    delivery: deps.settings.delivery ?? DEFAULT_DELIVERY,
  });
  const hibernation = createHibernation({
    ...deps,
    live,
    drivers,
    exits,
    launcher: { ...deps, live, drivers },
    settings: {
      hibernateAfterMs: deps.settings.hibernateAfterMs ?? 0,
      idleTimeoutMs: deps.settings.idleTimeoutMs ?? 0,
    },
    endIdle: (id) => service.kill(id, "idle_timeout"),
  });
  const service = createSessionService(deps, { live, drivers, exits, hibernation });
  const supervisor = createSupervisor({ ...deps, live, drivers });
  // A key made for a session's agent (offerMcp) dies with the session.
  deps.bus.subscribe((event) => {
    if (event.session && (event.event === "session.ended" || event.event === "session.killed"))
      deps.mcp?.close(event.session.id);
  });
  return {
    service,
    live,
    hooks: createHookReceiver({ ...deps, live }),
    supervisor: {
      async start() {
        await supervisor.start();
        hibernation.start();
      },
      stop() {
        hibernation.stop();
        supervisor.stop();
      },
    },
    untracked: createUntrackedAgents({
      ...deps,
      drivers,
      terminal: createTerminalUntracked({ tmux: deps.tmux, known: (id) => deps.repo.get(id) !== null }),
    }),
  };
}

/** The port the drivers reach the sessions through (drivers/port.ts): the live sessions and their records. */
function driverPort(deps: SessionServiceDeps, live: LiveSessions, exits: Exits): DriverSessions {
  return {
    // The records a driver follows are stored ones: those it was given at start or found running.
    follow: live.follow,
    byPane: (paneId) => live.byPane(paneId),
    inWindow: (windowId) => live.inWindow(windowId),
    // A hibernated session's agent is not running: nothing of it is to be found or adopted.
    running: () => deps.repo.live().filter((rec) => !rec.hibernatedAt),
    dir: (id) => sessionDir(deps.settings.stateDir, id),
    launchDir: (record) => launchDir(deps.tenants, record),
    ending: (id, pid) => exits.ending(id, pid),
  };
}
