import { randomBytes } from "node:crypto";
import type { AgentRegistry } from "../../agents/registry.ts";
import type { DiagnosticsSink } from "../../diagnostics/index.ts";
import { transcriptOwner, transcriptSource } from "../../drivers/driver.ts";
import type { SessionDrivers } from "../../drivers/index.ts";
import type { Observation, ObservationSource } from "../../drivers/observation.ts";
import type { DriverSession } from "../../drivers/port.ts";
import { createAutoAnswerer } from "../../drivers/tmux/auto-answer.ts";
import { createScreenReader } from "../../drivers/tmux/screen.ts";
import type { EventBus } from "../../events/bus.ts";
import type { Clock } from "../../shared/clock.ts";
import type { Logger } from "../../shared/log.ts";
import type { TenantUsers } from "../../shared/run-as.ts";
import { policyRefusal } from "../policy.ts";
import type { SessionRecord, SessionRepo } from "../repo.ts";
import { isTerminal } from "../session.ts";
import { createTranscriptFollower, type TranscriptFollower } from "./follower.ts";
import { createLiveStats, type LiveStats, pushSample, type StatsRecorder } from "./stats.ts";
import { initialStatus, type StatusState } from "./status.ts";
import { createTimers } from "./timers.ts";
import { createStatusWriter } from "./writer.ts";

export interface LiveDeps {
  /** The session's driver reads its screen and types its keys (a terminal's). */
  drivers: Pick<SessionDrivers, "of">;
  /** Each session's adapter is its agent's (record.agent), as its tenant's OS user runs it. */
  agents: Pick<AgentRegistry, "get">;
  /** The OS user a tenant's agents run as (runAs); none: ag's own. */
  owners?: TenantUsers;
  repo: Pick<SessionRepo, "saveStatus" | "get" | "update">;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  permissionTimeoutMs: number;
  /** 0 disables. */
  idleTimeoutMs: number;
  /** The session has been idle (no sign of life) for idleTimeoutMs. */
  onIdleTimeout(id: string): void;
  /** The session reached a terminal state. */
  onEnded?(id: string): void;
  /** Server-wide totals (metrics); absent in tests that do not look at them. */
  recorder?: StatsRecorder;
  /** Notes dialogs ag answers itself. */
  diagnostics?: DiagnosticsSink;
}

/**
 * How a session starts being followed: launched now (resume: to continue a conversation, its
 * own or, for a fork, another's), or found running after a restart (adopt).
 */
export type FollowMode = "launch" | "resume" | "adopt";

/**
 * One running session: its hooks, transcript and screen feed its status writer in arrival order;
 * its timers (stall, confirmation, permission and idle timeouts) run on the injected clock.
 */
export interface LiveSession extends DriverSession {
  record(): SessionRecord;
  status(): StatusState;
  /** Something happened: the fusion weighs it (`at` defaults to now). */
  observe(observation: Observation, source: ObservationSource, at?: number): void;
  /** The text of the last prompt the agent confirmed (hook or transcript), if any since ag follows it. */
  lastPrompt(): string | null;
  sendKeys(keys: string[]): Promise<void>;
  readonly transcript: TranscriptFollower;
  /**
   * Waits (up to `ms`) until the transcript holds the end of the turn of the prompt the agent
   * last confirmed: the agent tells a turn's end before it has written the turn's last lines.
   */
  settleTranscript(ms: number): Promise<void>;
  /** Counters for metrics and latency since ag started following the session. */
  readonly stats: LiveStats;
  recordDelivery(delivered: boolean, attempts: number, ms: number): void;
  dispose(): void;
}

/**
 * How long a turn's end waits for the turn's last lines in the transcript (their messages go out
 * first). Claude Code writes them some 150 ms after its Stop hook; a transcript that never shows
 * the end (a crash mid-line) costs the end this much, no more.
 */
export const TURN_TEXT_WAIT_MS = 1_000;

