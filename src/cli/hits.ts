import type { SearchHit, SnippetPart } from "../search/search.ts";
import { AgError } from "../shared/errors.ts";
import { formatAge, paint } from "./output.ts";

/**
 * A search hit as the CLI takes it (`ag read`, `ag open`, `ag resume`, `ag fork`): `<source>#<message>`,
 * the `hit` of GET /v1/search. The source is an ag session's id or an external conversation's
 * `<agent>:<id>`; the message is the transcript cursor's id.
 */
export interface HitRef {
  source: string;
  messageId: number;
  /** An ag session's (no `agent:` prefix). */
  isSession: boolean;
}

/** `given` as a hit, or null when it is no hit (a plain session name or id). */
export function parseHit(given: string): HitRef | null {
  const match = /^([^#\s]+)#(\d+)$/.exec(given);
  if (!match) return null;
  const messageId = Number(match[2]);
  if (!Number.isSafeInteger(messageId) || messageId < 1) return null;
  return { source: match[1]!, messageId, isSession: !match[1]!.includes(":") };
}

/** The session a hit names; an external conversation's hit has none (continue it with `ag resume`). */
export function sessionOfHit(hit: HitRef, verb: string): string {
  if (!hit.isSession)
    throw new AgError(
      "USAGE_ERROR",
      `${hit.source} is a conversation ag did not start: \`ag resume ${hit.source}#${hit.messageId}\` continues it as a session; ag ${verb} takes sessions`,
    );
  return hit.source;
}

/** A snippet for a terminal: the matched words bold, the rest as it is. */
export function snippetLine(parts: readonly SnippetPart[], colour: boolean): string {
  return parts
    .map((p) => (p.hit ? paint(p.text, "bold", colour) : p.text))
    .join("")
    .replace(/\s+/g, " ");
}

/** Two lines a hit: where it is (hit, agent, role, age, title, folder), then its snippet. */
export function hitLines(hit: SearchHit, colour: boolean, now = Date.now()): string[] {
  const age = hit.at ? `${formatAge(Math.max(0, (now - Date.parse(hit.at)) / 1000))} ago` : "—";
  const where = [hit.agent, hit.role, age, hit.title ?? "", hit.workDir ?? ""].filter(Boolean).join(" · ");
  const external = hit.origin === "external" ? " (external)" : "";
  return [
    `${paint(hit.hit, "cyan", colour)}${external}  ${paint(where, "dim", colour)}`,
    `  ${snippetLine(hit.snippet, colour)}`,
  ];
}
