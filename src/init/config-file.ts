import { join } from "node:path";
import { PROJECT_CONFIG_FILE } from "../config/load.ts";
import { type Config, SETTINGS, type Setting } from "../config/schema.ts";

/** The settings a project is likely to change, in the order the starter file lists them. */
const STARTER_KEYS = [
  "port",
  "host",
  "permissionMode",
  "stallThresholdMs",
  "idleTimeoutMs",
  "maxSessions",
  "logLevel",
  "dashboardEnabled",
  "modelFast",
  "modelStandard",
  "modelPower",
] as const satisfies readonly (keyof Config)[];

export function projectConfigPath(cwd: string): string {
  return join(cwd, PROJECT_CONFIG_FILE);
}

/**
 * The starter `.svc/config.yaml`. Every setting is a comment holding its default, so the file
 * changes nothing until a line is uncommented: a value pinned here would silently beat
 * ~/.svc/config.json. Written by hand rather than with Bun.YAML.stringify, which drops comments.
 */
export function starterConfigText(): string {
  const byKey = new Map<string, Setting>(SETTINGS.map((s) => [s.key, s]));
  const lines = [
    "# ag project configuration, read by ag when it runs in this directory.",
    "# Precedence, highest first: flags, SVC_* environment variables, --config, ./svc.config.json,",
    "# this file, ~/.svc/config.json, built-in defaults. Uncomment a line to change a setting.",
    "# The auth token does not belong here: it lives in <stateDir>/auth-token (mode 0600).",
    "",
  ];
  for (const key of STARTER_KEYS) {
    const setting = byKey.get(key)!;
    lines.push(`# ${setting.description}`);
    lines.push(`# ${key}: ${setting.default === undefined ? defaultHint(key) : yamlScalar(setting.default)}`);
    lines.push("");
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/** Derived defaults (see config/load.ts) shown as the value a user would most likely write. */
function defaultHint(key: string): string {
  return key === "host" ? "127.0.0.1" : "~";
}

function yamlScalar(value: unknown): string {
  if (value === null) return "~";
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/**
 * The text without one top-level `key: value` line, everything else (comments, order, other
 * keys) kept byte for byte. Null when the key is not there as a one-line scalar: the caller
 * must not guess at block values.
 */
export function removeTopLevelKey(text: string, key: string): string | null {
  const lines = text.split("\n");
  const pattern = new RegExp(`^(["']?)${key}\\1\\s*:`);
  const index = lines.findIndex((line) => pattern.test(line));
  if (index === -1) return null;
  const next = lines[index + 1];
  // A block scalar or nested value continues on indented lines.
  if (next !== undefined && /^\s+\S/.test(next) && !/^\s*#/.test(next)) return null;
  lines.splice(index, 1);
  return lines.join("\n");
}
