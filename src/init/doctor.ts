import type { AgentAdapter } from "../agents/agent.ts";
import { checkStarterFiles, STARTER_DIR } from "../agents/claude/starter-files.ts";
import { hasFlag } from "../agents/probe.ts";
import { isVerified, versionNumber } from "../agents/versions.ts";
import { authTokenPath } from "../config/auth-token.ts";
import type { LoadedConfig } from "../config/load.ts";
import { SETTINGS } from "../config/schema.ts";
import { accessMode, servesUnauthenticatedNetwork } from "../server/access.ts";
import { INSECURE_SETTING } from "../server/banner.ts";
import { describeError, type ErrorCode } from "../shared/errors.ts";
import {
  agentInstallCommand,
  currentInstallEnv,
  type InstallEnv,
  installCommand,
} from "../shared/install.ts";

/**
 * `ag doctor`: is this machine and project ready for ag? Each check passes, warns or fails;
 * only a failure makes the command exit 1. A stopped server is a warning: `ag doctor` is often
 * run before the first `ag`.
 */

export type CheckStatus = "ok" | "warn" | "fail";

const DEFAULT_AGENT = SETTINGS.find((s) => s.key === "defaultAgent")!.default as string;

export type DoctorAgent = Pick<
  AgentAdapter,
  "name" | "displayName" | "cli" | "verifiedVersions" | "forVersion" | "probeFlags"
>;

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
  /** A failure's error code, for the exit line of the CLI. */
  code?: ErrorCode;
}

export interface DoctorDeps {
  cwd: string;
  /** The config as ag would load it here; throws when it does not load. */
  loadConfig: () => LoadedConfig;
  /** The first line a program prints for its version flag, or null when it is not installed. */
  version: (command: string, flag: string, pkg?: string) => Promise<string | null>;
  /** What a program prints for `--help` (the flags an agent's launch relies on), null on failure. */
  help?: (command: string) => Promise<string | null>;
  /** The agents ag can run; the config's defaultAgent is the one sessions get when they name none. */
  agents: readonly DoctorAgent[];
  /**
   * GET /v1/health of the server this config points at: its version and status, and its URL;
   * its state store's health, and the session ids of agents running in its tmux windows without
   * a record (GET /v1/untracked), where it tells them.
   */
  health: (loaded: LoadedConfig) => Promise<ServerHealth>;
  /** Where the install commands of missing programs are worked out; this machine by default. */
  installEnv?: InstallEnv;
}

export interface ServerHealth {
  url: string;
  version: string;
  status: string;
  storage?: { healthy: boolean; error: string | null; code: ErrorCode | null };
  untracked?: string[];
}

export async function runDoctor(deps: DoctorDeps): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [...starterChecks(deps.cwd)];
  const [tmux, ...agents] = await Promise.all([
    deps.version("tmux", "-V"),
    ...deps.agents.map((a) => deps.version(a.cli.command, a.cli.versionFlag, a.cli.package)),
  ]);
  const install = (program: "tmux") => installCommand(program, deps.installEnv ?? currentInstallEnv());
  checks.push(
    tmux
      ? { name: "tmux", status: "ok", detail: tmux }
      : {
          name: "tmux",
          status: "fail",
          detail: `tmux is not on PATH; install it: ${install("tmux")}`,
          code: "TMUX_UNAVAILABLE",
        },
  );
  let loaded: LoadedConfig | null = null;
  let configCheck: DoctorCheck;
  try {
    loaded = deps.loadConfig();
    configCheck = {
      name: "config",
      status: loaded.warnings.length ? "warn" : "ok",
      detail: configDetail(loaded),
    };
  } catch (error) {
    configCheck = { name: "config", status: "fail", detail: describeError(error), code: "CONFIG_INVALID" };
  }
  // A config that does not load (its own check fails) leaves the built-in default agent.
  const defaultAgent = loaded?.config.defaultAgent ?? DEFAULT_AGENT;
  const helps = await Promise.all(
    deps.agents.map((a, i) => (agents[i] && deps.help ? deps.help(a.cli.command) : null)),
  );
  deps.agents.forEach((agent, i) => {
    checks.push(agentCheck(agent, agents[i] ?? null, agent.name === defaultAgent, helps[i] ?? null));
  });
  checks.push(configCheck);
  if (loaded) checks.push(accessCheck(loaded));
  checks.push(...(loaded ? await serverChecks(deps, loaded) : [notChecked]));
  return checks;
}

/**
 * An agent CLI: the default agent missing fails (sessions that name no agent cannot start); any
 * other missing is a warning (only sessions asking for it need it). An installed version its
 * adapter is not verified on, or one whose help lacks flags ag launches it with, is a warning:
 * its sessions run all the same.
 */
