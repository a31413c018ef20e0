import type { EventBus } from "../events/bus.ts";
import type { CreateResult, Session, SessionRecord, SessionStatus } from "../sessions/index.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { CheckpointDiff, CheckpointList, RewindInput, RewindResult } from "./checkpoint.ts";
import type { CheckpointService } from "./service.ts";

/** What of a session the checkpoints need: its folder, and whose it is. */
type SessionFacts = Pick<SessionRecord, "id" | "workDir" | "tenantId">;

export interface SessionCheckpointDeps {
  service: CheckpointService;
  logger: Logger;
  /**
   * Whether a tenant's agents run as another OS user (tenantWorkdirs.<t>.runAs): ag does not
   * write into that user's repository or folder as itself, so its sessions take no checkpoints.
   */
  runsAsOther(tenantId: string | null): boolean;
}

/** A rewind touches nothing while the agent may be changing the folder or the conversation. */
const BUSY: ReadonlySet<SessionStatus> = new Set(["working", "permission_prompt", "asking", "stalled"]);

/**
 * Checkpoints as sessions know them: taken at each session's turn boundaries, listed, diffed
 * and rewound by session id (docs/checkpoints.md).
 */
export function createSessionCheckpoints(deps: SessionCheckpointDeps) {
  const { service } = deps;
  const folderOf = (session: SessionFacts): string | null =>
    deps.runsAsOther(session.tenantId ?? null) ? null : session.workDir;

  function folderOrRefuse(session: SessionFacts): string {
    const folder = folderOf(session);
    if (folder === null)
      throw new AgError(
        "CHECKPOINT_NOT_FOUND",
        `session ${session.id} runs as its tenant's user: ag keeps no checkpoints of its folder`,
      );
    return folder;
  }

  return {
    /** For the sessions domain: before a prompt is delivered. */
    async beforePrompt(session: SessionFacts, text: string): Promise<void> {
      const folder = folderOf(session);
      if (folder !== null) await service.beforePrompt(session.id, folder, text);
    },

    /** Takes a checkpoint at every turn's end (`session.turn_ended`); `find` gives the session. */
    follow(bus: Pick<EventBus, "subscribe">, find: (id: string) => SessionFacts | null): () => void {
      return bus.subscribe((event) => {
        if (event.event !== "session.turn_ended" || !event.session) return;
        const session = find(event.session.id);
        const folder = session && folderOf(session);
        if (!session || folder === null) return;
        service
          .turnEnded(session.id, folder)
          .catch((error) =>
            deps.logger.warn(`session ${session.id}: no checkpoint at the turn's end`, error),
          );
      });
    },

    list: (session: Session): Promise<CheckpointList> => service.list(session.id, folderOrRefuse(session)),
    diff: (session: Session, turn: number): Promise<CheckpointDiff> =>
      service.diff(session.id, folderOrRefuse(session), turn),
    /** The diff a code rewind to `turn` would undo (the console shows it before asking). */
    pending: (session: Session, turn: number): Promise<string> =>
      service.pending(session.id, folderOrRefuse(session), turn),

    /**
     * Rewinds the folder, the conversation (a new session forked at the turn, where the agent
     * can), or both; or takes back the last code rewind. Refused while the agent works.
     */
    async rewind(
      session: Session,
      input: RewindInput,
      forkAt: (turns: number) => Promise<CreateResult>,
    ): Promise<RewindResult> {
      if (BUSY.has(session.status))
        throw new AgError(
          "SESSION_BUSY",
          `session ${session.id} is ${session.status}: rewind once its turn is over`,
        );
      const folder = folderOrRefuse(session);
      if ("undo" in input) {
        const undone = await service.undo(session.id, folder);
        const code = { files: undone.files, undoable: false };
        return { sessionId: session.id, turn: undone.turn, what: "undo", code, conversation: null };
      }
      const what = input.what ?? "code";
      if (what !== "code" && input.turn === 0)
        throw new AgError(
          "VALIDATION_ERROR",
          "a conversation as it was before its first turn is a new session: create one",
        );
      // The turn must have a checkpoint, whatever is rewound: it says where turn n ended.
      service.assertTurn(session.id, input.turn);
      // The conversation first: an agent that cannot rewind one refuses before the folder changes.
      const forked = what === "code" ? null : await forkAt(input.turn);
      const code = what === "conversation" ? null : await service.rewind(session.id, folder, input.turn);
      return {
        sessionId: session.id,
        turn: input.turn,
        what,
        code,
        conversation: forked ? { sessionId: forked.session.id } : null,
      };
    },
  };
}

export type SessionCheckpoints = ReturnType<typeof createSessionCheckpoints>;
