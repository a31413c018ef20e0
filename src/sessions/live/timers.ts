import type { Clock } from "../../shared/clock.ts";

/** Named one-shot timers on the injected clock: setting one replaces it, clearing is idempotent. */
export interface Timers {
  /** Runs `fire` at `at` (epoch ms on the clock), or now if that is past; null clears it. */
  at(name: string, at: number | null, fire: () => void): void;
  after(name: string, ms: number, fire: () => void): void;
  clear(name: string): void;
  clearAll(): void;
}

export function createTimers(clock: Clock): Timers {
  const cancels = new Map<string, () => void>();
  const timers: Timers = {
    at(name, at, fire) {
      if (at === null) return timers.clear(name);
      timers.after(name, Math.max(0, at - clock.now()), fire);
    },
    after(name, ms, fire) {
      timers.clear(name);
      cancels.set(
        name,
        clock.setTimer(() => {
          cancels.delete(name);
          fire();
        }, ms),
      );
    },
    clear(name) {
      cancels.get(name)?.();
      cancels.delete(name);
    },
    clearAll() {
      for (const cancel of cancels.values()) cancel();
      cancels.clear();
    },
  };
  return timers;
}
