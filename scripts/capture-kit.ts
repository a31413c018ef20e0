/**
 * What the fixture-capture scripts share (capture-codex.ts, capture-opencode.ts): a tally of
 * checks, and a pane driver on a private tmux socket that reads each screen with the agent's own
 * adapter — waits for a state, saves a pane as a fixture after checking how it reads, presses keys
 * one at a time.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentAdapter, AgentObservation } from "../src/agents/agent.ts";

export interface Checks {
  check(label: string, ok: boolean, detail?: string): void;
  readonly passed: number;
  readonly failed: number;
}

export function createChecks(): Checks {
  let passed = 0;
  let failed = 0;
  return {
    check(label, ok, detail = "") {
      if (ok) passed++;
      else failed++;
      console.log(`${ok ? "ok  " : "FAIL"} ${label}${ok || !detail ? "" : `\n     ${detail}`}`);
    },
    get passed() {
      return passed;
    },
    get failed() {
      return failed;
    },
  };
}

export interface PaneKit {
  tmux(...args: string[]): string;
  capture(): string;
  /** The window's agent has exited (remain-on-exit keeps its last screen). */
  paneDead(): boolean;
  read(): ReturnType<AgentAdapter["readScreen"]>;
  /** Polls the screen every 100 ms until `ready`; a failed check and a throw after `ms`. */
  waitFor(
    what: string,
    ready: (o: AgentObservation, input: string | null) => boolean,
    ms?: number,
  ): Promise<ReturnType<AgentAdapter["readScreen"]>>;
  /** Saves the pane as `<panes>/<name>.txt`, checking that it reads as `expect` (and its input box). */
  save(name: string, expect: AgentObservation["kind"], input?: string | null): void;
  /** Named keys, one at a time, 150 ms apart (a dialog redraws between them). */
  keys(...names: string[]): Promise<void>;
}

export function createPaneKit(options: {
  socket: string;
  adapter: AgentAdapter;
  /** Where `save` writes. */
  panes: string;
  checks: Checks;
  /** The window the kit reads and types into now. */
  target: () => string;
}): PaneKit {
  const { adapter, checks } = options;
  const tmux = (...args: string[]) => {
    const result = Bun.spawnSync(["tmux", "-L", options.socket, "-f", "/dev/null", ...args], {
      stderr: "pipe",
    });
    if (result.exitCode !== 0) throw new Error(`tmux ${args[0]}: ${result.stderr.toString().trim()}`);
    return result.stdout.toString();
  };
  const capture = () => tmux("capture-pane", "-p", "-t", options.target());
  const paneDead = () => tmux("display-message", "-p", "-t", options.target(), "#{pane_dead}").trim() === "1";
  const read = () => adapter.readScreen(capture(), { paneDead: paneDead() });
  return {
    tmux,
    capture,
    paneDead,
    read,
    async waitFor(what, ready, ms = 30_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const reading = read();
        if (ready(reading.observation, reading.input)) return reading;
        if (Date.now() > deadline) {
          checks.check(`waiting for ${what}`, false, `${JSON.stringify(reading.observation)}\n${capture()}`);
          throw new Error(`gave up waiting for ${what}`);
        }
        await Bun.sleep(100);
      }
    },
    save(name, expect, input) {
      const text = capture();
      writeFileSync(join(options.panes, `${name}.txt`), text);
      const reading = adapter.readScreen(text);
      checks.check(
        `${name}: ${expect}`,
        reading.observation.kind === expect,
        JSON.stringify(reading.observation),
      );
      if (input !== undefined)
        checks.check(
          `${name}: input ${JSON.stringify(input)}`,
          reading.input === input,
          JSON.stringify(reading.input),
        );
    },
    async keys(...names) {
      for (const key of names) {
        tmux("send-keys", "-t", options.target(), key);
        await Bun.sleep(150);
      }
    },
  };
}
