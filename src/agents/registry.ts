import { AgError } from "../shared/errors.ts";
import type { AgentAdapter, AgentCapability, DriverName } from "./agent.ts";
import { versionNumber } from "./versions.ts";
import type { PermissionMode, PriceTable } from "./vocabulary.ts";

/** One agent as GET /v1/agents shows it (CONTRACT §10). */
export interface AgentInfo {
  id: string;
  name: string;
  installed: boolean;
  version: string | null;
  drivers: DriverName[];
  capabilities: AgentCapability[];
  permissionModes: PermissionMode[];
  /** The CLI ag runs and the npm package that installs it. */
  command: string;
  package: string;
  default: boolean;
}

/**
 * A CLI's version (its npm package's manifest, or the first line it prints for its version flag),
 * or null when it is not installed.
 */
export type VersionProbe = (command: string, flag: string, pkg: string) => Promise<string | null>;

/** Every agent ag knows, by the id sessions record. */
export interface AgentRegistry {
  readonly defaultAgent: string;
  /** The adapter of an agent id, or UNKNOWN_AGENT (400). */
  get(id: string): AgentAdapter;
  all(): readonly AgentAdapter[];
  /** Every agent's built-in prices, together. */
  prices(): PriceTable;
  /** Each agent and whether its CLI is on this machine (probed once a minute at most). */
  describe(): Promise<AgentInfo[]>;
}

const PROBE_TTL_MS = 60_000;

export function createAgentRegistry(
  adapters: readonly AgentAdapter[],
  options: { defaultAgent?: string; probe: VersionProbe },
): AgentRegistry {
  const byId = new Map(adapters.map((a) => [a.name, a]));
  const defaultAgent = options.defaultAgent ?? adapters[0]!.name;
  if (!byId.has(defaultAgent)) throw new AgError("CONFIG_INVALID", `unknown default agent ${defaultAgent}`);
  let probed: { at: number; versions: Promise<Array<string | null>> } | null = null;

  const registry: AgentRegistry = {
    defaultAgent,
    get(id) {
      const adapter = byId.get(id);
      if (!adapter)
        throw new AgError(
          "UNKNOWN_AGENT",
          `unknown agent "${id}"; known agents: ${[...byId.keys()].join(", ")}`,
        );
      return adapter;
    },
    all: () => adapters,
    prices: () => Object.assign({}, ...adapters.map((a) => a.prices)),
    async describe() {
      if (!probed || Date.now() - probed.at > PROBE_TTL_MS) {
        const versions = Promise.all(
          adapters.map((a) =>
            options.probe(a.cli.command, a.cli.versionFlag, a.cli.package).catch(() => null),
          ),
        );
        probed = { at: Date.now(), versions };
      }
      const versions = await probed.versions;
      return adapters.map((a, i) => ({
        id: a.name,
        name: a.displayName,
        installed: versions[i] !== null,
        version: versionNumber(versions[i] ?? null),
        drivers: [...a.drivers],
        capabilities: [...a.capabilities],
        permissionModes: [...a.permissionModes],
        command: a.cli.command,
        package: a.cli.package,
        default: a.name === defaultAgent,
      }));
    },
  };
  return registry;
}
