import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const repo = join(import.meta.dir, "..", "..");

/**
 * Builds the binary from a scratch copy of the sources under `dir` (a new temp folder by default)
 * whose src/ and public/ (the dashboard sources) are then deleted: whatever the binary serves must
 * be inside it. The caller removes `dir`.
 */
export function buildBinary(dir = mkdtempSync(join(tmpdir(), "ag-build-"))): { dir: string; path: string } {
  for (const entry of ["src", "public", "scripts", "build.ts", "package.json", "tsconfig.json"]) {
    cpSync(join(repo, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
  const outdir = join(dir, "dist");
  mkdirSync(outdir);
  const build = Bun.spawnSync([process.execPath, "build.ts", "--outdir", outdir], {
    cwd: dir,
    stderr: "pipe",
  });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
  rmSync(join(dir, "src"), { recursive: true });
  rmSync(join(dir, "public"), { recursive: true });
  return { dir, path: join(outdir, "ag") };
}
