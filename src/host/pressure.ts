/**
 * Memory pressure while sessions run: when what the host can still give falls below the reserve,
 * say so once — naming the heaviest sessions, the ones a person would stop first — and say it
 * again only after the host has recovered. ag never kills an agent on its own.
 */
export interface PressureWatch {
  /** Looks now (called when a turn starts: agents grow while they work). At most once per `minIntervalMs`. */
  look(): Promise<void>;
}

const MB = 1024 * 1024;

export function createPressureWatch(deps: {
  reserveMb: number;
  available(): Promise<number | null>;
  /** Each running session's agent: its id, name, agent kind and resident memory. */
  running(): Promise<Array<{ id: string; name: string; agent: string; rssBytes: number }>>;
  /** Where the one note goes (diagnostics). */
  report(detail: string): void;
  minIntervalMs?: number;
  now?: () => number;
}): PressureWatch {
  const now = deps.now ?? Date.now;
  const interval = deps.minIntervalMs ?? 30_000;
  let lastLook = Number.NEGATIVE_INFINITY;
  let under = false;
  return {
    async look() {
      if (deps.reserveMb === 0 || now() - lastLook < interval) return;
      lastLook = now();
      const available = await deps.available();
      if (available === null) return;
      const low = available < deps.reserveMb * MB;
      if (low && !under) {
        const heaviest = (await deps.running())
          .sort((a, b) => b.rssBytes - a.rssBytes)
          .slice(0, 3)
          .map((s) => `${s.name} (${s.agent}, ${Math.round(s.rssBytes / MB)} MB, ${s.id.slice(0, 8)})`);
        deps.report(
          `host memory below the reserve: ${Math.floor(available / MB)} MB available, ${deps.reserveMb} MB kept free; heaviest sessions: ${heaviest.join(", ") || "none"}`,
        );
      }
      under = low;
    },
  };
}
