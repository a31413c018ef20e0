import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { writePrivate } from "../launch-files.ts";

/**
 * Where a session's Gemini CLI finds its settings. The CLI reads `<home>/.gemini/settings.json`
 * (home = GEMINI_CLI_HOME, else the user's), a workspace file, and a system file it skips unless
 * root owns it and every folder above it (0.61.0: "Skipping system settings file … is insecure"):
 * no flag or variable names a settings file of one run. So each launch gets its own
 * GEMINI_CLI_HOME, whose .gemini folder holds the user's settings with ag's added, and links to
 * every other entry of the user's own ~/.gemini: credentials, trusted folders, commands,
 * extensions, policies, and tmp/, where the CLI writes its session files. Nothing of the user's
 * is written; what the CLI writes at the top of .gemini during the session (settings changed in
 * its UI, a first login) stays in the session's folder.
 */

const SETTINGS = "settings.json";

export interface GeminiHome {
  /** The GEMINI_CLI_HOME of the launch. */
  root: string;
  warnings: string[];
}

export function prepareGeminiHome(options: {
  /** The user's own .gemini folder. */
  userDir: string;
  /** A fresh folder of this launch. */
  root: string;
  /** ag's settings, merged over the user's (mergeSettings). */
  settings: Record<string, unknown>;
}): GeminiHome {
  const { userDir, root } = options;
  const own = join(root, ".gemini");
  mkdirSync(own, { recursive: true, mode: 0o700 });
  // The sessions go to the user's tmp/, where `gemini --resume` finds them (made when missing).
  mkdirSync(join(userDir, "tmp"), { recursive: true });
  for (const entry of readdirSync(userDir)) {
    if (entry === SETTINGS || existsSync(join(own, entry))) continue;
    symlinkSync(join(userDir, entry), join(own, entry));
  }
  const warnings: string[] = [];
  const user = readUserSettings(join(userDir, SETTINGS), warnings);
  writePrivate(join(own, SETTINGS), JSON.stringify(mergeSettings(user, options.settings), null, 2));
  return { root, warnings };
}

function readUserSettings(path: string, warnings: string[]): Record<string, unknown> {
  if (!existsSync(path)) return {};
  try {
    const parsed = JSON.parse(stripComments(readFileSync(path, "utf8")));
    if (isObject(parsed)) return parsed;
  } catch {
    // reported below
  }
  warnings.push(`${path} could not be read: the session runs with ag's Gemini settings only`);
  return {};
}

type Settings = Record<string, unknown>;

/**
 * The user's settings with ag's: ag's hooks after the user's own for each event (the CLI runs
 * them all), every other key of ag's replacing the user's, one level down (`general.x` of ag's
 * leaves the user's other `general` keys as they are).
 */
export function mergeSettings(user: Settings, ag: Settings): Settings {
  const merged: Settings = { ...user };
  for (const [key, value] of Object.entries(ag)) {
    const mine = user[key];
    if (key === "hooks" && isObject(value)) merged.hooks = mergeHooks(isObject(mine) ? mine : {}, value);
    else if (isObject(value) && isObject(mine)) merged[key] = mergeLevel(mine, value);
    else merged[key] = value;
  }
  return merged;
}

function mergeLevel(user: Settings, ag: Settings): Settings {
  const merged: Settings = { ...user };
  for (const [key, value] of Object.entries(ag))
    merged[key] = isObject(value) && isObject(user[key]) ? { ...user[key], ...value } : value;
  return merged;
}

function mergeHooks(user: Settings, ag: Settings): Settings {
  const merged: Settings = { ...user };
  for (const [event, hooks] of Object.entries(ag)) {
    const mine = Array.isArray(user[event]) ? (user[event] as unknown[]) : [];
    merged[event] = [...mine, ...(hooks as unknown[])];
  }
  return merged;
}

/** The CLI's settings files may hold // and /* comments (it strips them before JSON.parse). */
export function stripComments(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      out += text.slice(start, i + 1);
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else out += c;
  }
  return out;
}

const isObject = (v: unknown): v is Settings => typeof v === "object" && v !== null && !Array.isArray(v);
