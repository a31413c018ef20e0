import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { CheckpointDiff, CheckpointList } from "./checkpoint.ts";
import { type Place, placeOf, seedIndex } from "./place.ts";
import type { CheckpointRecord, CheckpointRepo } from "./repo.ts";
import { restore } from "./restore.ts";
import {
  changedFiles,
  commitTree,
  deleteRefs,
  patch,
  REF_ROOT,
  refsOf,
  setRef,
  writeTree,
} from "./snapshot.ts";

export interface CheckpointSettings {
  /** Files over this many bytes stay out of checkpoints (and so out of a rewind's reach). */
  maxFileBytes: number;
  /** Checkpoints kept per session (the oldest pruned past it); 0: no limit. */
  keepTurns: number;
  /** Checkpoints older than this many days are pruned; 0: no limit. */
  keepDays: number;
}

export interface CheckpointServiceDeps {
  repo: CheckpointRepo;
  /** Where ag keeps what is not in a folder's own repository (<stateDir>/checkpoints). */
  root: string;
  clock: Clock;
  logger: Logger;
  settings: CheckpointSettings;
}

export type CheckpointService = ReturnType<typeof createCheckpointService>;

const DAY_MS = 86_400_000;

/**
 * A session's line of checkpoints: one before each prompt ag delivers and one when the turn
 * ends, each a commit of the folder on top of the one before (docs/checkpoints.md). Work on one
 * session's line runs one piece at a time, in order: a turn's end never overtakes its start.
 */
