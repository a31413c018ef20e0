import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { findStarterTemplate, STARTER_TEMPLATES } from "../agents/claude/starter-templates.ts";
import { AgError } from "../shared/errors.ts";
import { projectConfigPath, starterConfigText } from "./config-file.ts";

export type WriteAction = "created" | "overwritten" | "kept";

export interface InitOptions {
  cwd: string;
  /** --force: overwrite the config and template files without asking. */
  force?: boolean;
  /** --from-template <name>. */
  template?: string;
  /**
   * Asked before an existing config is overwritten (the interactive y/N). Absent (--yes, or no
   * terminal) means "no": overwriting is never the default.
   */
  confirmOverwrite?: (path: string) => boolean | Promise<boolean>;
}

export interface InitResult {
  config: { path: string; action: WriteAction };
  files: Array<{ path: string; action: WriteAction }>;
}

/** `ag init`: the project config, then the chosen starter template's files. */
export async function initProject(options: InitOptions): Promise<InitResult> {
  // An unknown template fails before anything is written.
  const template = options.template === undefined ? undefined : requireTemplate(options.template);
  const configPath = projectConfigPath(options.cwd);
  let overwrite = options.force === true;
  if (!overwrite && existsSync(configPath) && options.confirmOverwrite) {
    overwrite = await options.confirmOverwrite(configPath);
  }
  const config = { path: configPath, action: writeFile(configPath, starterConfigText(), overwrite) };
  const files = (template?.files ?? []).map((file) => {
    const path = join(options.cwd, file.path);
    return { path, action: writeFile(path, file.content, options.force === true) };
  });
  return { config, files };
}

/**
 * `ag run` with no server up bootstraps the project's config (SPEC): the starter config of
 * `ag init --yes` when the project has none; an existing one is never touched. `confirm` asks a
 * person first; declining writes nothing. Returns the path written, or null.
 */
export async function bootstrapProjectConfig(options: {
  cwd: string;
  confirm?: (path: string) => boolean;
}): Promise<string | null> {
  const path = projectConfigPath(options.cwd);
  if (existsSync(path) || (options.confirm && !options.confirm(path))) return null;
  const { config } = await initProject({ cwd: options.cwd });
  return config.action === "created" ? config.path : null;
}

function requireTemplate(name: string) {
  const template = findStarterTemplate(name);
  if (!template) {
    const names = STARTER_TEMPLATES.map((t) => t.name).join(", ");
    throw new AgError(
      "USAGE_ERROR",
      `unknown template "${name}"; one of: ${names} (see ag init --list-templates)`,
    );
  }
  return template;
}

function writeFile(path: string, content: string, overwrite: boolean): WriteAction {
  const exists = existsSync(path);
  if (exists && !overwrite) return "kept";
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return exists ? "overwritten" : "created";
}
