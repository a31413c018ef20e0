import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { type TObject, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { EVENT_NAMES, EventNameSchema, isEventName } from "../events/names.ts";
import { declaredEnvironment } from "../shared/environment.ts";
import { AgError } from "../shared/errors.ts";
import { AUTH_TOKEN_FILE, authTokenPath, isGeneratedToken, readTokenFile } from "./auth-token.ts";
import { isInContainer } from "./container.ts";
import { type Config, type ConfigKey, type EnvKind, SETTINGS, type Setting } from "./schema.ts";

/**
 * The ONLY reader of process.env and of config files. Precedence, highest first:
 * command-line flags > environment variables > --config file > ./svc.config.json >
 * ./.svc/config.yaml (the project file `ag init` writes) > ~/.svc/config.json > built-in defaults.
 * Objects (memoryBridge, …) merge key by key. With no authToken from any of them, the token comes
 * from the canonical file <stateDir>/auth-token (CONTRACT §1), else from a not yet migrated
 * `clientAuthToken` in the project file.
 */

/** The project config file, relative to the working directory. */
export const PROJECT_CONFIG_FILE = join(".svc", "config.yaml");
/** The canonical auth-token file, inside the state directory. */
export { AUTH_TOKEN_FILE };
/** The legacy key of the project file that `ag auth migrate` moves to the token file. */
export const CLIENT_TOKEN_KEY = "clientAuthToken";

export interface LoadOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  home?: string;
  /** The --config flag. */
  configPath?: string;
  /** Values given as command-line flags (--port, --host, --json-logs). */
  flags?: Partial<Pick<Config, "port" | "host" | "jsonLogs">>;
  /** Where container detection looks (/.dockerenv, /proc/1/cgroup); tests point it elsewhere. */
  containerRoot?: string;
}

export interface LoadedConfig {
  config: Config;
  /** Where each value came from: "default", "~/.svc/config.json", "environment (SVC_PORT)", … */
  sources: Record<ConfigKey, string>;
  /** Things worth a log line that do not stop start-up (unknown keys). */
  warnings: string[];
}

/** One source of values; `labels` names a per-key source where it differs from `label`. */
type Layer = {
  label: string;
  values: Record<string, unknown>;
  labels?: Record<string, string>;
  /** A project file's clientAuthToken. */
  clientToken?: string;
};

const BY_KEY = new Map<string, Setting>(SETTINGS.map((s) => [s.key, s]));
/** Values never echoed back in an error message. */
const SECRET_KEYS = new Set([
  "authToken",
  "webhooks",
  "chatBotToken",
  "emailPass",
  "teamchatWebhookUrl",
  "fleet",
]);
const PATH_KEYS = ["stateDir", "agentDataDir"] as const;

export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const home = options.home ?? env.HOME ?? homedir();
  const warnings: string[] = [];

  const layers: Layer[] = [];
  const userFile = join(home, ".svc", "config.json");
  if (existsSync(userFile)) layers.push(readConfigFile(userFile, "~/.svc/config.json", warnings));
  const projectFile = join(cwd, PROJECT_CONFIG_FILE);
  if (existsSync(projectFile)) layers.push(readConfigFile(projectFile, "./.svc/config.yaml", warnings));
  const cwdFile = join(cwd, "svc.config.json");
  if (existsSync(cwdFile)) layers.push(readConfigFile(cwdFile, "./svc.config.json", warnings));
  if (options.configPath) {
    const path = resolve(cwd, options.configPath);
    if (!existsSync(path)) {
      throw new AgError("CONFIG_INVALID", `config file not found: ${options.configPath} (from --config)`);
    }
    layers.push(readConfigFile(path, `--config ${options.configPath}`, warnings));
  }
  layers.push(readEnvironment(env));
  layers.push(readFlags(options.flags ?? {}));

  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const setting of SETTINGS) {
    if (setting.default !== undefined) {
      values[setting.key] = structuredClone(setting.default);
      sources[setting.key] = "default";
    }
  }
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer.values)) {
      values[key] = mergeValue(values[key], value);
      sources[key] = layer.labels?.[key] ?? layer.label;
    }
  }
  deriveDefaults(values, sources, { home, containerRoot: options.containerRoot ?? "/" });
  for (const key of PATH_KEYS) {
    if (typeof values[key] === "string") values[key] = expandPath(values[key] as string, home, cwd);
  }
  values.authTokenGenerated = false;
  if (sources.authToken === "default") deriveAuthToken(values, sources, layers, warnings);
  const bridge = values.memoryBridge as Config["memoryBridge"];
  if (bridge.persistPath) bridge.persistPath = expandPath(bridge.persistPath, home, cwd);

  values.homeDir = home;
  const config = values as unknown as Config;
  if (config.shutdownHardMs < config.shutdownGraceMs) {
    throw new AgError(
      "CONFIG_INVALID",
      `shutdownHardMs (${config.shutdownHardMs}, from ${sources.shutdownHardMs}) must be at least shutdownGraceMs (${config.shutdownGraceMs}, from ${sources.shutdownGraceMs})`,
    );
  }
  return { config, sources: sources as Record<ConfigKey, string>, warnings };
}

