/**
 * What the fixture-capture scripts share (capture-codex.ts, capture-opencode.ts): a tally of
 * checks, and a pane driver on a private tmux socket that reads each screen with the agent's own
 * adapter — waits for a state, saves a pane as a fixture after checking how it reads, presses keys
 * one at a time.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

/** A capture's scratch folders under one temp root: the agent's HOME, its workDir, a bin for its program, ag's session folder, the panes. */
export function captureFolders(prefix: string) {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const [home, work, bin, sessionDir, panes] = ["home", "work", "bin", "session", "panes"].map((d) =>
    join(root, d),
  ) as [string, string, string, string, string];
  for (const dir of [home, work, bin, panes]) mkdirSync(dir, { recursive: true });
  return { root, home, work, bin, sessionDir, panes };
}

export interface HookEntry {
  event: string;
  payload: Record<string, unknown>;
}

/**
 * Receives the agent's hook callbacks on 127.0.0.1 (the event is the URL's last segment), keeps
 * them in order, and answers each with `reply` (the agent's refusal of a tool, or `{}`).
 */
export function hookReceiver(reply: (hook: HookEntry) => unknown = () => ({})) {
  const hooks: HookEntry[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const hook = {
        event: new URL(request.url).pathname.split("/").at(-1)!,
        payload: (await request.json()) as Record<string, unknown>,
      };
      hooks.push(hook);
      return Response.json(reply(hook));
    },
  });
  return { hooks, port: server.port, stop: () => server.stop(true) };
}
