import type { KeyStep } from "../../agents/agent.ts";
import type { PendingPermission } from "../../agents/vocabulary.ts";
import type { DiagnosticsSink } from "../../diagnostics/index.ts";
import type { Clock } from "../../shared/clock.ts";
import { sessionEnvironment } from "../../shared/environment.ts";
import { AgError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/log.ts";
import { asUser, handOver, reclaim, type TenantUsers } from "../../shared/run-as.ts";
import type { Tmux, TmuxEvent } from "../../tmux/tmux.ts";
import {
  type AgentPlace,
  assertTypeable,
  lastLines,
  type QuestionAnswer,
  type SessionDriver,
} from "../driver.ts";
import type { AgKeys } from "../observation.ts";
import type { DriverRecord, DriverSession, DriverSessions } from "../port.ts";
import type { DeliveryOptions } from "./delivery.ts";
import { deliverTo, pressKeys } from "./keyboard.ts";

export interface TmuxDriverDeps {
  tmux: Pick<
    Tmux,
    | "newWindow"
    | "splitWindow"
    | "paste"
    | "sendKeys"
    | "sendLiteral"
    | "listPanes"
    | "killPane"
    | "killWindow"
    | "capturePane"
    | "on"
    | "start"
  >;
  /** The port to the sessions domain. */
  sessions: Pick<DriverSessions, "follow" | "byPane" | "inWindow" | "running" | "dir" | "ending">;
  clock: Clock;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
  delivery: DeliveryOptions;
  /** The OS user a tenant's agents run as (runAs); none: ag's own. */
  owners?: TenantUsers;
  settings: { hookBaseUrl: () => string; environment?: Record<string, string> };
}

/**
 * The terminal driver: the agent's own UI in a window (or a split pane) of ag's tmux server.
 * Prompts are pasted and confirmed by the agent's hooks or transcript; answers and interrupts are
 * the agent's keys; pane output, pane death and window closing arrive as tmux's notifications
 * (one control-mode client, no polling). Windows outlive ag: at start they are re-adopted by tag.
 */
export function createTmuxDriver(deps: TmuxDriverDeps): SessionDriver {
  const press = (session: DriverSession, steps: KeyStep[], what: AgKeys, dialog?: string) =>
    pressKeys(session, deps, steps, what, dialog);
  let unsubscribe: (() => void) | null = null;
  let lostServer = false;

  function onEvent(event: TmuxEvent): void {
    switch (event.type) {
      case "pane-output":
        deps.sessions.byPane(event.paneId)?.paneChanged();
        break;
      case "pane-died":
        deps.sessions.byPane(event.paneId)?.observe({ kind: "exited", status: event.status }, "tmux");
        break;
      case "window-closed":
        for (const session of deps.sessions.inWindow(event.windowId))
          session.observe({ kind: "gone" }, "tmux");
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
          const ours = deps.sessions.running().filter((r) => r.driver === "tmux");
          void adopt(ours).catch((error) => deps.logger.error("re-adoption after reconnect failed", error));
        }
        break;
    }
  }

  /** Matches stored sessions to tmux windows by tag; one whose window is gone ended unexpectedly. */
  async function adopt(records: readonly DriverRecord[]): Promise<void> {
    const panes = await deps.tmux.listPanes();
    let adopted = 0;
    let crashed = 0;
    for (const record of records) {
      const pane = panes.find((p) => p.tag === record.id);
      const session = deps.sessions.follow(record, "adopt");
      if (!pane) {
        session.observe({ kind: "gone" }, "tmux");
        crashed++;
        continue;
      }
      session.placed({ paneId: pane.paneId, windowId: pane.windowId });
      if (pane.dead) session.observe({ kind: "exited", status: pane.deadStatus }, "tmux");
      else void session.readScreen();
      void adoptTranscript(session).catch((error) => deps.logger.warn(`transcript of ${record.id}`, error));
      adopted++;
    }
    if (adopted || crashed)
      deps.logger.info(`re-adopted ${adopted} session(s); ${crashed} had lost their window`);
  }

  /**
   * The transcript so far is history; what the agent wrote while ag was down is read too. A turn
   * it shows under way is the hooks' again: the screen ends it only as it may a hook-set turn.
   */
  async function adoptTranscript(session: DriverSession): Promise<void> {
    const record = session.record();
    const path = record.transcriptPath ?? (await session.agent.transcript.find(record.workDir, record.id));
    if (!path) return;
    await session.attachTranscript(path, true);
    session.resumeTurn();
  }

  return {
    name: "tmux",

    async launch(session, spec, failed) {
      const rec = spec.record;
      const owner = deps.owners?.(rec.tenantId) ?? null;
      const dir = deps.sessions.dir(rec.id);
      let window: ReturnType<typeof asUser>;
      try {
        if (owner) reclaim(owner, dir);
        const plan = await session.agent.prepareLaunch({
          sessionId: rec.id,
          workDir: rec.workDir,
          permissionMode: rec.permissionMode,
          model: rec.model,
          agentCommand: rec.agentCommand,
          sessionDir: dir,
          hookUrl: `${deps.settings.hookBaseUrl().replace(/\/+$/, "")}/v1/hooks/${rec.agent}`,
          hookSecret: rec.hookSecret,
          env: rec.env ?? {},
          resume: spec.resume,
          runAs: owner,
        });
        spec.warnings.push(...plan.warnings);
        // The whole environment goes with the window (new-window -e, on the control client's
        // stdin: no argv), so the agent has this ag's, not what the tmux server started with.
        window = asUser(owner, plan.command, sessionEnvironment(deps.settings.environment ?? {}, plan.env));
        if (owner) handOver(owner, dir);
      } catch (error) {
        throw failed(error, "AGENT_UNAVAILABLE", "could not prepare the agent's launch");
      }
      try {
        const placement = { tag: rec.id, cwd: rec.workDir, ...window };
        session.placed(
          spec.splitOf
            ? await deps.tmux.splitWindow(spec.splitOf, placement)
            : await deps.tmux.newWindow({ ...placement, name: rec.name }),
        );
      } catch (error) {
        deps.diagnostics?.record(
          "tmux.failure",
          `session ${rec.id}: could not open a window: ${(error as Error).message}`,
        );
        throw failed(error, "TMUX_UNAVAILABLE", "could not open a tmux window");
      }
    },

    launched(session) {
      void session.readScreen();
    },

    deliver: (session, text) => deliverTo(session, deps, text, deps.delivery),

    async decide(session, pending, approve) {
      // The keys depend on which dialog is pending (the start-up dialogs preselect different options).
      const keys = approve ? session.agent.keys.approve(pending) : session.agent.keys.reject(pending);
      await press(
        session,
        keys.map((key) => ({ keys: [key] })),
        approve ? "approve" : "reject",
        pending.id,
      );
    },

    async answer(session, pending, answer) {
      assertKeyAnswer(session.id, pending, answer);
      await press(session, session.agent.keys.answer(pending, answer), "answer", pending.id);
    },

    interrupt: (session) => press(session, [{ keys: session.agent.keys.interrupt }], "interrupt"),
    escape: (session) => press(session, [{ keys: session.agent.keys.escape }], "escape"),

    async end(session, close) {
      const rec = session.record();
      // The agent exits a moment after its window closes (writing its last lines): who it is.
      const pid = rec.paneId
        ? ((await deps.tmux.listPanes().catch(() => [])).find((p) => p.paneId === rec.paneId)?.pid ?? null)
        : null;
      // The end is recorded before anything is touched: its closing reads as ag's doing, not a
      // crash, and a record the store refuses (disk full) stops the kill with nothing done.
      close();
      await deps.sessions.ending(rec.id, pid);
      const shared =
        rec.windowId && deps.sessions.running().some((s) => s.id !== rec.id && s.windowId === rec.windowId);
      if (shared && rec.paneId) await deps.tmux.killPane(rec.paneId).catch(() => {});
      else if (rec.windowId) await deps.tmux.killWindow(rec.windowId).catch(() => {});
    },

    async start(records) {
      unsubscribe = deps.tmux.on(onEvent);
      await deps.tmux.start();
      await adopt(records);
    },

    adopt: (record) => adopt([record]),

    stop() {
      unsubscribe?.();
      unsubscribe = null;
    },

    /** The dead pane (remain-on-exit keeps it): its exit status, and what it showed last. */
    async lastWords(session) {
      const paneId = session.record().paneId;
      if (!paneId) return { status: null, output: [] };
      const [panes, screen] = await Promise.all([
        deps.tmux.listPanes().catch(() => []),
        deps.tmux.capturePane(paneId, { historyLines: SCROLLBACK_READ }).catch(() => ""),
      ]);
      const status = panes.find((p) => p.paneId === paneId)?.deadStatus ?? null;
      return { status, output: lastLines(screen.replace(PANE_IS_DEAD, "")) };
    },

    async locate(records) {
      const panes = new Map((await deps.tmux.listPanes()).map((p) => [p.paneId, p]));
      const places = new Map<string, AgentPlace>();
      for (const record of records) {
        const pane = record.paneId ? panes.get(record.paneId) : undefined;
        if (!pane) continue;
        places.set(record.id, {
          pid: pane.dead ? null : pane.pid,
          pane: { windowId: pane.windowId, paneId: pane.paneId, dead: pane.dead },
        });
      }
      return places;
    },

    // Not async: the screen reader's capture keeps tmux's own timing (no added turns).
    capture(record) {
      if (!record.paneId)
        return Promise.reject(new AgError("SESSION_NOT_FOUND", `session ${record.id} has no pane`));
      return deps.tmux.capturePane(record.paneId);
    },

    async sendKeys(record, keys) {
      if (!record.paneId)
        throw new AgError("CONFLICT", `session ${record.id} has no pane to press keys in yet`);
      await deps.tmux.sendKeys(record.paneId, keys);
    },

    /** The agent's own resume by conversation id (`claude --resume`, `codex resume` …). */
    resumes: (agent) => agent.capabilities.includes("resume"),
  };
}

