import { readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * What an installed program says about itself: its version and its help, read from its npm
 * manifest or by running it with a time limit, and remembered per binary (ProgramFacts).
 */

/** Where a program is looked for and how long it may take to answer. */
export interface ProgramOptions {
  /** The PATH it is resolved on (the agent's own); default ag's PATH as it is now. */
  path?: string;
  /** How long running it may take before it counts as not answering (default 5 s). */
  timeoutMs?: number;
  /** Ends a program under way (its whole process group) when aborted: ag stopping. */
  signal?: AbortSignal;
}

/**
 * A program's version: from the manifest of the npm package it was installed by, when `pkg`
 * names it (a file read; some CLIs take seconds to boot for `--version`), else by running
 * `<command> <flag>` with a time limit. Null when the program is missing; "" when it is there but
 * told no version (it failed, printed nothing, or did not answer in time — a CLI slow to boot on a
 * loaded machine is still installed).
 */
export async function programVersion(
  command: string,
  flag: string,
  pkg?: string,
  options: ProgramOptions = {},
): Promise<string | null> {
  const path = resolveProgram(command, options.path);
  if (!path) return null;
  const manifest = pkg ? packageVersion(path, pkg) : null;
  if (manifest) return manifest;
  const out = await runProgram([path, flag], options.timeoutMs ?? 5000, false, options.signal);
  return out?.trim().split("\n")[0] ?? "";
}

/** What `<command> --help` prints (stdout and stderr), or null when it is missing or fails. */
export async function programHelp(command: string, options: ProgramOptions = {}): Promise<string | null> {
  const path = resolveProgram(command, options.path);
  return path ? runProgram([path, "--help"], options.timeoutMs ?? 5000, true, options.signal) : null;
}

/** The program's path on `path` (a command with a slash is taken as it is, when executable). */
export function resolveProgram(command: string, path = process.env.PATH ?? ""): string | null {
  // PATH given explicitly: Bun.which alone reads the PATH the process started with.
  return Bun.which(command, { PATH: path });
}

/**
 * Runs a program with no input and returns its output, or null when it fails, is still running
 * after `timeoutMs`, or `signal` ends it. It runs in its own process group, ended whole once it
 * is done or given up on: a CLI that relaunches itself (Gemini CLI's node re-exec) or leaves a
 * child behind leaves nothing running (such a child once wrote into a HOME already removed).
 */
async function runProgram(
  argv: string[],
  timeoutMs: number,
  withStderr = false,
  signal?: AbortSignal,
): Promise<string | null> {
  if (signal?.aborted) return null;
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(argv, {
      stdin: "ignore",
      stdout: "pipe",
      stderr: withStderr ? "pipe" : "ignore",
      detached: true,
    });
  } catch {
    return null;
  }
  const endGroup = () => {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // The group is gone already.
    }
  };
  let giveUp = () => {};
  const late = new Promise<null>((resolve) => {
    giveUp = () => {
      endGroup();
      resolve(null);
    };
  });
  const timer = setTimeout(giveUp, timeoutMs);
  // Once it has exited, a child it left holding the output pipe would hold the answer too.
  void proc.exited.then(endGroup);
  signal?.addEventListener("abort", giveUp, { once: true });
  const ran = Promise.all([
    new Response(proc.stdout as ReadableStream).text(),
    withStderr ? new Response(proc.stderr as ReadableStream).text() : "",
    proc.exited,
  ]).then(([out, err, code]) => (code === 0 ? `${out}${err}` : null));
  try {
    return await Promise.race([ran, late]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", giveUp);
  }
}

/**
 * What a program says about itself, remembered per binary: its real path, size and modification
 * time. An upgrade (a new file, or the same one rewritten) is asked again; the same binary never
 * is, also across restarts when `file` keeps the answers. Only answers are kept: a program that
 * failed or timed out is asked again next time.
 */
export interface ProgramFacts {
  version(command: string, flag: string, pkg?: string, options?: ProgramOptions): Promise<string | null>;
  help(command: string, options?: ProgramOptions): Promise<string | null>;
  /** Ends every program still running for these facts (ag stopping): none outlives ag. */
  stop(): void;
}

export function createProgramFacts(file?: string): ProgramFacts {
  const answers = new Map<string, string>(Object.entries(readFacts(file)));
  const pending = new Map<string, Promise<string | null>>();
  const ending = new AbortController();

  function remembered(
    command: string,
    question: string,
    options: ProgramOptions,
    ask: () => Promise<string | null>,
  ): Promise<string | null> {
    const key = binaryKey(command, options.path);
    if (key === null) return Promise.resolve(null);
    const id = `${question}\u0000${key}`;
    const known = answers.get(id);
    if (known !== undefined) return Promise.resolve(known);
    let asking = pending.get(id);
    if (!asking) {
      asking = ask().then((answer) => {
        pending.delete(id);
        // Only what a program said is kept: "no answer" may be a busy machine, asked again next time.
        if (answer) {
          answers.set(id, answer);
          writeFacts(file, answers);
        }
        return answer;
      });
      pending.set(id, asking);
    }
    return asking;
  }

  return {
    version: (command, flag, pkg, options = {}) =>
      remembered(command, `version ${flag} ${pkg ?? ""}`, options, () =>
        programVersion(command, flag, pkg, { ...options, signal: ending.signal }),
      ),
    help: (command, options = {}) =>
      remembered(command, "help", options, () => programHelp(command, { ...options, signal: ending.signal })),
    stop: () => ending.abort(),
  };
}

/** "<real path> <size> <mtime>" of the program `command` resolves to, or null when there is none. */
function binaryKey(command: string, path?: string): string | null {
  const found = resolveProgram(command, path);
  if (!found) return null;
  try {
    const real = realpathSync(found);
    const stat = statSync(real);
    return `${real} ${stat.size} ${stat.mtimeMs}`;
  } catch {
    return null;
  }
}

function readFacts(file?: string): Record<string, string> {
  if (!file) return {};
  try {
    const facts = JSON.parse(readFileSync(file, "utf8"));
    return facts && typeof facts === "object" ? facts : {};
  } catch {
    return {}; // none yet, or unreadable: asked again
  }
}

function writeFacts(file: string | undefined, answers: Map<string, string>): void {
  if (!file) return;
  try {
    writeFileSync(file, JSON.stringify(Object.fromEntries(answers)), { mode: 0o600 });
  } catch {
    // a cache: the answers stay in memory
  }
}

/**
 * The version in the package.json above the program's real path (npm's bin links) that is `pkg`'s
 * or one of its platform packages' (published with it, in step: `@anthropic-ai/claude-code-linux-x64`
 * for `@anthropic-ai/claude-code`, `opencode-linux-x64` for opencode-ai's `opencode`), whose binary a
 * PATH may name directly.
 */
export function packageVersion(program: string, pkg: string): string | null {
  let dir: string;
  try {
    dir = dirname(realpathSync(program));
  } catch {
    return null;
  }
  const platform = `-${process.platform}-`;
  const names = (name: unknown) =>
    typeof name === "string" &&
    (name === pkg ||
      name.startsWith(`${pkg}${platform}`) ||
      name.startsWith(`${basename(program)}${platform}`));
  for (let up = 0; up < 6; up++, dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (names(manifest.name) && typeof manifest.version === "string") return manifest.version;
    } catch {
      // no manifest here: one folder up
    }
    if (dirname(dir) === dir) break;
  }
  return null;
}
