import { type Static, Type } from "@sinclair/typebox";
import { AgError, describeError } from "../../shared/errors.ts";
import type { Tmux } from "../../tmux/tmux.ts";

export const UntrackedAgent = Type.Object({
  sessionId: Type.String({ description: "the session id ag tagged its window or pane with" }),
  driver: Type.Literal("tmux"),
  windowId: Type.String(),
  paneId: Type.String(),
  pid: Type.Union([Type.Integer(), Type.Null()], { description: "the agent's process, when alive" }),
  dead: Type.Boolean({ description: "the agent has exited; its pane stays" }),
});
export type UntrackedAgent = Static<typeof UntrackedAgent>;

export interface UntrackedAgents {
  /** Panes of ag's tmux session tagged with a session id that has no record. */
  list(): Promise<UntrackedAgent[]>;
  /** Closes the panes of one such id (its agent is hung up); NOT_FOUND when there are none. */
  end(sessionId: string): Promise<UntrackedAgent[]>;
}

/**
 * Agents ag started whose record is gone (the state database lost, removed or replaced while
 * they ran): they carry ag's tag but nothing follows them. They cannot be adopted: ag cannot
 * tell which agent or workDir ran there, and their hooks authenticate with a secret that was only
 * in the lost record. They are listed (at start in the log, GET /v1/untracked, `ag doctor`) and
 * can be ended. Headless (ACP) agents are ag's own children over a pipe: they end with ag and
 * are never left untracked.
 */
export function createUntrackedAgents(deps: {
  tmux: Pick<Tmux, "listPanes" | "killPane">;
  /** Whether a session of this id has a record (the port to the sessions domain). */
  known(sessionId: string): boolean;
}): UntrackedAgents {
  async function list(): Promise<UntrackedAgent[]> {
    // ag's tmux server down or its control client not (yet) connected: which windows are there
    // cannot be known, and that is what the caller hears (never a bare 500).
    const panes = await deps.tmux.listPanes().catch((error: unknown) => {
      throw new AgError("TMUX_UNAVAILABLE", `ag's tmux windows cannot be listed: ${describeError(error)}`);
    });
    return panes
      .filter((pane) => pane.tag !== "" && !deps.known(pane.tag))
      .map((pane) => ({
        sessionId: pane.tag,
        driver: "tmux" as const,
        windowId: pane.windowId,
        paneId: pane.paneId,
        pid: pane.pid,
        dead: pane.dead,
      }));
  }
  return {
    list,
    async end(sessionId) {
      if (deps.known(sessionId))
        throw new AgError(
          "CONFLICT",
          `session ${sessionId} has a record: end it with DELETE /v1/sessions/${sessionId}`,
        );
      const ours = (await list()).filter((agent) => agent.sessionId === sessionId);
      if (ours.length === 0) throw new AgError("NOT_FOUND", `no untracked agent tagged ${sessionId}`);
      for (const agent of ours) await deps.tmux.killPane(agent.paneId);
      return ours;
    },
  };
}