function agentCheck(
  agent: DoctorAgent,
  installed: string | null,
  isDefault: boolean,
  help: string | null,
): DoctorCheck {
  const name = `agent ${agent.name}`;
  if (installed === "")
    return {
      name,
      status: "warn",
      detail: `${agent.displayName} is on PATH but did not tell its version (${agent.cli.command} ${agent.cli.versionFlag} failed or took over 5 s)`,
    };
  if (installed) {
    const version = versionNumber(installed);
    const verified = version !== null && isVerified(agent.verifiedVersions, version);
    const notes = verified ? ["verified"] : [`unverified (verified: ${agent.verifiedVersions.join(", ")})`];
    const probeFlags = agent.forVersion(version).probeFlags ?? [];
    const missing = help === null ? [] : probeFlags.filter((f) => !hasFlag(help, f));
    if (missing.length) notes.push(`its --help lacks ${missing.join(", ")}`);
    const status = verified && missing.length === 0 ? "ok" : "warn";
    return { name, status, detail: `${agent.displayName} ${version ?? installed}: ${notes.join("; ")}` };
  }
  const detail = `${agent.cli.command} is not on PATH; install ${agent.displayName}: ${agentInstallCommand(agent.cli.package)}`;
  return isDefault
    ? { name, status: "fail", detail: `${detail} (the default agent)`, code: "AGENT_UNAVAILABLE" }
    : { name, status: "warn", detail };
}

export function doctorPassed(checks: readonly DoctorCheck[]): boolean {
  return checks.every((c) => c.status !== "fail");
}

function starterChecks(cwd: string): DoctorCheck[] {
  const files = checkStarterFiles(cwd);
  if (files.length === 0) {
    return [
      { name: "starter files", status: "ok", detail: `none under ${STARTER_DIR} (ag init --list-templates)` },
    ];
  }
  return files.map((f) => ({
    name: `${f.kind} ${f.path}`,
    status: f.ok ? "ok" : "fail",
    detail: f.problem ?? "valid",
    ...(f.ok ? {} : { code: "VALIDATION_ERROR" as const }),
  }));
}

/** The settings that differ from the defaults, and where each came from. */
function configDetail(loaded: LoadedConfig): string {
  const changed = Object.entries(loaded.sources).filter(([, source]) => !source.startsWith("default"));
  const from = changed.length
    ? changed.map(([key, source]) => `${key} from ${source}`).join("; ")
    : "all defaults";
  return [`loads (${from})`, ...loaded.warnings].join("; ");
}

/** Who a server started with this config lets in; serving the network without a token warns. */
export function accessCheck(loaded: LoadedConfig): DoctorCheck {
  const { config, sources } = loaded;
  const name = "access";
  const file = authTokenPath(config.stateDir);
  if (servesUnauthenticatedNetwork(config)) {
    return {
      name,
      status: "warn",
      detail:
        `!!! ${INSECURE_SETTING} is on: ag serves ${config.host} WITHOUT authentication beyond loopback ` +
        `(only requests that change state without an Origin need ag's token in ${file})`,
    };
  }
  if (accessMode(config) === "local") {
    return {
      name,
      status: "ok",
      detail: `local tool on ${config.host}: loopback Host names and ag's own Origin only; requests that change state without an Origin need ag's token in ${file}`,
    };
  }
  if (config.authToken !== "" && !config.authTokenGenerated) {
    return { name, status: "ok", detail: `every request needs the token (from ${sources.authToken})` };
  }
  return {
    name,
    status: "ok",
    detail: `listening on ${config.host} with no token configured: every request needs ag's generated token in ${file}`,
  };
}

/**
 * The server: reachable (else a warning), its state store taking writes (else a failure: every
 * change is refused), and agents left in its windows without a record (a warning: end them).
 */
async function serverChecks(deps: DoctorDeps, loaded: LoadedConfig): Promise<DoctorCheck[]> {
  let health: ServerHealth;
  try {
    health = await deps.health(loaded);
  } catch (error) {
    return [{ name: "server", status: "warn", detail: `${describeError(error)}` }];
  }
  const about = `ag ${health.version} at ${health.url} (${health.status})`;
  const store = health.storage;
  const checks: DoctorCheck[] = [
    store && !store.healthy
      ? {
          name: "server",
          status: "fail",
          detail: `${about}: its state store refuses writes: ${store.error}`,
          code: store.code ?? "STORAGE_UNAVAILABLE",
        }
      : { name: "server", status: "ok", detail: about },
  ];
  if (health.untracked) checks.push(untrackedCheck(health.untracked));
  return checks;
}

function untrackedCheck(ids: readonly string[]): DoctorCheck {
  if (ids.length === 0) return { name: "untracked agents", status: "ok", detail: "none" };
  return {
    name: "untracked agents",
    status: "warn",
    detail: `${ids.length} agent(s) run in ag's tmux windows without a record (${ids.join(", ")}); adopt them: ag doctor --adopt-untracked, or end them: ag doctor --end-untracked`,
  };
}

const notChecked: DoctorCheck = {
  name: "server",
  status: "warn",
  detail: "not checked: the config does not load",
};
