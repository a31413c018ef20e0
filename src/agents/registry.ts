import { basename } from "node:path";
import { AgError } from "../shared/errors.ts";
import { agentNotFound } from "../shared/install.ts";
import type { ProgramOptions } from "../shared/program.ts";
import type { RunAs } from "../shared/run-as.ts";
import type { AgentAdapter } from "./agent.ts";
import type { AgentInfo } from "./info.ts";
import { splitCommand } from "./launch-files.ts";
import { type AgentProbe, missingFlagsWarning, probeOf } from "./probe.ts";
import { isVerified, versionNumber } from "./versions.ts";
import type { PriceTable } from "./vocabulary.ts";

/**
 * A CLI's version (its npm package's manifest, or the first line it prints for its version flag),
 * or null when it is not installed. `options.path`: the PATH to find it on (an agent's own).
 */
export type VersionProbe = (
  command: string,
  flag: string,
  pkg: string,
  options?: ProgramOptions,
) => Promise<string | null>;

/** What a CLI prints for `--help`, or null when it is not installed or does not answer. */
export type HelpProbe = (command: string) => Promise<string | null>;

/** Every agent ag knows, by the id sessions record. */
export interface AgentRegistry {
  readonly defaultAgent: string;
  /**
   * The adapter of an agent id, or UNKNOWN_AGENT (400). Given a version (a session's
   * `agentVersion`, null when unknown): the adapter as it drives that version (`forVersion`).
   * Given the OS user the session's agent runs as (runAs): the adapter of that user's agents
   * (their HOME, their own config and transcripts), not of ag's.
   */
  get(id: string, version?: string | null, owner?: RunAs | null): AgentAdapter;
  all(): readonly AgentAdapter[];
  /** Every agent's built-in prices, together. */
  prices(): PriceTable;
  /** Each agent and whether its CLI is on this machine (probed once a minute at most). */
  describe(): Promise<AgentInfo[]>;
  /**
   * The version of the CLI a launch will run: the agent's command, or the agentCommand's program
   * when it is that CLI (by name), found on the agent's PATH; null when it cannot be told (another
   * program, not installed, no answer in time).
   */
  launchVersion(id: string, launch: { agentCommand: string | null; path?: string }): Promise<string | null>;
  /**
   * Why the program a launch runs is not there — the agent CLI, with the command that installs
   * it, or the agentCommand's own program — or null when it is found on the agent's PATH.
   */
  notInstalled(id: string, launch: { agentCommand: string | null; path?: string }): string | null;
  /**
   * Reads each installed agent's `--help` for the flags its launch relies on (one at a time; the
   * probe functions remember each binary's answers), logging the missing ones.
   */
  probeClis(): Promise<void>;
}

const PROBE_TTL_MS = 60_000;
/** A launch waits this long at most for its CLI's version (a relaunch of the same binary: none). */
const LAUNCH_VERSION_TIMEOUT_MS = 3000;

