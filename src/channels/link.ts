import type { AgEvent } from "../events/bus.ts";
import { needsHuman } from "../events/names.ts";
import { AgError } from "../shared/errors.ts";

/**
 * CONTRACT §10: the dashboard's page of a session is `<dashboardUrl>/#/sessions/<id>`. The
 * configured URL may or may not end in a slash (the default has none): the link always has
 * exactly one before the `#` (or before the query, when the URL has one). A fragment already in
 * the configured URL is dropped: the route is the fragment.
 */
export function sessionUrl(dashboardUrl: string, sessionId: string): string {
  return sessionRoute(dashboardBase(dashboardUrl), sessionId);
}

/** A consensus review's page: `<dashboardUrl>/#/consensus/<id>`. */
export function consensusUrl(dashboardUrl: string, consensusId: string): string {
  return consensusRoute(dashboardBase(dashboardUrl), consensusId);
}

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

const sessionRoute = (base: string, id: string) => `${base}#/sessions/${encodeURIComponent(id)}`;
const consensusRoute = (base: string, id: string) => `${base}#/consensus/${encodeURIComponent(id)}`;

function dashboardBase(dashboardUrl: string): string {
  let url: URL;
  try {
    url = new URL(dashboardUrl);
  } catch {
    throw new AgError(
      "CONFIG_INVALID",
      `invalid dashboardUrl: not a URL (got ${JSON.stringify(dashboardUrl)})`,
    );
  }
  url.hash = "";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/`;
  return url.href;
}
