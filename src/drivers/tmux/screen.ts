import type { AgentAdapter, ScreenReading } from "../../agents/agent.ts";
import type { Clock } from "../../shared/clock.ts";
import type { Logger } from "../../shared/log.ts";

export interface ScreenReader {
  /**
   * Captures the pane and reads it. One capture at a time: a read asked for while one is in
   * flight runs once more after it (its capture must begin after the change that asked for it).
   */
  read(): Promise<ScreenReading | null>;
}

/**
 * A session's screen: captured when tmux says the pane changed, or when the state fusion wants a
 * fresh look (a confirmation due), never on a timer of its own. Each reading goes to `onReading`
 * with the time its capture began: the frame shows some moment after that, never before.
 */
export function createScreenReader(deps: {
  paneId(): string | null;
  /** The session's folder: the only one whose trust dialog ag may answer itself. */
  workDir?: string;
  /** Launched to continue a conversation and not shown ready yet (see AgentAdapter.readScreen). */
  resuming(): boolean;
  /** Captures the pane's text (its driver's `capture`). */
  capture(): Promise<string>;
  agent: Pick<AgentAdapter, "readScreen">;
  clock: Clock;
  logger: Logger;
  onReading(reading: ScreenReading, capturedAt: number, news: { text: boolean; activity: boolean }): void;
}): ScreenReader {
  let inFlight: Promise<ScreenReading | null> | null = null;
  let again = false;
  let lastText: string | null = null;
  let lastActivityKey: string | null = null;

  async function captureAndRead(): Promise<ScreenReading | null> {
    const paneId = deps.paneId();
    if (!paneId) return null;
    const capturedAt = deps.clock.now();
    let text: string;
    try {
      text = await deps.capture();
    } catch (error) {
      deps.logger.debug(`capture of ${paneId} failed`, error);
      return null;
    }
    const reading = deps.agent.readScreen(text, {
      ...(deps.workDir === undefined ? {} : { workDir: deps.workDir }),
      ...(deps.resuming() ? { resuming: true } : {}),
    });
    const news = {
      text: text !== lastText,
      // The spinner and timers move by themselves: only other changes are the agent's activity.
      activity: lastActivityKey !== null && reading.activityKey !== lastActivityKey,
    };
    lastText = text;
    lastActivityKey = reading.activityKey;
    deps.onReading(reading, capturedAt, news);
    return reading;
  }

  function read(): Promise<ScreenReading | null> {
    if (inFlight) {
      again = true;
      return inFlight;
    }
    inFlight = captureAndRead().finally(() => {
      inFlight = null;
      if (again) {
        again = false;
        void read();
      }
    });
    return inFlight;
  }

  return { read };
}
