import { AgError } from "./errors.ts";

/**
 * CONTRACT §10: the dashboard's pages, as links from outside it (notifications, the CLI). A
 * session's page is `<dashboardUrl>/#/sessions/<id>`, a consensus review's
 * `<dashboardUrl>/#/consensus/<id>`. The configured URL may or may not end in a slash (the
 * default has none): the link always has exactly one before the `#` (or before the query, when
 * the URL has one). A fragment already in the configured URL is dropped: the route is the fragment.
 */
export function sessionUrl(dashboardUrl: string, sessionId: string, at?: number): string {
  return sessionRoute(dashboardBase(dashboardUrl), sessionId, at);
}

/** A consensus review's page: `<dashboardUrl>/#/consensus/<id>`. */
export function consensusUrl(dashboardUrl: string, consensusId: string): string {
  return consensusRoute(dashboardBase(dashboardUrl), consensusId);
}

/** A session's page; with `at`, opened at that transcript message (a search hit's: `?at=<messageId>`). */
export const sessionRoute = (base: string, id: string, at?: number) =>
  `${base}#/sessions/${encodeURIComponent(id)}${at === undefined ? "" : `?at=${at}`}`;
export const consensusRoute = (base: string, id: string) => `${base}#/consensus/${encodeURIComponent(id)}`;

/** The configured dashboard URL as the base of its links (CONFIG_INVALID when it is not a URL). */
export function dashboardBase(dashboardUrl: string): string {
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
