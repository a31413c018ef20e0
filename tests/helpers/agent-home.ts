import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  classifyScreen,
  inputBoxText,
  type ScreenDialect,
  type ScreenState,
} from "../../src/agents/claude/screen.ts";
import { isAlive } from "./stream.ts";

/**
 * The world of one real Claude Code process in a test: a seeded HOME that starts straight at the
 * prompt, the environment that points it at the mock model, the binary, and a tmux pane driver.
 * No bun:test import here: scripts/capture-fixtures.ts uses this file too.
 */

export const TEST_API_KEY = "sk-ant-test-harness-0000000000000000";
const REPO = join(import.meta.dir, "..", "..");

export interface SeedOptions {
  /** Directories to mark trusted (inherited by every subdirectory). */
  trust: string[];
  apiKey?: string;
  /** Skip the bypass-permissions disclaimer (root also needs IS_SANDBOX=1). */
  bypassOk?: boolean;
  /** Cuts the spinner's CPU, but hides text while it streams (an early interrupt then restores the prompt). */
  reducedMotion?: boolean;
  /** Merged into .claude/settings.json. */
  settings?: Record<string, unknown>;
}

/** Writes HOME/.claude.json and HOME/.claude/settings.json so that no first-run screen shows. */
export function seedAgentHome(
  home: string,
  options: SeedOptions,
): { configFile: string; settingsFile: string } {
  const apiKey = options.apiKey ?? TEST_API_KEY;
  mkdirSync(join(home, ".claude"), { recursive: true });
  mkdirSync(join(home, "tmp"), { recursive: true });
  const trusted = Object.fromEntries(
    options.trust.map((d) => [resolve(d), { hasTrustDialogAccepted: true }]),
  );
  const config = {
    hasCompletedOnboarding: true, // skips the theme picker and the connectivity check
    customApiKeyResponses: { approved: [apiKey.slice(-20)], rejected: [] }, // skips "use this API key?"
    projects: trusted, // skips the folder-trust dialog
    autoUpdates: false,
    officialMarketplaceAutoInstallAttempted: true, // no attempt to clone the plugin marketplace
  };
  const configFile = join(home, ".claude.json");
  const existing = existsSync(configFile) ? JSON.parse(readFileSync(configFile, "utf8")) : {};
  const merged = { ...existing, ...config, projects: { ...existing.projects, ...trusted } };
  writeFileSync(configFile, JSON.stringify(merged, null, 2));

  const settings: Record<string, unknown> = {};
  if (options.reducedMotion) settings.prefersReducedMotion = true;
  if (options.bypassOk) settings.skipDangerousModePermissionPrompt = true;
  const settingsFile = join(home, ".claude", "settings.json");
  writeFileSync(settingsFile, JSON.stringify({ ...settings, ...options.settings }, null, 2));
  return { configFile, settingsFile };
}

