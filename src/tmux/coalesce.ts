/**
 * Turns a busy pane's ~3,200 `%output` notifications per second into at most one change signal
 * per pane per interval. The first change is signalled at once (leading edge, low latency); any
 * change during the quiet interval is signalled when it ends (trailing edge), so the last change
 * is never lost.
 */
export interface OutputCoalescer {
  touch(paneId: string): void;
  /** Drops a pane's pending signal (its window closed). */
  forget(paneId: string): void;
  clear(): void;
}

export function createOutputCoalescer(intervalMs: number, signal: (paneId: string) => void): OutputCoalescer {
  const quiet = new Map<string, { dirty: boolean; timer: ReturnType<typeof setTimeout> }>();

  function arm(paneId: string): void {
    const state = { dirty: false, timer: setTimeout(() => expire(paneId), intervalMs) };
    quiet.set(paneId, state);
  }

  function expire(paneId: string): void {
    const state = quiet.get(paneId);
    quiet.delete(paneId);
    if (!state?.dirty) return;
    signal(paneId);
    arm(paneId);
  }

  return {
    touch(paneId) {
      const state = quiet.get(paneId);
      if (state) {
        state.dirty = true;
        return;
      }
      signal(paneId);
      arm(paneId);
    },
    forget(paneId) {
      const state = quiet.get(paneId);
      if (state) clearTimeout(state.timer);
      quiet.delete(paneId);
    },
    clear() {
      for (const state of quiet.values()) clearTimeout(state.timer);
      quiet.clear();
    },
  };
}