export function createAgentRegistry(
  adapters: readonly AgentAdapter[],
  options: {
    defaultAgent?: string;
    probe: VersionProbe;
    /** Reads a CLI's help; none: no agent is probed (`probe` stays null). */
    help?: HelpProbe;
    /** Where a CLI found lacking flags is told (the log). */
    warn?: (line: string) => void;
    /** Finds a program on a PATH (ag's own when none is given); Bun.which unless given. */
    which?: (program: string, path?: string) => string | null;
    now?: () => Date;
    /** The adapters of agents run as another OS user (made once per user); none: ag's own. */
    forOwner?: (owner: RunAs) => readonly AgentAdapter[];
  },
): AgentRegistry {
  const byId = new Map(adapters.map((a) => [a.name, a]));
  const byOwner = new Map<number, Map<string, AgentAdapter>>();
  /** The adapters of `owner`'s agents (ag's own without one). */
  function adaptersOf(owner: RunAs | null | undefined): Map<string, AgentAdapter> {
    if (!owner || !options.forOwner) return byId;
    let own = byOwner.get(owner.uid);
    if (!own) {
      own = new Map(options.forOwner(owner).map((a) => [a.name, a]));
      byOwner.set(owner.uid, own);
    }
    return own;
  }
  const defaultAgent = options.defaultAgent ?? adapters[0]!.name;
  if (!byId.has(defaultAgent)) throw new AgError("CONFIG_INVALID", `unknown default agent ${defaultAgent}`);
  let probed: { at: number; versions: Promise<Array<string | null>> } | null = null;
  /** Each agent's probe, with the version it was of (a new version is probed again). */
  const probes = new Map<string, { version: string | null; probe: AgentProbe }>();
  const warned = new Set<string>();
  let probing: Promise<void> | null = null;

  const which =
    options.which ?? ((program: string, path?: string) => Bun.which(program, path ? { PATH: path } : {}));
  const installedVersion = (a: AgentAdapter) =>
    options.probe(a.cli.command, a.cli.versionFlag, a.cli.package).catch(() => null);

  async function probeOne(adapter: AgentAdapter): Promise<void> {
    const version = versionNumber(await installedVersion(adapter));
    const help = version === null ? null : await options.help!(adapter.cli.command).catch(() => null);
    if (version === null || help === null) {
      probes.delete(adapter.name);
      return;
    }
    const probe = probeOf(adapter.forVersion(version), help, options.now?.() ?? new Date());
    probes.set(adapter.name, { version, probe });
    const said = `${adapter.name} ${version} ${probe.missingFlags.join(" ")}`;
    if (probe.missingFlags.length && !warned.has(said)) {
      warned.add(said);
      options.warn?.(missingFlagsWarning(adapter, version, probe.missingFlags));
    }
  }

  const registry: AgentRegistry = {
    defaultAgent,
    get(id, version, owner) {
      const adapter = adaptersOf(owner).get(id);
      if (!adapter)
        throw new AgError(
          "UNKNOWN_AGENT",
          `unknown agent "${id}"; known agents: ${[...byId.keys()].join(", ")}`,
        );
      return version === undefined ? adapter : adapter.forVersion(version);
    },
    all: () => adapters,
    prices: () => Object.assign({}, ...adapters.map((a) => a.prices)),
    async describe() {
      if (!probed || Date.now() - probed.at > PROBE_TTL_MS) {
        probed = { at: Date.now(), versions: Promise.all(adapters.map(installedVersion)) };
      }
      const answers = await probed.versions;
      // "" from the probe: the CLI is there but told no version (in time).
      const versions = answers.map((v) => versionNumber(v ?? null));
      // A CLI upgraded since its probe is probed again, in the background.
      if (adapters.some((a, i) => versions[i] && probes.get(a.name)?.version !== versions[i]))
        void registry.probeClis();
      return adapters.map((a, i) => {
        const version = versions[i] ?? null;
        const probe = probes.get(a.name);
        return {
          id: a.name,
          name: a.displayName,
          installed: answers[i] !== null,
          version,
          verifiedVersions: [...a.verifiedVersions],
          verified: version === null ? null : isVerified(a.verifiedVersions, version),
          probe: probe && probe.version === version ? probe.probe : null,
          drivers: [...a.drivers],
          capabilities: [...a.capabilities],
          permissionModes: [...a.permissionModes],
          command: a.cli.command,
          package: a.cli.package,
          default: a.name === defaultAgent,
        };
      });
    },
    async launchVersion(id, launch) {
      const { cli } = registry.get(id);
      const first = launch.agentCommand ? splitCommand(launch.agentCommand)[0] : cli.command;
      // A wrapper (`sh -c '… exec claude'`, a script) says nothing of its own: the session is of
      // this agent, so the CLI it most likely runs is the one on the session's PATH.
      const program = first && basename(first) === cli.command ? first : cli.command;
      const reading = options
        .probe(program, cli.versionFlag, cli.package, {
          path: launch.path,
          timeoutMs: LAUNCH_VERSION_TIMEOUT_MS,
        })
        .catch(() => null);
      // A read already under way (GET /v1/agents) is shared, but never waited for longer.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), LAUNCH_VERSION_TIMEOUT_MS);
      });
      const line = await Promise.race([reading, late]).finally(() => clearTimeout(timer));
      return versionNumber(line);
    },
    notInstalled(id, launch) {
      const { cli } = registry.get(id);
      const program = launch.agentCommand ? splitCommand(launch.agentCommand)[0] : cli.command;
      if (!program || which(program, launch.path) !== null) return null;
      return basename(program) === cli.command
        ? agentNotFound(cli)
        : `${program} (the session's agentCommand) is not found${program.includes("/") ? "" : " on the agent's PATH"}`;
    },
    probeClis() {
      if (!options.help) return Promise.resolve();
      probing ??= (async () => {
        for (const adapter of adapters) await probeOne(adapter);
      })().finally(() => {
        probing = null;
      });
      return probing;
    },
  };
  return registry;
}
