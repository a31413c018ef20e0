import { generatedToken } from "../config/auth-token.ts";
import type { Config } from "../config/schema.ts";
import { type Access, isLoopbackName } from "./auth.ts";

type AccessConfig = Pick<
  Config,
  "authToken" | "authTokenGenerated" | "host" | "stateDir" | "allowUnauthenticatedNetwork"
>;

/**
 * ag always has a token: the configured one, else one it generates into <stateDir>/auth-token
 * (0600), where the CLI on this machine finds it. What differs is who must show it (Access): a
 * configured token is always required; ag's own token is required of everyone beyond loopback
 * (never open by accident, a container's default bind included) unless the loudly named
 * allowUnauthenticatedNetwork says otherwise, and on loopback of requests that change state
 * without an Origin.
 */

/** The mode the config asks for; decides nothing else and writes nothing (`ag doctor` asks it). */
export function accessMode(config: Omit<AccessConfig, "stateDir">): Access["mode"] {
  if (config.authToken !== "" && !config.authTokenGenerated) return "token";
  return isLoopbackName(config.host) || config.allowUnauthenticatedNetwork ? "local" : "token";
}

/** Serving as the local tool beyond loopback: only allowUnauthenticatedNetwork does that. */
export function servesUnauthenticatedNetwork(config: Omit<AccessConfig, "stateDir">): boolean {
  return accessMode(config) === "local" && !isLoopbackName(config.host);
}

/**
 * The access of a server about to start: with no token configured, ag's own token, generated
 * now if the state directory has none (`created`), else the one it generated before.
 */
export function resolveAccess(config: AccessConfig): Access & { created: boolean } {
  const mode = accessMode(config);
  if (config.authToken !== "" && !config.authTokenGenerated) {
    return { mode, token: config.authToken, tokenFile: null, created: false };
  }
  const { token, path, created } = generatedToken(config.stateDir);
  return { mode, token, tokenFile: path, created };
}
