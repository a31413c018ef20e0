/**
 * One run for a burst of calls: `schedule()` runs `run` `ms` after the first call of a burst
 * (later calls in between join it); `cancel()` drops a run not made yet.
 */
export function coalesced(run: () => void, ms: number): { schedule(): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  return {
    schedule() {
      timer ??= setTimeout(() => {
        timer = null;
        run();
      }, ms);
    },
    cancel() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
