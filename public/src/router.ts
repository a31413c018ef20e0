/** Routes live in the hash (`#/sessions/<id>`): links from notifications open the right view. */
import { signal } from "@preact/signals";

export type Route =
  | { view: "sessions" }
  | { view: "session"; id: string; at?: number }
  | { view: "consensus"; id: string }
  | { view: "new" }
  | { view: "search"; query: string }
  | { view: "server"; page: ServerPage };

export const SERVER_PAGES = ["metrics", "channels", "audit", "pipelines", "memory", "keys"] as const;
export type ServerPage = (typeof SERVER_PAGES)[number];

export function parseRoute(hash: string): Route {
  const [path = "", search = ""] = hash.replace(/^#\/?/, "").split("?", 2);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "sessions" && parts[1]) return { view: "session", id: parts[1], ...messageAt(search) };
  if (parts[0] === "consensus" && parts[1]) return { view: "consensus", id: parts[1] };
  if (parts[0] === "new") return { view: "new" };
  if (parts[0] === "search") return { view: "search", query: parts[1] ?? "" };
  if (parts[0] === "server") {
    const page = SERVER_PAGES.find((p) => p === parts[1]) ?? "metrics";
    return { view: "server", page };
  }
  return { view: "sessions" };
}

/** `?at=<messageId>`: the transcript message a link opens at (a search hit's), when a whole number. */
function messageAt(search: string): { at?: number } {
  const at = Number(new URLSearchParams(search).get("at"));
  return Number.isInteger(at) && at > 0 ? { at } : {};
}

export const route = signal<Route>(parseRoute(location.hash));
addEventListener("hashchange", () => {
  route.value = parseRoute(location.hash);
});

/** A session's page; with `at`, opened at that transcript message (the cursor's id), highlighted. */
export const sessionHref = (id: string, at?: number) =>
  `#/sessions/${encodeURIComponent(id)}${at === undefined ? "" : `?at=${at}`}`;
/** The search page, with the words searched (docs/search.md). */
export const searchHref = (query: string) => (query ? `#/search/${encodeURIComponent(query)}` : "#/search");
/** A consensus review's page, as notifications link to it (src/shared/dashboard-links.ts). */
export const consensusHref = (id: string) => `#/consensus/${encodeURIComponent(id)}`;
export function go(href: string) {
  location.hash = href;
}