/** How far back a dead pane is read: its last lines may have scrolled off the screen. */
const SCROLLBACK_READ = 200;
/** tmux's own line in a dead pane, not the agent's. */
const PANE_IS_DEAD = /^Pane is dead \(.*$/gm;

/** What the agent's question dialog can take from its keys. */
function assertKeyAnswer(id: string, pending: PendingPermission, answer: QuestionAnswer): void {
  if (pending.kind !== "question") {
    throw new AgError(
      "CONFLICT",
      `session ${id} waits for a ${pending.kind} permission, not an answer: approve or reject it`,
    );
  }
  if (pending.multiSelect) {
    // Its digits only toggle boxes, and its Submit row has no number: not answerable by keys yet.
    throw new AgError(
      "CONFLICT",
      `session ${id} asks a multi-select question, which ag cannot answer yet: answer it in the agent's terminal`,
    );
  }
  if ("option" in answer) {
    // Options not known (a question seen only on screen, cut off): only what a digit picks.
    const count = pending.options?.length || 9;
    if (answer.option < 1 || answer.option > count) {
      throw new AgError("VALIDATION_ERROR", `option ${answer.option} is not one of the ${count} options`);
    }
  } else {
    assertTypeable(answer.text, "text");
    // One line, typed into the dialog's own row: a newline would submit, a tab move the cursor.
    if (/[\n\t]/.test(answer.text))
      throw new AgError("VALIDATION_ERROR", "an answer to a question is one line without tabs");
  }
}
