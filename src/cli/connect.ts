import { currentAuthToken, type LoadedConfig, loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { readLiveInstance } from "../store/instance.ts";
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
  return {
    loaded,
    client: createApiClient({ baseUrl, token: () => currentAuthToken(loaded.config), timeoutMs }),
  };
}

/** The dashboard of the server at `baseUrl`: the configured URL, else the one that server serves. */
export function dashboardUrl(loaded: LoadedConfig, baseUrl: string): string {
  return loaded.sources.dashboardUrl === "default" ? `${baseUrl}/dashboard/` : loaded.config.dashboardUrl;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

/**
 * Whether the server at `baseUrl` runs on this machine: a loopback address, or the server this
 * state directory records as running here (it may have been reached by another name). What
 * only works next to the server (attaching to its tmux, signalling its process) asks first.
 */
export function isLocalServer(loaded: LoadedConfig, baseUrl: string): boolean {
  const url = new URL(baseUrl);
  if (LOOPBACK.test(url.hostname)) return true;
  const live = readLiveInstance(loaded.config.stateDir);
  return live?.port !== undefined && String(live.port) === (url.port || "80");
}