/** The variables the harness's launch.sh sets: an isolated HOME, the mock, no outbound traffic. */
export function agentEnv(home: string, mockUrl: string, apiKey = TEST_API_KEY): Record<string, string> {
  return {
    HOME: home,
    ANTHROPIC_BASE_URL: mockUrl,
    ANTHROPIC_API_KEY: apiKey,
    // Else Claude writes $TMPDIR/claude-<uid>/<encoded cwd>/<session>/tasks.
    CLAUDE_CODE_TMPDIR: join(home, "tmp"),
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
}

/**
 * The native Claude Code binary: $CLAUDE_BIN, else the one installed in the repository's
 * node_modules (the pinned devDependency).
 */
export function claudeBinary(): string {
  const path = process.env.CLAUDE_BIN || claudeBinaryIn(join(REPO, "node_modules"));
  if (path && existsSync(path) && statSync(path).size > 100_000) return path;
  throw new Error("the native Claude Code binary is missing: npm install (or set CLAUDE_BIN)");
}

/**
 * The native Claude Code binary of the package installed in `modules` (a node_modules folder):
 * its platform package (@anthropic-ai/claude-code-<os>-<arch>), else .bin/claude when it is the
 * real binary (with npm's install scripts blocked it is a ~500-byte stub); null when none is.
 */
export function claudeBinaryIn(modules: string): string | null {
  const arch = process.arch === "x64" || process.arch === "arm64" ? process.arch : String(process.arch);
  const scope = join(modules, "@anthropic-ai");
  const candidates = [
    join(scope, `claude-code-${process.platform}-${arch}`, "claude"),
    join(scope, `claude-code-${process.platform}-${arch}-musl`, "claude"),
    join(modules, ".bin", "claude"),
  ];
  return candidates.find((path) => existsSync(path) && statSync(path).size > 100_000) ?? null;
}

let version: string | null = null;

/** The version of the Claude Code binary the tests run (claudeBinary()), read once: "2.1.328". */
export function claudeVersion(): string {
  if (version) return version;
  const printed = Bun.spawnSync([claudeBinary(), "--version"], { stdout: "pipe", stderr: "ignore" });
  const found = printed.stdout.toString().match(/\d+\.\d+\.\d+/)?.[0];
  if (!found) throw new Error(`${claudeBinary()} --version printed no version`);
  version = found;
  return found;
}

export interface AgentPaneOptions {
  /** A private socket name (`ag-test-…`); its server belongs to the caller. */
  socket: string;
  name?: string;
  workDir: string;
  env: Record<string, string>;
  args?: string[];
  cols?: number;
  rows?: number;
  /** How the running version's screens read (src/agents/claude/versions.ts); default 2.1.197's. */
  dialect?: ScreenDialect;
}

export interface AgentPane {
  readonly socket: string;
  readonly target: string;
  capture(options?: { ansi?: boolean }): string;
  read(): ScreenState;
  /** Polls the screen every 100 ms until `ready` holds; throws with the last screen after the deadline. */
  waitFor(
    ready: (state: ScreenState, text: string) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<{ state: ScreenState; text: string }>;
  type(text: string): void;
  keys(...keys: string[]): void;
  /** Types, waits for the box to show it, Enter as its own key; once more if the box kept it. */
  submit(text: string): Promise<void>;
  /**
   * Kills this socket's server (only), removes its socket file, and waits for the agent to exit:
   * it writes its transcript on the way out and would recreate a HOME removed too early.
   */
  kill(): Promise<void>;
}

/**
 * Starts the agent in a detached 120x40 window on a private tmux server whose focus-events and
 * remain-on-exit are on before the agent starts (else it prints a "focus-events off" hint line;
 * remain-on-exit keeps the exit screen and `#{pane_dead}`).
 */
export function launchAgentPane(options: AgentPaneOptions): AgentPane {
  const target = options.name ?? "agent";
  const run = (...args: string[]) => {
    const result = Bun.spawnSync(["tmux", "-L", options.socket, "-f", "/dev/null", ...args], {
      stderr: "pipe",
    });
    if (result.exitCode !== 0) throw new Error(`tmux ${args[0]}: ${result.stderr.toString().trim()}`);
    return result.stdout.toString();
  };
  // The outer environment must not steer the agent (a developer's own Claude settings, keys).
  const unset = Object.keys(process.env)
    .filter((k) => /^(CLAUDE|ANTHROPIC)/.test(k) && !(k in options.env))
    .flatMap((k) => ["-u", k]);
  const vars = Object.entries(options.env).map(([k, v]) => `${k}=${v}`);
  const command = ["env", ...unset, ...vars, claudeBinary(), ...(options.args ?? [])];
  const size = ["-x", String(options.cols ?? 120), "-y", String(options.rows ?? 40)];
  const commands = [
    ["start-server"],
    ["set-option", "-g", "focus-events", "on"],
    ["set-option", "-g", "remain-on-exit", "on"],
    ["set-option", "-g", "default-terminal", "tmux-256color"],
    ["new-session", "-d", "-s", target, ...size, "-c", options.workDir, ...command],
  ];
  // One tmux invocation, commands separated by ";": the options exist before the agent does.
  run(...commands.flatMap((c, i) => (i ? [";", ...c] : c)));

  const pid = Number(run("display-message", "-p", "-t", target, "#{pane_pid}").trim());
  const capture = ({ ansi = false } = {}) => run("capture-pane", "-p", ...(ansi ? ["-e"] : []), "-t", target);
  const paneDead = () => run("display-message", "-p", "-t", target, "#{pane_dead}").trim() === "1";
  const classify = (text: string) => classifyScreen(text, { paneDead: paneDead(), dialect: options.dialect });
  const read = () => classify(capture());
  const pane: AgentPane = {
    socket: options.socket,
    target,
    capture,
    read,
    async waitFor(ready, what, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = capture();
        const state = classify(text);
        if (ready(state, text)) return { state, text };
        if (Date.now() > deadline)
          throw new Error(`timeout waiting for ${what}; last ${JSON.stringify(state)}\n${text}`);
        await Bun.sleep(100);
      }
    },
    type: (text) => void run("send-keys", "-t", target, "-l", text),
    keys: (...keys) => void run("send-keys", "-t", target, ...keys),
    async submit(text) {
      pane.type(text);
      // Wrapping can split words: compare without whitespace.
      const typed = text.replace(/\s+/g, "");
      let previous: string | null = null;
      await pane.waitFor(
        (_, screen) => {
          const box = inputBoxText(screen);
          const settled = box !== null && box !== "" && box === previous;
          previous = box;
          return settled && (box.replace(/\s+/g, "") === typed || box.includes("[Pasted text"));
        },
        "the input box to show the prompt",
        5_000,
      );
      await Bun.sleep(150);
      pane.keys("Enter");
      try {
        await pane.waitFor(
          (_, screen) => inputBoxText(screen) !== previous,
          "the prompt to leave the box",
          3_000,
        );
      } catch {
        pane.keys("Enter"); // a long literal can swallow an Enter sent too early
      }
    },
    async kill() {
      Bun.spawnSync(["tmux", "-L", options.socket, "kill-server"], { stdout: "ignore", stderr: "ignore" });
      const dir = process.env.TMUX_TMPDIR || "/tmp";
      rmSync(join(dir, `tmux-${process.getuid?.() ?? 0}`, options.socket), { force: true });
      for (const deadline = Date.now() + 5_000; isAlive(pid) && Date.now() < deadline; ) await Bun.sleep(50);
    },
  };
  return pane;
}
