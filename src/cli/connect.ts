import { type LoadedConfig, loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import type { Session } from "../sessions/index.ts";
import { AgError } from "../shared/errors.ts";
import { parsePortFlag } from "./args.ts";
import { type ApiClient, createApiClient, resolveServerUrl } from "./client.ts";

export interface Connection {
  loaded: LoadedConfig;
  client: ApiClient;
}

/** The config and a client of the server the global flags (--config, --port) point at. */
export function connect(
  args: { config?: string; port?: string },
  options: { timeoutMs?: (config: Config) => number } = {},
): Connection {
  const loaded = loadConfig({ configPath: args.config });
  const baseUrl = resolveServerUrl(loaded, parsePortFlag(args.port));
  const timeoutMs = options.timeoutMs?.(loaded.config);
  return { loaded, client: createApiClient({ baseUrl, token: loaded.config.authToken, timeoutMs }) };
}

/** The dashboard of the server at `baseUrl`: the configured URL, else the one that server serves. */
export function dashboardUrl(loaded: LoadedConfig, baseUrl: string): string {
  return loaded.sources.dashboardUrl === "default" ? `${baseUrl}/dashboard/` : loaded.config.dashboardUrl;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A session id as a person types it: the full id, or a unique prefix of one (`ag list` shows the
 * first 8 characters). A full id goes to the server as it is, so its own 404 speaks.
 */
export async function resolveSessionId(client: ApiClient, given: string): Promise<string> {
  const id = given.trim();
  if (UUID.test(id)) return id;
  if (!/^[0-9a-f-]+$/i.test(id)) throw new AgError("SESSION_NOT_FOUND", `no session ${given}`);
  const matches = (await client.get<Session[]>("/v1/sessions")).filter((s) =>
    s.id.toLowerCase().startsWith(id.toLowerCase()),
  );
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) throw new AgError("SESSION_NOT_FOUND", `no session ${given}`);
  throw new AgError(
    "USAGE_ERROR",
    `${given} is the start of ${matches.length} session ids (${matches.map((s) => s.id.slice(0, 13)).join(", ")}): give more of it`,
  );
}