export function createLiveSession(initial: SessionRecord, deps: LiveDeps, mode: FollowMode): LiveSession {
  let record = initial;
  const agent = deps.agents.get(initial.agent, initial.agentVersion, deps.owners?.(initial.tenantId));
  let disposed = false;
  const timers = createTimers(deps.clock);
  const changeWaiters = new Set<() => void>();
  const submitListeners = new Set<(text: string) => void>();
  const seenPrompts: string[] = [];
  let lastPrompt: string | null = null;
  let keyboard: Promise<unknown> = Promise.resolve();
  /** When the fresh capture the fusion asked for is due (see lookAgainAt). */
  let rereadDue: number | null = null;
  const stats = createLiveStats(deps.clock.now());
  /** Launch time of a session started now; adopted sessions read their past as history instead. */
  const launchedAt = mode === "adopt" ? 0 : deps.clock.now();
  const writer = createStatusWriter(
    {
      record: () => record,
      saved: (next) => {
        record = next;
      },
      repo: deps.repo,
      bus: deps.bus,
      clock: deps.clock,
      logger: deps.logger,
      stats,
      recorder: deps.recorder,
      // A turn's last message comes before its end (docs/events.md): the hook that ends it often
      // arrives before the agent has written the turn's last lines.
      beforeTurnEnd: () => (transcript.path ? settleTranscript(TURN_TEXT_WAIT_MS) : null),
    },
    initialStatus(deps.clock.now(), record.stallThresholdMs, record.status, {
      booting: mode !== "adopt",
      pending: record.pendingPermission,
      adopted: mode === "adopt",
      // Ids restart with each run of ag: a tag keeps an old one from matching a new dialog.
      idTag: randomBytes(2).toString("hex"),
    }),
  );
  const autoAnswers = createAutoAnswerer({
    sessionId: () => record.id,
    clock: deps.clock,
    logger: deps.logger,
    diagnostics: deps.diagnostics,
    sendKeys: (keys) => api.sendKeys(keys),
    reread: () => void screen.read(),
    settleMs: agent.keys.dialogSettleMs ?? 0,
  });
  const screen = createScreenReader({
    paneId: () => (disposed ? null : record.paneId),
    workDir: record.workDir,
    // Until the UI is first shown ready: a resumed agent may draw its input box before its conversation.
    resuming: () => mode === "resume" && writer.state.booting,
    capture: () => deps.drivers.of(record).capture(record),
    agent,
    clock: deps.clock,
    logger: deps.logger,
    onReading(reading, capturedAt, news) {
      if (news.text) notifyChange();
      if (news.activity) observe({ kind: "activity" }, "screen", capturedAt);
      // A dialog ag answers itself is never a prompt for the user (unless it outlives the answer).
      const terminal = isTerminal(writer.state.status);
      if (reading.autoAnswer && !terminal && autoAnswers.handle(reading.autoAnswer)) return;
      observe(reading.observation, "screen", capturedAt);
    },
  });
  const transcript = createTranscriptFollower({
    agent: transcriptSource(initial, agent),
    owner: transcriptOwner(initial, deps.owners),
    logger: deps.logger,
    onLine(meaning) {
      // A fork's transcript starts with its parent's conversation: lines from before this launch
      // are history (they count in the totals, but are neither events nor evidence of state).
      if (meaning.at !== undefined && meaning.at < launchedAt) {
        saveTokens();
        return;
      }
      if (meaning.observation) api.observe(meaning.observation, "transcript");
      for (const message of meaning.messages) deps.bus.publish({ ...message, session: sessionRef() });
      saveTokens();
    },
  });

  /** Until the transcript holds the end of the turn of the prompt last confirmed, or `ms`. */
  function settleTranscript(ms: number): Promise<void> {
    const prompt = lastPrompt;
    return transcript.settled(
      ms,
      prompt === null ? undefined : (recorded) => recorded !== null && agent.isSubmission(prompt, recorded),
    );
  }

  function saveTokens(): void {
    const tokens = transcript.tokens();
    const stored = record.tokenUsage;
    if (
      tokens.input === stored.input &&
      tokens.output === stored.output &&
      tokens.cacheRead === stored.cacheRead &&
      tokens.cacheCreation === stored.cacheCreation
    )
      return;
    deps.repo.update(record.id, { tokenUsage: tokens });
    record = { ...record, tokenUsage: tokens };
  }

  function notifyChange(): void {
    for (const wake of [...changeWaiters]) wake();
  }

  function sessionRef() {
    return { id: record.id, name: record.name, workDir: record.workDir };
  }

  function observe(observation: Observation, source: ObservationSource, at = deps.clock.now()): void {
    if (disposed) return;
    if (observation.kind === "prompt-submitted" || observation.kind === "input-recorded") {
      lastPrompt = observation.text;
      for (const listener of submitListeners) listener(observation.text);
    }
    const before = writer.state;
    const applied = writer.apply(observation, source, at);
    const state = writer.state;
    timers.at("recheck", applied.recheckAt, () => observe({ kind: "tick" }, "timer"));
    lookAgainAt(applied.rereadAt);
    catchUpAt(applied.catchUpAt);
    if (applied.changed) {
      managePermissionTimer(before);
      if (isTerminal(state.status)) {
        stopTimers();
        deps.onEnded?.(record.id);
      }
    }
    if (state.status === "idle" && (before.status !== "idle" || state.lastActivityAt > before.lastActivityAt))
      manageIdleTimer();
    else if (state.status !== "idle") timers.clear("idle");
    // A screen read that saw nothing new wakes no one: waking on it made a waiter read again,
    // and so on, a capture loop (the screen reader wakes them when the screen itself changed).
    if (applied.changed || (source !== "screen" && source !== "timer")) notifyChange();
  }

  /**
   * A fresh capture the fusion asked for (a confirmation due, an answer's grace over). One asked
   * for stays asked for until it runs: a later transition that asks for none does not cancel it
   * (a still screen sends no pane output, so nothing else would bring the frame that decides).
   */
  /**
   * One look when a status the screen never showed has waited CATCH_UP_MS. Once per deadline:
   * the look's own reading names the same deadline (now past) while it is being confirmed, and
   * re-arming it then read the screen in a tight loop (~600 captures a second, seen).
   */
  let catchUpLooked: number | null = null;
  function catchUpAt(at: number | null): void {
    if (at === null || at === catchUpLooked) {
      timers.clear("catch-up");
      return;
    }
    timers.at("catch-up", at, () => {
      catchUpLooked = at;
      void screen.read();
    });
  }

  function lookAgainAt(at: number | null): void {
    if (at === null || (rereadDue !== null && rereadDue <= at)) return;
    rereadDue = at;
    timers.at("reread", at, () => {
      rereadDue = null;
      void screen.read();
    });
  }

  function managePermissionTimer(before: StatusState): void {
    const pending = writer.state.pending;
    if (pending?.id === before.pending?.id) return;
    timers.clear("permission");
    if (!pending) return;
    timers.after("permission", deps.permissionTimeoutMs, () => {
      if (writer.state.pending?.id !== pending.id) return;
      deps.bus.publish({
        event: "status.permission_timeout",
        session: sessionRef(),
        detail: `no answer to ${pending.kind} prompt for ${deps.permissionTimeoutMs} ms`,
        meta: { pendingPermission: pending },
      });
    });
  }

  /** An idle period longer than idleTimeoutMs ends the session; any sign of life starts it anew. */
  function manageIdleTimer(): void {
    if (deps.idleTimeoutMs <= 0) return;
    timers.after("idle", deps.idleTimeoutMs, () => {
      if (writer.state.status === "idle" && !disposed) deps.onIdleTimeout(record.id);
    });
  }

  function stopTimers(): void {
    autoAnswers.dispose();
    timers.clearAll();
    rereadDue = null;
  }

  const api: LiveSession = {
    id: record.id,
    agent,
    transcript,
    settleTranscript,
    stats,
    recordDelivery(delivered, attempts, ms) {
      deps.recorder?.delivery(delivered, attempts, ms);
      stats.deliveries.sent++;
      stats.deliveries.attempts += attempts;
      if (delivered) {
        stats.deliveries.delivered++;
        pushSample(stats.deliveryMs, ms);
      } else stats.deliveries.failed++;
    },
    record: () => record,
    status: () => writer.state,
    ended: () => isTerminal(writer.state.status),
    catchUpTranscript: () => transcript.catchUp(),
    resumeTurn() {
      // A turn ag found under way by its stored status, still open by the transcript: its prompt
      // is the one the agent last confirmed (what /read and the turn's end wait for), and the
      // screen may judge it again only once it has shown it, or after CATCH_UP_MS. A prompt this
      // ag heard of already (a hook since the restart) is newer news.
      if (mode !== "adopt" || writer.state.status !== "working" || lastPrompt !== null) return;
      if (transcript.turnEnded()) return;
      const prompt = transcript.summary().lastUserMessage;
      if (prompt !== null) observe({ kind: "prompt-submitted", text: prompt }, "transcript");
    },
    refusal: (tool) => policyRefusal(record.permissions, tool),
    observe(observation, source, at) {
      // The same prompt reported by the hook and again by the transcript is one prompt: the
      // agent's prompt id says so (the text alone would merge two identical prompts).
      if (observation.kind === "prompt-submitted" || observation.kind === "input-recorded") {
        const key = observation.promptId ?? `text:${observation.text}`;
        if (seenPrompts.includes(key)) return;
        seenPrompts.push(key);
        if (seenPrompts.length > 50) seenPrompts.shift();
      }
      observe(observation, source, at);
    },
    paneChanged: () => void screen.read(),
    readScreen: () => screen.read(),
    nextChange(ms) {
      return new Promise((resolve) => {
        const wake = () => {
          changeWaiters.delete(wake);
          cancel();
          resolve();
        };
        const cancel = deps.clock.setTimer(wake, ms);
        changeWaiters.add(wake);
      });
    },
    lastPrompt: () => lastPrompt,
    onSubmitted(listener) {
      submitListeners.add(listener);
      return () => submitListeners.delete(listener);
    },
    async sendKeys(keys) {
      if (record.paneId) await deps.drivers.of(record).sendKeys(record, keys);
    },
    typing(work) {
      const next = keyboard.then(work, work);
      keyboard = next.catch(() => {});
      return next;
    },
    placed({ windowId, paneId }) {
      if (paneId === record.paneId && windowId === record.windowId) return;
      deps.repo.update(record.id, { windowId, paneId });
      record = { ...record, windowId, paneId };
    },
    async attachTranscript(path, history) {
      if (record.transcriptPath !== path) {
        deps.repo.update(record.id, { transcriptPath: path });
        record = { ...record, transcriptPath: path };
      }
      await transcript.attach(path, history);
      saveTokens();
    },
    dispose() {
      disposed = true;
      stopTimers();
      transcript.stop();
      notifyChange();
    },
  };
  if (record.status === "idle") manageIdleTimer();
  return api;
}
