import { networkInterfaces } from "node:os";
import { type Access, isLoopbackName, isWildcard } from "./auth.ts";

/**
 * What ag says at start-up about where it can be reached, so that its lines agree: the address
 * it is bound to, the URL to use from this machine (a wildcard bind is no URL), the URLs from
 * other machines, whether anyone there may drive the agents without a token, and where the token
 * ag generated is (its path, never the token).
 */

export interface BindFacts {
  /** The bind address as configured (SVC_HOST / --host). */
  host: string;
  port: number;
  /** Who must show which token: `token` (every request but health needs a credential) or `local`. */
  access: Pick<Access, "mode" | "tokenFile">;
  /** This machine's own non-loopback addresses (see machineAddresses). */
  addresses: string[];
}

export interface BannerLine {
  level: "info" | "warn";
  text: string;
}

/** At most this many addresses are named: a host with many interfaces must not flood the screen. */
const MAX_ADDRESSES = 4;

/** The URL a client on this machine uses for a server bound to `host`. */
export function localUrl(host: string, port: number): string {
  if (isWildcard(host)) return `http://127.0.0.1:${port}`;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * The lines that go before "listening on <localUrl>": none for a loopback bind (that line says
 * it all); for a bind reachable from elsewhere, where that is and who may use it.
 */
export function bindNotes(facts: BindFacts): BannerLine[] {
  const { host, port, access } = facts;
  if (isLoopbackName(host)) return [];
  const authenticated = access.mode === "token";
  const token = access.tokenFile ? tokenNote(access.tokenFile) : "";
  if (!isWildcard(host)) {
    if (authenticated) {
      return token ? [{ level: "info", text: `ag listens on ${host} (port ${port}): ${token}` }] : [];
    }
    return [
      {
        level: "warn",
        text:
          `!!! ag listens on ${host} (port ${port}) WITHOUT authentication (${INSECURE_SETTING} is on): ` +
          `anyone who can reach that address can run commands on this machine through the agents. ${REMEDY}`,
      },
    ];
  }
  // 0.0.0.0 is IPv4 only; :: takes both (Linux binds it dual-stack).
  const reachable = facts.addresses.filter((a) => host === "::" || !a.includes(":"));
  const named = reachable.slice(0, MAX_ADDRESSES);
  const more = reachable.length > named.length ? ` (+${reachable.length - named.length} more)` : "";
  const where = `all interfaces (${host || "0.0.0.0"}, port ${port})`;
  const local = localUrl(host, port);
  if (authenticated) {
    const others = named.length
      ? `; from other machines ${named.map((a) => localUrl(a, port)).join(", ")}${more}, with the token`
      : "";
    const text = `ag listens on ${where}: ${local} from this machine${others}`;
    return [{ level: "info", text: token ? `${text}; ${token}` : text }];
  }
  const at = named.length ? ` (at ${named.join(", ")}${more})` : "";
  return [
    {
      level: "warn",
      text:
        `!!! ag listens on ${where} WITHOUT authentication (${INSECURE_SETTING} is on): anyone who can ` +
        `reach port ${port} of this machine${at} can run commands on it through the agents. Browsers are ` +
        "held off (a request must name a loopback or configured host), other clients only from requests " +
        `that change state without an Origin. From this machine, or through a port forwarded to its ` +
        `localhost, use ${local}. ${REMEDY}`,
    },
  ];
}

/** Where the token is, never what it is. */
function tokenNote(tokenFile: string): string {
  return (
    `no token is configured, so every request needs the token ag generated in ${tokenFile} ` +
    "(mode 0600; the ag CLI on this machine reads it there; SVC_AUTH_TOKEN sets your own)"
  );
}

/** The setting that serves beyond loopback without a token, named as the user writes it. */
export const INSECURE_SETTING = "SVC_ALLOW_UNAUTHENTICATED_NETWORK / allowUnauthenticatedNetwork";

const REMEDY =
  `Turn ${INSECURE_SETTING} off to require ag's token, set SVC_AUTH_TOKEN, or ` +
  "SVC_HOST=127.0.0.1 to listen on this machine only.";

/** This machine's addresses other machines might use: not loopback, not link-local. */
export function machineAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((i) => i !== undefined && !i.internal && !i.address.startsWith("fe80:"))
    .map((i) => i!.address);
}
