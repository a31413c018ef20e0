import type { LoadedConfig } from "../config/load.ts";
import { describeError, type ErrorCode } from "../shared/errors.ts";
import { currentInstallEnv, type InstallEnv, installCommand } from "../shared/install.ts";
import { checkStarterFiles } from "./starter-files.ts";

/**
 * `ag doctor`: is this machine and project ready for ag? Each check passes, warns or fails;
 * only a failure makes the command exit 1. A stopped server is a warning: `ag doctor` is often
 * run before the first `ag`.
 */

export type CheckStatus = "ok" | "warn" | "fail";

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
  version: (command: string, flag: string) => Promise<string | null>;
  /** GET /v1/health of the server this config points at: its version and status, and its URL. */
  health: (loaded: LoadedConfig) => Promise<{ url: string; version: string; status: string }>;
  /** Where the install commands of missing programs are worked out; this machine by default. */
  installEnv?: InstallEnv;
}

/** The agent CLI ag launches by default (src/agents/claude/launch.ts). */
const AGENT_CLI = "claude";

export async function runDoctor(deps: DoctorDeps): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [...starterChecks(deps.cwd)];
  const [tmux, agent] = await Promise.all([deps.version("tmux", "-V"), deps.version(AGENT_CLI, "--version")]);
  const install = (program: "tmux" | "claude") =>
    installCommand(program, deps.installEnv ?? currentInstallEnv());
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
  checks.push(
    agent
      ? { name: "agent CLI", status: "ok", detail: `${AGENT_CLI} ${agent.replace(/^claude\s+/i, "")}` }
      : {
          name: "agent CLI",
          status: "fail",
          detail: `${AGENT_CLI} is not on PATH; install Claude Code: ${install("claude")}`,
          code: "AGENT_UNAVAILABLE",
        },
  );
  let loaded: LoadedConfig | null = null;
  try {
    loaded = deps.loadConfig();
    checks.push({
      name: "config",
      status: loaded.warnings.length ? "warn" : "ok",
      detail: configDetail(loaded),
    });
  } catch (error) {
    checks.push({ name: "config", status: "fail", detail: describeError(error), code: "CONFIG_INVALID" });
  }
  checks.push(loaded ? await serverCheck(deps, loaded) : notChecked);
  return checks;
}

export function doctorPassed(checks: readonly DoctorCheck[]): boolean {
  return checks.every((c) => c.status !== "fail");
}

function starterChecks(cwd: string): DoctorCheck[] {
  const files = checkStarterFiles(cwd);
  if (files.length === 0) {
    return [
      { name: "starter files", status: "ok", detail: "none under .claude/ (ag init --list-templates)" },
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

async function serverCheck(deps: DoctorDeps, loaded: LoadedConfig): Promise<DoctorCheck> {
  try {
    const health = await deps.health(loaded);
    return {
      name: "server",
      status: "ok",
      detail: `ag ${health.version} at ${health.url} (${health.status})`,
    };
  } catch (error) {
    return { name: "server", status: "warn", detail: `${describeError(error)}` };
  }
}

const notChecked: DoctorCheck = {
  name: "server",
  status: "warn",
  detail: "not checked: the config does not load",
};

/** Runs `<command> <flag>` with a time limit; null when the program is missing or fails. */
export async function programVersion(command: string, flag: string): Promise<string | null> {
  // PATH as it is now: Bun.which alone reads the PATH the process started with.
  const path = Bun.which(command, { PATH: process.env.PATH ?? "" });
  if (!path) return null;
  const proc = Bun.spawn([path, flag], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(), 5000);
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearTimeout(timer);
  return code === 0 ? out.trim().split("\n")[0] || path : null;
}
