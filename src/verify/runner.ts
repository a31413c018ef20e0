import { declaredEnvironment } from "../shared/environment.ts";
import { describeError } from "../shared/errors.ts";
import { asUser, type RunAs } from "../shared/run-as.ts";

/**
 * Runs one verification command as the leader of its own process group, so that a timeout (or
 * shutdown) can end everything it started: npm → sh → node → whatever the script spawned.
 */

export interface CommandRun {
  argv: string[];
  cwd: string;
  timeoutMs: number;
  /** After SIGTERM to the group, how long before SIGKILL. */
  killGraceMs: number;
  /** Variables used only where the inherited environment has none. */
  defaultEnv?: Record<string, string>;
  /** Aborting ends the command like a timeout does (ag shutting down). */
  signal?: AbortSignal;
  /** The OS user the command runs as (the session's tenant's runAs); none: as ag. */
  runAs?: RunAs | null;
}

export interface CommandOutcome {
  /** null when the process ended by a signal or never started. */
  exitCode: number | null;
  /** The last OUTPUT_LIMIT characters of stdout and stderr, in arrival order. */
  output: string;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Why the process could not be started (e.g. the program is not on PATH). */
  spawnError?: string;
}

export type RunCommand = (run: CommandRun) => Promise<CommandOutcome>;

/** CONTRACT §7: a step keeps the last 4000 characters of its output. */
export const OUTPUT_LIMIT = 4000;
/**
 * Once the group is gone the pipes close at once; a process that left the group (setsid, a
 * daemon) may still hold them, and must not keep the step open.
 */
const PIPE_DRAIN_MS = 1_000;

export const runCommand: RunCommand = async (run) => {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    const { command, env } = asUser(run.runAs ?? null, run.argv, {
      ...run.defaultEnv,
      ...declaredEnvironment(),
    });
    child = Bun.spawn(command, {
      cwd: run.cwd,
      env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      // setsid(): the child leads a new process group whose id is its pid.
      detached: true,
    });
  } catch (error) {
    return {
      exitCode: null,
      output: "",
      timedOut: false,
      aborted: false,
      durationMs: elapsed(),
      spawnError: describeError(error),
    };
  }
  const group = child.pid;
  const tail = createOutputTail(OUTPUT_LIMIT);
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const reading = Promise.all(readers.map((reader) => drain(reader, tail)));

  let timedOut = false;
  let aborted = false;
  let escalation: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    signalGroup(group, "SIGTERM");
    escalation ??= setTimeout(() => signalGroup(group, "SIGKILL"), run.killGraceMs);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, run.timeoutMs);
  const onAbort = () => {
    aborted = true;
    stop();
  };
  if (run.signal?.aborted) onAbort();
  run.signal?.addEventListener("abort", onAbort, { once: true });

  await child.exited;
  clearTimeout(timer);
  clearTimeout(escalation);
  run.signal?.removeEventListener("abort", onAbort);
  // The leader is done: whatever it left running in its group (a background server, a stuck
  // grandchild) goes too, so a verification never leaves processes behind.
  signalGroup(group, "SIGKILL");
  const drained = await Promise.race([reading.then(() => true), Bun.sleep(PIPE_DRAIN_MS).then(() => false)]);
  if (!drained) for (const reader of readers) void reader.cancel().catch(() => {});

  return {
    exitCode: child.exitCode,
    output: tail.text(),
    timedOut,
    aborted,
    durationMs: elapsed(),
  };
};

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, tail: OutputTail): Promise<void> {
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      tail.append(decoder.decode(value, { stream: true }));
    }
    tail.append(decoder.decode());
  } catch {
    // cancelled after the drain bound: keep what was read
  }
}

export interface OutputTail {
  append(text: string): void;
  /** The last `limit` characters appended. */
  text(): string;
}

/** Keeps only the end of a long output, without holding all of it in memory. */
export function createOutputTail(limit: number): OutputTail {
  let kept = "";
  return {
    append(text) {
      kept += text;
      if (kept.length > 2 * limit) kept = kept.slice(-limit);
    },
    text() {
      const end = kept.slice(-limit);
      // Never start with the second half of a surrogate pair cut in two.
      const first = end.charCodeAt(0);
      return first >= 0xdc00 && first <= 0xdfff ? end.slice(1) : end;
    },
  };
}
