import type { AgentAdapter } from "./agent.ts";
import { isVerified } from "./versions.ts";

/**
 * What ag learned of an installed agent CLI by reading its `--help` (GET /v1/agents `probe`):
 * which of the flags its launch relies on it has, whether its ACP entry is there, and whether
 * its hooks can be set up (the capability, and none of those flags missing: they carry the
 * hook settings and the session's identity).
 */
export interface AgentProbe {
  /** When it was probed (ISO). */
  at: string;
  flags: Record<string, boolean>;
  missingFlags: string[];
  acp: boolean;
  hooks: boolean;
}

/** Whether a help text lists `flag` as an option ("--settings <file>", "-c, --config"). */
export function hasFlag(help: string, flag: string): boolean {
  const escaped = flag.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[\\s,\\[(|])${escaped}(?=$|[\\s,=<\\[\\]|).:])`, "m").test(help);
}

/** The probe of one adapter (as it drives the version installed) from its CLI's help text. */
export function probeOf(adapter: AgentAdapter, help: string, at: Date): AgentProbe {
  const flags = Object.fromEntries((adapter.probeFlags ?? []).map((f) => [f, hasFlag(help, f)]));
  const missingFlags = Object.keys(flags).filter((f) => !flags[f]);
  return {
    at: at.toISOString(),
    flags,
    missingFlags,
    acp: adapter.acp !== undefined,
    hooks: adapter.capabilities.includes("hooks") && missingFlags.length === 0,
  };
}

/** The log line of a CLI that lacks flags ag passes it. */
export function missingFlagsWarning(
  adapter: AgentAdapter,
  version: string | null,
  missing: string[],
): string {
  const cli = `${adapter.name}${version ? ` ${version}` : ""}`;
  return `${cli} lacks ${missing.length === 1 ? "a flag" : "flags"} ag launches it with: ${missing.join(", ")} (its --help); its sessions may fail to start or to report`;
}

/**
 * The one log line of a session launched on a version its adapter is not verified on (null when
 * it is verified, or its version is unknown).
 */
export function unverifiedWarning(
  session: string,
  adapter: AgentAdapter,
  version: string | null,
): string | null {
  if (version === null || isVerified(adapter.verifiedVersions, version)) return null;
  const verified = adapter.verifiedVersions.join(", ") || "none";
  return `session ${session}: ${adapter.name} ${version} is not a verified version (verified: ${verified}); running it anyway`;
}
