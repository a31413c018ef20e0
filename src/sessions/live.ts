import type { AgentAdapter, ScreenReading } from "../agents/agent.ts";
import type { DiagnosticsSink } from "../diagnostics/index.ts";
import type { EventBus } from "../events/bus.ts";
import type { EventName } from "../events/names.ts";
import type { Clock } from "../shared/clock.ts";
import type { Logger } from "../shared/log.ts";
import type { Tmux } from "../tmux/tmux.ts";
import { createAutoAnswerer } from "./auto-answer.ts";
import { createTranscriptFollower, type TranscriptFollower } from "./follower.ts";
import { createLiveStats, type LiveStats, pushSample, type StatsRecorder } from "./live-stats.ts";
import type { Observation, ObservationSource } from "./observation.ts";
import type { SessionRecord, SessionRepo } from "./repo.ts";
import { initialStatus, reduce, type StatusState } from "./status.ts";

export interface LiveDeps {
  tmux: Tmux;
  agent: AgentAdapter;
  repo: SessionRepo;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  permissionTimeoutMs: number;
  /** 0 disables. */
  idleTimeoutMs: number;
  onIdleTimeout(): void;
  /** Server-wide totals (metrics); absent in tests that do not look at them. */
  recorder?: StatsRecorder;
  /** Notes dialogs ag answers itself. */
  diagnostics?: DiagnosticsSink;
}

/**
 * One running session: the single writer of its status. Observations from hooks, the
 * transcript, the screen and tmux are applied here, in arrival order, synchronously; each
 * change is persisted first, then published.
 */
export interface LiveSession {
  readonly id: string;
  record(): SessionRecord;
  observe(observation: Observation, source: ObservationSource): void;
  /** tmux says the pane changed: read the screen again (at most one read in flight). */
  paneChanged(): void;
  /** Captures and reads the screen now (feeding what it shows into the state). */
  readScreen(): Promise<ScreenReading | null>;
  /** Resolves when the screen shows something new or the state learns something, or after `ms`. */
  nextChange(ms: number): Promise<void>;
  /** Calls `listener` with the text of every prompt the agent confirms; returns unsubscribe. */
  onSubmitted(listener: (text: string) => void): () => void;
  sendKeys(keys: string[]): Promise<void>;
  /** Follows the agent's transcript at `path` (history: lines already there are the past). */
  attachTranscript(path: string, history: boolean): Promise<void>;
  readonly transcript: TranscriptFollower;
  /** Counters for metrics and latency since ag started following the session. */
  readonly stats: LiveStats;
  recordDelivery(delivered: boolean, attempts: number, ms: number): void;
  /** Marks that ag itself is closing the window, so its disappearance is not a crash. */
  markKilled(): void;
  dispose(): void;
}

