import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Runs git in `dir`; throws with git's own words when it fails. */
export function git(dir: string, ...args: string[]): void {
  const result = Bun.spawnSync(["git", ...args], { cwd: dir, stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.toString()}`);
}

/** Makes `dir` a git repository with one commit (a README), its identity set locally. */
export function gitRepository(dir: string): string {
  git(dir, "init", "-q");
  git(dir, "config", "user.email", "test@example.com");
  git(dir, "config", "user.name", "test");
  writeFileSync(join(dir, "README.md"), "a project\n");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "start");
  return dir;
}
