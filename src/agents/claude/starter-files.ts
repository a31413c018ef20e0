import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { STARTER_LAYOUT, type StarterKind } from "./starter-templates.ts";

/**
 * Checks the agent files a project holds under .claude/ the way Claude Code reads them: a
 * subagent and a skill need front matter with `name` and `description`; a slash command's front
 * matter is optional but must parse when present.
 */

export interface StarterFileCheck {
  /** Relative to the project directory. */
  path: string;
  kind: StarterKind;
  ok: boolean;
  problem: string | null;
}

/** Skill names: lowercase letters, digits and single hyphens, at most 64 characters. */
const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

const LOCATIONS = (Object.keys(STARTER_LAYOUT) as StarterKind[]).map((kind) => ({
  kind,
  glob: STARTER_LAYOUT[kind].glob,
}));

/** Where Claude Code's starter files live in a project. */
export const STARTER_DIR = ".claude/";

export function checkStarterFiles(cwd: string): StarterFileCheck[] {
  if (!existsSync(join(cwd, STARTER_DIR))) return [];
  const checks: StarterFileCheck[] = [];
  for (const { kind, glob } of LOCATIONS) {
    const paths = [...new Bun.Glob(glob).scanSync({ cwd, dot: true })].sort();
    for (const path of paths) {
      const problem = problemOf(kind, path, readFileSync(join(cwd, path), "utf8"));
      checks.push({ path, kind, ok: problem === null, problem });
    }
  }
  return checks;
}

/** What is wrong with one file, or null. */
export function problemOf(kind: StarterKind, path: string, text: string): string | null {
  const front = parseFrontMatter(text);
  if ("error" in front) return front.error;
  const fields = front.fields;
  if (kind === "slash-command") {
    if (fields === null) return null;
    if (fields.description !== undefined && typeof fields.description !== "string") {
      return '"description" must be a string';
    }
    // `argument-hint: [file]` unquoted is a YAML list, and Claude Code accepts it.
    const hint = fields["argument-hint"];
    if (hint !== undefined && typeof hint !== "string" && !isStringArray(hint)) {
      return '"argument-hint" must be a string';
    }
    return null;
  }
  if (fields === null) return "no front matter (a --- block with name and description)";
  for (const key of ["name", "description"]) {
    const value = fields[key];
    if (typeof value !== "string" || value.trim() === "") return `front matter lacks "${key}"`;
  }
  const name = fields.name as string;
  if (kind === "skill") {
    if (!SKILL_NAME.test(name) || name.length > 64) {
      return `name "${name}" must be lowercase letters, digits and hyphens (at most 64)`;
    }
    const folder = basename(dirname(path));
    if (name !== folder) return `name "${name}" differs from its folder "${folder}"`;
    if ((fields.description as string).length > 1024) return "description is longer than 1024 characters";
  }
  const tools = fields.tools;
  if (kind === "agent" && tools !== undefined && typeof tools !== "string" && !isStringArray(tools)) {
    return '"tools" must be a comma-separated string or a list';
  }
  return null;
}

type FrontMatter = { fields: Record<string, unknown> | null } | { error: string };

export function parseFrontMatter(text: string): FrontMatter {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return { fields: null };
  const end = lines.indexOf("---", 1);
  if (end === -1) return { error: "front matter is not closed by a --- line" };
  let parsed: unknown;
  try {
    parsed = Bun.YAML.parse(lines.slice(1, end).join("\n"));
  } catch (error) {
    return { error: `front matter is not valid YAML: ${error instanceof Error ? error.message : error}` };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { error: "front matter is not a YAML mapping" };
  }
  return { fields: parsed as Record<string, unknown> };
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string");
}