function readConfigFile(path: string, label: string, warnings: string[]): Layer {
  // `--config x.yaml` works too; every other file is JSON.
  const yaml = /\.ya?ml$/.test(path);
  let parsed: unknown;
  try {
    const text = readFileSync(path, "utf8");
    // A YAML file of comments only (as `ag init` writes it) is an empty document: no values.
    parsed = yaml ? (Bun.YAML.parse(text) ?? {}) : JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new AgError("CONFIG_INVALID", `cannot read config file ${label}: ${why}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new AgError(
      "CONFIG_INVALID",
      `config file ${label} must hold ${yaml ? "a YAML mapping" : "a JSON object"}`,
    );
  }
  const values: Record<string, unknown> = {};
  const layer: Layer = { label, values };
  for (const [key, value] of Object.entries(parsed)) {
    if (yaml && key === CLIENT_TOKEN_KEY) {
      // The token a client sends, kept aside: only a fallback for authToken (see deriveAuthToken).
      if (typeof value !== "string")
        throw new AgError("CONFIG_INVALID", `invalid ${key} from ${label}: expected a string`);
      layer.clientToken = value;
      continue;
    }
    const setting = BY_KEY.get(key);
    if (!setting) {
      warnings.push(`unknown key "${key}" in ${label} (ignored)`);
      continue;
    }
    // A file may give part of an object setting; the rest comes from lower levels.
    const schema = isObjectSchema(setting.schema) ? Type.Partial(setting.schema) : setting.schema;
    check(setting, schema, value, label);
    values[key] = value;
  }
  return layer;
}

/**
 * authToken when no source set it: the canonical token file, else a project file's legacy
 * clientAuthToken (the same secret the server and its clients share; `ag auth migrate` moves it).
 * A token of ag's own making in the file (none was configured) is marked authTokenGenerated.
 */
function deriveAuthToken(
  values: Record<string, unknown>,
  sources: Record<string, string>,
  layers: Layer[],
  warnings: string[],
): void {
  const path = authTokenPath(values.stateDir as string);
  const { token, openToOthers } = readTokenFile(path);
  if (token) {
    if (openToOthers) warnings.push(`${path} is open to other users; chmod 600 it`);
    values.authToken = token;
    values.authTokenGenerated = isGeneratedToken(token);
    sources.authToken = values.authTokenGenerated ? `${path} (generated by ag)` : path;
    return;
  }
  const legacy = layers.find((layer) => layer.clientToken);
  if (legacy) {
    values.authToken = legacy.clientToken;
    sources.authToken = `${legacy.label} (${CLIENT_TOKEN_KEY}; move it with \`ag auth migrate\`)`;
  }
}

/**
 * The token a client sends now. A token the user configured is the loaded one; otherwise the
 * server uses the token it generates into the token file, which may have appeared (a server
 * started since: `ag run` starts one) or changed since the config was loaded.
 */
export function currentAuthToken(
  config: Pick<Config, "authToken" | "authTokenGenerated" | "stateDir">,
): string {
  const { authToken, authTokenGenerated, stateDir } = config;
  if (authToken !== "" && !authTokenGenerated) return authToken;
  return readTokenFile(authTokenPath(stateDir)).token || authToken;
}

function readEnvironment(env: Record<string, string | undefined>): Layer {
  const values: Record<string, unknown> = {};
  const labels: Record<string, string> = {};
  for (const setting of SETTINGS as readonly Setting[]) {
    if (!setting.env || !setting.envKind) continue;
    const name = [setting.env, ...(setting.envAliases ?? [])].find(
      (n) => env[n] !== undefined && env[n] !== "",
    );
    if (name === undefined) continue;
    const raw = env[name]!;
    const label = `environment (${name})`;
    const value = coerce(raw, setting.envKind, setting, label);
    check(setting, setting.schema, value, label);
    values[setting.key] = value;
    labels[setting.key] = label;
  }
  for (const setting of SETTINGS as readonly Setting[]) {
    const fields = readEnvFields(env, setting);
    if (!fields) continue;
    values[setting.key] = fields.value;
    labels[setting.key] = fields.label;
  }
  return { label: "environment", values, labels };
}

/** An object setting's fields given by their own variables (`SVC_FLEET_DATABASE_URL`), or null. */
function readEnvFields(
  env: Record<string, string | undefined>,
  setting: Setting,
): { value: Record<string, unknown>; label: string } | null {
  const value: Record<string, unknown> = {};
  const names: string[] = [];
  for (const [field, { env: name, envKind }] of Object.entries(setting.envFields ?? {})) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    value[field] = coerce(raw, envKind, setting, `environment (${name})`);
    names.push(name);
  }
  if (names.length === 0) return null;
  const label = `environment (${names.join(", ")})`;
  if (isObjectSchema(setting.schema)) check(setting, Type.Partial(setting.schema), value, label);
  return { value, label };
}

function readFlags(flags: NonNullable<LoadOptions["flags"]>): Layer {
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flags)) {
    if (value === undefined) continue;
    const setting = BY_KEY.get(key)!;
    check(setting, setting.schema, value, `--${key === "jsonLogs" ? "json-logs" : key}`);
    values[key] = value;
  }
  return { label: "command line", values };
}

