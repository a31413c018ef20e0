import type { AgEvent } from "../events/bus.ts";
import { needsHuman } from "../events/names.ts";
import { consensusRoute, dashboardBase, sessionRoute } from "../shared/dashboard-links.ts";

/**
 * What a notification links to: the session's page when the event needs a human, a review's
 * page for its verdict (`consensus.completed`), else null.
 */
export type HumanLink = (event: AgEvent) => string | null;

/** Reads the dashboard URL once (a bad one is a configuration error at start, not at send). */
export function humanLinks(dashboardUrl: string): HumanLink {
  const base = dashboardBase(dashboardUrl);
  return (event) => {
    if (event.event === "consensus.completed") return consensusRoute(base, event.meta.consensusId);
    return event.session && needsHuman(event.event) ? sessionRoute(base, event.session.id) : null;
  };
}
