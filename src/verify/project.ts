import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Project } from "./steps.ts";

export type ProjectReading = { ok: true; project: Project } | { ok: false; reason: string };

/**
 * What the plan needs from a workDir: package.json's scripts and whether tsconfig.json is there.
 * Only the workDir itself counts: tsc would otherwise climb to a parent's tsconfig and check a
 * project that is not the session's.
 */
export function readProject(workDir: string): ProjectReading {
  if (!isDirectory(workDir)) return { ok: false, reason: `the workDir ${workDir} does not exist` };
  let text: string;
  try {
    text = readFileSync(join(workDir, "package.json"), "utf8");
  } catch {
    return {
      ok: false,
      reason: `no package.json in ${workDir}, so there is nothing to type check, build or test`,
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, reason: `the package.json in ${workDir} is not valid JSON` };
  }
  return {
    ok: true,
    project: { hasTsconfig: isFile(join(workDir, "tsconfig.json")), scripts: scriptsOf(parsed) },
  };
}

function scriptsOf(manifest: unknown): Record<string, string> {
  const scripts = (manifest as { scripts?: unknown } | null)?.scripts;
  if (typeof scripts !== "object" || scripts === null) return {};
  return Object.fromEntries(
    Object.entries(scripts).filter(([, v]) => typeof v === "string" && v.trim() !== ""),
  );
}

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}