function coerce(raw: string, kind: EnvKind, setting: Setting, label: string): unknown {
  const fail = (expected: string): never => {
    throw new AgError(
      "CONFIG_INVALID",
      `invalid ${setting.key} from ${label}: expected ${expected}${gotText(setting, raw)}`,
    );
  };
  switch (kind) {
    case "string":
      return raw;
    case "integer":
      return /^-?\d+$/.test(raw.trim()) ? Number(raw) : fail("an integer");
    case "number": {
      const n = Number(raw);
      return raw.trim() !== "" && Number.isFinite(n) ? n : fail("a number");
    }
    case "boolean": {
      const v = raw.trim().toLowerCase();
      if (["true", "1", "yes", "on"].includes(v)) return true;
      if (["false", "0", "no", "off"].includes(v)) return false;
      return fail("true or false");
    }
    case "json":
      return parseJson(raw, setting, label);
    case "webhooks":
      if (raw.trim().startsWith("[")) return parseJson(raw, setting, label);
      return raw
        .split(",")
        .map((url) => url.trim())
        .filter(Boolean)
        .map((url) => ({ url }));
    case "list":
      return raw
        .split(",")
        .map((item) => item.trim())
        .filter(Boolean);
  }
}

function parseJson(raw: string, setting: Setting, label: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new AgError("CONFIG_INVALID", `invalid ${setting.key} from ${label}: not valid JSON (${why})`);
  }
}

function check(setting: Setting, schema: TSchema, value: unknown, label: string): void {
  const unknown = unknownEventName(schema, value, setting.key);
  if (unknown) {
    throw new AgError(
      "CONFIG_INVALID",
      `invalid ${unknown.path} from ${label}: unknown event ${JSON.stringify(unknown.value)} (${eventHint(unknown.value)})`,
    );
  }
  const first = Value.Errors(schema, value).First();
  if (!first) return;
  const where = first.path ? `${setting.key}${first.path.replaceAll("/", ".")}` : setting.key;
  throw new AgError(
    "CONFIG_INVALID",
    `invalid ${where} from ${label}: ${first.message}${gotText(setting, first.value)}`,
  );
}

/**
 * The first string where the schema wants an event name of the catalog and the value is none
 * (an event filter: webhooks[].events, teamchatEvents, emailEvents), with its path. A union's
 * own error would only say "Expected union value", and a webhook's value is never echoed.
 */
