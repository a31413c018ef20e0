/**
 * `npm test`'s first step: the suite needs tmux (every session test), Chromium (the browser
 * tests) and PostgreSQL's server binaries (the fleet tests). Checked here, before anything runs, instead of failing deep inside the suite. What is
 * missing is installed with apt-get the way .ci/run does it, when this user is root or sudo works
 * without a password; otherwise the script stops at once with the exact command to run. Then the
 * agent CLIs that live outside the lock and the further pinned versions of agents
 * (scripts/agent-tools.ts) are installed if missing.
 */
import { findChromium } from "../src/screenshot/index.ts";
import { currentInstallEnv, type InstallEnv, installCommand } from "../src/shared/install.ts";
import { postgresBinDir } from "../tests/helpers/postgres.ts";
import { installPins } from "./agent-tools.ts";

export type TestNeed = "tmux" | "chromium" | "postgresql";

export interface PreflightFacts {
  missing: TestNeed[];
  isRoot: boolean;
  /** `sudo -n true` succeeds: sudo runs without asking for a password. */
  sudoWorks: boolean;
  hasAptGet: boolean;
  install: InstallEnv;
}

export type PreflightPlan =
  | { kind: "ok" }
  | { kind: "install"; commands: string[][] }
  | { kind: "stop"; message: string };

/** Pure: what to do about the programs the test suite lacks. */
export function planPreflight(facts: PreflightFacts): PreflightPlan {
  if (facts.missing.length === 0) return { kind: "ok" };
  if (facts.hasAptGet && (facts.isRoot || facts.sudoWorks)) {
    const sudo = facts.isRoot ? [] : ["sudo", "-n"];
    return {
      kind: "install",
      commands: [
        [...sudo, "apt-get", "update", "-qq"],
        [
          ...sudo,
          "env",
          "DEBIAN_FRONTEND=noninteractive",
          "apt-get",
          "install",
          "-y",
          "-qq",
          ...facts.missing,
        ],
      ],
    };
  }
  return { kind: "stop", message: stopMessage(facts.missing, facts.install) };
}

export function stopMessage(missing: TestNeed[], install: InstallEnv): string {
  const lines = missing.map((m) => `  ${installCommand(m, install)}`);
  return [
    `npm test needs ${missing.join(" and ")}, which this machine lacks, and cannot install ${missing.length > 1 ? "them" : "it"} itself (no root, no password-less sudo, or no apt-get).`,
    "Run, then npm test again:",
    ...lines,
  ].join("\n");
}

function missingNow(): TestNeed[] {
  const PATH = process.env.PATH ?? "";
  const missing: TestNeed[] = [];
  if (!Bun.which("tmux", { PATH })) missing.push("tmux");
  if (!findChromium(process.env.SVC_CHROMIUM_PATH || null, (c) => Bun.which(c, { PATH })).path) {
    missing.push("chromium");
  }
  // The fleet tests start their own server from Debian's binaries (tests/helpers/postgres.ts).
  if (!postgresBinDir()) missing.push("postgresql");
  return missing;
}

function facts(): PreflightFacts {
  const install = currentInstallEnv();
  const sudoWorks =
    !install.isRoot &&
    install.which("sudo") !== null &&
    Bun.spawnSync(["sudo", "-n", "true"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" })
      .exitCode === 0;
  return {
    missing: missingNow(),
    isRoot: install.isRoot,
    sudoWorks,
    hasAptGet: install.which("apt-get") !== null,
    install,
  };
}

if (import.meta.main) {
  const found = facts();
  const plan = planPreflight(found);
  if (plan.kind === "install") {
    console.error(`preflight: installing ${found.missing.join(" and ")} for the test suite`);
    for (const command of plan.commands) {
      if (Bun.spawnSync(command, { stdin: "ignore", stdout: "inherit", stderr: "inherit" }).exitCode !== 0)
        break;
    }
    const still = missingNow();
    if (still.length) {
      console.error(stopMessage(still, found.install));
      process.exit(1);
    }
  } else if (plan.kind === "stop") {
    console.error(plan.message);
    process.exit(1);
  }
  try {
    const installed = installPins();
    if (installed.length) console.error(`preflight: installed ${installed.join(", ")} into .tools/`);
  } catch (error) {
    console.error(`preflight: ${(error as Error).message}`);
    process.exit(1);
  }
}
