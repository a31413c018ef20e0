import { gitEnvironment } from "./environment.ts";
import { asUser, type RunAs } from "./run-as.ts";

/**
 * Reading a project's git repository: which commit it is at, and what changed since one. Read
 * only: no index refresh is written (GIT_OPTIONAL_LOCKS=0), no prompt can wait for a terminal.
 *
 * The repository is not trusted: its config (.git/config, and what it includes) can name programs
 * git runs while reading — a filter's clean/process command on every changed file, an fsmonitor
 * hook, an external diff, a textconv, hooks. None of them runs for ag: the config is listed first
 * (listing runs nothing), and every filter it names is overridden to none (git's own
 * GIT_CONFIG_COUNT overrides beat every config file; an empty command means no filter), fsmonitor
 * and hooks are off, and a diff never runs an external diff or a textconv. `.gitattributes` may
 * still name a driver: with no command, it does nothing. Nor does git get ag's secrets: it runs
 * with the declared environment (shared/environment.ts), without any inherited GIT_*. For a
 * session whose tenant has a runAs user, git runs as that user (shared/run-as.ts): it reads the
 * user's repository with the user's rights, never ag's.
 */

/** The tree of no files: what a repository without commits is diffed against. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

const GIT_TIMEOUT_MS = 10_000;

export interface GitResult {
  code: number;
  stdout: string;
  /** What git said on stderr (its own words for a failure). */
  stderr: string;
}

/** One repository's git, its config listed once: runs any number of commands alike. */
export type GitRunner = (args: string[], stdin?: string) => Promise<GitResult | null>;

export interface GitRunnerOptions {
  runAs?: RunAs | null;
  /** More of git's environment (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, an identity): never secrets. */
  env?: Record<string, string>;
  timeoutMs?: number;
}

const FIXED_ENV = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_OPTIONAL_LOCKS: "0",
  GIT_PAGER: "cat",
  GIT_EDITOR: "true",
  GIT_ASKPASS: "true",
  SSH_ASKPASS: "true",
};

/** Always overridden: nothing of these may run a program for ag. */
const ALWAYS: ReadonlyArray<readonly [string, string]> = [
  ["core.quotepath", "off"],
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
  ["core.pager", "cat"],
];

/**
 * Runs git in `dir` (as `runAs` when given: a tenant's OS user); null when git is missing or
 * does not finish in time.
 */
export async function git(
  dir: string,
  args: string[],
  runAs: RunAs | null = null,
): Promise<GitResult | null> {
  const runner = await gitRunner(dir, { runAs });
  return runner ? runner(args) : null;
}

/**
 * The repository's config listed once (with `options.env`: a GIT_DIR elsewhere has its own),
 * then every command run with its overrides; null when git is missing.
 */
export async function gitRunner(dir: string, options: GitRunnerOptions = {}): Promise<GitRunner | null> {
  const runAs = options.runAs ?? null;
  const base = { ...FIXED_ENV, ...options.env };
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const list = ["config", "--null", "--name-only", "--list"];
  const listed = await run(dir, list, gitEnvironment(base), runAs, timeoutMs);
  if (!listed) return null;
  const overrides = configOverrides(listed.code === 0 ? listed.stdout.split("\0") : []);
  const env = gitEnvironment({ ...base, ...asEnvironment(overrides) });
  return (args, stdin) => {
    const safeArgs = args[0] === "diff" ? ["diff", "--no-ext-diff", "--no-textconv", ...args.slice(1)] : args;
    return run(dir, safeArgs, env, runAs, timeoutMs, stdin);
  };
}

/**
 * The overrides that neutralise the config listed (names as `git config --name-only` gives them:
 * section and key lower case, a subsection as written): every filter driver named gets no clean,
 * smudge or process command and is not required (a required filter without a command fails the
 * read instead of passing the file through).
 */
export function configOverrides(names: readonly string[]): Array<[string, string]> {
  const overrides: Array<[string, string]> = ALWAYS.map(([k, v]) => [k, v]);
  const filters = new Set<string>();
  for (const name of names) {
    const match = /^filter\.(.+)\.(clean|smudge|process|required)$/s.exec(name);
    if (match?.[1] !== undefined) filters.add(match[1]);
  }
  for (const driver of filters) {
    for (const key of ["clean", "smudge", "process"]) overrides.push([`filter.${driver}.${key}`, ""]);
    overrides.push([`filter.${driver}.required`, "false"]);
  }
  return overrides;
}

/** git's own channel for `-c` given in the environment: names with any character, and not argv. */
function asEnvironment(overrides: Array<[string, string]>): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(overrides.length) };
  overrides.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

async function run(
  dir: string,
  args: string[],
  env: Record<string, string>,
  runAs: RunAs | null,
  timeoutMs = GIT_TIMEOUT_MS,
  stdin?: string,
): Promise<GitResult | null> {
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    const as = asUser(runAs, ["git", ...args], env);
    proc = Bun.spawn(as.command, {
      cwd: dir,
      stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
      stdout: "pipe",
      stderr: "pipe",
      env: as.env,
    });
  } catch {
    return null;
  }
  const timer = setTimeout(() => proc.kill(), timeoutMs);
  try {
    const [stdout, stderr] = await Promise.all([
      new Response(proc.stdout as ReadableStream<Uint8Array>).text(),
      new Response(proc.stderr as ReadableStream<Uint8Array>).text(),
    ]);
    const code = await proc.exited;
    return proc.signalCode ? null : { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** The commit HEAD is at, or null outside a repository (or in one without commits). */
export async function headCommit(dir: string, runAs: RunAs | null = null): Promise<string | null> {
  const result = await git(dir, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], runAs);
  const sha = result?.code === 0 ? result.stdout.trim() : "";
  return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
}

/** `dir` is inside a git work tree. */
export async function isWorkTree(dir: string, runAs: RunAs | null = null): Promise<boolean> {
  const result = await git(dir, ["rev-parse", "--is-inside-work-tree"], runAs);
  return result?.code === 0 && result.stdout.trim() === "true";
}
