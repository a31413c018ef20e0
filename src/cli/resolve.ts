import { isTerminal, type Session } from "../sessions/index.ts";
import { AgError } from "../shared/errors.ts";
import type { ApiClient } from "./client.ts";

/**
 * How a person names a session on the command line, the same for every verb: its id, a unique
 * start of the id (`ag list` shows 8 characters), or its name. In that order of strength: a
 * whole id, then an exact name, then an id prefix — so a session named like the start of another
 * one's id is still reached by its name. A name several sessions share picks the one that is
 * still running when exactly one is; anything else ambiguous is refused with the candidates.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The session `given` names among `sessions`. Pure: the commands fetch the list. */
export function pickSession(sessions: readonly Session[], given: string): Session {
  const wanted = given.trim();
  if (wanted === "")
    throw new AgError("USAGE_ERROR", "name a session: its id, the start of its id, or its name");
  const lower = wanted.toLowerCase();
  const byId = sessions.find((s) => s.id.toLowerCase() === lower);
  if (byId) return byId;

  const named = sessions.filter((s) => s.name === wanted);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    const running = named.filter((s) => !isTerminal(s.status));
    if (running.length === 1) return running[0]!;
    throw ambiguous(`${named.length} sessions are named "${wanted}"`, named);
  }

  const prefixed = /^[0-9a-f-]+$/i.test(wanted)
    ? sessions.filter((s) => s.id.toLowerCase().startsWith(lower))
    : [];
  if (prefixed.length === 1) return prefixed[0]!;
  if (prefixed.length > 1)
    throw ambiguous(`${wanted} is the start of ${prefixed.length} session ids`, prefixed);
  throw new AgError(
    "SESSION_NOT_FOUND",
    `no session ${wanted} (not an id, the start of one, or a name; see ag list --all)`,
  );
}

function ambiguous(what: string, candidates: readonly Session[]): AgError {
  const list = candidates.map((s) => `${s.id.slice(0, 13)} ${s.name} (${s.status})`).join(", ");
  return new AgError("USAGE_ERROR", `${what}: ${list}; give more of the id`);
}

/**
 * The session as the server has it. A whole id is asked for directly (its 404 speaks for
 * itself); anything else is looked up in the list, which holds ended sessions for 24 h too.
 */
export async function resolveSession(client: ApiClient, given: string): Promise<Session> {
  const wanted = given.trim();
  if (UUID.test(wanted)) return client.get<Session>(`/v1/sessions/${encodeURIComponent(wanted)}`);
  return pickSession(await client.get<Session[]>("/v1/sessions"), wanted);
}

export async function resolveSessionId(client: ApiClient, given: string): Promise<string> {
  const wanted = given.trim();
  return UUID.test(wanted) ? wanted : (await resolveSession(client, wanted)).id;
}

/** The path of a session's routes. */
export function sessionPath(id: string, route = ""): string {
  return `/v1/sessions/${encodeURIComponent(id)}${route ? `/${route}` : ""}`;
}
