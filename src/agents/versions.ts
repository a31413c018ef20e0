/**
 * Agent CLI versions: "2.1.328", "0.171.0", "1.18.33-beta.1". Compared numerically part by part;
 * a pre-release sorts before its release. Used to choose an adapter's behaviour for a version
 * (`AgentAdapter.forVersion`) and to say whether a version is verified.
 */

/** The version number in a CLI's version line ("2.1.197 (Claude Code)", "codex-cli 0.169.0"). */
export function versionNumber(line: string | null): string | null {
  if (line === null) return null;
  return line.match(/\d+\.\d+\.\d+(?:[-+][\w.]+)?/)?.[0] ?? (line.trim() || null);
}

/** Negative when a < b, 0 when equal, positive when a > b. Non-numeric parts compare as text. */
export function compareVersions(a: string, b: string): number {
  const [coreA = "", preA] = a.split(/[-+]/, 2);
  const [coreB = "", preB] = b.split(/[-+]/, 2);
  const partsA = coreA.split(".");
  const partsB = coreB.split(".");
  for (let i = 0; i < Math.max(partsA.length, partsB.length); i++) {
    const x = Number(partsA[i] ?? 0);
    const y = Number(partsB[i] ?? 0);
    if (Number.isNaN(x) || Number.isNaN(y)) {
      const text = (partsA[i] ?? "").localeCompare(partsB[i] ?? "");
      if (text) return text;
    } else if (x !== y) return x - y;
  }
  if (preA === preB) return 0;
  if (preA === undefined) return 1;
  if (preB === undefined) return -1;
  return preA.localeCompare(preB);
}

/** Whether `version` is one of the adapter's verified versions (null, unknown: not verified). */
export function isVerified(verified: readonly string[], version: string | null): boolean {
  return version !== null && verified.includes(version);
}

/**
 * The behaviour for `version` out of several, each taking effect from the version that
 * introduced it (`since`, ascending or not): the latest one whose `since` is not after the version.
 * Unknown (null) or older than every `since`: the newest and the oldest respectively.
 */
export function byVersion<T>(version: string | null, steps: ReadonlyArray<{ since: string; value: T }>): T {
  const sorted = [...steps].sort((a, b) => compareVersions(a.since, b.since));
  if (sorted.length === 0) throw new Error("byVersion: no steps");
  if (version === null) return sorted.at(-1)!.value;
  return (sorted.findLast((s) => compareVersions(s.since, version) <= 0) ?? sorted[0]!).value;
}
