/**
 * Reading a project's git repository: which commit it is at, and what changed since one. Read
 * only: no index refresh is written (GIT_OPTIONAL_LOCKS=0), no prompt can wait for a terminal.
 */

/** The tree of no files: what a repository without commits is diffed against. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

const GIT_TIMEOUT_MS = 10_000;

export interface GitResult {
  code: number;
  stdout: string;
}

/** Runs git in `dir`; null when git is missing or does not finish in time. */
export async function git(dir: string, args: string[]): Promise<GitResult | null> {
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(["git", "-c", "core.quotepath=off", ...args], {
      cwd: dir,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", GIT_PAGER: "cat" },
    });
  } catch {
    return null;
  }
  const timer = setTimeout(() => proc.kill(), GIT_TIMEOUT_MS);
  try {
    const stdout = await new Response(proc.stdout as ReadableStream<Uint8Array>).text();
    const code = await proc.exited;
    return proc.signalCode ? null : { code, stdout };
  } finally {
    clearTimeout(timer);
  }
}

/** The commit HEAD is at, or null outside a repository (or in one without commits). */
export async function headCommit(dir: string): Promise<string | null> {
  const result = await git(dir, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  const sha = result?.code === 0 ? result.stdout.trim() : "";
  return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
}

/** `dir` is inside a git work tree. */
export async function isWorkTree(dir: string): Promise<boolean> {
  const result = await git(dir, ["rev-parse", "--is-inside-work-tree"]);
  return result?.code === 0 && result.stdout.trim() === "true";
}
