import { morePermissive } from "../agents/vocabulary.ts";
import { isWithin, realPath } from "../auth/tenants.ts";
import type { PermissionMode } from "../config/schema.ts";
import { AgError } from "../shared/errors.ts";
import { creatorOf, type Lineage, type Owner } from "./lineage.ts";
import type { SessionRecord, SessionRepo } from "./repo.ts";
import { isTerminal } from "./session.ts";

/** How far a session key may create sessions (config: sessionKeyMaxDepth, sessionKeyMaxChildren). */
export interface OffspringLimits {
  /** A session nobody created is at depth 0; a session key creates none deeper than this. */
  maxDepth: number;
  /** Running sessions one session may have created at once. */
  maxChildren: number;
}

/** What a create asks for, its template applied: what its creator's bounds are checked against. */
export interface Asked {
  workDir: string;
  permissionMode?: PermissionMode;
  agentCommand?: string;
  env?: Record<string, string>;
}

/**
 * The bounds of sessions a session's own key creates (docs/auth.md, "Session keys"): each is its
 * creator's child, never more permissive than it, never outside its folder, never running another
 * program or environment than it does; so deep at most, and so many running at once.
 */
export function createOffspring(deps: {
  repo: Pick<SessionRepo, "get">;
  lineage: Pick<Lineage, "depthOf" | "liveChildren">;
  limits: OffspringLimits;
  /** The mode of a create that names none. */
  defaultMode: PermissionMode;
}) {
  /** Places taken among a parent's children by creates still on their way to being stored. */
  const pending = new Map<string, number>();

  function creator(owner: Owner | undefined): SessionRecord | null {
    const id = creatorOf(owner);
    if (id === null) return null;
    const rec = deps.repo.get(id);
    if (!rec || isTerminal(rec.status))
      throw new AgError("SESSION_NOT_FOUND", `session ${id} has ended: its key creates nothing more`);
    return rec;
  }

  function assertWithin(parent: SessionRecord, asked: Asked): void {
    const mode = asked.permissionMode ?? deps.defaultMode;
    if (morePermissive(mode, parent.permissionMode))
      throw new AgError(
        "PERMISSION_MODE_DENIED",
        `a session created by session ${parent.id} runs at most in its mode ${parent.permissionMode}, not ${mode}`,
      );
    // The creator's folder first: outside it, whether a path exists is none of its business.
    if (!isWithin(realPath(asked.workDir), realPath(parent.workDir)))
      throw new AgError(
        "CREATOR_WORKDIR_DENIED",
        `workDir ${asked.workDir} is outside the workDir of session ${parent.id}, which creates it`,
      );
    if (asked.agentCommand !== undefined && asked.agentCommand !== parent.agentCommand)
      throw new AgError(
        "FORBIDDEN",
        `a session created by session ${parent.id} runs its agent's own program or the creator's agentCommand, no other`,
      );
    const foreign = Object.entries(asked.env ?? {}).filter(([name, value]) => parent.env?.[name] !== value);
    if (foreign.length)
      throw new AgError(
        "FORBIDDEN",
        `a session created by session ${parent.id} may only repeat its creator's env, not ${foreign.map(([name]) => name).join(", ")}`,
      );
  }

  function assertRoom(parentId: string): void {
    const depth = deps.lineage.depthOf(parentId) + 1;
    if (depth > deps.limits.maxDepth)
      throw new AgError(
        "SESSION_DEPTH_LIMIT",
        `a session created by session ${parentId} would be nested ${depth} deep; sessionKeyMaxDepth is ${deps.limits.maxDepth}`,
      );
    const running = deps.lineage.liveChildren(parentId).length + (pending.get(parentId) ?? 0);
    if (running >= deps.limits.maxChildren)
      throw new AgError(
        "SESSION_CHILDREN_LIMIT",
        `session ${parentId} already runs ${running} sessions it created; sessionKeyMaxChildren is ${deps.limits.maxChildren}`,
      );
  }

  return {
    /**
     * A person's decisions stay a person's. A session key approves a permission (or answers
     * one with the agent's options), or changes a session's permission policy, only when its
     * own session asks nobody (bypassPermissions): otherwise an agent a person supervises would
     * approve, for its children, what it could not do unasked itself.
     */
    assertDecides(owner: Owner | undefined, what: string): void {
      const parent = creator(owner);
      if (!parent || parent.permissionMode === "bypassPermissions") return;
      throw new AgError(
        "FORBIDDEN",
        `a session's key cannot ${what}: its session ${parent.id} runs in ${parent.permissionMode}, so a person decides`,
      );
    },

    /**
     * The parent of a session this owner creates: a session key's session, once what is asked
     * (the template applied) is found within its bounds; null for anyone else (no bounds).
     */
    parentFor(owner: Owner | undefined, asked: Asked): string | null {
      const parent = creator(owner);
      if (!parent) return null;
      assertWithin(parent, asked);
      return parent.id;
    },

    /**
     * Runs `store` (which ends once the new session is stored) in a place among `parentId`'s
     * children, when a session key asks: past the depth or the number of running children, it
     * is refused. Places being filled count, so creates side by side (a batch) cannot overshoot.
     */
    async within<T>(owner: Owner | undefined, parentId: string | null, store: () => Promise<T>): Promise<T> {
      if (creatorOf(owner) === null || parentId === null) return store();
      assertRoom(parentId);
      pending.set(parentId, (pending.get(parentId) ?? 0) + 1);
      try {
        return await store();
      } finally {
        const left = (pending.get(parentId) ?? 1) - 1;
        if (left > 0) pending.set(parentId, left);
        else pending.delete(parentId);
      }
    },
  };
}

export type Offspring = ReturnType<typeof createOffspring>;