export function createLiveSession(initial: SessionRecord, deps: LiveDeps, booting: boolean): LiveSession {
  let record = initial;
  let state: StatusState = {
    ...initialStatus(deps.clock.now(), record.stallThresholdMs, record.status, booting),
    pending: record.pendingPermission,
  };
  let cancelRecheck: (() => void) | null = null;
  let cancelPermissionTimer: (() => void) | null = null;
  let cancelIdleTimer: (() => void) | null = null;
  let readInFlight: Promise<ScreenReading | null> | null = null;
  let readAgain = false;
  let lastActivityKey: string | null = null;
  let lastScreen: string | null = null;
  let killed = false;
  let disposed = false;
  const changeWaiters = new Set<() => void>();
  const submitListeners = new Set<(text: string) => void>();
  const seenPrompts: string[] = [];
  const stats = createLiveStats(deps.clock.now());
  const autoAnswers = createAutoAnswerer({
    sessionId: () => record.id,
    clock: deps.clock,
    logger: deps.logger,
    diagnostics: deps.diagnostics,
    sendKeys: (keys) => api.sendKeys(keys),
    reread: () => void readScreen(),
  });
  /** Launch time of a session started now; adopted sessions read their past as history instead. */
  const launchedAt = booting ? deps.clock.now() : 0;
  const transcript = createTranscriptFollower({
    agent: deps.agent,
    logger: deps.logger,
    onLine(meaning) {
      // A fork's transcript starts with its parent's conversation: lines from before this launch
      // are history (they count in the totals, but are neither events nor evidence of state).
      if (meaning.at !== undefined && meaning.at < launchedAt) {
        saveTokens();
        return;
      }
      if (meaning.observation) api.observe(meaning.observation, "transcript");
      for (const message of meaning.messages) publish(message.event, message.detail, message.meta);
      saveTokens();
    },
  });

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

  function publish(event: EventName, detail: string, meta: Record<string, unknown> = {}): void {
    deps.bus.publish({
      event,
      session: { id: record.id, name: record.name, workDir: record.workDir },
      detail,
      meta,
    });
  }

  function observe(observation: Observation, source: ObservationSource): void {
    if (disposed) return;
    if (observation.kind === "prompt-submitted") {
      for (const listener of submitListeners) listener(observation.text);
    }
    if (killed && (observation.kind === "gone" || observation.kind === "exited")) return;
    const previous = state.status;
    const now = deps.clock.now();
    const evidenceSince = state.screenDisagreesSince;
    const transition = reduce(state, observation, source, now);
    state = transition.state;
    scheduleRecheck(transition.recheckAt, now);
    const changed = state.status !== previous || transition.events.length > 0;
    if (state.status !== previous) {
      stats.timeInState[previous] = (stats.timeInState[previous] ?? 0) + (now - stats.statusSince);
      stats.statusSince = now;
      // Hooks and transcript lines change the state as they arrive; the screen after its wait.
      const detectionMs = source === "screen" || source === "timer" ? now - (evidenceSince ?? now) : 0;
      pushSample(stats.detectionMs, detectionMs);
      deps.recorder?.detection(detectionMs);
    }
    if (changed) {
      deps.logger.debug(
        `session ${record.id}: ${previous} → ${state.status} (${source} ${observation.kind}${transition.detail ? `: ${transition.detail}` : ""})`,
      );
      const at = new Date(now).toISOString();
      const terminal = state.status === "completed" || state.status === "crashed";
      deps.repo.update(record.id, {
        status: state.status,
        pendingPermission: state.pending,
        updatedAt: at,
        lastActivityAt: new Date(state.lastActivityAt).toISOString(),
        ...(terminal ? { endedAt: at, endReason: transition.detail ?? state.status } : {}),
      });
      record = deps.repo.get(record.id) ?? record;
      for (const event of transition.events) {
        publish(event, transition.detail ?? `${previous} → ${state.status}`, {
          status: state.status,
          previous,
          pendingPermission: state.pending,
          source,
          ...(event === "session.ended" ? { reason: state.status === "crashed" ? "failed" : "normal" } : {}),
        });
      }
      managePermissionTimer();
      manageIdleTimer();
      if (terminal) stopTimers();
    }
    // A screen read that saw nothing new wakes no one: waking on it made a waiter read again,
    // and so on, a capture loop (captureAndRead wakes them when the screen itself changed).
    if (changed || (source !== "screen" && source !== "timer")) notifyChange();
  }

  function scheduleRecheck(at: number | null, now: number): void {
    cancelRecheck?.();
    cancelRecheck =
      at === null ? null : deps.clock.setTimer(() => observe({ kind: "tick" }, "timer"), at - now);
  }

  function managePermissionTimer(): void {
    cancelPermissionTimer?.();
    cancelPermissionTimer = null;
    const pending = state.pending;
    if (!pending) return;
    cancelPermissionTimer = deps.clock.setTimer(() => {
      if (state.pending?.id === pending.id) {
        publish(
          "status.permission_timeout",
          `no answer to ${pending.kind} prompt for ${deps.permissionTimeoutMs} ms`,
          {
            pendingPermission: pending,
          },
        );
      }
    }, deps.permissionTimeoutMs);
  }

  /** An idle period longer than idleTimeoutMs ends the session; any change starts it anew. */
  function manageIdleTimer(): void {
    cancelIdleTimer?.();
    cancelIdleTimer = null;
    if (state.status !== "idle" || deps.idleTimeoutMs <= 0) return;
    cancelIdleTimer = deps.clock.setTimer(() => {
      cancelIdleTimer = null;
      if (state.status === "idle" && !disposed) deps.onIdleTimeout();
    }, deps.idleTimeoutMs);
  }

  function stopTimers(): void {
    autoAnswers.dispose();
    cancelRecheck?.();
    cancelPermissionTimer?.();
    cancelIdleTimer?.();
    cancelRecheck = cancelPermissionTimer = cancelIdleTimer = null;
  }

  async function captureAndRead(): Promise<ScreenReading | null> {
    const paneId = record.paneId;
    if (!paneId || disposed) return null;
    let text: string;
    try {
      text = await deps.tmux.capturePane(paneId);
    } catch (error) {
      deps.logger.debug(`capture of ${paneId} failed`, error);
      return null;
    }
    const reading = deps.agent.readScreen(text);
    if (text !== lastScreen) {
      lastScreen = text;
      notifyChange();
    }
    if (lastActivityKey !== null && reading.activityKey !== lastActivityKey) {
      observe({ kind: "activity", working: false }, "screen");
    }
    lastActivityKey = reading.activityKey;
    // A dialog ag answers itself is never a prompt for the user (unless it outlives the answer).
    if (reading.autoAnswer && !killed && autoAnswers.handle(reading.autoAnswer)) return reading;
    observe(reading.observation, "screen");
    return reading;
  }

  function readScreen(): Promise<ScreenReading | null> {
    if (readInFlight) {
      readAgain = true;
      return readInFlight;
    }
    readInFlight = captureAndRead().finally(() => {
      readInFlight = null;
      if (readAgain) {
        readAgain = false;
        void readScreen();
      }
    });
    return readInFlight;
  }

  const api: LiveSession = {
    id: record.id,
    transcript,
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
    observe(observation, source) {
      // The same prompt reported by the hook and again by the transcript is one prompt: the
      // agent's prompt id says so (the text alone would merge two identical prompts).
      if (observation.kind === "prompt-submitted") {
        const key = observation.promptId ?? `text:${observation.text}`;
        if (seenPrompts.includes(key)) return;
        seenPrompts.push(key);
        if (seenPrompts.length > 50) seenPrompts.shift();
      }
      observe(observation, source);
    },
    paneChanged: () => void readScreen(),
    readScreen,
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
    onSubmitted(listener) {
      submitListeners.add(listener);
      return () => submitListeners.delete(listener);
    },
    async sendKeys(keys) {
      if (record.paneId) await deps.tmux.sendKeys(record.paneId, keys);
    },
    markKilled() {
      killed = true;
      stopTimers();
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
  manageIdleTimer();
  return api;
}
