/**
 * The command that installs a program ag needs, for the messages that say it is missing
 * (start-up, /v1/health, `ag doctor`, the test preflight). Pure: the platform and which package
 * managers exist are parameters.
 */

/** postgresql: only the fleet's tests need it (a fleet's database is the user's own server). */
export type Needed = "tmux" | "chromium" | "postgresql";

export interface InstallEnv {
  platform: NodeJS.Platform;
  /** Path of a command on PATH, or null. */
  which: (command: string) => string | null;
  /** Root needs no sudo. */
  isRoot: boolean;
}

/** Every agent CLI is an npm package, installed the same way wherever npm runs. */
export function agentInstallCommand(npmPackage: string): string {
  return `npm install -g ${npmPackage}`;
}

/** "the agent CLI not found (claude); install it: npm install -g @anthropic-ai/claude-code" */
export function agentNotFound(cli: { command: string; package: string }): string {
  return `the agent CLI not found (${cli.command}); install it: ${agentInstallCommand(cli.package)}`;
}

/**
 * System packages by package manager; the first manager found on PATH wins. A program's package is
 * named as the program is unless `names` says otherwise.
 */
const SYSTEM_PACKAGES: ReadonlyArray<{
  manager: string;
  install: string;
  names?: Partial<Record<Needed, string>>;
}> = [
  { manager: "apt-get", install: "apt-get install -y" },
  { manager: "dnf", install: "dnf install -y", names: { postgresql: "postgresql-server" } },
  { manager: "apk", install: "apk add" },
  { manager: "pacman", install: "pacman -S --noconfirm" },
  { manager: "brew", install: "brew install", names: { chromium: "--cask chromium" } },
];

/** `apt-get install -y tmux`, `sudo dnf install -y tmux`, `brew install tmux`… */
export function installCommand(program: Needed, env: InstallEnv): string {
  const found = SYSTEM_PACKAGES.find((p) => env.which(p.manager));
  if (!found) {
    return env.platform === "darwin" ? `brew install ${program}` : `apt-get install -y ${program}`;
  }
  // Homebrew refuses to run as root and never wants sudo.
  const sudo = env.isRoot || found.manager === "brew" ? "" : "sudo ";
  return `${sudo}${found.install} ${found.names?.[program] ?? program}`;
}

/** The running machine's InstallEnv. */
export function currentInstallEnv(): InstallEnv {
  return {
    platform: process.platform,
    which: (c) => Bun.which(c, { PATH: process.env.PATH ?? "" }),
    isRoot: process.getuid?.() === 0,
  };
}

/** "tmux not found (tmux); install it: sudo apt-get install -y tmux" */
export function notFound(program: Needed, binary: string, env: InstallEnv = currentInstallEnv()): string {
  return `${program} not found (${binary}); install it: ${installCommand(program, env)}`;
}