export function createCheckpointService(deps: CheckpointServiceDeps) {
  const queues = new Map<string, Promise<unknown>>();
  const places = new Map<string, Promise<Place>>();
  const now = () => new Date(deps.clock.now()).toISOString();
  const ref = (sessionId: string, name: string | number) => `${REF_ROOT}/${sessionId}/${name}`;

  /** Runs `work` after every earlier piece of the session's line. */
  function queued<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = queues.get(sessionId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    queues.set(sessionId, next);
    // Forgotten once done; the caller has the outcome (a rejection is not left unhandled here).
    const forget = () => {
      if (queues.get(sessionId) === next) queues.delete(sessionId);
    };
    next.then(forget, forget);
    return next;
  }

  function placeFor(sessionId: string, folder: string): Promise<Place> {
    let place = places.get(sessionId);
    if (!place) {
      place = placeOf(folder, { root: deps.root, sessionId });
      places.set(sessionId, place);
      place.catch(() => places.delete(sessionId));
    }
    return place;
  }

  /** A commit of the folder as it is now, on top of `parent` (that one when nothing changed). */
  async function snapshot(place: Place, parent: string | null, message: string): Promise<string> {
    seedIndex(place);
    const tree = await writeTree(place, deps.settings.maxFileBytes).catch((error) => {
      // An index git cannot use (a copy of one with a merge in progress, a damaged file): once
      // more from an empty one, which costs a hash of every file.
      deps.logger.info(`checkpoint of ${place.folder}: its index is rebuilt`, error);
      rmSync(place.index, { force: true });
      return writeTree(place, deps.settings.maxFileBytes);
    });
    return commitTree(place, tree, parent, message);
  }

  /** The newest commit of the session's line. */
  const tip = (last: CheckpointRecord | null) => last?.afterCommit ?? last?.beforeCommit ?? null;

  /** The folder as it is, committed on top of the session's last checkpoint (`why` in its message). */
  const snapshotNow = (place: Place, sessionId: string, why: string) =>
    snapshot(place, tip(deps.repo.last(sessionId)), `ag checkpoint: ${sessionId} ${why}`);

  async function begin(sessionId: string, folder: string, prompt: string | null): Promise<CheckpointRecord> {
    const place = await placeFor(sessionId, folder);
    const last = deps.repo.last(sessionId);
    const turn = (last?.turn ?? 0) + 1;
    const commit = await snapshot(place, tip(last), `ag checkpoint: ${sessionId} before turn ${turn}`);
    if (turn === 1) await setRef(place, ref(sessionId, 0), commit);
    const record = { sessionId, turn, folder, prompt, startedAt: now(), beforeCommit: commit };
    deps.repo.begin(record);
    return { ...record, endedAt: null, afterCommit: null, files: [], added: 0, removed: 0 };
  }

  async function end(sessionId: string, folder: string): Promise<void> {
    const last = deps.repo.last(sessionId);
    // A turn ag did not start (typed in the terminal): its start is the last turn's end.
    const open = last && !last.endedAt ? last : await begin(sessionId, folder, null);
    const place = await placeFor(sessionId, folder);
    const commit = await snapshot(place, open.beforeCommit, `ag checkpoint: ${sessionId} turn ${open.turn}`);
    const files = await changedFiles(place, open.beforeCommit, commit);
    deps.repo.end({
      sessionId,
      turn: open.turn,
      endedAt: now(),
      afterCommit: commit,
      files,
      added: files.reduce((sum, f) => sum + (f.added ?? 0), 0),
      removed: files.reduce((sum, f) => sum + (f.removed ?? 0), 0),
    });
    await setRef(place, ref(sessionId, open.turn), commit);
    await prune(sessionId, place);
  }

  /** Retention: the oldest ended checkpoints past keepTurns or keepDays; never the newest. */
  async function prune(sessionId: string, place: Place): Promise<void> {
    const { keepTurns, keepDays } = deps.settings;
    const ended = deps.repo.list(sessionId).filter((c) => c.endedAt);
    const cutoff = keepDays > 0 ? deps.clock.now() - keepDays * DAY_MS : null;
    const gone = ended.slice(0, -1).filter((c, i) => {
      const overCount = keepTurns > 0 && i < ended.length - keepTurns;
      const overAge = cutoff !== null && Date.parse(c.endedAt!) < cutoff;
      return overCount || overAge;
    });
    if (gone.length === 0) return;
    const refs = gone.flatMap((c) => [ref(sessionId, c.turn), ...(c.turn === 1 ? [ref(sessionId, 0)] : [])]);
    await deleteRefs(place, refs);
    for (const c of gone) deps.repo.removeTurn(sessionId, c.turn);
  }

  /** The commit of the folder as turn `turn` left it (0: before the first turn). */
  function commitAt(sessionId: string, turn: number): string {
    const record = deps.repo.get(sessionId, Math.max(turn, 1));
    const commit = turn === 0 ? record?.beforeCommit : record?.afterCommit;
    if (!record || !commit)
      throw new AgError(
        "CHECKPOINT_NOT_FOUND",
        `session ${sessionId} has no checkpoint of turn ${turn}${record ? " yet (it is under way)" : ""}`,
      );
    return commit;
  }

  /** Every trace of a session's line: its refs, rows, index. */
  async function removeLine(sessionId: string, folder: string): Promise<void> {
    try {
      const place = await placeFor(sessionId, folder);
      await deleteRefs(place, await refsOf(place, sessionId));
    } catch (error) {
      // The folder is gone (and its repository with it): nothing of the line is left there.
      deps.logger.debug(`checkpoints of ${sessionId}: refs not removed`, error);
    }
    deps.repo.removeSession(sessionId);
    rmSync(join(deps.root, "index", `${sessionId}.index`), { force: true });
    places.delete(sessionId);
  }

  return {
    /** Before a prompt is delivered: the folder as the turn finds it. */
    beforePrompt: (sessionId: string, folder: string, prompt: string): Promise<void> =>
      queued(sessionId, async () => {
        const last = deps.repo.last(sessionId);
        // A prompt typed while a turn is under way joins that turn (the agent queues it).
        if (last && !last.endedAt) return;
        await begin(sessionId, folder, prompt);
      }),

    /** When a turn ends: the folder as the turn left it, what it changed. */
    turnEnded: (sessionId: string, folder: string): Promise<void> =>
      queued(sessionId, () => end(sessionId, folder)),

    list(sessionId: string, folder: string): Promise<CheckpointList> {
      return queued(sessionId, async () => {
        const place = await placeFor(sessionId, folder);
        const undo = deps.repo.undo(sessionId);
        return {
          sessionId,
          folder,
          shadow: place.shadow,
          checkpoints: deps.repo.list(sessionId).map((c) => ({
            turn: c.turn,
            prompt: c.prompt,
            startedAt: c.startedAt,
            endedAt: c.endedAt,
            files: c.files,
            added: c.added,
            removed: c.removed,
          })),
          undo: undo ? { turn: undo.turn, at: undo.createdAt } : null,
        };
      });
    },

    diff(sessionId: string, folder: string, turn: number): Promise<CheckpointDiff> {
      return queued(sessionId, async () => {
        const record = turn >= 1 ? deps.repo.get(sessionId, turn) : null;
        if (!record?.afterCommit)
          throw new AgError(
            "CHECKPOINT_NOT_FOUND",
            `session ${sessionId} has no ended turn ${turn} to diff${turn === 0 ? " (turn 0 is the folder before the first)" : ""}`,
          );
        const place = await placeFor(sessionId, folder);
        return {
          turn,
          files: record.files,
          patch: await patch(place, record.beforeCommit, record.afterCommit),
        };
      });
    },

    /** Throws CHECKPOINT_NOT_FOUND unless the session has the folder as turn `turn` left it. */
    assertTurn(sessionId: string, turn: number): void {
      commitAt(sessionId, turn);
    },

    /** The diff a rewind to `turn` would undo: from that checkpoint to the folder as it is. */
    pending(sessionId: string, folder: string, turn: number): Promise<string> {
      return queued(sessionId, async () => {
        const target = commitAt(sessionId, turn);
        const place = await placeFor(sessionId, folder);
        const present = await snapshotNow(place, sessionId, "now");
        return patch(place, present, target);
      });
    },

    /**
     * The folder put back as turn `turn` left it; the present is kept first (a commit and the
     * `undo` ref) so the rewind can be taken back.
     */
    rewind(sessionId: string, folder: string, turn: number): Promise<{ files: number; undoable: boolean }> {
      return queued(sessionId, async () => {
        const target = commitAt(sessionId, turn);
        const place = await placeFor(sessionId, folder);
        const present = await snapshotNow(place, sessionId, `before rewind to turn ${turn}`);
        await setRef(place, ref(sessionId, "undo"), present);
        deps.repo.setUndo({ sessionId, folder, commit: present, turn, createdAt: now() });
        return { files: await restore(place, target, present), undoable: true };
      });
    },

    /** Takes back the last code rewind: the folder as it was just before it. */
    undo(sessionId: string, folder: string): Promise<{ turn: number; files: number }> {
      return queued(sessionId, async () => {
        const undo = deps.repo.undo(sessionId);
        if (!undo) throw new AgError("CHECKPOINT_NOT_FOUND", `session ${sessionId} has no rewind to undo`);
        const place = await placeFor(sessionId, folder);
        const present = await snapshot(place, undo.commit, `ag checkpoint: ${sessionId} before undo`);
        const files = await restore(place, undo.commit, present);
        await deleteRefs(place, [ref(sessionId, "undo")]);
        deps.repo.clearUndo(sessionId);
        return { turn: undo.turn, files };
      });
    },

    /** Removes the lines of sessions that no longer exist (`exists` says which still do). */
    async sweep(exists: (sessionId: string) => boolean): Promise<number> {
      const gone = deps.repo.sessions().filter((s) => !exists(s.sessionId));
      for (const { sessionId, folder } of gone) await queued(sessionId, () => removeLine(sessionId, folder));
      return gone.length;
    },

    /** Removes a session's whole line (its refs, rows and index). */
    remove: (sessionId: string, folder: string): Promise<void> =>
      queued(sessionId, () => removeLine(sessionId, folder)),

    /** Resolves once the session's line has nothing under way (tests, shutdown). */
    settled: (sessionId: string): Promise<void> =>
      (queues.get(sessionId) ?? Promise.resolve()).then(
        () => undefined,
        () => undefined,
      ),
  };
}
