import type { DriverName } from "../agents/vocabulary.ts";
import { type AcpSessionDriverDeps, createAcpSessionDriver } from "./acp/session.ts";
import type { SessionDriver } from "./driver.ts";
import { createTmuxDriver, type TmuxDriverDeps } from "./tmux/driver.ts";

export {
  type AgentPlace,
  assertTerminal,
  DRIVER_TRAITS,
  type LaunchFailure,
  type SessionDriver,
} from "./driver.ts";

/** The drivers a session can run on, each found by the session's `driver`. */
export interface SessionDrivers {
  of(rec: { driver: DriverName }): SessionDriver;
  all(): SessionDriver[];
}

export function createSessionDrivers(deps: TmuxDriverDeps & AcpSessionDriverDeps): SessionDrivers {
  const drivers: Record<DriverName, SessionDriver> = {
    tmux: createTmuxDriver(deps),
    acp: createAcpSessionDriver(deps),
  };
  return { of: (rec) => drivers[rec.driver], all: () => Object.values(drivers) };
}
