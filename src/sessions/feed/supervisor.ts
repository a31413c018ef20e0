import type { AgentRegistry } from "../../agents/registry.ts";
import type { DiagnosticsSink } from "../../diagnostics/index.ts";
import type { AcpDriver } from "../../drivers/acp/index.ts";
import type { Clock } from "../../shared/clock.ts";
import type { Logger } from "../../shared/log.ts";
import type { Tmux, TmuxEvent } from "../../tmux/tmux.ts";
import { isHeadless, reopenHeadless } from "../headless.ts";
import type { LiveSessions } from "../live/registry.ts";
import type { LiveSession } from "../live/session.ts";
import type { SessionRepo } from "../repo.ts";

/** Terminal sessions stay listed this long, then are pruned (CONTRACT §2). */
export const KEEP_ENDED_MS = 24 * 60 * 60 * 1000;

/**
 * Connects tmux's notifications to the sessions, and the stored sessions to their windows.
 * On start, and whenever the tmux server comes back, every live session is re-adopted by its
 * window tag; one whose window is gone ended unexpectedly (crashed). Nothing here polls: pane
 * output, pane death and window closing arrive as events.
 */
export interface Supervisor {
  start(): Promise<void>;
  /** Matches stored live sessions to tmux windows; returns what it found. */
  reconcile(): Promise<{ adopted: string[]; crashed: string[] }>;
  stop(): void;
}

export function createSupervisor(deps: {
  tmux: Pick<Tmux, "on" | "start" | "listPanes">;
  repo: Pick<SessionRepo, "live" | "get" | "pruneEnded">;
  live: LiveSessions;
  agents: Pick<AgentRegistry, "get">;
  clock: Clock;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
  acp?: AcpDriver;
  settings: { stateDir: string };
}): Supervisor {
  let unsubscribe: (() => void) | null = null;
  let cancelPrune: (() => void) | null = null;
  let lostServer = false;

  function onEvent(event: TmuxEvent): void {
    switch (event.type) {
      case "pane-output":
        deps.live.byPane(event.paneId)?.paneChanged();
        break;
      case "pane-died":
        deps.live.byPane(event.paneId)?.observe({ kind: "exited", status: event.status }, "tmux");
        break;
      case "window-closed":
        for (const session of deps.live.inWindow(event.windowId)) session.observe({ kind: "gone" }, "tmux");
        break;
      case "server-lost":
        lostServer = true;
        deps.logger.warn(`tmux server lost: ${event.error}`);
        deps.diagnostics?.record("tmux.lost", `control client lost the tmux server: ${event.error}`);
        break;
      case "connected":
        if (lostServer) {
          lostServer = false;
          deps.diagnostics?.record("tmux.reconnected", "control client reconnected; re-adopting sessions");
          void reconcile().catch((error) => deps.logger.error("re-adoption after reconnect failed", error));
        }
        break;
    }
  }

  /** Headless sessions have no window: reopened (once) by their driver, whatever tmux does. */
  async function reopenAll(): Promise<void> {
    const waiting = deps.repo.live().filter((r) => isHeadless(r) && !deps.live.get(r.id));
    await Promise.all(
      waiting.map(async (record) => {
        const session = deps.live.follow(record, "adopt");
        const reopened = await reopenHeadless(session, deps.acp, deps.settings.stateDir);
        deps.logger.info(`ACP session ${record.id}: ${reopened ? "reopened" : "ended (driver_restart)"}`);
      }),
    );
  }

  async function reconcile() {
    const panes = await deps.tmux.listPanes();
    const adopted: string[] = [];
    const crashed: string[] = [];
    for (const record of deps.repo.live()) {
      if (isHeadless(record)) continue;
      const pane = panes.find((p) => p.tag === record.id);
      const session = deps.live.follow(record, "adopt");
      if (!pane) {
        session.observe({ kind: "gone" }, "tmux");
        crashed.push(record.id);
        continue;
      }
      session.placed({ paneId: pane.paneId, windowId: pane.windowId });
      if (pane.dead) session.observe({ kind: "exited", status: pane.deadStatus }, "tmux");
      else void session.readScreen();
      void adoptTranscript(session).catch((error) => deps.logger.warn(`transcript of ${record.id}`, error));
      adopted.push(record.id);
    }
    if (adopted.length || crashed.length) {
      deps.logger.info(`re-adopted ${adopted.length} session(s); ${crashed.length} had lost their window`);
    }
    return { adopted, crashed };
  }

  /** The transcript so far is history; what the agent wrote while ag was down is read too. */
  async function adoptTranscript(session: LiveSession): Promise<void> {
    const record = session.record();
    const path = record.transcriptPath ?? (await session.agent.transcript.find(record.workDir, record.id));
    if (path) await session.attachTranscript(path, true);
  }

  function schedulePrune(): void {
    const removed = deps.repo.pruneEnded(new Date(deps.clock.now() - KEEP_ENDED_MS).toISOString());
    if (removed) deps.logger.debug(`pruned ${removed} ended session(s)`);
    cancelPrune = deps.clock.setTimer(schedulePrune, 60 * 60 * 1000);
  }

  return {
    async start() {
      const reopening = reopenAll().catch((error) =>
        deps.logger.error("reopening ACP sessions failed", error),
      );
      unsubscribe = deps.tmux.on(onEvent);
      await deps.tmux.start();
      await reconcile();
      await reopening;
      schedulePrune();
    },
    reconcile,
    stop() {
      unsubscribe?.();
      cancelPrune?.();
      for (const session of deps.live.all()) deps.live.forget(session.id);
    },
  };
}
