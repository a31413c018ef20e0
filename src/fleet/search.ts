import { type Principal, principalOf } from "../auth/principal.ts";
import { describeError } from "../shared/errors.ts";
import { forwardToken } from "./credential.ts";
import type { Mirror } from "./mirror.ts";
import type { HostRow } from "./store.ts";

/**
 * A search over the whole fleet (docs/search.md, "In a fleet"): this host's own answer, and the
 * same query asked of every other live host's `/v1/search` with the fleet's credential naming the
 * caller (its scopes and tenant, checked there as its own), all at once. The hits are merged by
 * their BM25 score and cut to the limit; the answer says which hosts answered and which did not.
 */

/** How long another host has to answer before its hits are left out. */
const ASK_TIMEOUT_MS = 5_000;

/** A search's answer as the merge needs it (search/search.ts SearchResult: a floor beside this one). */
interface RankedAnswer {
  hits: Array<{ rank: number }>;
  took_ms: number;
  hosts?: { answered: string[]; missing: Array<{ host: string; reason: string }> };
}

export type FleetSearch = <A extends RankedAnswer>(request: Request, local: A) => Promise<A>;

export function createFleetSearch(deps: { self: string; mirror: Pick<Mirror, "hosts"> }): FleetSearch {
  return async <A extends RankedAnswer>(request: Request, local: A): Promise<A> => {
    const started = performance.now();
    const url = new URL(request.url);
    const caller = principalOf(request);
    // A search another host forwarded here is answered from this host's index alone.
    if (caller.keyId?.startsWith("fleet:")) return local;
    const wanted = url.searchParams.get("host");
    const others = deps.mirror
      .hosts()
      .filter((h) => h.name !== deps.self && (wanted === null || h.name === wanted));
    if (wanted === deps.self || others.length === 0) return local;
    const answers = await Promise.all(others.map((host) => ask<A>(deps.self, host, url, caller)));
    const hosts: Required<RankedAnswer>["hosts"] = { answered: [deps.self], missing: [] };
    const hits: A["hits"] = [...local.hits];
    for (const [i, answer] of answers.entries()) {
      const name = others[i]!.name;
      if ("reason" in answer) hosts.missing.push({ host: name, reason: answer.reason });
      else {
        hosts.answered.push(name);
        hits.push(...answer.hits);
      }
    }
    const limit = Number(url.searchParams.get("limit") ?? 20) || 20;
    hits.sort((a, b) => a.rank - b.rank);
    return {
      ...local,
      hits: hits.slice(0, limit),
      took_ms: Math.round((local.took_ms + performance.now() - started) * 10) / 10,
      hosts,
    };
  };
}

/** One host's hits for the same query, or why there are none. */
async function ask<A extends RankedAnswer>(
  self: string,
  host: HostRow,
  url: URL,
  caller: Principal,
): Promise<A | { reason: string }> {
  if (!host.online) return { reason: `offline (last heartbeat ${host.heartbeatAt})` };
  try {
    const answer = await fetch(new URL(`/v1/search${url.search}`, host.url), {
      headers: {
        authorization: `Bearer ${forwardToken(host.secret, self, caller)}`,
        accept: "application/json",
      },
      signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
    });
    const body = (await answer.json().catch(() => null)) as (A & { error?: string }) | null;
    if (!answer.ok || !body || !Array.isArray(body.hits))
      return { reason: `answered ${answer.status}${body?.error ? `: ${body.error}` : ""}` };
    return body;
  } catch (error) {
    return { reason: `did not answer: ${describeError(error)}` };
  }
}