function unknownEventName(
  schema: TSchema,
  value: unknown,
  path: string,
): { path: string; value: unknown } | null {
  if (schema === EventNameSchema) return isEventName(value) ? null : { path, value };
  const inner: Array<[TSchema, unknown, string]> = [];
  if (Array.isArray(schema.anyOf)) for (const member of schema.anyOf) inner.push([member, value, path]);
  if (schema.type === "array" && schema.items && Array.isArray(value)) {
    for (const [i, item] of value.entries()) inner.push([schema.items, item, `${path}.${i}`]);
  }
  if (schema.type === "object" && schema.properties && isPlainObject(value)) {
    for (const [key, property] of Object.entries(schema.properties as Record<string, TSchema>))
      inner.push([property, value[key], `${path}.${key}`]);
  }
  for (const [s, v, p] of inner) {
    const found = unknownEventName(s, v, p);
    if (found) return found;
  }
  return null;
}

/** The known names of the same family ("status.*"), or the families: enough to spot a typo. */
function eventHint(value: unknown): string {
  const name = String(value);
  const family = name.slice(0, name.indexOf(".") + 1);
  const kin = family ? EVENT_NAMES.filter((known) => known.startsWith(family)) : [];
  const families = [...new Set(EVENT_NAMES.map((known) => known.replace(/\..*/, ".*")))];
  const known =
    kin.length > 0
      ? `known ${family}* events: ${kin.join(", ")}`
      : `known events: ${families.join(", ")}; see docs/events.md`;
  return name.includes("*") ? `a filter lists names, patterns are not supported; ${known}` : known;
}

function gotText(setting: Setting, value: unknown): string {
  if (SECRET_KEYS.has(setting.key)) return "";
  if (value === null || ["string", "number", "boolean"].includes(typeof value)) {
    return ` (got ${JSON.stringify(value)})`;
  }
  return "";
}

function isObjectSchema(schema: TSchema): schema is TObject {
  return schema.type === "object" && schema.properties !== undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function mergeValue(lower: unknown, higher: unknown): unknown {
  if (isPlainObject(lower) && isPlainObject(higher)) {
    const merged: Record<string, unknown> = { ...lower };
    for (const [k, v] of Object.entries(higher)) merged[k] = mergeValue(lower[k], v);
    return merged;
  }
  return higher;
}

function deriveDefaults(
  values: Record<string, unknown>,
  sources: Record<string, string>,
  ctx: { home: string; containerRoot: string },
): void {
  if (values.host === undefined) {
    const inContainer = isInContainer(ctx.containerRoot);
    values.host = inContainer ? "0.0.0.0" : "127.0.0.1";
    sources.host = inContainer ? "default (container detected)" : "default";
  }
  if (values.stateDir === undefined) {
    values.stateDir = join(ctx.home, ".svc");
    sources.stateDir = "default";
  }
  if (values.baseUrl === undefined) {
    values.baseUrl = `http://127.0.0.1:${values.port}`;
    sources.baseUrl = "default";
  }
  if (values.dashboardUrl === undefined) {
    values.dashboardUrl = `http://localhost:${values.port}/dashboard`;
    sources.dashboardUrl = "default";
  }
}

function expandPath(path: string, home: string, cwd: string): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/** What the CLI's printer needs from the environment (https://no-color.org). */
export function readTerminalEnv(env: Record<string, string | undefined> = process.env): { noColor: boolean } {
  return { noColor: env.NO_COLOR !== undefined && env.NO_COLOR !== "" };
}

export interface DesktopEnv {
  /** A graphical session a browser can open in: a display on Linux, a local login on macOS. */
  graphical: boolean;
  /** The socket path of the tmux server this shell runs inside ($TMUX), if any. */
  tmuxSocketPath: string | null;
  /** Where tmux keeps its sockets (`$TMUX_TMPDIR`, default /tmp). */
  tmuxTmpDir: string;
}

/** What `ag open` and `ag attach` need to know about the person's terminal and desktop. */
export function readDesktopEnv(
  env: Record<string, string | undefined> = process.env,
  platform: NodeJS.Platform = process.platform,
): DesktopEnv {
  const overSsh = Boolean(env.SSH_CONNECTION || env.SSH_TTY);
  const display = Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
  return {
    graphical: platform === "darwin" ? !overSsh : display,
    tmuxSocketPath: env.TMUX ? (env.TMUX.split(",")[0] ?? null) : null,
    tmuxTmpDir: env.TMUX_TMPDIR || "/tmp",
  };
}

/**
 * The environment every process ag starts on someone's behalf begins with (agents on both
 * drivers, the tmux server, commands in a user's folder): ag's, by shared/environment.ts's policy.
 */
export function readChildEnv(env: Record<string, string | undefined> = process.env): Record<string, string> {
  return declaredEnvironment(env);
}
