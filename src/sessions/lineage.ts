import type { SessionRecord, SessionRepo } from "./repo.ts";

/**
 * Whose sessions an operation sees. Nobody named (the master token, a key without a tenant, ag's
 * own features): every session. A tenant: its own sessions only. A session's own key (offerMcp):
 * that session and the sessions created from it — children, grandchildren… — whatever their
 * tenant. Both at once: both must hold. A tenant's new sessions are bound to it and must lie
 * within its workdirs; a session key's are bound to its session (src/sessions/offspring.ts).
 */
export interface Owner {
  tenantId?: string | null;
  /** A session key's session: the root of all it may see. */
  sessionId?: string | null;
}

export const tenantOf = (owner?: Owner) => owner?.tenantId ?? null;
export const creatorOf = (owner?: Owner) => owner?.sessionId ?? null;
/** The owner sees only some sessions (a tenant, a session key). */
export const isConfined = (owner?: Owner) => tenantOf(owner) !== null || creatorOf(owner) !== null;

/**
 * Parents are followed at most this far up. A parent is always an older session, so the chain has
 * no circle; the bound only keeps a corrupt row from costing more than this.
 */
const MAX_HOPS = 256;

type Node = Pick<SessionRecord, "id" | "parentId" | "tenantId">;

export type Lineage = ReturnType<typeof createLineage>;

/**
 * The family tree of sessions, by `parentId`: a teammate under the session it was spawned from, a
 * session a session key created under that key's session. Who sees what is decided here, once,
 * for every surface (lists, paths, body ids, event streams, batches, memories, reviews).
 */
export function createLineage(repo: { get(id: string): Node | null; live: SessionRepo["live"] }) {
  /** `node` is `root` or below it. */
  function descends(node: Node, root: string): boolean {
    if (node.id === root) return true;
    let at = node.parentId;
    for (let hops = 0; at !== null && hops < MAX_HOPS; hops++) {
      if (at === root) return true;
      at = repo.get(at)?.parentId ?? null;
    }
    return false;
  }

  function visibleTo(owner?: Owner): (session: Node) => boolean {
    const tenantId = tenantOf(owner);
    const root = creatorOf(owner);
    return (s) => (tenantId === null || s.tenantId === tenantId) && (root === null || descends(s, root));
  }

  return {
    visibleTo,

    /**
     * Whether the owner may see session `id`. An owner who sees everything sees even a session
     * that is gone (its memories, its reviews); a confined one only a session that exists.
     */
    sees(owner: Owner | undefined, id: string): boolean {
      if (!isConfined(owner)) return true;
      const rec = repo.get(id);
      return rec !== null && visibleTo(owner)(rec);
    },

    /** How many parents up the session's root is: 0 for a session nobody created. */
    depthOf(id: string): number {
      let depth = 0;
      for (let at = repo.get(id)?.parentId ?? null; at !== null && depth < MAX_HOPS; depth++) {
        at = repo.get(at)?.parentId ?? null;
      }
      return depth;
    },

    /** The running sessions whose parent is `id`. */
    liveChildren: (id: string) => repo.live().filter((s) => s.parentId === id),

    /**
     * Every running session below `id`, however deep, also under a parent that has ended (a
     * grandchild resumed after its parent ended still ends with the grandparent).
     */
    liveDescendants: (id: string) => repo.live().filter((s) => s.id !== id && descends(s, id)),
  };
}
