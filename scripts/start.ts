/**
 * `npm start`: builds dist/ag when it is missing or older than the sources, then runs it with
 * the arguments given (`npm start -- --port 9200`).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const binary = join(root, "dist", "ag");

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const inputs = ["src", "public", "scripts"].map((d) => newestSource(join(root, d)));
for (const file of ["build.ts", "package.json"]) inputs.push(statSync(join(root, file)).mtimeMs);
if (!existsSync(binary) || statSync(binary).mtimeMs < Math.max(...inputs)) {
  const build = Bun.spawnSync([process.execPath, join(root, "build.ts")], {
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
  });
  if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);
}

const child = Bun.spawn([binary, ...process.argv.slice(2)], { stdio: ["inherit", "inherit", "inherit"] });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
process.exit(await child.exited);
