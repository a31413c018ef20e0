import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The command that installs a program ag needs, for the messages that say it is missing
 * (start-up, /v1/health, `ag doctor`, the test preflight). Pure: the platform and which package
 * managers exist are parameters.
 */

export type Needed = "tmux" | "chromium";

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

/** System packages by package manager; the first manager found on PATH wins. */
const SYSTEM_PACKAGES: ReadonlyArray<{
  manager: string;
  install: string;
  names: Record<"tmux" | "chromium", string>;
}> = [
  { manager: "apt-get", install: "apt-get install -y", names: { tmux: "tmux", chromium: "chromium" } },
  { manager: "dnf", install: "dnf install -y", names: { tmux: "tmux", chromium: "chromium" } },
  { manager: "apk", install: "apk add", names: { tmux: "tmux", chromium: "chromium" } },
  { manager: "pacman", install: "pacman -S --noconfirm", names: { tmux: "tmux", chromium: "chromium" } },
  { manager: "brew", install: "brew install", names: { tmux: "tmux", chromium: "--cask chromium" } },
];

/** `apt-get install -y tmux`, `sudo dnf install -y tmux`, `brew install tmux`… */
export function installCommand(program: Needed, env: InstallEnv): string {
  const found = SYSTEM_PACKAGES.find((p) => env.which(p.manager));
  if (!found) {
    return env.platform === "darwin" ? `brew install ${program}` : `apt-get install -y ${program}`;
  }
  // Homebrew refuses to run as root and never wants sudo.
  const sudo = env.isRoot || found.manager === "brew" ? "" : "sudo ";
  return `${sudo}${found.install} ${found.names[program]}`;
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

/**
 * A program's version: from the manifest of the npm package it was installed by, when `pkg`
 * names it (a file read; some CLIs take seconds to boot for `--version`), else by running
 * `<command> <flag>` with a time limit. Null when the program is missing or fails.
 */
export async function programVersion(command: string, flag: string, pkg?: string): Promise<string | null> {
  // PATH as it is now: Bun.which alone reads the PATH the process started with.
  const path = Bun.which(command, { PATH: process.env.PATH ?? "" });
  if (!path) return null;
  const manifest = pkg ? packageVersion(path, pkg) : null;
  if (manifest) return manifest;
  const proc = Bun.spawn([path, flag], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(), 5000);
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearTimeout(timer);
  return code === 0 ? out.trim().split("\n")[0] || path : null;
}

/** The version in the package.json named `pkg` above the program's real path (npm's bin links). */
export function packageVersion(program: string, pkg: string): string | null {
  let dir: string;
  try {
    dir = dirname(realpathSync(program));
  } catch {
    return null;
  }
  for (let up = 0; up < 6; up++, dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (manifest.name === pkg && typeof manifest.version === "string") return manifest.version;
    } catch {
      // no manifest here: one folder up
    }
    if (dirname(dir) === dir) break;
  }
  return null;
}
